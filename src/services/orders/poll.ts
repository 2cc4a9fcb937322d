// Order polling: walks one network's transactions over a window and records each as an order
// (source `poll`), so status changes the network makes later reach the ledger. Recording is
// idempotent per (network, transaction id, status), so a page redone after a resume, or a
// transaction that also came by postback, is counted once. The caller (the `orders.poll` job)
// keeps the state after each page, as the advertiser sync's caller does.
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { toDate } from '../../db/values.js';
import { errorCode, isServiceError, type ServiceError } from '../../errors.js';
import type { ModuleRuntime, NetworkTransaction } from '../../networks/types.js';
import type { WalkTotal } from '../jobs/index.js';
import type { LogService } from '../logs/index.js';
import type { NetworkService } from '../networks/index.js';
import type { PaymentLine, PaymentSource, PaymentSummary } from './payments.js';
import type { OrderReport, RecordInput } from './reports.js';
import type { OrderChange } from './types.js';

export interface PollCounts {
  pages: number;
  seen: number;
  created: number;
  updated: number;
  duplicate: number;
  failed: number;
  /** Payment lines the transactions carried (Awin's paidToPublisher, impact.com's ClearedDate, a custom feed's paid fields): newly recorded, and of them conflicts. */
  payments?: { recorded: number; unknown: number; conflict: number };
}

/** Where a poll of one network stands: saved after each page, so a resumed poll skips the pages it did. */
export interface PollState {
  network: string;
  from: string;
  to: string;
  counts: PollCounts;
}

export interface PollOptions {
  /** Start of the window (default: see `window`). */
  since?: Date;
  /** The state saved by an interrupted run of this poll, to resume from (same window, pages skipped). */
  resume?: PollState | null;
  /** Called after each page is recorded (the job saves its checkpoint here). */
  onPage?: (state: PollState) => Promise<void>;
  /** Transactions handled (recorded or refused; `failed` counts the latter), as they are (the job's progress). */
  onProgress?: (delta: { done?: number; failed?: number }) => void;
  /** The number of transactions in the window, once the network tells it, and exactly at the end of the walk (the job's total). */
  onTotal?: (total: WalkTotal) => void;
  /** A transaction refused by the orders service (the job logs it). */
  onRefused?: (context: Record<string, unknown>) => void;
  signal?: AbortSignal;
  actor?: string;
}

/** What recording a report needs of the orders service. */
export interface OrderRecorder {
  prepare(input: RecordInput, actor: string): OrderReport;
  recordMany(inputs: OrderReport[], actor: string): Promise<OrderChange[]>;
  record(input: OrderReport, actor: string): Promise<OrderChange>;
  recordPayments(network: string, lines: PaymentLine[], source: PaymentSource, actor: string): Promise<PaymentSummary>;
}

export interface OrderPollDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  networks: NetworkService;
  orders: OrderRecorder;
}

const DAY = 86_400_000;
/** Transactions recorded in one database transaction, at most. */
const BATCH = 200;
/** Margin before the oldest pending order: networks report a change at the order's event time or later. */
const PENDING_MARGIN_DAYS = 7;
/** How far back a poll looks for approved orders the network has not paid yet (networks pay about three months after the sale). */
const PAYMENT_REACH_DAYS = 120;
/** Window when nothing is pending and no `since` is given. */
const DEFAULT_DAYS = 30;
/**
 * Who the orders, their log lines and ledger entries name as the cause (docs/api.md, Actors): the
 * poll itself, as `postback` names a postback, so that an entry says which way the network's word came.
 */
const POLL_ACTOR = 'poll';

function reportOf(network: string, t: NetworkTransaction): RecordInput {
  return {
    network,
    transaction_id: t.transaction_id,
    status: t.status,
    advertiser: t.advertiser_id,
    merchant_ref: t.merchant_ref,
    sub_id: t.sub_id,
    member_ref: t.member_ref ?? null,
    sale_amount: t.sale_amount,
    commission: t.commission,
    currency: t.currency,
    event_at: t.event_at,
    clicked_at: t.clicked_at,
    raw: t.raw,
    source: 'poll',
  };
}

function count(change: OrderChange, counts: PollCounts): void {
  if (change.changes.includes('created')) counts.created++;
  else if (change.duplicate) counts.duplicate++;
  else counts.updated++;
}

/** Polls a network's transactions into orders. */
export class OrderPoll {
  constructor(private readonly deps: OrderPollDeps) {}

  /**
   * Where a poll of `network` starts: `since`, else the oldest pending order minus a margin (with
   * `payments`, a network whose transactions say when they are paid, also the oldest approved
   * order not paid yet, up to PAYMENT_REACH_DAYS back), else 30 days ago; never before the network's lookback.
   */
  async window(network: string, since: Date | undefined, maxLookbackDays: number | null, payments = false): Promise<{ from: Date; to: Date }> {
    const to = this.deps.clock.now();
    let from: Date;
    if (since) from = since;
    else {
      const [row] = await this.deps.db.select<{ at: unknown }>(
        "SELECT MIN(COALESCE(event_at, created_at)) AS at FROM orders WHERE network = ? AND status = 'pending'",
        [network],
      );
      let oldest = toDate(row?.at);
      if (payments) {
        const reach = new Date(to.getTime() - PAYMENT_REACH_DAYS * DAY);
        const [unpaid] = await this.deps.db.select<{ at: unknown }>(
          "SELECT MIN(COALESCE(event_at, created_at)) AS at FROM orders WHERE network = ? AND status = 'approved' AND network_paid_at IS NULL AND created_at >= ?",
          [network, reach],
        );
        const at = toDate(unpaid?.at);
        if (at && (!oldest || at < oldest)) oldest = at < reach ? reach : at;
      }
      from = oldest ? new Date(oldest.getTime() - PENDING_MARGIN_DAYS * DAY) : new Date(to.getTime() - DEFAULT_DAYS * DAY);
    }
    if (maxLookbackDays !== null && maxLookbackDays > 0) {
      const floor = new Date(to.getTime() - maxLookbackDays * DAY);
      if (from < floor) from = floor;
    }
    if (from > to) from = to;
    return { from, to };
  }

  /**
   * Polls one network over its window, a page at a time. Records counts or the error in the
   * network's state and the log; a failure throws after recording, and `resume` picks it up
   * where it stopped.
   */
  async poll(network: string, options: PollOptions = {}): Promise<PollCounts & { from: string; to: string }> {
    const { logger } = this.deps;
    const { module, runtime: rt } = await this.deps.networks.runtime(network, options.signal);
    const resume = options.resume?.network === module.id ? options.resume : null;
    const window = resume
      ? { from: new Date(resume.from), to: new Date(resume.to) }
      : await this.window(module.id, options.since, module.limits.maxLookbackDays, !!module.paymentsInTransactions);
    const counts: PollCounts = resume ? { ...resume.counts } : { pages: 0, seen: 0, created: 0, updated: 0, duplicate: 0, failed: 0 };
    const skip = counts.pages;
    const where = { network: module.id, from: window.from.toISOString(), to: window.to.toISOString() };
    logger.info('orders', resume ? 'Order poll resumed' : 'Order poll started', { ...where, pages_done: skip, actor: options.actor });
    try {
      // Between pages every transaction seen is handled; a total comes between pages.
      const walk: ModuleRuntime = { ...rt, setTotal: (total) => options.onTotal?.({ total, handled: counts.seen }) };
      let index = 0;
      for await (const page of module.listTransactions(walk, window)) {
        if (index++ < skip) continue;
        options.signal?.throwIfAborted();
        await this.recordPage(module.id, page, counts, options);
        await this.recordPayments(module.id, module.custom ? 'feed' : 'poll', page, counts);
        counts.pages++;
        await options.onPage?.({ network: module.id, from: where.from, to: where.to, counts: { ...counts } });
      }
      options.onTotal?.({ total: counts.seen, handled: counts.seen });
    } catch (err) {
      if (options.signal?.aborted) throw err;
      const message = err instanceof Error ? err.message : String(err);
      await this.deps.networks.recordRun(module.id, 'orders', counts, message, errorCode(err));
      logger.error('orders', 'Order poll failed', { ...where, ...counts, error: message.slice(0, 500) });
      throw err;
    }
    await this.deps.networks.recordRun(module.id, 'orders', counts, null);
    logger.info('orders', 'Order poll finished', { ...where, ...counts });
    return { ...counts, from: where.from, to: where.to };
  }

  /** The payments the page's transactions carry, after their orders (an order refused keeps its line as unknown). */
  private async recordPayments(network: string, source: PaymentSource, page: NetworkTransaction[], counts: PollCounts): Promise<void> {
    const lines: PaymentLine[] = page.filter((t) => t?.payment).map((t) => ({ ...t.payment!, transaction_id: t.transaction_id, raw: undefined }));
    if (lines.length === 0) return;
    const summary = await this.deps.orders.recordPayments(network, lines, source, POLL_ACTOR);
    const p = (counts.payments ??= { recorded: 0, unknown: 0, conflict: 0 });
    p.recorded += summary.recorded;
    p.unknown += summary.unknown;
    p.conflict += summary.conflict;
  }

  private refused(network: string, t: NetworkTransaction, err: ServiceError, counts: PollCounts, options: PollOptions): void {
    counts.failed++;
    options.onProgress?.({ done: 1, failed: 1 });
    options.onRefused?.({ network, transaction_id: String(t?.transaction_id).slice(0, 191), code: err.code, field: err.data?.field });
  }

  /**
   * Records a page of transactions: those that pass the checks in batches of one database
   * transaction each (recordMany); a batch refused as a whole is recorded again one by one, so
   * each refusal is counted on its own transaction.
   */
  private async recordPage(network: string, page: NetworkTransaction[], counts: PollCounts, options: PollOptions): Promise<void> {
    const { orders } = this.deps;
    const ready: { t: NetworkTransaction; report: OrderReport }[] = [];
    for (const t of page) {
      counts.seen++;
      try {
        ready.push({ t, report: orders.prepare(reportOf(network, t), POLL_ACTOR) });
      } catch (err) {
        if (!isServiceError(err)) throw err;
        this.refused(network, t, err, counts, options);
      }
    }
    for (let i = 0; i < ready.length; i += BATCH) {
      const batch = ready.slice(i, i + BATCH);
      let changes: OrderChange[] | null = null;
      try {
        changes = await orders.recordMany(
          batch.map((r) => r.report),
          POLL_ACTOR,
        );
      } catch {
        // One of them was refused (or a fault): each again on its own, below.
      }
      if (changes) {
        for (const change of changes) count(change, counts);
        options.onProgress?.({ done: changes.length });
        continue;
      }
      for (const { t, report } of batch) {
        try {
          count(await orders.record(report, POLL_ACTOR), counts);
          options.onProgress?.({ done: 1 });
        } catch (err) {
          if (!isServiceError(err)) throw err;
          this.refused(network, t, err, counts, options);
        }
      }
    }
  }
}
