// Orders: conversions from the networks (postback, poll) or entered by hand, and their ledger
// effects. Every change runs in one transaction with the order row locked, so the same network
// transaction arriving twice, or by two routes at once, is counted once. A network's report past
// the review rule (order-review.ts) is recorded but held: no ledger effect until an administrator
// releases it.
import { HOOKS } from '../hooks/index.js';
import type { WebhookEvents } from './webhooks/events.js';
import type { Transaction } from '../db/transaction.js';
import type { Clock } from '../clock.js';
import type { Database } from '../db/database.js';
import { isUniqueViolation } from '../db/errors.js';
import { ServiceError } from '../errors.js';
import { currencyExponent, formatAmount, parseAmount } from '../money.js';
import { checkAdvertiser, checkNetwork, decodeRule, ruleKey, type CashbackRuleService } from './cashback.js';
import type { LedgerService } from './ledger/index.js';
import type { Once } from './idempotency.js';
import type { LogService } from './logs.js';
import { OrderEffects, withNote } from './order-effects.js';
import { aboutReport, checkStatus, invalid, membersOf, optionalText, prepareReport, type Amounts, type OrderReport, type RecordInput } from './order-reports.js';
import { atRow, insertOrders, orderKey, REVIEW_STATES, type Order, type OrderFilters, type OrderRow, type OrderStatus, type ReviewReason } from './order-rows.js';
import { decideHeld, heldEvent, OrderReview, reviewReason } from './order-review.js';
import type { ReferralService } from './referrals.js';
import type { UserService } from './users.js';
import type { AdvertiserService } from './advertisers.js';
import type { Job, JobService } from './jobs.js';
import type { NetworkService } from './networks/index.js';
import { OrderPoll, type PollCounts, type PollOptions } from './order-poll.js';
import { OrderReader } from './orders/reader.js';

export { ORDER_SOURCES, ORDER_STATUSES, REVIEW_REASONS, REVIEW_STATES, type Order, type OrderFilters, type OrderSource, type OrderStatus, type ReviewReason, type ReviewState } from './order-rows.js';
export type { OrderReport, RecordInput } from './order-reports.js';
export type { PollCounts, PollOptions, PollState } from './order-poll.js';

/** An administrator's change to one order. */
export interface UpdateInput {
  status?: OrderStatus;
  sale_amount?: string;
  commission?: string;
  currency?: string;
  note?: string;
}

/** What recording a report did, without the order (see `recordOutcomes`). */
export interface OrderOutcome {
  id: number;
  status: OrderStatus;
  duplicate: boolean;
  changes: string[];
  ignored: string[];
  /** The report left the order held for review (new, or held by this correction). */
  held?: boolean;
}

/** What a change did: the order, plus `duplicate` (nothing changed), `changes` and `ignored` parts of the report. */
export interface OrderChange extends Order {
  duplicate: boolean;
  /** `created`, `amounts`, `status`, `member`, `note`, `review` (held, released or declined). */
  changes: string[];
  /** Parts of a network report not applied: `amounts` (order not pending, or a decline), `status` (back to pending), `member`. */
  ignored: string[];
}

export interface OrderServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  ledger: LedgerService;
  cashback: CashbackRuleService;
  referrals: ReferralService;
  /** The outbox: order events go to webhooks in the order's transaction, to hooks after commit. */
  events: WebhookEvents;
  /** The networks: a manual order's network must exist; polling reads their transactions. */
  networks: NetworkService;
  /** A manual order's advertiser must be on file. */
  advertisers: Pick<AdvertiserService, 'requireAdvertiser'>;
  /** Members of reports and assignments are users: read through their owner. */
  users: Pick<UserService, 'existingIds' | 'idByLogin' | 'requireMemberId'>;
  /** Poll jobs are queued here (`startPoll`). */
  jobs: Pick<JobService, 'enqueue'>;
  /** The site currency (default of an order's currency). */
  currency: string;
  /** `referrals.share_percent`: the referrer's share of the referee's cashback. */
  referralShare: string;
  /** `orders.review_above`: the site's review ceiling (null or "none": none). */
  reviewAbove?: string | null;
  /** `networks` from the configuration (their `review_above`). */
  configuredNetworks?: Record<string, Record<string, string>>;
}

/** Which status moves the rules allow. Nothing returns to pending. */
const TRANSITIONS: Record<OrderStatus, readonly OrderStatus[]> = {
  pending: ['approved', 'declined'],
  approved: ['declined'],
  declined: ['approved'],
};

/** A log line (and, for some, a hook) to emit once the transaction has committed. */
export type LogEvent = { level: 'info' | 'warning' | 'debug'; message: string; context: Record<string, unknown>; hook?: string };
type Applied = { row: OrderRow; changes: string[]; ignored: string[]; events: LogEvent[] };

/** Records orders idempotently, moves them between statuses and applies their ledger effects. */
export class OrderService {
  private readonly reader: OrderReader;
  private readonly effects: OrderEffects;
  private readonly review: OrderReview;
  private readonly poller: OrderPoll;

  constructor(private readonly deps: OrderServiceDeps) {
    this.poller = new OrderPoll({ db: deps.db, clock: deps.clock, logger: deps.logger, networks: deps.networks, orders: this });
    this.reader = new OrderReader(deps.db);
    this.effects = new OrderEffects({ db: deps.db, ledger: deps.ledger, referrals: deps.referrals, referralShare: deps.referralShare });
    this.review = new OrderReview({ networks: deps.networks, logger: deps.logger, siteCeiling: deps.reviewAbove ?? null, configured: deps.configuredNetworks });
  }

  /**
   * Records one report of an order, keyed by (network, transaction_id). New: stored with its
   * cashback from the effective rule, and its ledger effects applied. Known: the same status again
   * changes nothing (`duplicate`); amounts are corrected while pending; the status moves as the
   * rules allow. Network reports (postback, poll) arrive unordered, so a report that cannot apply
   * (amounts of a settled order, a return to pending) is skipped and listed in `ignored`; a manual
   * report is refused instead (409 svc_order_not_pending, svc_invalid_transition). A network's
   * report past the review rule is recorded but held (see `release`).
   */
  async record(input: RecordInput | OrderReport, actor: string, once?: Once<OrderChange>): Promise<OrderChange> {
    const [change] = await this.recordMany([input], actor, once && { claim: once.claim && ((t) => once.claim!(t)), record: (changes, t) => once.record(changes[0], t) });
    return change;
  }

  /** Checks a report before recording it (400 svc_invalid_order and the amount codes); logs a refusal. */
  prepare(input: RecordInput | OrderReport, actor: string, options: { quiet?: boolean } = {}): OrderReport {
    if ((input as OrderReport).prepared === true) return input as OrderReport;
    try {
      return prepareReport(input as RecordInput, actor, this.deps.currency);
    } catch (err) {
      if (err instanceof ServiceError && !options.quiet) this.deps.logger.warning('orders', 'Order report refused', { code: err.code, ...aboutReport(input as RecordInput, actor), field: err.data.field });
      throw err;
    }
  }

  /**
   * Records many reports in one transaction, in their order, with exactly the effects of
   * recording them one by one (`record`): a report of a transaction seen earlier in the batch
   * applies to the order as that report left it. New orders are written with one statement, the
   * pending balances they move with another. All or nothing: when one report is refused the
   * whole batch rolls back and throws; callers that want the others recorded run them again one
   * by one. `once` claims its Idempotency-Key first in the transaction and records every change,
   * in order, last.
   */
  recordMany(inputs: (RecordInput | OrderReport)[], actor: string, once?: Once<OrderChange[]>): Promise<OrderChange[]> {
    return this.recordAll(inputs, actor, (applied, t) => this.results(applied, t), once);
  }

  /** `recordMany`, answering only what each report did (no order is read back: the postback endpoint's path). */
  recordOutcomes(inputs: (RecordInput | OrderReport)[], actor: string, once?: Once<OrderOutcome[]>): Promise<OrderOutcome[]> {
    return this.recordAll(
      inputs,
      actor,
      async (applied) => applied.map((a) => ({ id: a.row.id, status: a.row.status, duplicate: a.changes.length === 0, changes: a.changes, ignored: a.ignored, held: a.row.review === 'held' && (a.changes[0] === 'created' || a.changes.includes('review')) })),
      once,
    );
  }

  private async recordAll<R>(inputs: (RecordInput | OrderReport)[], actor: string, answer: (applied: Applied[], t: Transaction) => Promise<R[]>, once?: Once<R[]>): Promise<R[]> {
    const reports = inputs.map((input) => this.prepare(input, actor));
    if (reports.length === 0) return [];
    try {
      await this.checkReferences(reports);
      const [members, rules, ceilings] = await Promise.all([
        membersOf(this.deps.users, reports),
        this.deps.cashback.resolveMany(reports.map((r) => ({ network: r.network, advertiser: r.advertiser }))),
        this.review.ceilings(reports.filter((r) => r.source !== 'manual').map((r) => r.network)),
      ]);
      // What each report's amounts would be held for (an administrator's own report never is).
      const holds = reports.map((r): ReviewReason | null => (r.source === 'manual' ? null : reviewReason(r.amounts, ceilings.get(r.network) ?? null)));
      const { result, events } = await this.retryOnDuplicateKey(() =>
        this.deps.db.transaction(async (t) => {
          await once?.claim?.(t);
          const orders = await this.reader.lockByTransactions(reports.map((r) => ({ network: r.network, transactionId: r.transactionId })), t);
          // The first report of each transaction not on file creates its order.
          const creators = new Map<string, number>();
          reports.forEach((r, i) => {
            const key = orderKey(r.network, r.transactionId);
            if (!orders.has(key) && !creators.has(key)) creators.set(key, i);
          });
          if (creators.size > 0) for (const row of await insertOrders(this.deps, [...creators.values()].map((i) => ({ report: reports[i], memberId: members[i], rule: rules.get(ruleKey(reports[i].network, reports[i].advertiser))!, held: holds[i] })), t)) orders.set(orderKey(row.network, row.transaction_id), row);

          const applied: Applied[] = [];
          for (const [i, r] of reports.entries()) {
            const key = orderKey(r.network, r.transactionId);
            const row = orders.get(key)!;
            const a = creators.get(key) === i ? await this.enterNew(row, r, actor, t) : await this.applyReport(row, r, members[i], holds[i], actor, t);
            orders.set(key, a.row);
            applied.push(a);
          }
          await this.effects.settle(t);
          const result = await answer(applied, t);
          await once?.record(result, t);
          const events = applied.flatMap((a) => a.events);
          await this.announce(events, t);
          return { result, events };
        }),
      );
      this.emit(events);
      return result;
    } catch (err) {
      if (err instanceof ServiceError && reports.length === 1) this.deps.logger.warning('orders', 'Order report refused', { code: err.code, ...reports[0].about, field: err.data.field });
      throw err;
    }
  }

  /** A new order's ledger effects (its row was just inserted). */
  private async enterNew(row: OrderRow, r: OrderReport, actor: string, t: Transaction): Promise<Applied> {
    const context: Record<string, unknown> = { order_id: row.id, ...r.about, status: row.status, member_id: row.member_id, sub_id: row.sub_id, cashback: formatAmount(row.cashback, row.currency), currency: row.currency, rule: row.cashback_rule };
    if (row.review === 'held') context.review = 'held';
    await this.effects.enter(row, actor, r.note, t, context);
    const events: LogEvent[] = [{ level: 'info', message: 'Order recorded', hook: HOOKS.orderRecorded, context }];
    if (row.review === 'held') events.push(heldEvent(row, actor));
    return { row, changes: ['created'], ignored: [], events };
  }

  /** Another report of a known order: amounts while pending, the status as the rules allow. */
  private async applyReport(existing: OrderRow, r: OrderReport, memberId: number | null, hold: ReviewReason | null, actor: string, t: Transaction): Promise<Applied> {
    const ignored: string[] = [];
    let target: Amounts | undefined = r.amounts;
    let status: OrderStatus | undefined = r.status;
    // A decline often comes with the amounts zeroed: they never overwrite the order's.
    if (r.status === 'declined' && this.amountsDiffer(existing, r.amounts)) (ignored.push('amounts'), (target = undefined));
    // Declined after review: what the network says of it no longer changes anything.
    if (existing.review === 'declined' && r.source !== 'manual') {
      if (target && this.amountsDiffer(existing, target)) ignored.push('amounts');
      if (status !== existing.status) ignored.push('status');
      target = undefined;
      status = undefined;
    }
    if (memberId !== null && memberId !== existing.member_id) ignored.push('member');
    const applied = await this.apply(existing, { amounts: target, status, raw: r.raw, hold }, r.source === 'manual' ? 'strict' : 'lenient', actor, null, t);
    applied.ignored.unshift(...ignored);
    if (applied.ignored.length > 0) applied.events.push({ level: 'warning', message: 'Order report partly ignored', context: { order_id: existing.id, ...r.about, ignored: applied.ignored, order_status: applied.row.status, reported_status: r.status, ...(existing.review ? { review: existing.review } : {}) } });
    if (applied.changes.length === 0) applied.events.push({ level: 'debug', message: 'Order unchanged (duplicate report)', context: { order_id: existing.id, ...r.about, status: r.status } });
    return applied;
  }

  /**
   * An administrator's change: a status move the rules allow (409 svc_invalid_transition
   * otherwise), amounts while pending (409 svc_order_not_pending after), and the note.
   */
  async update(id: number, input: UpdateInput, actor: string, once?: Once<OrderChange>): Promise<OrderChange> {
    const refused = (code: string) => this.deps.logger.warning('orders', 'Order change refused', { code, order_id: id, status: input?.status === undefined ? undefined : String(input.status).slice(0, 16), actor });
    return this.changeOne(id, once, refused, () => ({ status: input.status === undefined ? undefined : checkStatus(input.status), note: optionalText(input.note, 'note', 500) }), async (row, { status, note }, t) => {
      let amounts: Amounts | undefined;
      if (input.sale_amount !== undefined || input.commission !== undefined || input.currency !== undefined) {
        const currency = input.currency ?? row.currency;
        currencyExponent(currency);
        if (currency !== row.currency && (input.sale_amount === undefined || input.commission === undefined)) {
          throw invalid('currency', 'A change of currency needs both sale_amount and commission in the new currency.');
        }
        amounts = {
          currency,
          sale: input.sale_amount === undefined ? row.sale_amount : parseAmount(input.sale_amount, currency, { allowZero: true, field: 'sale_amount' }),
          commission: input.commission === undefined ? row.commission : parseAmount(input.commission, currency, { field: 'commission' }),
        };
      }
      const applied = await this.apply(row, { amounts, status }, 'strict', actor, note, t);
      if (note !== null && note !== row.note) {
        await this.deps.db.execute('UPDATE orders SET note = ?, updated_at = ? WHERE id = ?', [note, this.deps.clock.now(), id], t);
        applied.changes.push('note');
      }
      if (applied.changes.length === 0) applied.events.push({ level: 'debug', message: 'Order unchanged', context: { order_id: id, actor } });
      return applied;
    });
  }

  /**
   * Gives an unmatched order its member and applies the ledger effects of its current status.
   * 409 svc_order_already_assigned when it has another member; the same member again is a duplicate.
   */
  async assign(id: number, memberId: number, actor: string, once?: Once<OrderChange>, note?: string | null): Promise<OrderChange> {
    const refused = (code: string) => this.deps.logger.warning('orders', 'Order assignment refused', { code, order_id: id, member_id: memberId, actor });
    return this.changeOne(id, once, refused, () => optionalText(note, 'note', 500), async (row, text, t) => {
      await this.deps.users.requireMemberId(memberId, t);
      let applied: Applied = { row, changes: [], ignored: [], events: [] };
      if (row.member_id === memberId) {
        applied.events.push({ level: 'debug', message: 'Order already assigned to this member', context: { order_id: id, member_id: memberId, actor } });
      } else if (row.member_id !== null) {
        throw new ServiceError('svc_order_already_assigned', `Order ${id} already belongs to member ${row.member_id}.`, 409, { member_id: row.member_id });
      } else {
        const now = this.deps.clock.now();
        await this.deps.db.execute('UPDATE orders SET member_id = ?, updated_at = ? WHERE id = ?', [memberId, now, id], t);
        const assigned = { ...row, member_id: memberId, updated_at: now };
        const context = { order_id: id, member_id: memberId, status: row.status, actor };
        await this.effects.enter(assigned, actor, text ?? 'assigned by an administrator', t, context);
        applied = { row: assigned, changes: ['member'], ignored: [], events: [{ level: 'info', message: 'Order assigned', hook: HOOKS.orderAssigned, context }] };
      }
      return applied;
    });
  }

  /**
   * Releases an order held for review: the ledger effects of its current status apply, once (a
   * pending order counts as pending, an approved one is credited, a declined one moves nothing).
   * 409 svc_order_not_held when it is not held (never held, or released or declined already).
   */
  release(id: number, actor: string, once?: Once<OrderChange>, note?: string | null): Promise<OrderChange> {
    return this.decide(id, 'released', actor, once, note);
  }

  /**
   * Declines an order held for review: it becomes declined with no ledger effect, and later
   * reports of the network about it are ignored. 409 svc_order_not_held when it is not held.
   */
  declineHeld(id: number, actor: string, once?: Once<OrderChange>, note?: string | null): Promise<OrderChange> {
    return this.decide(id, 'declined', actor, once, note);
  }

  private async decide(id: number, decision: 'released' | 'declined', actor: string, once?: Once<OrderChange>, note?: string | null): Promise<OrderChange> {
    const refused = (code: string) => this.deps.logger.warning('orders', decision === 'released' ? 'Release of an order refused' : 'Decline of a held order refused', { code, order_id: id, actor });
    return this.changeOne(id, once, refused, () => optionalText(note, 'note', 500), async (row, text, t) => {
      if (row.review !== 'held') {
        throw new ServiceError('svc_order_not_held', `Order ${id} is not held for review${row.review ? ` (it was ${row.review} already)` : ''}.`, 409, { review: row.review });
      }
      const { set, row: decided, changes, events } = decideHeld(row, decision, actor, text, this.deps.clock.now());
      // Released, it is no longer held: the effects of its current status apply now, once.
      if (decision === 'released') await this.effects.enter(decided, actor, withNote('released after review', text), t, events[0].context);
      const columns = Object.keys(set);
      await this.deps.db.execute(`UPDATE orders SET ${columns.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`, [...columns.map((c) => set[c]), id], t);
      return { row: decided, changes, ignored: [], events };
    });
  }

  /**
   * One administrator's change to one order, the frame every such change shares: its input read
   * (`prepare`), the Idempotency-Key claimed, the order locked (404 svc_order_not_found), the
   * change made, its ledger effects settled, the answer recorded with the key in the same
   * transaction, hooks after commit. A refusal is logged by `refused`.
   */
  private async changeOne<P>(id: number, once: Once<OrderChange> | undefined, refused: (code: string) => void, prepare: () => P, change: (row: OrderRow, prepared: P, t: Transaction) => Promise<Applied>): Promise<OrderChange> {
    try {
      const prepared = prepare();
      const { result, events } = await this.deps.db.transaction(async (t) => {
        await once?.claim?.(t);
        const row = await this.reader.lockById(id, t);
        if (!row) throw new ServiceError('svc_order_not_found', `Order ${id} not found.`, 404);
        const applied = await change(row, prepared, t);
        await this.effects.settle(t);
        const [result] = await this.results([applied], t);
        await once?.record(result, t);
        await this.announce(applied.events, t);
        return { result, events: applied.events };
      });
      this.emit(events);
      return result;
    } catch (err) {
      if (err instanceof ServiceError) refused(err.code);
      throw err;
    }
  }


  async get(id: number): Promise<Order> {
    const [order] = await this.reader.byIds([id], { raw: true });
    if (!order) throw new ServiceError('svc_order_not_found', `Order ${id} not found.`, 404);
    return order;
  }

  list(filters: OrderFilters): Promise<{ items: Order[]; total: number }> {
    if (filters.review !== undefined && !(REVIEW_STATES as readonly string[]).includes(filters.review)) throw invalid('review', `review must be one of ${REVIEW_STATES.join(', ')}.`);
    if (filters.network !== undefined) checkNetwork(filters.network, 'svc_invalid_order');
    if (filters.advertiser !== undefined) checkAdvertiser(filters.advertiser, 'svc_invalid_order');
    if (filters.status !== undefined) checkStatus(filters.status);
    return this.reader.list(filters);
  }

  /** How many orders each network has (only `networks` when given): the networks' counts. */
  countByNetwork(networks?: string[]): Promise<Record<string, number>> {
    return this.reader.countByNetwork(networks);
  }

  /**
   * Starts an `orders.poll` job: of one network (404 svc_network_not_found when there is none),
   * or of every enabled, configured one. 409 svc_job_already_running while the same poll is
   * queued or running. The one way to start a poll: the route, the CLI and schedules call it.
   */
  async startPoll(input: { network?: string; since?: Date }, actor: string): Promise<Job> {
    if (input.network !== undefined) await this.deps.networks.module(input.network);
    const params: Record<string, unknown> = {};
    if (input.network !== undefined) params.network = input.network;
    if (input.since !== undefined) params.since = input.since;
    return this.deps.jobs.enqueue('orders.poll', params, actor, { unique: true });
  }

  /** Polls one network's transactions into orders (the `orders.poll` job's work; see order-poll.ts). */
  poll(network: string, options: PollOptions = {}): Promise<PollCounts & { from: string; to: string }> {
    return this.poller.poll(network, options);
  }

  /** Where a poll of `network` starts (see `OrderPoll.window`). */
  pollWindow(network: string, since: Date | undefined, maxLookbackDays: number | null): Promise<{ from: Date; to: Date }> {
    return this.poller.window(network, since, maxLookbackDays);
  }

  /**
   * An administrator's order names a network and an advertiser the site knows (404
   * svc_network_not_found, svc_advertiser_not_found), checked before anything is written. A
   * network's own reports are not checked: they come from the network, and may name an
   * advertiser before the advertiser sync has seen it.
   */
  private async checkReferences(reports: OrderReport[]): Promise<void> {
    const manual = reports.filter((r) => r.source === 'manual');
    for (const network of new Set(manual.map((r) => r.network))) await this.deps.networks.module(network);
    const advertisers = new Map(manual.filter((r) => r.advertiser !== null).map((r) => [`${r.network}\0${r.advertiser}`, r]));
    for (const r of advertisers.values()) await this.deps.advertisers.requireAdvertiser(r.network, r.advertiser!);
  }

  /** Two reports of a new transaction racing: the loser's INSERT hits the unique key; run it again. */
  private async retryOnDuplicateKey<T>(fn: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        if (attempt >= 3 || !isUniqueViolation(err)) throw err;
      }
    }
  }

  private amountsDiffer(row: OrderRow, a: Amounts): boolean {
    return row.sale_amount !== a.sale || row.commission !== a.commission || row.currency !== a.currency;
  }

  /**
   * Applies amounts and a status to a locked order. `strict` refuses what the rules forbid;
   * `lenient` (network reports) skips it and says so in `ignored`.
   */
  private async apply(row: OrderRow, target: { amounts?: Amounts; status?: OrderStatus; raw?: string | null; hold?: ReviewReason | null }, mode: 'strict' | 'lenient', actor: string, note: string | null, t: Transaction): Promise<Applied> {
    const out: Applied = { row, changes: [], ignored: [], events: [] };
    const now = this.deps.clock.now();
    // Every change of the order goes into one UPDATE, written once the effects are applied.
    const set: Record<string, unknown> = {};
    if (target.amounts && this.amountsDiffer(row, target.amounts)) {
      if (row.status !== 'pending') {
        if (mode === 'strict') throw new ServiceError('svc_order_not_pending', `Order ${row.id} is ${row.status}: amounts can only be corrected while it is pending.`, 409, { status: row.status });
        out.ignored.push('amounts');
      } else {
        const a = target.amounts;
        const rule = decodeRule(row.cashback_rule) ?? (await this.deps.cashback.resolve(row.network, row.advertiser, t));
        const cashback = this.deps.cashback.compute(rule, a);
        // A correction past the review rule holds the order, whatever was decided before (these amounts were not reviewed).
        const hold = row.review !== 'held' && target.hold ? target.hold : null;
        if (hold) this.effects.withdraw(row, t);
        else await this.effects.reprice(row, a.currency, cashback, t);
        Object.assign(set, { sale_amount: a.sale, commission: a.commission, currency: a.currency, cashback, updated_at: now });
        if (hold) Object.assign(set, { review: 'held', review_reason: hold, reviewed_by: null, reviewed_at: null });
        out.events.push({
          level: 'info',
          message: 'Order amounts corrected',
          context: {
            order_id: row.id,
            from: { sale_amount: formatAmount(row.sale_amount, row.currency), commission: formatAmount(row.commission, row.currency), cashback: formatAmount(row.cashback, row.currency), currency: row.currency },
            to: { sale_amount: formatAmount(a.sale, a.currency), commission: formatAmount(a.commission, a.currency), cashback: formatAmount(cashback, a.currency), currency: a.currency },
            actor,
          },
        });
        out.row = { ...row, sale_amount: a.sale, commission: a.commission, currency: a.currency, cashback, updated_at: now, ...(hold ? { review: 'held' as const, review_reason: hold, reviewed_by: null, reviewed_at: null } : {}) };
        out.changes.push('amounts');
        if (hold) (out.changes.push('review'), out.events.push(heldEvent(out.row, actor)));
      }
    }
    const to = target.status;
    if (to !== undefined && to !== out.row.status) {
      const from = out.row.status;
      if (!TRANSITIONS[from].includes(to)) {
        if (mode === 'strict') throw new ServiceError('svc_invalid_transition', `Order ${row.id} cannot move from ${from} to ${to}.`, 409, { from, to, allowed: TRANSITIONS[from] });
        out.ignored.push('status');
      } else if (mode === 'strict' && out.row.review === 'held') {
        // An administrator decides a held order by releasing or declining it, not by moving its status.
        throw new ServiceError('svc_order_held', `Order ${row.id} is held for review: release it (its ${from} status then applies) or decline it first.`, 409, { reason: out.row.review_reason });
      } else {
        const current = out.row;
        // Held: the move is recorded on the order and applies its effects only once released.
        const context: Record<string, unknown> = { order_id: row.id, network: row.network, transaction_id: row.transaction_id, from, to, member_id: current.member_id, actor, ...(current.review === 'held' ? { review: 'held' } : {}) };
        await this.effects.move(current, from, to, actor, note, t, context);
        Object.assign(set, { status: to, status_changed_at: now, updated_at: now });
        out.row = { ...current, status: to, status_changed_at: now, updated_at: now };
        out.changes.push('status');
        out.events.push({ level: 'info', message: 'Order status changed', hook: HOOKS.orderStatusChanged, context });
      }
    }
    if (out.changes.length > 0) {
      // The network's record of the report that changed the order.
      if (target.raw !== undefined && target.raw !== null) set.raw = target.raw;
      const columns = Object.keys(set);
      await this.deps.db.execute(`UPDATE orders SET ${columns.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`, [...columns.map((c) => set[c]), row.id], t);
    }
    return out;
  }

  /** Each change as its report left the order (one read for all the orders of the batch). */
  private async results(applied: Applied[], t: Transaction): Promise<OrderChange[]> {
    const orders = await this.reader.byIds([...new Set(applied.map((a) => a.row.id))], { raw: true, t });
    const byId = new Map(orders.map((o) => [o.id, o]));
    const last = new Map(applied.map((a, i) => [a.row.id, i]));
    return applied.map((a, i) => {
      const order = byId.get(a.row.id)!;
      // An order the batch changed again later: as this report left it.
      const shown = last.get(a.row.id) === i ? order : atRow(order, a.row);
      return { ...shown, duplicate: a.changes.length === 0, changes: a.changes, ignored: a.ignored };
    });
  }

  /** The events' webhooks go to the outbox in `t`; their hooks fire once `t` has committed. */
  private announce(events: LogEvent[], t: Transaction): Promise<void> {
    return this.deps.events.emitMany(t, events.flatMap((e): [string, unknown][] => (e.hook ? [[e.hook, e.context]] : [])));
  }

  /** Logs once the transaction has committed (a retried transaction logs once). */
  private emit(events: LogEvent[]): void {
    for (const e of events) this.deps.logger[e.level]('orders', e.message, e.context);
  }
}
