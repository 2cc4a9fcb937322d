// `cashtrack ledger members|entries|adjust|reverse|verify`.
import { ledgerSchemas } from '../../services/ledger/schemas.js';
import { idempotently } from '../idempotency.js';
import { memberId, printJson, printTable, validateInput, withContext, type Io } from '../io.js';

export async function members(io: Io, opts: { search?: string; currency?: string; minBalance?: string; orderby?: string; order?: string; page: number; perPage: number; json?: boolean }): Promise<void> {
  const query = await validateInput(ledgerSchemas.members, {
    search: opts.search,
    currency: opts.currency,
    min_balance: opts.minBalance,
    orderby: opts.orderby,
    order: opts.order,
    page: opts.page,
    per_page: opts.perPage,
  });
  await withContext(io, async (ctx) => {
    const { items, total } = await ctx.ledger.listMembers(query);
    if (opts.json) return printJson(io, items);
    printTable(io, items as unknown as Record<string, unknown>[], ['member_id', 'login', 'currency', 'available', 'pending', 'lifetime_earned', 'lifetime_paid', 'last_entry_at']);
    io.stdout.write(`${total} balance(s)\n`);
  });
}

export async function entries(io: Io, member: string, opts: { type?: string; currency?: string; page: number; perPage: number; json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const member_id = await memberId(ctx, member);
    const query = await validateInput(ledgerSchemas.entries, { member_id, type: opts.type, currency: opts.currency, page: opts.page, per_page: opts.perPage });
    const { items, total } = await ctx.ledger.listEntries(query);
    if (opts.json) return printJson(io, items);
    printTable(
      io,
      items.map((e) => ({ ...e, source: `${e.source.type}${e.source.id ? ':' + e.source.id : ''}`, reversed_by: e.reversed_by ?? '' })),
      ['id', 'created_at', 'type', 'amount', 'balance_after', 'currency', 'source', 'reversed_by', 'actor', 'note'],
    );
    io.stdout.write(`${total} entr${total === 1 ? 'y' : 'ies'}\n`);
  });
}

export async function adjust(io: Io, member: string, type: string, amount: string, opts: { note?: string; currency?: string; allowNegative?: boolean; idempotencyKey?: string; json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const member_id = await memberId(ctx, member);
    const input = await validateInput(ledgerSchemas.adjustment, { member_id, type, amount, currency: opts.currency, note: opts.note, allow_negative: opts.allowNegative });
    const { result } = await idempotently(ctx, opts.idempotencyKey, 'ledger.adjust', { params: {}, payload: input }, 201, (once) => ctx.ledger.adjust(input, 'cli', once));
    if (opts.json) return printJson(io, result);
    const { entry, balance } = result;
    io.stdout.write(`entry ${entry.id}: ${entry.amount} ${entry.currency} (${type}); available now ${balance.available} ${balance.currency}\n`);
  });
}

export async function reverse(io: Io, entryId: string, opts: { note?: string; idempotencyKey?: string; json?: boolean }): Promise<void> {
  const { id } = await validateInput(ledgerSchemas.entryId, { id: entryId });
  await validateInput(ledgerSchemas.reverse, { note: opts.note });
  await withContext(io, async (ctx) => {
    const { result } = await idempotently(ctx, opts.idempotencyKey, 'ledger.reverse', { params: { id }, payload: { note: opts.note } }, 201, (once) => ctx.ledger.reverse(id, opts.note ?? null, 'cli', once));
    if (opts.json) return printJson(io, result);
    const { reversal, original } = result;
    io.stdout.write(`entry ${reversal.id} reverses entry ${original.id}: ${reversal.amount} ${reversal.currency}; balance now ${reversal.balance_after}\n`);
  });
}

export async function verify(io: Io, opts: { json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    // The ledger's own invariants, then every payout against its entries.
    const found = [...(await ctx.ledger.verify()), ...(await ctx.payouts.verify())];
    if (opts.json) printJson(io, { ok: found.length === 0, discrepancies: found });
    else if (found.length === 0) io.stdout.write('ledger verified: every balance equals its entries, every invariant holds\n');
    else {
      io.stdout.write(`${found.length} discrepanc${found.length === 1 ? 'y' : 'ies'}:\n`);
      for (const d of found) io.stdout.write(`  ${d.kind}${d.member_id ? ` member ${d.member_id}` : ''}${d.currency ? ` ${d.currency}` : ''}${d.entry_id ? ` entry ${d.entry_id}` : ''}: ${d.detail}${d.expected !== undefined ? ` (expected ${d.expected}, found ${d.actual ?? 'none'})` : ''}\n`);
    }
    if (found.length > 0) {
      ctx.logger.error('ledger', 'Ledger verification found discrepancies', { count: found.length, kinds: [...new Set(found.map((d) => d.kind))] });
      throw new VerifyFailed(found.length);
    }
  });
}

/** `ledger verify` found problems: exit 1 after printing them (no extra message). */
export class VerifyFailed extends Error {
  readonly silent = true;
  constructor(readonly count: number) {
    super(`${count} discrepancies`);
  }
}
