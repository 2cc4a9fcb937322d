// Orders: conversions from the networks (postback, poll) or entered by hand, and their ledger
// effects. Every change runs in one transaction with the order row locked, so the same network
// transaction arriving twice, or by two routes at once, is counted once. A network's report past
// the review rule (order-review.ts) is recorded but held: no ledger effect until an administrator
// releases it. The service's parts are in orders/: its types and the order states, the reader, the
// rules of a change (changes.ts) and an administrator's changes (admin.ts); the counts per network
// other domains show are a read model (counts.ts, OrderCounts).
import type { Transaction } from '../../db/transaction.js';
import { isUniqueViolation } from '../../db/errors.js';
import { replaceInColumns, type Replacement } from '../../db/erasure.js';
import { ServiceError } from '../../errors.js';
import { checkAdvertiser, checkNetwork, decodeRule, ruleKey, type CashbackRuleService } from '../cashback/index.js';
import type { CashbackRule } from '../../cashback-rule.js';
import type { Once } from '../idempotency/index.js';
import { OrderEffects } from './effects.js';
import { aboutReport, checkStatus, invalid, membersOf, prepareReport, type OrderReport, type RecordInput } from './reports.js';
import { valuesOf, type StatusCounts } from '../../db/lists.js';
import { OrderCounts } from './counts.js';
import { insertOrders, OrderReader, orderKey, type Order, type OrderFilters, type OrderWhere } from './store.js';
import { REVIEW_STATES, type ReviewReason } from './states.js';
import { OrderReview, reviewReason } from './review.js';
import type { Job } from '../jobs/index.js';
import { OrderPoll, type PollCounts, type PollOptions } from './poll.js';
import { OrderAdmin } from './admin.js';
import { OrderChanges } from './changes.js';
import { readStatement, requireStatement, type StatementCounts } from './statements.js';
import { readPaymentReport, type ImportSummary } from './payment-import.js';
import { OrderPayments, type NetworkPayment, type PaymentLine, type PaymentSource, type PaymentSummary } from './payments.js';
import type { Applied, OrderChange, OrderOutcome, OrderServiceDeps, UpdateInput } from './types.js';

export { OrderCounts } from './counts.js';
export { OrderMatches, type OrderMatch } from './matches.js';
export {
  AGE_BUCKETS,
  OrderReceivables,
  VARIANCE_LIMIT_MAX,
  type AgeBucket,
  type NetworkReceivables,
  type ReceivablesOverview,
} from './receivables.js';
export type { Order, OrderFilters, OrderWhere } from './store.js';
export { ORDER_ORDERBY } from './store.js';

/** The filters of `GET /orders/counts`: the list's, without paging, sort and the status ones. */
export type OrderCountFilters = Omit<OrderWhere, 'status' | 'status_exclude'>;

/**
 * The rule an order's cashback is computed with (`cashback.rate_policy`): `order`, the rule in
 * force when the order arrives (also when there is no click); `click`, the rule shown at the click
 * (the order's rule when the click has none); `best`, of the two the one giving the member more
 * on this order (the order's rule on a tie, or when the click's flat rule is in another currency).
 */
export function choosePolicyRule(
  policy: 'order' | 'click' | 'best',
  orderRule: CashbackRule,
  clickRule: CashbackRule | null,
  amounts: { sale: number; commission: number; currency: string },
  cashback: Pick<CashbackRuleService, 'compute'>,
): CashbackRule {
  if (policy === 'order' || clickRule === null) return orderRule;
  if (policy === 'click') return clickRule;
  let atClick: number;
  try {
    atClick = cashback.compute(clickRule, amounts);
  } catch {
    return orderRule;
  }
  let atOrder: number;
  try {
    atOrder = cashback.compute(orderRule, amounts);
  } catch {
    return clickRule;
  }
  return atClick > atOrder ? clickRule : orderRule;
}

/** The filters as any caller may pass them (the schemas check them too; jobs and scripts may not have). */
function checkFilters(filters: OrderWhere): void {
  if (filters.review !== undefined && !(REVIEW_STATES as readonly string[]).includes(filters.review))
    throw invalid('review', `review must be one of ${REVIEW_STATES.join(', ')}.`);
  for (const n of valuesOf(filters.network)) checkNetwork(n, 'svc_invalid_order');
  if (filters.advertiser !== undefined) checkAdvertiser(filters.advertiser, 'svc_invalid_order');
  for (const s of valuesOf(filters.status)) checkStatus(s);
  for (const s of valuesOf(filters.status_exclude)) checkStatus(s, 'status_exclude');
}
export {
  ORDER_SOURCES,
  ORDER_STATUSES,
  REVIEW_REASONS,
  REVIEW_STATES,
  type OrderSource,
  type OrderStatus,
  type ReviewReason,
  type ReviewState,
} from './states.js';
export type { OrderReport, RecordInput } from './reports.js';
export type { PollCounts, PollOptions, PollState } from './poll.js';
export type { StatementCounts } from './statements.js';
export type { ImportSummary } from './payment-import.js';
export {
  PAYMENT_SOURCES,
  type NetworkPayment,
  type PaymentLine,
  type PaymentOutcome,
  type PaymentResult,
  type PaymentSource,
  type PaymentSummary,
} from './payments.js';
export type { LogEvent, OrderChange, OrderOutcome, OrderServiceDeps, UpdateInput } from './types.js';

/** Records orders idempotently, moves them between statuses and applies their ledger effects. */
export class OrderService {
  private readonly reader: OrderReader;
  private readonly statusCounts: OrderCounts;
  private readonly effects: OrderEffects;
  private readonly review: OrderReview;
  private readonly poller: OrderPoll;
  private readonly changes: OrderChanges;
  private readonly admin: OrderAdmin;
  private readonly payments: OrderPayments;

  constructor(private readonly deps: OrderServiceDeps) {
    this.poller = new OrderPoll({ db: deps.db, clock: deps.clock, logger: deps.logger, networks: deps.networks, orders: this });
    this.reader = new OrderReader(deps.db);
    this.statusCounts = new OrderCounts({ db: deps.db });
    this.effects = new OrderEffects({
      db: deps.db,
      ledger: deps.ledger,
      referrals: deps.referrals,
      referralShare: deps.referralShare,
      networks: deps.networks,
      configured: deps.configuredNetworks,
    });
    this.review = new OrderReview({ networks: deps.networks, logger: deps.logger, siteCeiling: deps.reviewAbove ?? null, configured: deps.configuredNetworks });
    this.changes = new OrderChanges(deps, this.reader, this.effects);
    this.admin = new OrderAdmin(deps, this.reader, this.effects, this.changes);
    this.payments = new OrderPayments(deps, this.reader, this.effects);
  }

  /**
   * Records what a network says it paid: one answer per line (`recorded`, `already`, `unknown`,
   * `conflict`, `invalid`) and the counts; idempotent, and exactly once for the cashback an order
   * held for the payment (`cashback_payable: on_network_payment`). See payments.ts.
   */
  recordPayments(network: string, lines: PaymentLine[], source: PaymentSource, actor: string): Promise<PaymentSummary> {
    checkNetwork(network, 'svc_invalid_payment');
    return this.payments.record(network, lines, source, actor);
  }

  /**
   * Starts a `networks.payments` job: reads the payments statement of one network (404
   * svc_network_not_found; 409 svc_network_no_payments when it has none), or of every enabled,
   * configured network that has one. 409 svc_job_already_running while the same read is queued or running.
   */
  async startPaymentsRead(input: { network?: string; since?: Date }, actor: string): Promise<Job> {
    if (input.network !== undefined) requireStatement(await this.deps.networks.module(input.network));
    const params: Record<string, unknown> = {};
    if (input.network !== undefined) params.network = input.network;
    if (input.since !== undefined) params.since = input.since;
    return this.deps.jobs.enqueue('networks.payments', params, actor, { unique: true });
  }

  /** Whether a network reads a payments statement (the `networks.payments` job walks only those). */
  async hasStatement(network: string): Promise<boolean> {
    return !!(await this.deps.networks.module(network)).listPayments;
  }

  /** Reads one network's payments statement into payment lines (the `networks.payments` job's work; see statements.ts). */
  readStatement(
    network: string,
    options: { since?: Date; signal?: AbortSignal; actor?: string; onProgress?: (delta: { done?: number; failed?: number }) => void } = {},
  ): Promise<StatementCounts & { since: string }> {
    return readStatement({ ...this.deps, record: (n, l, s, a) => this.payments.record(n, l, s, a) }, network, options);
  }

  /**
   * Imports a network's payment report (CSV) by its definition's `payments` mapping: each line's
   * outcome with its line number, and the counts. 409 svc_no_payments_mapping when the network's
   * definition has none (built-in networks report their payments themselves); 400 svc_invalid_csv.
   */
  async importPayments(network: string, csv: string, actor: string): Promise<ImportSummary> {
    const module = await this.deps.networks.module(network);
    if (!module.paymentsMapping)
      throw new ServiceError(
        'svc_no_payments_mapping',
        `${module.name} has no payments mapping: add "payments": {"fields": {"transaction_id": …, "payment_id": …}} to its definition first.`,
        409,
        { network: module.id },
      );
    const { lines, lineNumbers } = readPaymentReport(csv, module.paymentsMapping);
    const summary = await this.payments.record(module.id, lines, 'import', actor);
    return { ...summary, results: summary.results.map((r, i) => ({ ...r, line: lineNumbers[i] })) };
  }

  /** A network's payment lines, newest first (`unknown`: only those for transactions we do not know). */
  listPayments(network: string, filters: { unknown?: boolean; page: number; per_page: number }): Promise<{ items: NetworkPayment[]; total: number }> {
    checkNetwork(network, 'svc_invalid_payment');
    return this.payments.list(network, filters);
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
    const [change] = await this.recordMany(
      [input],
      actor,
      once && { claim: once.claim && ((t) => once.claim!(t)), record: (changes, t) => once.record(changes[0], t) },
    );
    return change;
  }

  /** Checks a report before recording it (400 svc_invalid_order and the amount codes); logs a refusal. */
  prepare(input: RecordInput | OrderReport, actor: string, options: { quiet?: boolean } = {}): OrderReport {
    if ((input as OrderReport).prepared === true) return input as OrderReport;
    try {
      return prepareReport(input as RecordInput, actor, this.deps.currency);
    } catch (err) {
      if (err instanceof ServiceError && !options.quiet)
        this.deps.logger.warning('orders', 'Order report refused', { code: err.code, ...aboutReport(input as RecordInput, actor), field: err.data.field });
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
    return this.recordAll(inputs, actor, (applied, t) => this.changes.results(applied, t), once);
  }

  /** `recordMany`, answering only what each report did (no order is read back: the postback endpoint's path). */
  recordOutcomes(inputs: (RecordInput | OrderReport)[], actor: string, once?: Once<OrderOutcome[]>): Promise<OrderOutcome[]> {
    return this.recordAll(
      inputs,
      actor,
      async (applied) =>
        applied.map((a) => ({
          id: a.row.id,
          status: a.row.status,
          duplicate: a.changes.length === 0,
          changes: a.changes,
          ignored: a.ignored,
          held: a.row.review === 'held' && (a.changes[0] === 'created' || a.changes.includes('review')),
        })),
      once,
    );
  }

  private async recordAll<R>(
    inputs: (RecordInput | OrderReport)[],
    actor: string,
    answer: (applied: Applied[], t: Transaction) => Promise<R[]>,
    once?: Once<R[]>,
  ): Promise<R[]> {
    const reports = inputs.map((input) => this.prepare(input, actor));
    if (reports.length === 0) return [];
    try {
      await this.checkReferences(reports);
      // A sub id that is a click id of the report's network names its click: the member and the rule shown at the click.
      const found = await this.deps.clicks.byIds(reports.filter((r) => r.memberId === null && r.subId !== null).map((r) => r.subId!));
      const clicks = reports.map((r) => {
        const c = r.memberId === null && r.subId !== null ? found.get(r.subId) : undefined;
        return c && c.network === r.network ? c : null;
      });
      const [members, rules, ceilings] = await Promise.all([
        membersOf(this.deps.users, reports, clicks),
        this.deps.cashback.resolveMany(reports.map((r) => ({ network: r.network, advertiser: r.advertiser }))),
        this.review.ceilings(reports.filter((r) => r.source !== 'manual').map((r) => r.network)),
      ]);
      // What each report's amounts would be held for (an administrator's own report never is).
      const holds = reports.map((r): ReviewReason | null => (r.source === 'manual' ? null : reviewReason(r.amounts, ceilings.get(r.network) ?? null)));
      const { result, events } = await this.retryOnDuplicateKey(() =>
        this.deps.db.transaction(async (t) => {
          await once?.claim?.(t);
          const orders = await this.reader.lockByTransactions(
            reports.map((r) => ({ network: r.network, transactionId: r.transactionId })),
            t,
          );
          // The first report of each transaction not on file creates its order.
          const creators = new Map<string, number>();
          reports.forEach((r, i) => {
            const key = orderKey(r.network, r.transactionId);
            if (!orders.has(key) && !creators.has(key)) creators.set(key, i);
          });
          if (creators.size > 0)
            for (const row of await insertOrders(
              this.deps,
              [...creators.values()].map((i) => ({
                report: reports[i],
                memberId: members[i],
                rule: choosePolicyRule(
                  this.deps.ratePolicy ?? 'order',
                  rules.get(ruleKey(reports[i].network, reports[i].advertiser))!,
                  decodeRule(clicks[i]?.cashback_rule),
                  reports[i].amounts,
                  this.deps.cashback,
                ),
                clickId: clicks[i]?.id ?? null,
                held: holds[i],
              })),
              t,
            ).then((rows) => this.payments.attach(rows, t)))
              orders.set(orderKey(row.network, row.transaction_id), row);

          const applied: Applied[] = [];
          for (const [i, r] of reports.entries()) {
            const key = orderKey(r.network, r.transactionId);
            const row = orders.get(key)!;
            const a =
              creators.get(key) === i ? await this.changes.enterNew(row, r, actor, t) : await this.changes.applyReport(row, r, members[i], holds[i], actor, t);
            orders.set(key, a.row);
            applied.push(a);
          }
          await this.effects.settle(t);
          const result = await answer(applied, t);
          await once?.record(result, t);
          const events = applied.flatMap((a) => a.events);
          await this.changes.announce(events, t);
          return { result, events };
        }),
      );
      this.changes.emit(events);
      return result;
    } catch (err) {
      if (err instanceof ServiceError && reports.length === 1)
        this.deps.logger.warning('orders', 'Order report refused', { code: err.code, ...reports[0].about, field: err.data.field });
      throw err;
    }
  }

  /**
   * An administrator's change: a status move the rules allow (409 svc_invalid_transition
   * otherwise), amounts while pending (409 svc_order_not_pending after), and the note.
   */
  update(id: number, input: UpdateInput, actor: string, once?: Once<OrderChange>): Promise<OrderChange> {
    return this.admin.update(id, input, actor, once);
  }

  /**
   * Gives an unmatched order its member and applies the ledger effects of its current status.
   * 409 svc_order_already_assigned when it has another member; the same member again is a duplicate.
   * With `clickId` (a candidate's click, `GET /orders/{id}/candidates`) the order records the
   * click, and the member may be left out (the click's); 404 svc_click_not_found, 409
   * svc_click_mismatch when the click is another member's or another shop's.
   */
  assign(id: number, memberId: number | null, actor: string, once?: Once<OrderChange>, note?: string | null, clickId?: string | null): Promise<OrderChange> {
    return this.admin.assign(id, memberId, actor, once, note, clickId ?? null);
  }

  /**
   * Releases an order held for review: the ledger effects of its current status apply, once (a
   * pending order counts as pending, an approved one is credited, a declined one moves nothing).
   * 409 svc_order_not_held when it is not held (never held, or released or declined already).
   */
  release(id: number, actor: string, once?: Once<OrderChange>, note?: string | null): Promise<OrderChange> {
    return this.admin.decide(id, 'released', actor, once, note);
  }

  /**
   * Declines an order held for review: it becomes declined with no ledger effect, and later
   * reports of the network about it are ignored. 409 svc_order_not_held when it is not held.
   */
  declineHeld(id: number, actor: string, once?: Once<OrderChange>, note?: string | null): Promise<OrderChange> {
    return this.admin.decide(id, 'declined', actor, once, note);
  }

  async get(id: number): Promise<Order> {
    const [order] = await this.reader.byIds([id], { raw: true });
    if (!order) throw new ServiceError('svc_order_not_found', `Order ${id} not found.`, 404);
    return order;
  }

  /** Every order of a member, oldest first, with its raw record, read page by page (their data export). */
  ofMember(memberId: number): AsyncGenerator<Order> {
    return this.reader.ofMember(memberId);
  }

  /**
   * At a member's erasure, in `t`: their orders keep every amount and status (and the member, so
   * the ledger still adds up); the person's words are replaced in the note, the sub-id and the raw
   * network record. Answers how many orders changed.
   */
  eraseMember(memberId: number, replacements: readonly Replacement[], t: Transaction): Promise<number> {
    return replaceInColumns(
      this.deps.db,
      t,
      { table: 'orders', key: 'id', columns: ['note', 'sub_id', 'raw'], where: 'member_id = ?', params: [memberId] },
      replacements,
    );
  }

  list(filters: OrderFilters): Promise<{ items: Order[]; total: number }> {
    checkFilters(filters);
    return this.reader.list(filters);
  }

  /** The next `limit` orders of the list's filters after id `afterId`, in id order (an export's keyset walk). */
  listAfter(filters: OrderWhere, afterId: number, limit: number): Promise<Order[]> {
    checkFilters(filters);
    return this.reader.listAfter(filters, afterId, limit);
  }

  /** The views row of the list: orders per status (every status, 0 included) under the list's other filters. */
  counts(filters: OrderCountFilters): Promise<StatusCounts> {
    checkFilters(filters);
    return this.statusCounts.countByStatus(filters);
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
  pollWindow(network: string, since: Date | undefined, maxLookbackDays: number | null, payments = false): Promise<{ from: Date; to: Date }> {
    return this.poller.window(network, since, maxLookbackDays, payments);
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
}
