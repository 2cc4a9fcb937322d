// `cashtrack ledger members|entries|adjust|reverse|verify`: member balances and ledger entries.
import { Option, type Command } from 'commander';
import type { Entry, MemberBalance } from '../../services/ledger/index.js';
import { ENTRY_ORDERBY, ENTRY_TYPES, ledgerSchemas, MEMBER_ORDERBY } from '../../services/ledger/schemas.js';
import { idempotently } from '../idempotency.js';
import { memberId, printJson, validateInput, withContext, type Io } from '../io.js';
import { commaChoices, json, listCommand, type ListOptions, type ListPage, type Run, type SortOptions } from '../options.js';

export function register(ledger: Command, run: Run): void {
  listCommand(
    ledger
      .command('members')
      .description('balances per member and currency')
      .option('--member <member>', "only this member's balances (member id or login)")
      .option('--search <s>', 'prefix of a login, email or display name')
      .option('--currency <code>', 'only this currency')
      .option('--min-balance <amount>', 'only available balances of at least this')
      .addOption(new Option('--orderby <field>', 'sort by').choices(MEMBER_ORDERBY).default('available'))
      .addOption(new Option('--order <dir>', 'asc or desc').choices(['asc', 'desc'])),
    {
      items: 'rows',
      perPage: 20,
      columns: ['member_id', 'login', 'currency', 'available', 'pending', 'lifetime_earned', 'lifetime_paid', 'last_entry_at'],
      count: (total) => `${total} balance(s)`,
      pageInCount: false,
    },
    run,
    members,
  );
  listCommand(
    ledger
      .command('entries <member>')
      .description("one member's entries, newest first (member id or login)")
      .option('--type <list>', 'only these entry types, comma-separated', commaChoices('--type', ENTRY_TYPES))
      .option('--type-exclude <list>', 'none of these entry types, comma-separated', commaChoices('--type-exclude', ENTRY_TYPES))
      .option('--currency <codes>', 'only these currencies, comma-separated')
      .option('--after <time>', 'posted strictly after this ISO 8601 time')
      .option('--before <time>', 'posted strictly before this ISO 8601 time')
      .addOption(new Option('--orderby <field>', 'sort by (default id; ties by id)').choices(Object.keys(ENTRY_ORDERBY)))
      .addOption(new Option('--order <dir>', 'sort direction (default desc)').choices(['asc', 'desc'])),
    {
      items: 'entries',
      perPage: 20,
      row: (e: Entry) => ({ ...e, source: `${e.source.type}${e.source.id ? `:${e.source.id}` : ''}`, reversed_by: e.reversed_by ?? '' }),
      columns: ['id', 'created_at', 'type', 'amount', 'balance_after', 'currency', 'source', 'reversed_by', 'actor', 'note'],
      count: (total) => `${total} entr${total === 1 ? 'y' : 'ies'}`,
      pageInCount: false,
    },
    run,
    entries,
  );
  ledger
    .command('adjust <member> <type> <amount>')
    .description('credit or debit a member: TYPE is credit or debit, AMOUNT a decimal string such as 12.50')
    .requiredOption('--note <text>', 'who asked for it and why')
    .option('--currency <code>', 'currency (default: the site currency)')
    .option('--allow-negative', 'let a debit take the balance below zero')
    .option('--idempotency-key <key>', 'run at most once for this key (retries replay the first result)')
    .addOption(json())
    .action(run(adjust));
  ledger
    .command('reverse <entry-id>')
    .description('reverse an entry (not a payout, not a reversal, at most once)')
    .option('--note <text>', 'why')
    .option('--idempotency-key <key>', 'run at most once for this key')
    .addOption(json())
    .action(run(reverse));
  ledger
    .command('verify')
    .description('recompute every balance from the entries and check every invariant; exit 1 on any discrepancy')
    .addOption(json())
    .action(run(verify));
}

export async function members(
  io: Io,
  opts: ListOptions & { member?: string; search?: string; currency?: string; minBalance?: string; orderby?: string; order?: string },
): Promise<ListPage<MemberBalance>> {
  return withContext(io, async (ctx) => {
    const query = await validateInput(ledgerSchemas.members, {
      member_id: opts.member === undefined ? undefined : await memberId(ctx, opts.member),
      search: opts.search,
      currency: opts.currency,
      min_balance: opts.minBalance,
      orderby: opts.orderby,
      order: opts.order,
      page: opts.page,
      per_page: opts.perPage,
    });
    return { ...(await ctx.ledger.listMembers(query)), page: query.page };
  });
}

export async function entries(
  io: Io,
  member: string,
  opts: ListOptions & SortOptions & { type?: string; typeExclude?: string; currency?: string; after?: string; before?: string },
): Promise<ListPage<Entry>> {
  return withContext(io, async (ctx) => {
    const member_id = await memberId(ctx, member);
    const query = await validateInput(ledgerSchemas.entries, {
      member_id,
      type: opts.type,
      type_exclude: opts.typeExclude,
      currency: opts.currency,
      after: opts.after,
      before: opts.before,
      orderby: opts.orderby,
      order: opts.order,
      page: opts.page,
      per_page: opts.perPage,
    });
    return { ...(await ctx.ledger.listEntries(query)), page: query.page };
  });
}

export async function adjust(
  io: Io,
  member: string,
  type: string,
  amount: string,
  opts: { note?: string; currency?: string; allowNegative?: boolean; idempotencyKey?: string; json?: boolean },
): Promise<void> {
  await withContext(io, async (ctx) => {
    const member_id = await memberId(ctx, member);
    const input = await validateInput(ledgerSchemas.adjustment, {
      member_id,
      type,
      amount,
      currency: opts.currency,
      note: opts.note,
      allow_negative: opts.allowNegative,
    });
    const { result } = await idempotently(ctx, opts.idempotencyKey, 'ledger.adjust', { params: {}, payload: input }, 201, (once) =>
      ctx.ledger.adjust(input, 'cli', once),
    );
    if (opts.json) return printJson(io, result);
    const { entry, balance } = result;
    io.stdout.write(`entry ${entry.id}: ${entry.amount} ${entry.currency} (${type}); available now ${balance.available} ${balance.currency}\n`);
  });
}

export async function reverse(io: Io, entryId: string, opts: { note?: string; idempotencyKey?: string; json?: boolean }): Promise<void> {
  const { id } = await validateInput(ledgerSchemas.entryId, { id: entryId });
  await validateInput(ledgerSchemas.reverse, { note: opts.note });
  await withContext(io, async (ctx) => {
    const { result } = await idempotently(ctx, opts.idempotencyKey, 'ledger.reverse', { params: { id }, payload: { note: opts.note } }, 201, (once) =>
      ctx.ledger.reverse(id, opts.note ?? null, 'cli', once),
    );
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
      for (const d of found)
        io.stdout.write(
          `  ${d.kind}${d.member_id ? ` member ${d.member_id}` : ''}${d.currency ? ` ${d.currency}` : ''}${d.entry_id ? ` entry ${d.entry_id}` : ''}: ${d.detail}${d.expected !== undefined ? ` (expected ${d.expected}, found ${d.actual ?? 'none'})` : ''}\n`,
        );
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
