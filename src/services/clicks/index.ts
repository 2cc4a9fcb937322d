// Clicks: a member's visit to a shop through `GET /go/{token}`, logged and answered with the
// network's tracking link whose sub-id is the click id (ids.ts), so the order the network reports
// later names its click, its member and the cashback rule shown at the click. Tokens are made by
// the link routes (tokens.ts); what is kept of the client is reduced (device.ts). Clicks are
// written in groups (the postbacks' BatchQueue): many clicks, one transaction. A reload within
// `clicks.repeat_seconds` (same member, shop, coupon and deep link) is the same click (in this
// process: a second daemon behind a balancer may log the reload as a click of its own). The face
// other domains use is `get`, `list`, `candidates` and the read model `ClickLookup`.
import type { Clock } from '../../clock.js';
import { BatchQueue } from '../../db/batch-queue.js';
import type { Database } from '../../db/database.js';
import { ServiceError } from '../../errors.js';
import type { Transaction } from '../../db/transaction.js';
import { CLICK_READS_MS, type AdvertiserService } from '../advertisers/index.js';
import { encodeRule, type CashbackRuleService, type ScopedCashbackRule } from '../cashback/index.js';
import type { LogService } from '../logs/index.js';
import { rankCandidates, type CandidateOrder, type Candidates } from './candidates.js';
import { addressPrefix, userAgentHash } from './device.js';
import { isClickId, newClickId } from './ids.js';
import { ClickStore, type Click, type ClickFilters, type ClickRow, type ClickWhere } from './store.js';
import type { ClickTokens, TokenRefusal } from '../../click-tokens.js';

export { CLICK_ID, isClickId } from './ids.js';
export { ClickTokens, type ClickGrant, type GoLink } from '../../click-tokens.js';
export { CLICK_ORDERBY, type Click, type ClickFilters, type ClickRow, type ClickWhere } from './store.js';
export type { Candidate, CandidateOrder, Candidates } from './candidates.js';

/** The clicks as other domains read them (orders: the member and rule of a click id). */
export class ClickLookup {
  private readonly store: ClickStore;
  constructor(deps: { db: Database }) {
    this.store = new ClickStore(deps.db);
  }

  /** The clicks of these ids that are on file, keyed by id (ids that are no click id are skipped). */
  byIds(ids: string[], t?: Transaction): Promise<Map<string, ClickRow>> {
    const valid = ids.filter(isClickId);
    return valid.length === 0 ? Promise.resolve(new Map()) : this.store.rowsByIds(valid, t);
  }
}

export interface ClickServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  tokens: ClickTokens;
  /** The user-agent hash key (keys.clickDevice). */
  deviceKey: Buffer;
  /** The tracking link (with the advertiser's, member's and network's checks) and the rule shown. */
  advertisers: Pick<AdvertiserService, 'trackingLink'>;
  cashback: Pick<CashbackRuleService, 'resolve'>;
  config: {
    retention_days: number;
    repeat_seconds: number;
    cookie_days: number;
    cookie_days_by_network: Record<string, number>;
    batch_max: number;
    batches_in_flight: number;
  };
}

/** The client of a click, as the endpoint sees it. */
export interface ClickClient {
  ip: string | null;
  userAgent: string | null;
}

/** A click link that leads nowhere: the endpoint answers its 404 page (never a redirect). */
export function linkRefused(reason: TokenRefusal | string): ServiceError {
  return new ServiceError('svc_click_link_invalid', 'This link is not valid or has expired.', 404, { reason });
}

type Pending = { row: ClickRow; resolve: () => void; reject: (err: unknown) => void };
type Recent = { at: number; location: Promise<string> };

export class ClickService {
  private readonly store: ClickStore;
  private readonly queue: BatchQueue<Pending>;
  /** The clicks of the last `repeat_seconds`, by member, shop, coupon and deep link (oldest first). */
  private readonly recent = new Map<string, Recent>();
  private readonly rules = new Map<string, { at: number; rule: Promise<ScopedCashbackRule> }>();

  constructor(private readonly deps: ClickServiceDeps) {
    this.store = new ClickStore(deps.db);
    this.queue = new BatchQueue((items) => this.write(items), deps.config.batch_max, deps.config.batches_in_flight);
  }

  /**
   * A member's click through `/go/{token}`: the tracking link to send them to (a 302), the click
   * stored first. A forged, tampered, expired or unusable token (the advertiser removed or
   * inactive, the member disabled, the network off, a deep link no longer on the shop's domain)
   * throws 404 svc_click_link_invalid, its reason logged. A reload within `repeat_seconds` answers
   * the same link and stores nothing.
   */
  async go(token: string, client: ClickClient): Promise<string> {
    const grant = this.deps.tokens.read(token);
    if (typeof grant === 'string') {
      this.deps.logger.warning('clicks', 'Click link refused', { reason: grant });
      throw linkRefused(grant);
    }
    const now = this.deps.clock.now();
    const key = [grant.member_id, grant.network, grant.advertiser, grant.coupon_id ?? '', grant.url ?? ''].join('\0');
    this.forgetOld(now.getTime());
    const seen = this.recent.get(key);
    if (seen) return seen.location;
    const location = this.click(grant, client, now);
    this.recent.set(key, { at: now.getTime(), location });
    void location.catch(() => this.recent.get(key)?.location === location && this.recent.delete(key));
    return location;
  }

  private async click(grant: Exclude<ReturnType<ClickTokens['read']>, string>, client: ClickClient, now: Date): Promise<string> {
    const id = newClickId(now);
    let link: Awaited<ReturnType<AdvertiserService['trackingLink']>>;
    try {
      link = await this.deps.advertisers.trackingLink(grant.network, grant.advertiser, { member: grant.member_id, url: grant.url, click_id: id });
    } catch (err) {
      if (!(err instanceof ServiceError) || err.status >= 500) throw err;
      this.deps.logger.warning('clicks', 'Click link refused', {
        reason: err.code,
        member_id: grant.member_id,
        network: grant.network,
        advertiser: grant.advertiser,
      });
      throw linkRefused(err.code);
    }
    const rule = await this.ruleOf(grant.network, grant.advertiser, now.getTime());
    const row: ClickRow = {
      id,
      member_id: grant.member_id,
      network: grant.network,
      advertiser: grant.advertiser,
      coupon_id: grant.coupon_id,
      url: grant.url,
      cashback_rule: encodeRule(rule),
      ip_prefix: addressPrefix(client.ip),
      ua_hash: userAgentHash(this.deps.deviceKey, client.userAgent),
      created_at: now,
    };
    await new Promise<void>((resolve, reject) => this.queue.submit({ row, resolve, reject }));
    return link.url;
  }

  /** Writes a group of clicks in one transaction; when it fails, each alone (so each gets its own answer). */
  private async write(items: Pending[]): Promise<void> {
    try {
      await this.deps.db.transaction((t) =>
        this.store.insertMany(
          items.map((i) => i.row),
          t,
        ),
      );
      for (const i of items) i.resolve();
    } catch (err) {
      if (items.length === 1) return items[0].reject(err);
      await Promise.all(items.map((i) => this.write([i])));
    }
  }

  /** The rule shown on the shop now; kept a second (CLICK_READS_MS), as the other reads of a click. */
  private ruleOf(network: string, advertiser: string, now: number): Promise<ScopedCashbackRule> {
    const key = `${network}\0${advertiser}`;
    const kept = this.rules.get(key);
    if (kept && now - kept.at < CLICK_READS_MS) return kept.rule;
    if (this.rules.size > 10_000) this.rules.clear();
    const rule = this.deps.cashback.resolve(network, advertiser);
    this.rules.set(key, { at: now, rule });
    void rule.catch(() => this.rules.get(key)?.rule === rule && this.rules.delete(key));
    return rule;
  }

  private forgetOld(now: number): void {
    const limit = now - this.deps.config.repeat_seconds * 1000;
    for (const [key, r] of this.recent) {
      if (r.at > limit) break;
      this.recent.delete(key);
    }
  }

  /** One click; 404 svc_click_not_found. With the orders that recorded it. */
  /** Every click of a member (their data export). */
  ofMember(memberId: number): AsyncGenerator<Click> {
    return this.store.ofMember(memberId);
  }

  /**
   * At a member's erasure, in `t`: their clicks stay (orders name them) without the reduced
   * address and the agent's hash.
   */
  async eraseMember(memberId: number, t: Transaction): Promise<number> {
    return this.store.eraseMember(memberId, t);
  }

  async get(id: string): Promise<Click & { order_ids: number[] }> {
    const click = isClickId(id) ? await this.store.get(id) : null;
    if (!click) throw new ServiceError('svc_click_not_found', `Click ${String(id).slice(0, 40)} not found.`, 404);
    return { ...click, order_ids: await this.store.orderIdsOf(click.id) };
  }

  /** Newest first (orderby created_at or id), filtered and paged. */
  list(filters: ClickFilters): Promise<{ items: Click[]; total: number }> {
    return this.store.list(filters);
  }

  /** The next `limit` clicks of the list's filters after id `afterId` ('' for the first), in id order (an export's keyset walk). */
  listAfter(filters: ClickWhere, afterId: string, limit: number): Promise<Click[]> {
    return this.store.listAfter(filters, afterId, limit);
  }

  /**
   * The members whose clicks could have made an order: clicks on the order's shop within the
   * network's cookie window before the sale, one per member (the most telling), ranked (see
   * candidates.ts). Empty for an order without an advertiser.
   */
  async candidates(order: CandidateOrder): Promise<Candidates> {
    const saleAt = new Date(order.event_at ?? order.created_at);
    const { from, days } = this.cookieWindow(order.network, saleAt);
    const clicks = order.advertiser ? await this.store.ofShopBetween(order.network, order.advertiser, from, saleAt, 1000) : [];
    return rankCandidates(order, clicks, saleAt, days);
  }

  /**
   * The network's cookie window before a sale at `at`: `clicks.cookie_days_by_network`, else
   * `clicks.cookie_days`. The one window the candidates of an order and the click of a claim read.
   */
  cookieWindow(network: string, at: Date): { from: Date; days: number } {
    const days = this.deps.config.cookie_days_by_network[network] ?? this.deps.config.cookie_days;
    return { from: new Date(at.getTime() - days * 86_400_000), days };
  }

  /** The member's latest click on the shop within the network's cookie window before `at` (a claim's evidence), or null. */
  latestOf(memberId: number, network: string, advertiser: string, at: Date): Promise<ClickRow | null> {
    return this.store.latestOfMember(memberId, network, advertiser, this.cookieWindow(network, at).from, at);
  }

  /** The rows of these click ids on file, keyed by id (ids that are no click id are skipped). */
  rows(ids: string[], t?: Transaction): Promise<Map<string, ClickRow>> {
    const valid = ids.filter(isClickId);
    return valid.length === 0 ? Promise.resolve(new Map()) : this.store.rowsByIds(valid, t);
  }

  /** Deletes clicks older than `clicks.retention_days` (the nightly prune); answers how many. */
  prune(): Promise<number> {
    return this.store.pruneBefore(new Date(this.deps.clock.now().getTime() - this.deps.config.retention_days * 86_400_000));
  }
}
