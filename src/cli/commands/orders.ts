// `cashtrack orders list|show|create|update|assign|release|decline|poll`: the REST routes' schemas and services, in-process.
import type { Order, OrderChange } from '../../services/orders/index.js';
import { changeStatus, orderSchemas } from '../../services/orders/schemas.js';
import { memberId, printJson, printTable, UsageError, validateInput, withContext, type Io } from '../io.js';
import { idempotently } from '../idempotency.js';


const who = (o: Order) => (o.member ? `${o.member.login} (id ${o.member.id})` : 'unmatched');

function printOrder(io: Io, o: Order): void {
  const rows: [string, unknown][] = [
    ['id', o.id],
    ['network', o.network],
    ['transaction', o.transaction_id],
    ['merchant', o.merchant_ref],
    ['advertiser', o.advertiser],
    ['member', who(o)],
    ['sub id', o.sub_id],
    ['status', `${o.status} (since ${o.status_changed_at})`],
    ['review', o.review ? `${o.review.state}${o.review.reason ? ` (${o.review.reason.replace(/_/g, ' ')})` : ''}${o.review.reviewed_by ? ` by ${o.review.reviewed_by} at ${o.review.reviewed_at}` : ''}` : null],
    ['sale', `${o.sale_amount} ${o.currency}`],
    ['commission', `${o.commission} ${o.currency}`],
    ['cashback', `${o.cashback} ${o.currency}${o.cashback_rule ? ` (${o.cashback_rule.type} ${o.cashback_rule.value}${o.cashback_rule.currency ? ' ' + o.cashback_rule.currency : ''})` : ''}`],
    ['credited', o.cashback_entry_id === null ? null : `entry ${o.cashback_entry_id}`],
    ['referral', o.referral ? `${o.referral.amount} ${o.currency} to ${o.referral.referrer.login} (entry ${o.referral.entry_id})` : null],
    ['source', o.source],
    ['event', o.event_at],
    ['recorded', o.created_at],
    ['note', o.note],
  ];
  for (const [k, v] of rows) if (v !== null && v !== undefined && v !== '') io.stdout.write(`${k.padEnd(12)}${String(v)}\n`);
}

function printChange(io: Io, c: OrderChange, replayed: boolean): void {
  const what = c.changes[0] === 'created' ? 'recorded' : c.duplicate ? 'unchanged (already recorded)' : `changed (${c.changes.join(', ')})`;
  io.stdout.write(`order ${c.id} ${what}: ${c.network}:${c.transaction_id} ${c.status}, cashback ${c.cashback} ${c.currency}, member ${who(c)}`);
  if (c.review) io.stdout.write(`; review: ${c.review.state}${c.review.state === 'held' && c.review.reason ? ` (${c.review.reason.replace(/_/g, ' ')})` : ''}`);
  if (c.ignored.length) io.stdout.write(`; ignored: ${c.ignored.join(', ')}`);
  io.stdout.write(`${replayed ? ' (replayed: this Idempotency-Key was used before; nothing new happened)' : ''}\n`);
}

export async function list(
  io: Io,
  opts: { status?: string; member?: string; network?: string; advertiser?: string; unmatched?: boolean; matched?: boolean; review?: string; search?: string; after?: string; before?: string; page: number; perPage: number; json?: boolean },
): Promise<void> {
  if (opts.unmatched && opts.matched) throw new UsageError('--unmatched and --matched exclude each other');
  await withContext(io, async (ctx) => {
    const query = await validateInput(orderSchemas.list, {
      status: opts.status,
      member_id: opts.member === undefined ? undefined : await memberId(ctx, opts.member),
      network: opts.network,
      advertiser: opts.advertiser,
      unmatched: opts.unmatched ? true : opts.matched ? false : undefined,
      review: opts.review,
      search: opts.search,
      after: opts.after,
      before: opts.before,
      page: opts.page,
      per_page: opts.perPage,
    });
    const { items, total } = await ctx.orders.list(query);
    if (opts.json) return printJson(io, items);
    printTable(
      io,
      items.map((o) => ({ ...o, member: o.member?.login ?? '(unmatched)', review: o.review?.state ?? '' })),
      ['id', 'created_at', 'network', 'transaction_id', 'member', 'status', 'review', 'sale_amount', 'commission', 'cashback', 'currency'],
    );
    io.stdout.write(`${total} order(s)${total > items.length ? `, page ${query.page}` : ''}\n`);
  });
}

export async function show(io: Io, id: string, opts: { json?: boolean }): Promise<void> {
  const params = await validateInput(orderSchemas.orderId, { id });
  await withContext(io, async (ctx) => {
    const order = await ctx.orders.get(params.id);
    if (opts.json) return printJson(io, order);
    printOrder(io, order);
  });
}

export async function create(
  io: Io,
  opts: {
    network: string;
    transactionId: string;
    saleAmount: string;
    commission: string;
    note: string;
    member?: string;
    subId?: string;
    advertiser?: string;
    merchantRef?: string;
    currency?: string;
    status?: string;
    clickedAt?: string;
    eventAt?: string;
    idempotencyKey?: string;
    json?: boolean;
  },
): Promise<void> {
  await withContext(io, async (ctx) => {
    const payload = await validateInput(orderSchemas.create, {
      network: opts.network,
      transaction_id: opts.transactionId,
      member_id: opts.member === undefined ? undefined : await memberId(ctx, opts.member),
      sub_id: opts.subId,
      advertiser: opts.advertiser,
      merchant_ref: opts.merchantRef,
      sale_amount: opts.saleAmount,
      commission: opts.commission,
      currency: opts.currency,
      status: opts.status,
      clicked_at: opts.clickedAt,
      event_at: opts.eventAt,
      note: opts.note,
    });
    const { result, replayed } = await idempotently(ctx, opts.idempotencyKey, 'orders.create', { params: {}, payload }, changeStatus, (once) =>
      ctx.orders.record({ ...(payload), source: 'manual' }, 'cli', once),
    );
    if (opts.json) return printJson(io, result);
    printChange(io, result, replayed);
  });
}

export async function update(io: Io, id: string, opts: { status?: string; saleAmount?: string; commission?: string; currency?: string; note?: string; idempotencyKey?: string; json?: boolean }): Promise<void> {
  const params = await validateInput(orderSchemas.orderId, { id });
  const payload = await validateInput(orderSchemas.update, { status: opts.status, sale_amount: opts.saleAmount, commission: opts.commission, currency: opts.currency, note: opts.note });
  await withContext(io, async (ctx) => {
    const { result, replayed } = await idempotently(ctx, opts.idempotencyKey, 'orders.update', { params, payload }, 200, (once) => ctx.orders.update(params.id, payload, 'cli', once));
    if (opts.json) return printJson(io, result);
    printChange(io, result, replayed);
  });
}

export async function assign(io: Io, id: string, member: string, opts: { note?: string; idempotencyKey?: string; json?: boolean }): Promise<void> {
  const params = await validateInput(orderSchemas.orderId, { id });
  await withContext(io, async (ctx) => {
    const payload = await validateInput(orderSchemas.assign, { member_id: await memberId(ctx, member), note: opts.note });
    const { result, replayed } = await idempotently(ctx, opts.idempotencyKey, 'orders.assign', { params, payload }, 200, (once) => ctx.orders.assign(params.id, payload.member_id, 'cli', once, payload.note ?? null));
    if (opts.json) return printJson(io, result);
    printChange(io, result, replayed);
  });
}

/** `orders release ID` and `orders decline ID`: an administrator's decision on an order held for review. */
async function decide(io: Io, id: string, decision: 'release' | 'decline', opts: { note?: string; idempotencyKey?: string; json?: boolean }): Promise<void> {
  const params = await validateInput(orderSchemas.orderId, { id });
  const payload = await validateInput(orderSchemas.review, { note: opts.note });
  await withContext(io, async (ctx) => {
    const { result, replayed } = await idempotently(ctx, opts.idempotencyKey, `orders.${decision}`, { params, payload }, 200, (once) =>
      decision === 'release' ? ctx.orders.release(params.id, 'cli', once, payload.note ?? null) : ctx.orders.declineHeld(params.id, 'cli', once, payload.note ?? null),
    );
    if (opts.json) return printJson(io, result);
    printChange(io, result, replayed);
  });
}

export const release = (io: Io, id: string, opts: { note?: string; idempotencyKey?: string; json?: boolean }) => decide(io, id, 'release', opts);
export const decline = (io: Io, id: string, opts: { note?: string; idempotencyKey?: string; json?: boolean }) => decide(io, id, 'decline', opts);

/** `orders poll`: starts an `orders.poll` job as POST /orders/poll does (the same refusals) and runs it here to the end, printing the counts. */
export async function poll(io: Io, opts: { network?: string; since?: string; json?: boolean; progress?: boolean }): Promise<void> {
  if (opts.since !== undefined && Number.isNaN(Date.parse(opts.since))) throw new UsageError(`--since must be an ISO 8601 date, got "${opts.since}"`);
  const input = await validateInput(orderSchemas.poll, { network: opts.network, since: opts.since });
  await withContext(io, async (ctx) => {
    const { runInProcess } = await import('./jobs.js');
    const { jobProgressLine } = await import('../progress.js');
    const queued = await ctx.orders.startPoll(input, 'cli');
    if (!opts.json) io.stdout.write(`job ${queued.id} orders.poll started\n`);
    const job = await runInProcess(ctx, queued, jobProgressLine(io, opts));
    if (opts.json) return printJson(io, job);
    const result = (job.result ?? {}) as { networks?: Record<string, Record<string, unknown>>; failed?: Record<string, string> };
    const rows = Object.entries(result.networks ?? {}).map(([network, c]) => ({ network, ...c }));
    if (rows.length) printTable(io, rows, ['network', 'from', 'to', 'pages', 'seen', 'created', 'updated', 'duplicate', 'failed']);
    else io.stdout.write('no enabled, configured network to poll\n');
    for (const [network, error] of Object.entries(result.failed ?? {})) io.stderr.write(`${network}: ${error}\n`);
  });
}
