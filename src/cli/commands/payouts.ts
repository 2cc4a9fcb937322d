// `cashtrack payouts list|show|create|complete|cancel`: the REST routes' schemas and services,
// in-process.
import type { Payout } from '../../services/payouts/index.js';
import { payoutSchemas } from '../../services/payouts/schemas.js';
import { memberId, printJson, printTable, validateInput, withContext, type Io } from '../io.js';
import { idempotently } from '../idempotency.js';


const replayNote = (replayed: boolean) => (replayed ? ' (replayed: this Idempotency-Key was used before; nothing new happened)' : '');

export async function list(io: Io, opts: { status?: string; member?: string; currency?: string; page: number; perPage: number; json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const query = await validateInput(payoutSchemas.list, {
      status: opts.status,
      member_id: opts.member === undefined ? undefined : await memberId(ctx, opts.member),
      currency: opts.currency,
      page: opts.page,
      per_page: opts.perPage,
    });
    const { items, total } = await ctx.payouts.list(query);
    if (opts.json) return printJson(io, items);
    printTable(io, items as unknown as Record<string, unknown>[], ['id', 'login', 'amount', 'currency', 'method', 'status', 'created_at', 'closed_at']);
    io.stdout.write(`${total} payout(s)${total > items.length ? `, page ${query.page}` : ''}\n`);
  });
}

function printPayout(io: Io, p: Payout): void {
  const rows: [string, unknown][] = [
    ['id', p.id],
    ['member', `${p.display_name} (${p.login}, id ${p.member_id})`],
    ['amount', `${p.amount} ${p.currency}`],
    ['method', p.method],
    ['details', p.details],
    ['note', p.note],
    ['status', p.status],
    ['reference', p.reference],
    ['reason', p.reason],
    ['entries', [p.entry_id, p.return_entry_id].filter((e) => e !== null).join(', ')],
    ['created', `${p.created_at} by ${p.actor}`],
    ['closed', p.closed_at ? `${p.closed_at} by ${p.closed_by}` : null],
  ];
  for (const [k, v] of rows) if (v !== null && v !== '') io.stdout.write(`${k.padEnd(10)}${String(v)}\n`);
}

export async function show(io: Io, id: string, opts: { json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const params = await validateInput(payoutSchemas.payoutId, { id });
    const payout = await ctx.payouts.get(params.id);
    if (opts.json) return printJson(io, payout);
    printPayout(io, payout);
  });
}

export async function create(
  io: Io,
  member: string,
  amount: string,
  opts: { method: string; currency?: string; details?: string; note?: string; idempotencyKey?: string; json?: boolean },
): Promise<void> {
  await withContext(io, async (ctx) => {
    const payload = await validateInput(payoutSchemas.create, { member_id: await memberId(ctx, member), amount, currency: opts.currency, method: opts.method, details: opts.details, note: opts.note });
    const { result, replayed } = await idempotently(ctx, opts.idempotencyKey, 'payouts.create', { params: {}, payload }, 201, (once) => ctx.payouts.create(payload, 'cli', once));
    if (opts.json) return printJson(io, result);
    const { payout, balance } = result;
    io.stdout.write(`payout ${payout.id} created: ${payout.amount} ${payout.currency} to ${payout.login} via ${payout.method} (${payout.status}); available balance ${balance.available} ${balance.currency}${replayNote(replayed)}\n`);
  });
}

export async function complete(io: Io, id: string, opts: { reference?: string; idempotencyKey?: string; json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const params = await validateInput(payoutSchemas.payoutId, { id });
    const payload = await validateInput(payoutSchemas.complete, { reference: opts.reference });
    const { result, replayed } = await idempotently(ctx, opts.idempotencyKey, 'payouts.complete', { params, payload }, 200, (once) => ctx.payouts.complete(params.id, payload, 'cli', once));
    if (opts.json) return printJson(io, result);
    io.stdout.write(`payout ${result.payout.id} paid: ${result.payout.amount} ${result.payout.currency} to ${result.payout.login}${replayNote(replayed)}\n`);
  });
}

export async function cancel(io: Io, id: string, opts: { reason: string; idempotencyKey?: string; json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const params = await validateInput(payoutSchemas.payoutId, { id });
    const payload = await validateInput(payoutSchemas.cancel, { reason: opts.reason });
    const { result, replayed } = await idempotently(ctx, opts.idempotencyKey, 'payouts.cancel', { params, payload }, 200, (once) => ctx.payouts.cancel(params.id, payload, 'cli', once));
    if (opts.json) return printJson(io, result);
    const { payout, balance } = result;
    io.stdout.write(`payout ${payout.id} cancelled: ${payout.amount} ${payout.currency} credited back to ${payout.login}; available balance ${balance.available} ${balance.currency}${replayNote(replayed)}\n`);
  });
}
