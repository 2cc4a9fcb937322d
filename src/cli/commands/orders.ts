// `cashtrack orders list|show|create|update|assign|candidates|release|decline|poll`: the order schemas and
// services, in-process.
import { Option, type Command } from 'commander';
import { ORDER_ORDERBY, type Order, type OrderChange } from '../../services/orders/index.js';
import { changeStatus, ORDER_STATUSES, orderSchemas, REVIEW_STATES } from '../../services/orders/schemas.js';
import { memberId, printFields, printJson, printTable, UsageError, validateInput, withContext, type Io } from '../io.js';
import { idempotently } from '../idempotency.js';
import { commaChoices, json, listCommand, type ListOptions, type ListPage, type Run, type SortOptions } from '../options.js';

export function register(orders: Command, run: Run): void {
  listCommand(
    orders
      .command('list')
      .description('orders, newest first')
      .option('--status <list>', 'only these statuses, comma-separated', commaChoices('--status', ORDER_STATUSES))
      .option('--status-exclude <list>', 'none of these statuses, comma-separated', commaChoices('--status-exclude', ORDER_STATUSES))
      .option('--member <member>', "only this member's orders (id or login)")
      .option('--network <ids>', 'only these networks, comma-separated')
      .option('--currency <codes>', 'only these currencies, comma-separated')
      .option('--advertiser <id>', 'only this advertiser id')
      .option('--unmatched', 'only orders without a member')
      .option('--matched', 'only orders with a member')
      .addOption(new Option('--review <state>', 'only orders held for review (held), or released or declined after it').choices(REVIEW_STATES))
      .option('--search <s>', 'prefix of the transaction id or merchant order ref')
      .option('--after <time>', 'recorded strictly after this ISO 8601 time')
      .option('--before <time>', 'recorded strictly before this ISO 8601 time')
      .addOption(new Option('--orderby <field>', 'sort by (default id; ties by id)').choices(Object.keys(ORDER_ORDERBY)))
      .addOption(new Option('--order <dir>', 'sort direction (default desc)').choices(['asc', 'desc'])),
    {
      items: 'orders',
      perPage: 20,
      row: (o: Order) => ({ ...o, member: o.member?.login ?? '(unmatched)', review: o.review?.state ?? '' }),
      columns: ['id', 'created_at', 'network', 'transaction_id', 'member', 'status', 'review', 'sale_amount', 'commission', 'cashback', 'currency'],
      count: (total) => `${total} order(s)`,
    },
    run,
    list,
  );
  orders.command('show <id>').description('one order, with its credits').addOption(json()).action(run(show));
  orders
    .command('create')
    .description('record an order by hand (e.g. a missing-cashback claim); a known transaction is not recorded twice')
    .requiredOption('--network <id>', 'network id, e.g. awin')
    .requiredOption('--transaction-id <id>', "the network's transaction id")
    .requiredOption('--sale-amount <amount>', 'sale amount, a decimal string such as 120.00')
    .requiredOption('--commission <amount>', "the site's commission, a decimal string")
    .requiredOption('--note <text>', 'who asked for it and why')
    .option('--member <member>', 'the member (id or login; default: matched from --sub-id)')
    .option('--sub-id <s>', 'tracking sub id: digits are a user id, anything else a login')
    .option('--advertiser <id>', "the network's advertiser id")
    .option('--merchant-ref <ref>', "the shop's order reference")
    .option('--currency <code>', 'currency (default: the site currency)')
    .addOption(new Option('--status <status>', 'status').choices(ORDER_STATUSES).default('pending'))
    .option('--clicked-at <time>', 'click time, ISO 8601')
    .option('--event-at <time>', 'purchase time, ISO 8601')
    .option('--idempotency-key <key>', 'run at most once for this key (retries replay the first result)')
    .addOption(json())
    .action(run(create));
  orders
    .command('update <id>')
    .description('change the status of an order, or its amounts while pending')
    .addOption(new Option('--status <status>', 'new status').choices(ORDER_STATUSES))
    .option('--sale-amount <amount>', 'corrected sale amount (pending orders only)')
    .option('--commission <amount>', 'corrected commission (pending orders only)')
    .option('--currency <code>', 'corrected currency (with both amounts)')
    .option('--note <text>', 'why')
    .option('--idempotency-key <key>', 'run at most once for this key')
    .addOption(json())
    .action(run(update));
  orders
    .command('assign <id> [member]')
    .description('give an unmatched order its member (id or login) and apply the effects of its status')
    .option('--click <click_id>', "the candidate click that is the evidence (recorded on the order; the member may be left out: the click's)")
    .option('--note <text>', 'why')
    .option('--idempotency-key <key>', 'run at most once for this key')
    .addOption(json())
    .action(run(assign));
  orders
    .command('candidates <id>')
    .description('the members whose clicks could have made an order, strongest evidence first (GET /orders/{id}/candidates)')
    .addOption(json())
    .action(run(candidates));
  orders
    .command('release <id>')
    .description('release an order held for review: the ledger effects of its current status apply, once')
    .option('--note <text>', 'why')
    .option('--idempotency-key <key>', 'run at most once for this key')
    .addOption(json())
    .action(run(release));
  orders
    .command('decline <id>')
    .description("decline an order held for review: declined with no ledger effect; the network's later reports of it are ignored")
    .option('--note <text>', 'why')
    .option('--idempotency-key <key>', 'run at most once for this key')
    .addOption(json())
    .action(run(decline));
  orders
    .command('poll')
    .description("fetch the networks' transactions and record them (enqueues an orders.poll job and runs it here); status changes reach the ledger")
    .option('--network <id>', 'only this network (default: every enabled, configured network)')
    .option('--since <date>', 'start of the window, ISO 8601 (default: oldest pending order minus 7 days, else 30 days ago)')
    .option('--no-progress', 'no progress line on a terminal')
    .addOption(json())
    .action(run(poll));
}

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
    [
      'review',
      o.review
        ? `${o.review.state}${o.review.reason ? ` (${o.review.reason.replace(/_/g, ' ')})` : ''}${o.review.reviewed_by ? ` by ${o.review.reviewed_by} at ${o.review.reviewed_at}` : ''}`
        : null,
    ],
    ['sale', `${o.sale_amount} ${o.currency}`],
    ['commission', `${o.commission} ${o.currency}`],
    [
      'cashback',
      `${o.cashback} ${o.currency}${o.cashback_rule ? ` (${o.cashback_rule.type} ${o.cashback_rule.value}${o.cashback_rule.currency ? ` ${o.cashback_rule.currency}` : ''})` : ''}`,
    ],
    ['credited', o.cashback_entry_id === null ? null : `entry ${o.cashback_entry_id}`],
    ['referral', o.referral ? `${o.referral.amount} ${o.currency} to ${o.referral.referrer.login} (entry ${o.referral.entry_id})` : null],
    ['source', o.source],
    ['event', o.event_at],
    ['recorded', o.created_at],
    ['note', o.note],
  ];
  printFields(io, rows, 12);
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
  opts: ListOptions &
    SortOptions & {
      status?: string;
      statusExclude?: string;
      member?: string;
      network?: string;
      currency?: string;
      advertiser?: string;
      unmatched?: boolean;
      matched?: boolean;
      review?: string;
      search?: string;
      after?: string;
      before?: string;
    },
): Promise<ListPage<Order>> {
  if (opts.unmatched && opts.matched) throw new UsageError('--unmatched and --matched exclude each other');
  return withContext(io, async (ctx) => {
    const query = await validateInput(orderSchemas.list, {
      status: opts.status,
      status_exclude: opts.statusExclude,
      member_id: opts.member === undefined ? undefined : await memberId(ctx, opts.member),
      network: opts.network,
      currency: opts.currency,
      advertiser: opts.advertiser,
      unmatched: opts.unmatched ? true : opts.matched ? false : undefined,
      review: opts.review,
      search: opts.search,
      after: opts.after,
      before: opts.before,
      orderby: opts.orderby,
      order: opts.order,
      page: opts.page,
      per_page: opts.perPage,
    });
    return { ...(await ctx.orders.list(query)), page: query.page };
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

/** The members whose clicks could have made the order: the service call of `GET /orders/{id}/candidates`. */
export async function candidates(io: Io, id: string, opts: { json?: boolean }): Promise<void> {
  const params = await validateInput(orderSchemas.orderId, { id });
  await withContext(io, async (ctx) => {
    const answer = await ctx.clicks.candidates(await ctx.orders.get(params.id));
    if (opts.json) return printJson(io, answer);
    io.stdout.write(`order ${answer.order_id}: sale at ${answer.sale_at}, clicks within ${answer.window_days} day(s) before it\n`);
    printTable(
      io,
      answer.items.map((c, i) => ({
        rank: i + 1,
        member: `${c.member.login} (id ${c.member.id})`,
        click: c.click.id,
        clicked_at: c.click.created_at,
        gap: `${c.gap_seconds}s`,
        evidence:
          [c.evidence.click_time_match && 'click time', c.evidence.same_address && 'address', c.evidence.last_click && 'last click']
            .filter(Boolean)
            .join(', ') || '-',
        clicks: c.clicks,
        devices: c.devices,
      })),
      ['rank', 'member', 'click', 'clicked_at', 'gap', 'evidence', 'clicks', 'devices'],
    );
    if (answer.items.length > 0) io.stdout.write(`assign one with: cashtrack orders assign ${answer.order_id} --click <click>\n`);
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
      ctx.orders.record({ ...payload, source: 'manual' }, 'cli', once),
    );
    if (opts.json) return printJson(io, result);
    printChange(io, result, replayed);
  });
}

export async function update(
  io: Io,
  id: string,
  opts: { status?: string; saleAmount?: string; commission?: string; currency?: string; note?: string; idempotencyKey?: string; json?: boolean },
): Promise<void> {
  const params = await validateInput(orderSchemas.orderId, { id });
  const payload = await validateInput(orderSchemas.update, {
    status: opts.status,
    sale_amount: opts.saleAmount,
    commission: opts.commission,
    currency: opts.currency,
    note: opts.note,
  });
  await withContext(io, async (ctx) => {
    const { result, replayed } = await idempotently(ctx, opts.idempotencyKey, 'orders.update', { params, payload }, 200, (once) =>
      ctx.orders.update(params.id, payload, 'cli', once),
    );
    if (opts.json) return printJson(io, result);
    printChange(io, result, replayed);
  });
}

export async function assign(
  io: Io,
  id: string,
  member: string | undefined,
  opts: { click?: string; note?: string; idempotencyKey?: string; json?: boolean },
): Promise<void> {
  const params = await validateInput(orderSchemas.orderId, { id });
  await withContext(io, async (ctx) => {
    const payload = await validateInput(orderSchemas.assign, {
      member_id: member === undefined ? undefined : await memberId(ctx, member),
      click_id: opts.click,
      note: opts.note,
    });
    const { result, replayed } = await idempotently(ctx, opts.idempotencyKey, 'orders.assign', { params, payload }, 200, (once) =>
      ctx.orders.assign(params.id, payload.member_id ?? null, 'cli', once, payload.note ?? null, payload.click_id ?? null),
    );
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
      decision === 'release'
        ? ctx.orders.release(params.id, 'cli', once, payload.note ?? null)
        : ctx.orders.declineHeld(params.id, 'cli', once, payload.note ?? null),
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
    const { runInProcess } = await import('../run-job.js');
    const { jobProgressLine } = await import('../progress.js');
    const queued = await ctx.orders.startPoll(input, 'cli');
    if (!opts.json) io.stdout.write(`job ${queued.id} orders.poll started\n`);
    const job = await runInProcess(ctx, queued, jobProgressLine(io, opts));
    if (opts.json) return printJson(io, job);
    const result = (job.result ?? {}) as { networks?: Record<string, Record<string, unknown>>; failed?: Record<string, string> };
    const rows: Record<string, unknown>[] = Object.entries(result.networks ?? {}).map(([network, c]) => ({ network, ...c }));
    if (rows.length) printTable(io, rows, ['network', 'from', 'to', 'pages', 'seen', 'created', 'updated', 'duplicate', 'failed']);
    else io.stdout.write('no enabled, configured network to poll\n');
    for (const [network, error] of Object.entries(result.failed ?? {})) io.stderr.write(`${network}: ${error}\n`);
  });
}
