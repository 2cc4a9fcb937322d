// `orders.poll`: walks the transactions of one network, or of every enabled and configured
// network, and records each through the orders service (source `poll`), so status changes the
// network makes later reach the ledger. Recording is idempotent per (network, transaction id,
// status), so a page redone after a takeover, or a transaction that also came by postback, is
// counted once. Each page is a checkpoint.
import Joi from 'joi';
import type { Context } from '../../context.js';
import { toDate } from '../../db/values.js';
import { isServiceError, type ServiceError } from '../../errors.js';
import type { OrderChange, OrderReport, RecordInput } from '../../services/orders.js';
import type { NetworkTransaction } from '../../networks/types.js';
import type { JobHandle, JobType } from '../registry.js';
import { forEachNetwork, networkParam, type NetworkCheckpoint } from './per-network.js';

export interface PollCounts {
  pages: number;
  seen: number;
  created: number;
  updated: number;
  duplicate: number;
  failed: number;
}

interface Current {
  network: string;
  from: string;
  to: string;
  counts: PollCounts;
}

type Checkpoint = NetworkCheckpoint<PollCounts & { from: string; to: string }, Current>;

const DAY = 86_400_000;
/** Transactions recorded in one database transaction, at most. */
const BATCH = 200;
/** Margin before the oldest pending order: networks report a change at the order's event time or later. */
const PENDING_MARGIN_DAYS = 7;
/** Window when nothing is pending and no `since` is given. */
const DEFAULT_DAYS = 30;

/** Where a poll of `network` starts: `since`, else the oldest pending order minus a margin, else 30 days ago; never before the network's lookback. */
export async function pollWindow(ctx: Context, network: string, since: Date | undefined, maxLookbackDays: number | null): Promise<{ from: Date; to: Date }> {
  const to = ctx.clock.now();
  let from: Date;
  if (since) from = since;
  else {
    const [row] = await ctx.db.select<{ at: unknown }>("SELECT MIN(COALESCE(event_at, created_at)) AS at FROM orders WHERE network = ? AND status = 'pending'", [network]);
    const oldest = toDate(row?.at);
    from = oldest ? new Date(oldest.getTime() - PENDING_MARGIN_DAYS * DAY) : new Date(to.getTime() - DEFAULT_DAYS * DAY);
  }
  if (maxLookbackDays !== null && maxLookbackDays > 0) {
    const floor = new Date(to.getTime() - maxLookbackDays * DAY);
    if (from < floor) from = floor;
  }
  if (from > to) from = to;
  return { from, to };
}

async function recordState(ctx: Context, network: string, counts: object, error: string | null): Promise<void> {
  const at = ctx.clock.now();
  const previous = (await ctx.networks.get(network)).last_sync_result;
  const base = previous && typeof previous === 'object' && !Array.isArray(previous) ? (previous as Record<string, unknown>) : {};
  await ctx.networks.recordSync(network, { at, result: { ...base, orders: { ...counts, at: at.toISOString() } }, error });
}

function reportOf(network: string, t: NetworkTransaction): RecordInput {
  return {
    network,
    transaction_id: t.transaction_id,
    status: t.status,
    advertiser: t.advertiser_id,
    merchant_ref: t.merchant_ref,
    sub_id: t.sub_id,
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

function refused(job: JobHandle, network: string, t: NetworkTransaction, err: ServiceError, counts: PollCounts): void {
  counts.failed++;
  job.progress({ failed: 1 });
  job.log('warning', 'Polled transaction refused', { network, transaction_id: String(t?.transaction_id).slice(0, 191), code: err.code, field: err.data?.field });
}

/**
 * Records a page of transactions: those that pass the checks in batches of one transaction each
 * (the orders service's recordMany); a batch refused as a whole is recorded again one by one, so
 * each refusal is counted on its own transaction.
 */
async function recordPage(ctx: Context, job: JobHandle, network: string, page: NetworkTransaction[], counts: PollCounts): Promise<void> {
  const ready: { t: NetworkTransaction; report: OrderReport }[] = [];
  for (const t of page) {
    counts.seen++;
    try {
      ready.push({ t, report: ctx.orders.prepare(reportOf(network, t), 'system') });
    } catch (err) {
      if (!isServiceError(err)) throw err;
      refused(job, network, t, err, counts);
    }
  }
  for (let i = 0; i < ready.length; i += BATCH) {
    const batch = ready.slice(i, i + BATCH);
    let changes: OrderChange[] | null = null;
    try {
      changes = await ctx.orders.recordMany(batch.map((r) => r.report), 'system');
    } catch {
      // One of them was refused (or a fault): each again on its own, below.
    }
    if (changes) {
      for (const change of changes) count(change, counts);
      job.progress({ done: changes.length });
      continue;
    }
    for (const { t, report } of batch) {
      try {
        count(await ctx.orders.record(report, 'system'), counts);
        job.progress({ done: 1 });
      } catch (err) {
        if (!isServiceError(err)) throw err;
        refused(job, network, t, err, counts);
      }
    }
  }
}

async function pollNetwork(ctx: Context, job: JobHandle<{ network?: string; since?: Date }>, network: string, state: Checkpoint): Promise<PollCounts & { from: string; to: string }> {
  const { module, runtime: rt } = await ctx.networks.runtime(network, job.signal);
  const resume = state.current?.network === module.id ? state.current : null;
  const window = resume ? { from: new Date(resume.from), to: new Date(resume.to) } : await pollWindow(ctx, module.id, job.params.since, module.limits.maxLookbackDays);
  const counts: PollCounts = resume ? { ...resume.counts } : { pages: 0, seen: 0, created: 0, updated: 0, duplicate: 0, failed: 0 };
  const skip = counts.pages;
  const where = { network: module.id, from: window.from.toISOString(), to: window.to.toISOString() };
  ctx.logger.info('orders', resume ? 'Order poll resumed' : 'Order poll started', { ...where, pages_done: skip, actor: `job:${job.id}` });
  try {
    let index = 0;
    for await (const page of module.listTransactions(rt, window)) {
      if (index++ < skip) continue;
      job.throwIfStopped();
      await recordPage(ctx, job, module.id, page, counts);
      counts.pages++;
      state.current = { network: module.id, from: where.from, to: where.to, counts: { ...counts } };
      await job.saveCheckpoint(state);
    }
  } catch (err) {
    if (job.signal.aborted) throw err;
    const message = err instanceof Error ? err.message : String(err);
    await recordState(ctx, module.id, { ...counts, error: message }, message);
    ctx.logger.error('orders', 'Order poll failed', { ...where, ...counts, error: message.slice(0, 500) });
    throw err;
  }
  await recordState(ctx, module.id, counts, null);
  ctx.logger.info('orders', 'Order poll finished', { ...where, ...counts });
  return { ...counts, from: where.from, to: where.to };
}

/** Polls transactions from the networks' modules. */
export const ordersPoll: JobType<{ network?: string; since?: Date }> = {
  type: 'orders.poll',
  description: 'Poll transactions from one network, or from every enabled and configured network, and record them as orders.',
  params: Joi.object({
    network: networkParam,
    since: Joi.date().iso().description('Start of the window (default: the oldest pending order minus 7 days, else 30 days ago).'),
  }),
  run(ctx, job) {
    return forEachNetwork(ctx, job, (network, state: Checkpoint) => pollNetwork(ctx, job, network, state));
  },
};
