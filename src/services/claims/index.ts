// Claims: a member's "I bought and it did not track". A claim is matched against the orders we
// hold first (matching.ts); else filed with the network through its claim channel (filing.ts);
// else left open for support with the reason. The `claims.poll` job follows filed claims to the
// network's answer and expires those past their deadline (follow.ts); `claims.export` writes the
// batch file of networks that take claims as a file (Awin). Every status change fires
// `cashtrack.claim.status_changed` (hook and webhook event, in the claim's transaction) and is
// logged; a change to the status a claim already has changes nothing.
//
// Orders arrive by postback, poll or by hand through the orders service, which announces each new
// one with `cashtrack.order.recorded` once it is committed: the claims service listens there (one
// point for every door) and runs the matching rule for the claims of that shop.
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { Transaction } from '../../db/transaction.js';
import { isServiceError, ServiceError } from '../../errors.js';
import { HOOKS, type HookBus } from '../../hooks/index.js';
import { formatAmount, parseAmount } from '../../money.js';
import type { StatusCounts } from '../../db/lists.js';
import type { AdvertiserService } from '../advertisers/index.js';
import type { Once } from '../idempotency/index.js';
import type { ClickService } from '../clicks/index.js';
import type { JobService } from '../jobs/index.js';
import type { LogService } from '../logs/index.js';
import { processImage, type Media, type MediaService } from '../media/index.js';
import type { Replacement } from '../../db/erasure.js';
import type { NetworkService } from '../networks/index.js';
import type { OrderMatch, OrderMatches, OrderService } from '../orders/index.js';
import type { UserService } from '../users/index.js';
import type { WebhookEvents } from '../webhooks/index.js';
import { ClaimFiling } from './filing.js';
import { ClaimFollow, type PollCounts } from './follow.js';
import { findMatch, type MatchSettings } from './matching.js';
import type { ClaimCountFilters, ClaimCreateInput, ClaimFilters, ClaimUpdateInput, ClaimWhere } from './schemas.js';
import { CLAIM_TRANSITIONS, LIVE_STATUSES, type ClaimStatus } from './states.js';
import { ClaimStore, type Claim, type ClaimRow } from './store.js';

export type { Claim } from './store.js';
export { CLAIM_STATUSES, type ClaimStatus } from './states.js';
export type { PollCounts } from './follow.js';

/** The `claims` configuration section. */
export interface ClaimSettings extends MatchSettings {
  /** Days before a deadline a claim is warned about. */
  warnDays: number;
  /** Days a claim has before it expires, per network (`default` for the others). */
  deadlineDays: Record<string, number>;
}

export interface ClaimServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  hooks: HookBus;
  events: WebhookEvents;
  users: Pick<UserService, 'requireMemberId'>;
  advertisers: Pick<AdvertiserService, 'requireAdvertiser' | 'get'>;
  /** The claim's click: the one given, checked, else the member's latest in the cookie window. */
  clicks: Pick<ClickService, 'latestOf' | 'rows'>;
  networks: NetworkService;
  orders: Pick<OrderService, 'assign'>;
  orderMatches: OrderMatches;
  media: MediaService;
  jobs: Pick<JobService, 'enqueue'>;
  currency: string;
  settings: ClaimSettings;
  /** Where `claims.export` writes upload files. */
  exportDir: string;
}

/** A claim as a create answers it: `duplicate` when the member had already claimed that order. */
export type ClaimCreated = Claim & { duplicate: boolean };

/** The receipt image of a claim (administrators only). */
export interface ClaimReceipt {
  type: string;
  width: number;
  height: number;
  bytes: number;
  /** The image as base64. */
  data: string;
}

const RECEIPT_LIMITS = { maxInputPixels: 50_000_000, maxSize: 2400, maxStoredBytes: 4_000_000 };
const DAY = 86_400_000;
/** Statuses after which nothing more happens to a claim. */
const FINAL: readonly ClaimStatus[] = ['matched', 'approved', 'declined'];

const invalid = (code: string, message: string, field: string) => new ServiceError(code, message, 400, { field });

/** Changes to a claim, made in one transaction with the claim locked (see `ClaimService.move`). */
export interface ClaimMove {
  to?: ClaimStatus;
  set?: Record<string, unknown>;
  /** Statuses the move applies from (default: the transitions the rules allow). */
  from?: readonly ClaimStatus[];
}

/** Takes claims, matches them, files them and follows them (see the header). */
export class ClaimService {
  readonly store: ClaimStore;
  private readonly filing: ClaimFiling;
  private readonly follow: ClaimFollow;
  private readonly inflight = new Set<Promise<unknown>>();

  constructor(private readonly deps: ClaimServiceDeps) {
    this.store = new ClaimStore(deps.db);
    this.filing = new ClaimFiling(deps, this);
    this.follow = new ClaimFollow(deps, this, this.filing);
    deps.hooks.addAction(HOOKS.orderRecorded, 'cashtrack/claims', (context: { order_id?: number }) => {
      if (typeof context?.order_id !== 'number') return;
      const p = this.orderArrived(context.order_id).catch((err) =>
        deps.logger.warning('claims', 'Matching claims to a new order failed', { order_id: context.order_id, error: (err as Error).message }),
      );
      this.inflight.add(p);
      void p.finally(() => this.inflight.delete(p));
    });
  }

  /** Resolves once the matching started by arriving orders has finished (the CLI waits before it exits; tests too). */
  async idle(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  /**
   * Takes a claim: checks it (404 svc_member_not_found, svc_network_not_found,
   * svc_advertiser_not_found; 400 svc_claim_purchase_in_future, svc_invalid_amount,
   * svc_claim_receipt_not_image), stores it, then matches it, files it or leaves it open. The same
   * member, advertiser and order reference again answers the claim on file (`duplicate: true`).
   */
  async create(input: ClaimCreateInput, actor: string, once?: Once<ClaimCreated>): Promise<ClaimCreated> {
    const { clock } = this.deps;
    const currency = input.currency ?? this.deps.currency;
    try {
      const amount = parseAmount(input.amount, currency);
      const now = clock.now();
      if (input.purchased_at.getTime() > now.getTime() + 60_000)
        throw invalid('svc_claim_purchase_in_future', 'The purchase date is in the future: give the date the member bought.', 'purchased_at');
      await this.deps.users.requireMemberId(input.member_id);
      await this.deps.networks.module(input.network);
      await this.deps.advertisers.requireAdvertiser(input.network, input.advertiser);
      const clickId = await this.clickOf(input);
      const receipt = input.receipt === undefined ? null : await this.receipt(input.receipt);
      const row = {
        member_id: input.member_id,
        network: input.network,
        advertiser: input.advertiser,
        order_ref: input.order_ref,
        purchased_at: input.purchased_at,
        amount,
        currency,
        note: input.note ?? null,
        click_id: clickId,
        status: 'open' as const,
        reason: 'Not matched or filed yet.',
        channel: null,
        deadline_at: new Date(now.getTime() + this.deadlineDays(input.network) * DAY),
        actor,
        created_at: now,
        updated_at: now,
      };
      let created: { id: number; duplicate: boolean };
      try {
        // In a group of writes (src/db/group-commit.ts): a concurrent duplicate fails the group, whose units then run alone.
        created = await this.deps.db.grouped(async (t) => {
          await once?.claim?.(t);
          const existing = await this.store.findByOrderRef(input.member_id, input.network, input.advertiser, input.order_ref, t);
          if (existing) return { id: existing.id, duplicate: true };
          const media = receipt ? await this.deps.media.store(receipt, null, t, { private: true }) : null;
          const id = await this.store.insert({ ...row, receipt: media?.name ?? null }, t);
          const [claim] = await this.store.byIds([id], t);
          await this.deps.events.emit(t, HOOKS.claimCreated, claim, { actor });
          return { id, duplicate: false };
        });
      } catch (err) {
        // Two creates of one claim at once: the loser answers the winner's claim.
        if (!isUniqueViolation(err)) throw err;
        const existing = await this.store.findByOrderRef(input.member_id, input.network, input.advertiser, input.order_ref);
        if (!existing) throw err;
        created = { id: existing.id, duplicate: true };
      }
      if (created.duplicate) {
        this.deps.logger.info('claims', 'Claim already on file', { claim_id: created.id, member_id: input.member_id, actor });
      } else {
        this.deps.logger.info('claims', 'Claim created', {
          claim_id: created.id,
          member_id: input.member_id,
          network: input.network,
          advertiser: input.advertiser,
          order_ref: input.order_ref,
          amount: formatAmount(amount, currency),
          currency,
          actor,
        });
        // The claim is taken whatever happens next: a failure to match or file leaves it open for support (and the poll).
        try {
          await this.process(created.id, actor);
        } catch (err) {
          this.deps.logger.warning('claims', 'Matching or filing a new claim failed', {
            claim_id: created.id,
            code: isServiceError(err) ? err.code : undefined,
            error: (err as Error).message,
          });
        }
      }
      return { ...(await this.get(created.id)), duplicate: created.duplicate };
    } catch (err) {
      if (isServiceError(err))
        this.deps.logger.warning('claims', 'Claim refused', {
          code: err.code,
          member_id: input.member_id,
          network: input.network,
          actor,
          field: err.data.field,
        });
      throw err;
    }
  }

  /** Matches the claim to an order we hold; else files it with its network; else leaves it open with the reason. */
  async process(id: number, actor: string): Promise<void> {
    if ((await this.match(id, actor)) !== 'none') return;
    const row = await this.store.row(id);
    if (row && row.status === 'open') await this.filing.file(row, actor);
  }

  async get(id: number): Promise<Claim> {
    const [claim] = await this.store.byIds([id]);
    if (!claim) throw new ServiceError('svc_claim_not_found', `Claim ${id} not found.`, 404);
    return claim;
  }

  list(filters: ClaimFilters): Promise<{ items: Claim[]; total: number }> {
    return this.store.list(filters);
  }

  /** The next `limit` claims of the list's filters after id `afterId`, in id order (an export's keyset walk). */
  listAfter(filters: ClaimWhere, afterId: number, limit: number): Promise<Claim[]> {
    return this.store.listAfter(filters, afterId, limit);
  }

  /** Claims per status (every status, 0 included) under the list's other filters. */
  counts(filters: ClaimCountFilters): Promise<StatusCounts> {
    return this.store.counts(filters);
  }

  /** Every claim of a member, with its receipt's record (type, size, dates; never the bytes), page by page (their data export). */
  async *ofMember(memberId: number): AsyncGenerator<Omit<Claim, 'receipt'> & { receipt: Media | null }> {
    for await (const { receipt_file, ...claim } of this.store.ofMember(memberId)) {
      yield { ...claim, receipt: receipt_file ? await this.deps.media.describePrivate(receipt_file) : null };
    }
  }

  /**
   * At a member's erasure, in `t`: the claims keep amounts, statuses and orders; the note and the
   * receipt go (the receipt's file too once no claim names it), the person's words are replaced
   * in the rest. Answers how many claims changed.
   */
  async eraseMember(memberId: number, replacements: readonly Replacement[], t: Transaction): Promise<number> {
    const { changed, receipts } = await this.store.eraseMember(memberId, replacements, t);
    for (const name of receipts) if (!(await this.store.receiptInUse(name, t))) await this.deps.media.removePrivate(name, t);
    return changed;
  }

  /** The receipt image; 404 svc_claim_receipt_not_found when the claim has none. */
  async receiptOf(id: number): Promise<ClaimReceipt> {
    const claim = await this.store.row(id);
    if (!claim) throw new ServiceError('svc_claim_not_found', `Claim ${id} not found.`, 404);
    const file = claim.receipt ? await this.deps.media.privateFile(claim.receipt) : null;
    if (!file) throw new ServiceError('svc_claim_receipt_not_found', `Claim ${id} has no receipt image.`, 404);
    return { type: file.type, width: file.width, height: file.height, bytes: file.data.length, data: file.data.toString('base64') };
  }

  /**
   * An administrator's change: the note; a decline with its reason (409 svc_claim_invalid_transition
   * from matched or approved); a match to an order (the same network and advertiser, 409
   * svc_claim_order_mismatch otherwise; an order of another member is 409 svc_order_already_assigned).
   */
  async update(id: number, input: ClaimUpdateInput, actor: string): Promise<Claim> {
    try {
      if (input.order_id !== undefined) await this.matchTo(id, input.order_id, actor);
      if (input.status === 'declined') await this.move(id, { to: 'declined', set: { reason: input.reason } }, actor);
      if (input.note !== undefined) await this.move(id, { set: { note: input.note } }, actor);
      return await this.get(id);
    } catch (err) {
      if (isServiceError(err)) this.deps.logger.warning('claims', 'Claim change refused', { code: err.code, claim_id: id, actor });
      throw err;
    }
  }

  /** Declines a claim with a reason (the CLI's `claims decline`). */
  decline(id: number, reason: string, actor: string): Promise<Claim> {
    return this.update(id, { status: 'declined', reason }, actor);
  }

  /** Starts a `claims.poll` job (409 svc_job_already_running while one is under way). */
  startPoll(actor: string) {
    return this.deps.jobs.enqueue('claims.poll', {}, actor, { unique: true });
  }

  /** Reads the networks' answers, files what failed before, warns of and expires claims past their deadline. */
  poll(actor = 'claims.poll'): Promise<PollCounts> {
    return this.follow.poll(actor);
  }

  /** Writes the batch file of each file-channel network's waiting claims (the `claims.export` job). */
  export(actor = 'claims.export'): Promise<{ files: { network: string; file: string; claims: number }[] }> {
    return this.filing.exportFiles(actor);
  }

  /**
   * Runs the matching rule for one claim (see matching.ts) and acts on the outcome: the member's
   * own order answers it at once (`matched`), an order without a member is assigned to the member
   * with the claim as the reason (`matched`), another member's order or several candidates leave
   * it open for support with the reason. Answers `linked` (the claim ended on an order),
   * `support` (left to support, with the reason) or `none` (no order of ours is about it).
   */
  async match(id: number, actor: string): Promise<'linked' | 'support' | 'none'> {
    const row = await this.store.row(id);
    if (!row || row.order_id !== null || !(LIVE_STATUSES.includes(row.status) || row.status === 'approved')) return 'none';
    const m = await findMatch(row, this.deps.orderMatches, this.deps.settings);
    if (m.kind === 'own' || m.kind === 'unmatched') {
      await this.link(row, m.order, m.by, actor);
      return 'linked';
    }
    if (m.kind === 'none' || row.status !== 'open') return 'none';
    if (m.kind === 'other_member')
      await this.move(
        id,
        { set: { reason: `Order ${m.order.id} has this order reference but belongs to member ${m.order.member_id}: support decides.` } },
        actor,
      );
    if (m.kind === 'ambiguous')
      await this.move(
        id,
        {
          set: {
            reason: `${m.orders.length} orders of this shop match the amount and date (orders ${m.orders.map((o) => o.id).join(', ')}): support decides.`,
          },
        },
        actor,
      );
    return 'support';
  }

  /**
   * Assigns an order without a member to the claim's member, recording the claim's click as the
   * order's when it has one. A click pruned (or found not to fit the order) since the claim was
   * made does not stop the match: the order is then assigned without it.
   */
  private async assignOrder(orderId: number, row: ClaimRow, actor: string): Promise<void> {
    const note = `Missing-cashback claim ${row.id}`;
    if (row.click_id !== null) {
      try {
        await this.deps.orders.assign(orderId, row.member_id, actor, undefined, note, row.click_id);
        return;
      } catch (err) {
        if (!isServiceError(err) || !['svc_click_not_found', 'svc_click_mismatch'].includes(err.code)) throw err;
      }
    }
    await this.deps.orders.assign(orderId, row.member_id, actor, undefined, note);
  }

  /**
   * Ties a claim to an order that is (or becomes) its member's: an order without a member is
   * assigned first, with the claim as the reason. A claim the network approved keeps its status.
   */
  async link(row: ClaimRow, order: OrderMatch, by: 'order_ref' | 'amount' | 'network' | 'administrator', actor: string): Promise<void> {
    let reason: string;
    if (order.member_id === row.member_id) reason = `Order ${order.id} was already tracked for the member.`;
    else {
      await this.assignOrder(order.id, row, actor);
      reason = `Order ${order.id} was assigned to the member (matched by ${by.replace('_', ' ')}).`;
    }
    if (row.status === 'approved') await this.move(row.id, { set: { order_id: order.id } }, actor);
    else await this.move(row.id, { to: 'matched', set: { order_id: order.id, reason } }, actor);
  }

  private async matchTo(id: number, orderId: number, actor: string): Promise<void> {
    const row = await this.store.row(id);
    if (!row) throw new ServiceError('svc_claim_not_found', `Claim ${id} not found.`, 404);
    const order = await this.deps.orderMatches.byId(orderId);
    if (!order) throw new ServiceError('svc_order_not_found', `Order ${orderId} not found.`, 404);
    if (row.order_id === orderId) return;
    if (FINAL.includes(row.status) && row.status !== 'approved')
      throw new ServiceError('svc_claim_invalid_transition', `Claim ${id} is ${row.status}: it cannot be matched to an order.`, 409, {
        from: row.status,
        to: 'matched',
      });
    if (order.network !== row.network || (order.advertiser !== null && order.advertiser !== row.advertiser))
      throw new ServiceError('svc_claim_order_mismatch', `Order ${orderId} is not an order of the claim's shop (${row.network} ${row.advertiser}).`, 409, {
        order_id: orderId,
      });
    await this.link(row, order, 'administrator', actor);
  }

  /**
   * One change to one claim in one transaction with the claim locked: a status move the rules
   * allow (409 svc_claim_invalid_transition otherwise) and fields. A move to the status the claim
   * has, with the values it has, changes nothing (no event). A status change fires
   * `cashtrack.claim.status_changed` in the transaction and is logged after it.
   */
  async move(id: number, change: ClaimMove, actor: string): Promise<{ changed: boolean; from: ClaimStatus }> {
    const { clock, db, logger } = this.deps;
    const done = await db.grouped(async (t: Transaction) => {
      const row = await this.store.lock(id, t);
      if (!row) throw new ServiceError('svc_claim_not_found', `Claim ${id} not found.`, 404);
      const to = change.to ?? row.status;
      const moving = to !== row.status;
      if (moving) {
        if ((change.from && !change.from.includes(row.status)) || !CLAIM_TRANSITIONS[row.status].includes(to))
          throw new ServiceError('svc_claim_invalid_transition', `Claim ${id} cannot move from ${row.status} to ${to}.`, 409, {
            from: row.status,
            to,
            allowed: CLAIM_TRANSITIONS[row.status],
          });
      }
      const set: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(change.set ?? {})) {
        const current = (row as unknown as Record<string, unknown>)[k];
        const same = current instanceof Date && v instanceof Date ? current.getTime() === v.getTime() : current === v;
        if (!same) set[k] = v;
      }
      if (!moving && Object.keys(set).length === 0) return { changed: false, from: row.status, claim: null };
      const now = clock.now();
      if (moving) {
        set.status = to;
        if (FINAL.includes(to)) set.resolved_at = now;
      }
      set.updated_at = now;
      await this.store.update(id, set, t);
      const [claim] = await this.store.byIds([id], t);
      if (moving) await this.deps.events.emit(t, HOOKS.claimStatusChanged, claim, { from: row.status, to, actor });
      return { changed: true, from: row.status, claim, moving };
    });
    if (done.claim && (done as { moving?: boolean }).moving)
      logger.info('claims', 'Claim status changed', {
        claim_id: id,
        from: done.from,
        to: done.claim.status,
        reason: done.claim.reason,
        order_id: done.claim.order_id,
        network_ref: done.claim.network_ref,
        actor,
      });
    return { changed: done.changed, from: done.from };
  }

  /** Days a claim on `network` has (`claims.deadline_days`). */
  deadlineDays(network: string): number {
    return this.deps.settings.deadlineDays[network] ?? this.deps.settings.deadlineDays.default ?? 60;
  }

  /** New orders of a shop: run the matching rule for that shop's claims it could answer. */
  private async orderArrived(orderId: number): Promise<void> {
    const order = await this.deps.orderMatches.byId(orderId);
    if (!order || order.advertiser === null) return;
    const ids = await this.store.candidatesFor({
      network: order.network,
      advertiser: order.advertiser,
      merchant_ref: order.merchant_ref,
      currency: order.currency,
    });
    for (const id of ids) await this.match(id, 'claims');
  }

  /**
   * The claim's click: a given `click_id` must be a click on file of the claim's member on the
   * claim's shop (404 svc_click_not_found, 409 svc_click_mismatch, as an order's assignment
   * checks it); none given, the member's latest click on the shop within the network's cookie
   * window before the purchase (the window of an order's candidates), or null.
   */
  private async clickOf(input: ClaimCreateInput): Promise<string | null> {
    if (input.click_id === undefined || input.click_id === null) {
      const latest = await this.deps.clicks.latestOf(input.member_id, input.network, input.advertiser, input.purchased_at);
      return latest?.id ?? null;
    }
    const click = (await this.deps.clicks.rows([input.click_id])).get(input.click_id);
    if (!click) throw new ServiceError('svc_click_not_found', `Click ${input.click_id.slice(0, 40)} not found.`, 404, { field: 'click_id' });
    if (click.member_id !== input.member_id)
      throw new ServiceError('svc_click_mismatch', `Click ${click.id} is member ${click.member_id}'s, not member ${input.member_id}'s.`, 409, {
        field: 'click_id',
        click_member_id: click.member_id,
      });
    if (click.network !== input.network || click.advertiser !== input.advertiser)
      throw new ServiceError('svc_click_mismatch', `Click ${click.id} was on ${click.network}/${click.advertiser}, not on this claim's shop.`, 409, {
        field: 'click_id',
        network: click.network,
        advertiser: click.advertiser,
      });
    return click.id;
  }

  /** A receipt as the media pipeline stores it; 400 svc_claim_receipt_not_image otherwise. */
  private async receipt(text: string) {
    const base64 = text.replace(/^data:[^;,]{0,100};base64,/, '').replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(base64) || base64.length === 0)
      throw invalid('svc_claim_receipt_not_image', 'The receipt must be an image (PNG, JPEG, GIF or WebP) sent as base64.', 'receipt');
    try {
      return await processImage(Buffer.from(base64, 'base64'), RECEIPT_LIMITS);
    } catch (err) {
      if (isServiceError(err) && err.code === 'svc_fetch_blocked')
        throw invalid('svc_claim_receipt_not_image', `The receipt is not an image we take: ${err.message}`, 'receipt');
      throw err;
    }
  }
}
