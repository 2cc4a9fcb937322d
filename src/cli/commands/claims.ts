// `cashtrack claims list|show|create|decline`: the claim schemas and service, in-process. A new
// claim is matched, filed with its network or left open exactly as over REST (one service method).
import { readFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import type { Claim } from '../../services/claims/index.js';
import { CLAIM_ORDERBY, CLAIM_STATUSES, claimSchemas } from '../../services/claims/schemas.js';
import { memberId, printFields, printJson, UsageError, validateInput, withContext, type Io } from '../io.js';
import { idempotently } from '../idempotency.js';
import { commaChoices, json, listCommand, type ListOptions, type ListPage, type Run, type SortOptions } from '../options.js';

export function register(claims: Command, run: Run): void {
  listCommand(
    claims
      .command('list')
      .description('claims, newest first')
      .option('--status <list>', 'only these statuses, comma-separated', commaChoices('--status', CLAIM_STATUSES))
      .option('--member <member>', "only this member's claims (id or login)")
      .option('--network <ids>', 'only these networks, comma-separated')
      .option('--advertiser <id>', 'only this advertiser id')
      .option('--search <s>', "prefix of the shop's order reference or of the network's reference")
      .option('--after <time>', 'made strictly after this ISO 8601 time')
      .option('--before <time>', 'made strictly before this ISO 8601 time')
      .addOption(new Option('--orderby <field>', 'sort by (default id; ties by id)').choices(Object.keys(CLAIM_ORDERBY)))
      .addOption(new Option('--order <dir>', 'sort direction (default desc)').choices(['asc', 'desc'])),
    {
      items: 'claims',
      perPage: 20,
      row: (c: Claim) => ({ ...c, member: c.member.login, amount: `${c.amount} ${c.currency}`, deadline_at: c.deadline_at?.slice(0, 10) ?? '' }),
      columns: ['id', 'created_at', 'member', 'network', 'advertiser', 'order_ref', 'amount', 'status', 'network_ref', 'deadline_at'],
      count: (total) => `${total} claim(s)`,
    },
    run,
    list,
  );
  claims.command('show <id>').description("one claim: its evidence, the network's reference and answer").addOption(json()).action(run(show));
  claims
    .command('create')
    .description('take a claim: matched to an order we hold, else filed with the network, else left open for support')
    .requiredOption('--member <member>', 'the member who bought (id or login)')
    .requiredOption('--network <id>', 'network id, e.g. admitad')
    .requiredOption('--advertiser <id>', "the network's advertiser id")
    .requiredOption('--order-ref <ref>', "the shop's order reference")
    .requiredOption('--purchased-at <time>', 'when the member bought, ISO 8601')
    .requiredOption('--amount <amount>', 'what the member paid, a decimal string such as 120.00')
    .option('--currency <code>', 'currency (default: the site currency)')
    .option('--note <text>', "the member's words")
    .option('--receipt <file>', 'the receipt image (PNG, JPEG, GIF or WebP)')
    .option('--click-id <id>', 'the click the member came through')
    .option('--idempotency-key <key>', 'run at most once for this key (retries replay the first result)')
    .addOption(json())
    .action(run(create));
  claims
    .command('decline <id>')
    .description('decline a claim, with the reason the member is given')
    .requiredOption('--reason <text>', 'why')
    .addOption(json())
    .action(run(decline));
}

function printClaim(io: Io, c: Claim): void {
  printFields(
    io,
    [
      ['id', c.id],
      ['member', `${c.member.login} (id ${c.member.id})`],
      ['shop', `${c.network} ${c.advertiser}`],
      ['order ref', c.order_ref],
      ['purchased', c.purchased_at],
      ['amount', `${c.amount} ${c.currency}`],
      ['status', c.status],
      ['reason', c.reason],
      ['order', c.order_id === null ? null : `order ${c.order_id}`],
      ['filed', c.channel ? `${c.channel}${c.network_ref ? `, reference ${c.network_ref}` : ''}${c.network_status ? ` (${c.network_status})` : ''}` : null],
      ['file', c.export_file],
      ['deadline', c.deadline_at],
      ['receipt', c.receipt ? 'yes (GET /claims/{id}/receipt)' : 'no'],
      [
        'click',
        c.click
          ? `${c.click.id} at ${c.click.created_at}${c.click.cashback_rule ? `, rate shown ${c.click.cashback_rule.type} ${c.click.cashback_rule.value}${c.click.cashback_rule.currency ? ` ${c.click.cashback_rule.currency}` : ''}` : ''}`
          : c.click_id && `${c.click_id} (no longer on file)`,
      ],
      ['note', c.note],
      ['made', `${c.created_at} by ${c.actor}`],
    ],
    10,
  );
}

export async function list(
  io: Io,
  opts: ListOptions &
    SortOptions & { status?: string; member?: string; network?: string; advertiser?: string; search?: string; after?: string; before?: string },
): Promise<ListPage<Claim>> {
  return withContext(io, async (ctx) => {
    const query = await validateInput(claimSchemas.list, {
      status: opts.status,
      member_id: opts.member === undefined ? undefined : await memberId(ctx, opts.member),
      network: opts.network,
      advertiser: opts.advertiser,
      search: opts.search,
      after: opts.after,
      before: opts.before,
      orderby: opts.orderby,
      order: opts.order,
      page: opts.page,
      per_page: opts.perPage,
    });
    return { ...(await ctx.claims.list(query)), page: query.page };
  });
}

export async function show(io: Io, id: string, opts: { json?: boolean }): Promise<void> {
  const params = await validateInput(claimSchemas.claimId, { id });
  await withContext(io, async (ctx) => {
    const claim = await ctx.claims.get(params.id);
    if (opts.json) return printJson(io, claim);
    printClaim(io, claim);
  });
}

export async function create(
  io: Io,
  opts: {
    member: string;
    network: string;
    advertiser: string;
    orderRef: string;
    purchasedAt: string;
    amount: string;
    currency?: string;
    note?: string;
    receipt?: string;
    clickId?: string;
    idempotencyKey?: string;
    json?: boolean;
  },
): Promise<void> {
  let receipt: string | undefined;
  if (opts.receipt !== undefined) {
    try {
      receipt = readFileSync(opts.receipt).toString('base64');
    } catch (err) {
      throw new UsageError(`--receipt: cannot read ${opts.receipt} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  await withContext(io, async (ctx) => {
    const payload = await validateInput(claimSchemas.create, {
      member_id: await memberId(ctx, opts.member),
      network: opts.network,
      advertiser: opts.advertiser,
      order_ref: opts.orderRef,
      purchased_at: opts.purchasedAt,
      amount: opts.amount,
      currency: opts.currency,
      note: opts.note,
      receipt,
      click_id: opts.clickId,
    });
    const { result, replayed } = await idempotently(
      ctx,
      opts.idempotencyKey,
      'claims.create',
      { params: {}, payload },
      (c: { duplicate: boolean }) => (c.duplicate ? 200 : 201),
      (once) => ctx.claims.create(payload, 'cli', once),
    );
    if (opts.json) return printJson(io, result);
    io.stdout.write(
      `claim ${result.id} ${result.duplicate ? 'already on file' : 'taken'}: ${result.status}${result.reason ? ` (${result.reason})` : ''}${replayed ? ' (replayed: this Idempotency-Key was used before; nothing new happened)' : ''}\n`,
    );
  });
}

export async function decline(io: Io, id: string, opts: { reason: string; json?: boolean }): Promise<void> {
  const params = await validateInput(claimSchemas.claimId, { id });
  const payload = await validateInput(claimSchemas.update, { status: 'declined', reason: opts.reason });
  await withContext(io, async (ctx) => {
    const claim = await ctx.claims.update(params.id, payload, 'cli');
    if (opts.json) return printJson(io, claim);
    io.stdout.write(`claim ${claim.id} declined: ${claim.reason}\n`);
  });
}
