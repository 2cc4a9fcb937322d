// Advertisers: programmes joined on a network, synced from its module a page at a time. The sync
// owns the network's columns; local edits (name override, cashback override, page, local logo,
// description) are never written by it. A sync is numbered per module: what a finished sync did
// not see is marked inactive. Row shapes are in advertisers/rows.ts, the sync in
// advertisers/sync.ts, the listings in advertisers/listing.ts, what pages read in
// advertisers/page-sources.ts, the counts per network other domains show in advertisers/counts.ts
// (AdvertiserCounts, a read model).
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { toInt } from '../../db/values.js';
import type { Transaction } from '../../db/transaction.js';
import { LOGO_COLUMNS, logoTarget, logoWhere, type LogoScope, type LogoTarget } from './logo-rows.js';
import { ServiceError } from '../../errors.js';
import type { CashbackRuleService } from '../cashback/index.js';
import type { CashbackType } from '../../cashback-rule.js';
import type { LogService } from '../logs/index.js';
import type { NetworkService } from '../networks/index.js';
import { checkTargetDomain, parseLinkTarget } from '../../networks/tracking-links.js';
import type { Job, JobService } from '../jobs/index.js';
import type { UserService } from '../users/index.js';
import type { AiUsage } from '../ai/index.js';
import type { ClickTokens, GoLink } from '../../click-tokens.js';
import { COLUMNS, json, notFound, shape, type Advertiser, type AdvertiserDetail, type AdvertiserStatus } from './rows.js';
import { syncAdvertisers, type SyncCounts, type SyncOptions } from './sync.js';
import type { StatusCounts } from '../../db/lists.js';
import { AdvertiserCounts } from './counts.js';
import { advertiserIdsAfter, countAdvertisers, listAdvertisers, lookupAdvertisers, type AdvertiserCountFilters, type AdvertiserFilters } from './listing.js';
import { countPageSources, linkPages, pageCounts, pageSource, pageSources, unlinkPage, type PageSource } from './page-sources.js';

export { AdvertiserCounts } from './counts.js';
export type { LogoScope, LogoTarget } from './logo-rows.js';
export { ADVERTISER_STATUSES, type Advertiser, type AdvertiserDetail, type AdvertiserStatus } from './rows.js';
export type { SyncCounts, SyncOptions, SyncState } from './sync.js';
export type { AdvertiserFilters } from './listing.js';
export type { PageSource } from './page-sources.js';

export interface AdvertiserServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  networks: NetworkService;
  cashback: CashbackRuleService;
  users: UserService;
  /** Sync jobs are queued here (`startSync`). */
  jobs: Pick<JobService, 'enqueue'>;
  /** The public URL of a stored local logo (MediaService.urlOf); without it `logo` is null. */
  mediaUrl?: (name: string | null) => string | null;
  /** The last AI generation of each advertiser: the AI domain's read model (the AI service owns those records). */
  aiUsage: Pick<AiUsage, 'lastFor'>;
  /** Signs the `/go/{token}` link answered beside the direct link; without it there is none. */
  clickTokens?: Pick<ClickTokens, 'link'>;
}

/** A tracking link crediting a member, as `GET /advertisers/{module}/{advertiser}/link` answers it. */
export interface TrackingLink {
  url: string;
  module: string;
  advertiser: string;
  member: { id: number; login: string };
  /** What the network carries back with the conversion: the member's id (see OrderService). */
  sub_id: string;
  /** Whether the link lands on a target URL rather than the advertiser's home page. */
  deeplink: boolean;
  /** The target URL the link lands on (null: the advertiser's home page). */
  target: string | null;
}

/** The link as the link routes answer it: the direct link and, beside it, the `/go/{token}` link that logs the click. */
export type MemberLink = TrackingLink & Partial<GoLink>;

/** How long a click's reads (the shop, its network, the member) are kept: a change reaches clicks this late at most. */
export const CLICK_READS_MS = 1000;

/** Syncs, lists and looks up advertisers; sets per-advertiser cashback. */
export class AdvertiserService {
  constructor(private readonly deps: AdvertiserServiceDeps) {}

  /**
   * Walks the network's advertiser pages and upserts each page in one statement, then marks the
   * advertisers this sync did not see as inactive. Records counts or the error in the network's
   * state and the log. A failure throws after recording; `resume` picks it up where it stopped.
   */
  async sync(network: string, options: SyncOptions = {}): Promise<SyncCounts> {
    return syncAdvertisers(this.deps, network, options);
  }

  /** Filtered and paged; `search` matches the start of the name (network's or override). */
  async list(filters: AdvertiserFilters): Promise<{ items: Advertiser[]; total: number }> {
    return listAdvertisers(this.deps.db, this.deps.mediaUrl, filters);
  }

  /** The views row of the list: advertisers per status (every status, 0 included) under the list's other filters. */
  counts(filters: AdvertiserCountFilters): Promise<StatusCounts> {
    return new AdvertiserCounts({ db: this.deps.db }).countByStatus(filters);
  }

  /** One advertiser with its raw record and effective cashback rule; 404 svc_advertiser_not_found. */
  async get(module: string, advertiser: string): Promise<AdvertiserDetail> {
    if (typeof module !== 'string' || typeof advertiser !== 'string' || module.length > 64 || advertiser.length > 128) throw notFound(module, advertiser);
    const [row] = await this.deps.db.select<Record<string, unknown>>(`SELECT ${COLUMNS}, raw FROM advertisers WHERE module = ? AND advertiser = ?`, [
      module,
      advertiser,
    ]);
    if (!row) throw notFound(module, advertiser);
    return this.detail(row);
  }

  /** One advertiser by its number (`POST /ai/shop/{id}`); 404 svc_advertiser_not_found. */
  async getById(id: number): Promise<AdvertiserDetail> {
    const [row] =
      Number.isSafeInteger(id) && id > 0
        ? await this.deps.db.select<Record<string, unknown>>(`SELECT ${COLUMNS}, raw FROM advertisers WHERE id = ?`, [id])
        : [];
    if (!row) throw new ServiceError('svc_advertiser_not_found', 'Advertiser not found.', 404, { id });
    return this.detail(row);
  }

  private async detail(row: Record<string, unknown>): Promise<AdvertiserDetail> {
    const a = shape(row, this.deps.mediaUrl);
    const [cashback, ai] = await Promise.all([this.deps.cashback.resolve(a.module, a.advertiser), this.deps.aiUsage.lastFor('shop', [a.id])]);
    return { ...a, raw: json<unknown>(row.raw, null), cashback_rule: cashback, ai: ai.get(a.id) ?? null };
  }

  /**
   * Sets an advertiser's description (a local edit the sync never writes), in `t` when given;
   * 404 svc_advertiser_not_found.
   */
  async setDescription(id: number, description: string | null, actor: string, t?: Transaction): Promise<void> {
    const { affected } = await this.deps.db.execute(
      'UPDATE advertisers SET description = ?, updated_at = ? WHERE id = ?',
      [description, this.deps.clock.now(), id],
      t,
    );
    if (affected === 0) throw new ServiceError('svc_advertiser_not_found', 'Advertiser not found.', 404, { id });
    this.deps.logger.info('advertisers', 'Advertiser description set', { id, actor });
  }

  /**
   * Numbers of the advertisers after `after` (ascending) matching the filters, at most `limit`:
   * a run over many advertisers walks them with this, unaffected by what it changes meanwhile.
   */
  async idsAfter(after: number, filters: { network?: string; status?: AdvertiserStatus; search?: string }, limit: number): Promise<number[]> {
    return advertiserIdsAfter(this.deps.db, after, filters, limit);
  }

  /** How many advertisers match the filters. */
  async count(filters: { network?: string; status?: AdvertiserStatus; search?: string }): Promise<number> {
    return countAdvertisers(this.deps.db, filters);
  }

  /**
   * Typeahead: a page of the advertisers whose name starts with `search` (or whose number is
   * `search`), by name: `{id: "module/advertiser", label}`, and how many there are.
   */
  async lookup(search: string, page = { page: 1, per_page: 20 }): Promise<{ items: { id: string; label: string }[]; total: number }> {
    return lookupAdvertisers(this.deps.db, search, page);
  }

  /**
   * The network's tracking link that credits `member` (a user id, or a login or email) for a visit
   * to the advertiser, landing on `url` when one is given. The sub id is the member's id: the
   * orders service matches a numeric sub id to a user id, so the conversion reaches this member.
   * Refuses (in this order) a bad URL (400 svc_invalid_url), an unknown advertiser or member (404
   * svc_advertiser_not_found, svc_member_not_found), a network that is disabled or not configured
   * (409 svc_network_disabled, svc_network_not_configured), an inactive advertiser (409
   * svc_advertiser_inactive), a disabled member (409 svc_member_disabled), a URL off the
   * advertiser's domain (400 svc_invalid_url), and a link the module cannot build (409
   * svc_tracking_link_unavailable, svc_deeplink_unsupported).
   */
  async trackingLink(
    module: string,
    advertiser: string,
    input: { member: string | number; url?: string | null; coupon?: number | null; click_id?: string },
  ): Promise<MemberLink> {
    const target = parseLinkTarget(input.url);
    if (typeof module !== 'string' || typeof advertiser !== 'string' || module.length > 64 || advertiser.length > 128) throw notFound(module, advertiser);
    // A click (`click_id`) is on the member's way to the shop: what it reads is kept a moment
    // (CLICK_READS_MS), so a burst of clicks reads each shop, network and member once.
    const fresh = input.click_id === undefined;
    const [row] = await this.cached(fresh, `a\0${module}\0${advertiser}`, () =>
      this.deps.db.select<Record<string, unknown>>(
        'SELECT module, advertiser, domain, site_url, tracking_template, status FROM advertisers WHERE module = ? AND advertiser = ?',
        [module, advertiser],
      ),
    );
    if (!row) throw notFound(module, advertiser);
    const member = await this.cached(fresh, `m\0${input.member}`, () => this.deps.users.resolveMember(input.member));
    const { module: network, settings } = await this.cached(fresh, `n\0${module}`, () => this.deps.networks.requireUsable(module));
    if (row.status === 'inactive') {
      throw new ServiceError(
        'svc_advertiser_inactive',
        `${module}/${advertiser} is inactive: the network no longer lists it, so a link would earn nothing.`,
        409,
        { module, advertiser },
      );
    }
    if (member.status !== 'active') throw new ServiceError('svc_member_disabled', `Member ${member.login} is disabled.`, 409, { member_id: member.id });
    const domain = row.domain === null || row.domain === undefined ? (row.site_url ? String(row.site_url) : null) : String(row.domain);
    if (target) checkTargetDomain(target, domain);
    // Through a click, the sub id is the click id and the member goes beside it where the network has a second field.
    const subId = input.click_id ?? String(member.id);
    const url = network.trackingLink(settings, {
      advertiser_id: advertiser,
      sub_id: subId,
      member_ref: input.click_id ? String(member.id) : null,
      url: target ? target.toString() : null,
      tracking_template: row.tracking_template === null || row.tracking_template === undefined ? null : String(row.tracking_template),
    });
    if (!url)
      throw new ServiceError('svc_tracking_link_unavailable', `${network.name} gave no tracking link for ${module}/${advertiser}.`, 409, {
        network: module,
        advertiser,
      });
    const link: MemberLink = {
      url,
      module,
      advertiser,
      member: { id: member.id, login: member.login },
      sub_id: subId,
      deeplink: target !== null,
      target: target ? target.toString() : null,
    };
    if (input.click_id) return link;
    this.deps.logger.debug('advertisers', 'Tracking link built', { module, advertiser, member_id: member.id, deeplink: target !== null });
    const go = this.deps.clickTokens?.link({ member_id: member.id, network: module, advertiser, coupon_id: input.coupon ?? null, url: link.target });
    return go ? { ...link, ...go } : link;
  }

  private readonly reads = new Map<string, { at: number; value: Promise<unknown> }>();

  /** `read()`, or for a click (`fresh` false) its answer of the last CLICK_READS_MS (refusals are not kept). */
  private cached<T>(fresh: boolean, key: string, read: () => Promise<T>): Promise<T> {
    if (fresh) return read();
    const now = Date.now();
    const kept = this.reads.get(key);
    if (kept && now - kept.at < CLICK_READS_MS) return kept.value as Promise<T>;
    if (this.reads.size > 10_000) {
      for (const [k, r] of this.reads) if (now - r.at >= CLICK_READS_MS) this.reads.delete(k);
    }
    const value = read();
    this.reads.set(key, { at: now, value });
    void value.catch(() => this.reads.get(key)?.value === value && this.reads.delete(key));
    return value;
  }

  /** 404 svc_advertiser_not_found unless the advertiser is on file (active or not). */
  async requireAdvertiser(module: string, advertiser: string): Promise<void> {
    const [row] = await this.deps.db.select('SELECT 1 AS found FROM advertisers WHERE module = ? AND advertiser = ?', [module, advertiser]);
    if (!row) throw notFound(module, advertiser);
  }

  // Shop pages read the advertisers they are made from, and set `page_id`, through these methods
  // (this service owns the table).

  /** One advertiser as a page is made from it; 404 svc_advertiser_not_found. */
  async pageSource(module: string, advertiser: string, t?: Transaction): Promise<PageSource> {
    return pageSource(this.deps.db, module, advertiser, t);
  }

  /** Active advertisers without a page, by id after `after`, at most `limit` (the bulk page job's batches). */
  async pageSources(filter: { network?: string; after: number; limit: number }): Promise<PageSource[]> {
    return pageSources(this.deps.db, filter);
  }

  /** How many active advertisers after `after` have no page (the bulk page job's total). */
  async countPageSources(filter: { network?: string; after: number }): Promise<number> {
    return countPageSources(this.deps.db, filter);
  }

  /** Active advertisers, and how many of them have a page. */
  async pageCounts(): Promise<{ active: number; with_page: number; without_page: number }> {
    return pageCounts(this.deps.db);
  }

  /**
   * Records each advertiser's new page in `t` (one statement). Throws when one of them has a page
   * already, so the caller's transaction rolls the pages back rather than leave one unlinked.
   */
  async linkPages(links: { advertiserId: number; pageId: number }[], t: Transaction): Promise<void> {
    return linkPages(this.deps.db, links, t);
  }

  /** Forgets a deleted page (only if it is still the advertiser's page). */
  async unlinkPage(advertiserId: number, pageId: number, t: Transaction): Promise<void> {
    return unlinkPage(this.deps.db, advertiserId, pageId, t);
  }

  /**
   * Starts an `advertisers.sync` job: of one network (404 svc_network_not_found when there is
   * none), or of every enabled, configured one. 409 svc_job_already_running while the same sync
   * is queued or running. The one way to start a sync: the route, the CLI and schedules call it.
   */
  async startSync(input: { network?: string }, actor: string): Promise<Job> {
    if (input.network !== undefined) await this.deps.networks.module(input.network);
    return this.deps.jobs.enqueue('advertisers.sync', input.network !== undefined ? { network: input.network } : {}, actor, { unique: true });
  }

  /** Sets the advertiser's member cashback override (404 when the advertiser is unknown). */
  async setCashback(
    module: string,
    advertiser: string,
    type: CashbackType,
    value: string,
    actor: string,
    currency: string | null = null,
  ): Promise<AdvertiserDetail> {
    await this.get(module, advertiser);
    await this.deps.cashback.set(module, advertiser, type, value, currency, actor);
    return this.get(module, advertiser);
  }

  /** Removes the advertiser's cashback override, if any: the network's rule or the site default applies again. */
  async removeCashback(module: string, advertiser: string, actor: string): Promise<AdvertiserDetail> {
    await this.get(module, advertiser);
    await this.deps.cashback.remove(module, advertiser, actor);
    return this.get(module, advertiser);
  }

  /** What the logo fetch reads of one advertiser; 404 svc_advertiser_not_found. */
  async logoTarget(module: string, advertiser: string): Promise<LogoTarget> {
    if (typeof module !== 'string' || typeof advertiser !== 'string' || module.length > 64 || advertiser.length > 128) throw notFound(module, advertiser);
    const [row] = await this.deps.db.select<Record<string, unknown>>(`SELECT ${LOGO_COLUMNS} FROM advertisers WHERE module = ? AND advertiser = ?`, [
      module,
      advertiser,
    ]);
    if (!row) throw notFound(module, advertiser);
    return logoTarget(row);
  }

  /**
   * Points the advertiser's local logo at a stored media file (`<sha256>.<ext>`), in the
   * transaction that stored it: 404 svc_advertiser_not_found (and so a rollback) when the
   * advertiser is gone. The sync never writes this column.
   */
  async setLocalLogo(module: string, advertiser: string, name: string, t: Transaction): Promise<void> {
    const { affected } = await this.deps.db.execute(
      'UPDATE advertisers SET local_logo = ?, updated_at = ? WHERE module = ? AND advertiser = ?',
      [name, this.deps.clock.now(), module, advertiser],
      t,
    );
    if (affected !== 1) throw notFound(module, advertiser);
  }

  /** How many advertisers in scope have a local logo and how many lack one. */
  async logoCounts(scope: Omit<LogoScope, 'missing'>): Promise<{ total: number; with_logo: number; without_logo: number }> {
    const { clause, params } = logoWhere({ ...scope, missing: false });
    const [row] = await this.deps.db.select<{ n: unknown; w: unknown }>(`SELECT COUNT(*) AS n, COUNT(local_logo) AS w FROM advertisers ${clause}`, params);
    const total = toInt(row.n);
    const withLogo = toInt(row.w);
    return { total, with_logo: withLogo, without_logo: total - withLogo };
  }

  /** The next advertisers in scope after row id `after`, by id (the bulk logo run's walk), and how many are left from there. */
  async logoBatch(scope: LogoScope, after: number, limit: number): Promise<{ items: LogoTarget[]; left: number }> {
    const { clause, params } = logoWhere(scope);
    const where = `${clause ? `${clause} AND` : 'WHERE'} id > ?`;
    const [rows, count] = await Promise.all([
      this.deps.db.select<Record<string, unknown>>(`SELECT ${LOGO_COLUMNS} FROM advertisers ${where} ORDER BY id LIMIT ${Math.max(1, Math.floor(limit))}`, [
        ...params,
        after,
      ]),
      this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM advertisers ${where}`, [...params, after]),
    ]);
    return { items: rows.map(logoTarget), left: toInt(count[0].n) };
  }
}
