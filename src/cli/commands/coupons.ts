// `cashtrack coupons list|show|update|revert|link|refresh`: coupons and deals from the networks,
// through the coupon schemas and service, in-process: listing, edits that survive refreshes, revert
// of an AI rewrite, members' links and the refresh. `refresh` enqueues a `coupons.refresh` job and
// runs it here to the end, with a progress line (count, percent, estimate) on a terminal.
import { Option, type Command } from 'commander';
import type { Coupon, CouponDetail } from '../../services/coupons/index.js';
import {
  COUPON_FIELDS,
  COUPON_ORDERBY,
  COUPON_STATUSES,
  COUPON_TYPES,
  couponSchemas,
  DISCOUNT_TYPES,
  type CouponEdit,
} from '../../services/coupons/schemas.js';
import { printFields, printJson, printTable, validateInput, withContext, type Io } from '../io.js';
import { collect, commaChoices, json, listCommand, type ListOptions, type ListPage, type Run } from '../options.js';
import { jobProgressLine } from '../progress.js';
import { runInProcess } from '../run-job.js';

export function register(coupons: Command, run: Run): void {
  listCommand(
    coupons
      .command('list')
      .description('coupons, newest first')
      .option('--network <ids>', 'only these networks, comma-separated')
      .option('--advertiser <id>', "only this advertiser (the network's advertiser id)")
      .option('--status <list>', 'only these statuses (as of now), comma-separated', commaChoices('--status', COUPON_STATUSES))
      .option('--status-exclude <list>', 'none of these statuses (as of now), comma-separated', commaChoices('--status-exclude', COUPON_STATUSES))
      .addOption(new Option('--type <type>', 'codes or deals').choices(COUPON_TYPES))
      .option('--search <s>', 'part of the title, or the start of the code')
      .option('--expires-before <time>', 'only coupons ending before this ISO 8601 time')
      .option('--ai', 'only coupons with AI-written text')
      .option('--edited', "only coupons with an administrator's edits")
      .option('--after <time>', 'first imported strictly after this ISO 8601 time')
      .option('--before <time>', 'first imported strictly before this ISO 8601 time')
      .addOption(new Option('--orderby <field>', 'order by (ties by id)').choices(COUPON_ORDERBY).default('id'))
      .addOption(new Option('--order <order>', 'direction').choices(['asc', 'desc']).default('desc')),
    {
      items: 'coupons',
      perPage: 20,
      row: (c: Coupon) => ({ ...c, discount: discountText(c), title: c.title.length > 50 ? `${c.title.slice(0, 49)}…` : c.title }),
      columns: ['id', 'network', 'advertiser', 'status', 'code', 'title', 'discount', 'ends_at'],
      count: (total) => `${total} coupon(s)`,
    },
    run,
    list,
  );
  coupons.command('show <id>').description("one coupon, with the network's values of the fields an administrator edited").addOption(json()).action(run(show));
  coupons
    .command('update <id>')
    .description('edit fields of a coupon (a refresh keeps them); --reset gives a field back to the network')
    .option('--code <code>', 'the code ("" for a deal)')
    .option('--title <text>', 'the title')
    .option('--description <text>', 'the description ("" for none)')
    .option('--terms <text>', 'the terms ("" for none)')
    .addOption(new Option('--discount-type <type>', 'the kind of discount').choices(DISCOUNT_TYPES))
    .option('--discount-value <decimal>', 'the percent or amount ("none" for none)')
    .option('--discount-currency <code>', 'the currency of an amount ("none" for none)')
    .option('--discount-text <text>', 'the discount in words ("" for none)')
    .option('--landing-url <url>', 'the page members land on ("none" for none)')
    .option('--starts-at <time>', 'ISO 8601 with a zone ("none" for none)')
    .option('--ends-at <time>', 'ISO 8601 with a zone ("none" for none)')
    .option('--exclusive', 'mark it exclusive')
    .option('--no-exclusive', 'mark it not exclusive')
    .option('--regions <codes>', 'comma-separated country codes ("" for everywhere)')
    .addOption(new Option('--reset <field>', `give FIELD back to the network (repeatable): ${COUPON_FIELDS.join(', ')}`).argParser(collect))
    .addOption(json())
    .action(run(update));
  coupons.command('revert <id>').description('restore the text from before the AI rewrite').addOption(json()).action(run(revert));
  coupons
    .command('link <id>')
    .description("print the link a member gets: the advertiser's tracking link landing on the coupon's page")
    .requiredOption('--member <member>', 'the member credited (id, login or email)')
    .addOption(json())
    .action(run(link));
  coupons
    .command('refresh')
    .description('refresh coupons from the networks (enqueues a coupons.refresh job and runs it here)')
    .option('--network <id>', 'only this network (default: every enabled, configured network with coupons)')
    .option('--force', 'mark removed what the network no longer lists, even past coupons.max_removed_share')
    .option('--full', 'read the whole list where the network could list only changes (Awin)')
    .option('--no-progress', 'no progress line on a terminal')
    .addOption(json())
    .action(run(refresh));
}

const discountText = (c: Coupon) =>
  c.discount.text ??
  (c.discount.value
    ? `${c.discount.value}${c.discount.type === 'percent' ? '%' : c.discount.currency ? ` ${c.discount.currency}` : ''}`
    : c.discount.type === 'free_shipping'
      ? 'free shipping'
      : '');

function printCoupon(io: Io, c: CouponDetail): void {
  const rows: [string, unknown][] = [
    ['id', c.id],
    ['network', `${c.network} (advertiser ${c.advertiser}${c.advertiser_name ? `, ${c.advertiser_name}` : ''})`],
    ['coupon', c.coupon_id],
    ['status', c.status],
    ['type', c.type],
    ['code', c.code],
    ['title', c.title],
    ['description', c.description],
    ['terms', c.terms],
    ['discount', `${c.discount.type}${discountText(c) ? `: ${discountText(c)}` : ''}`],
    ['landing', c.landing_url],
    ['starts', c.starts_at],
    ['ends', c.ends_at],
    ['exclusive', c.exclusive ? 'yes' : null],
    ['regions', c.regions.join(', ')],
    ['edited', c.edited_fields.join(', ')],
    ['ai', c.ai_fields.join(', ')],
    ['original', c.original ? JSON.stringify(c.original) : null],
    ['updated', c.updated_at],
    ['removed', c.removed_at],
  ];
  printFields(io, rows, 12);
}

type ListFilters = {
  network?: string;
  advertiser?: string;
  status?: string;
  statusExclude?: string;
  type?: string;
  search?: string;
  expiresBefore?: string;
  after?: string;
  before?: string;
  ai?: boolean;
  edited?: boolean;
  orderby?: string;
  order?: string;
};

export async function list(io: Io, opts: ListOptions & ListFilters): Promise<ListPage<Coupon>> {
  const query = await validateInput(couponSchemas.list, {
    network: opts.network,
    advertiser: opts.advertiser,
    status: opts.status,
    status_exclude: opts.statusExclude,
    type: opts.type,
    search: opts.search,
    expires_before: opts.expiresBefore,
    after: opts.after,
    before: opts.before,
    ai: opts.ai,
    edited: opts.edited,
    orderby: opts.orderby,
    order: opts.order,
    page: opts.page,
    per_page: opts.perPage,
  });
  return withContext(io, async (ctx) => ({ ...(await ctx.coupons.list(query)), page: query.page }));
}

export async function show(io: Io, id: string, opts: { json?: boolean }): Promise<void> {
  const key = await validateInput(couponSchemas.id, { id });
  await withContext(io, async (ctx) => {
    const c = await ctx.coupons.get(key.id);
    if (opts.json) return printJson(io, c);
    printCoupon(io, c);
  });
}

type UpdateOptions = {
  code?: string;
  title?: string;
  description?: string;
  terms?: string;
  discountType?: string;
  discountValue?: string;
  discountCurrency?: string;
  discountText?: string;
  landingUrl?: string;
  startsAt?: string;
  endsAt?: string;
  exclusive?: boolean;
  regions?: string;
  reset?: string[];
  json?: boolean;
};

/** "none" clears a field that can be empty. */
const orNull = (v: string | undefined) => (v === undefined ? undefined : v === 'none' ? null : v);

export async function update(io: Io, id: string, opts: UpdateOptions): Promise<void> {
  const key = await validateInput(couponSchemas.id, { id });
  const edit: CouponEdit = await validateInput(couponSchemas.edit, {
    code: opts.code,
    title: opts.title,
    description: opts.description,
    terms: opts.terms,
    discount_type: opts.discountType,
    discount_value: orNull(opts.discountValue),
    discount_currency: orNull(opts.discountCurrency),
    discount_text: opts.discountText,
    landing_url: orNull(opts.landingUrl),
    starts_at: orNull(opts.startsAt),
    ends_at: orNull(opts.endsAt),
    exclusive: opts.exclusive,
    regions:
      opts.regions === undefined
        ? undefined
        : opts.regions
            .split(',')
            .map((r) => r.trim())
            .filter(Boolean),
    reset: opts.reset,
  });
  await withContext(io, async (ctx) => {
    const c = await ctx.coupons.update(key.id, edit, { actor: 'cli' });
    if (opts.json) return printJson(io, c);
    io.stdout.write(`coupon ${c.id} updated\n`);
    printCoupon(io, c);
  });
}

export async function revert(io: Io, id: string, opts: { json?: boolean }): Promise<void> {
  const key = await validateInput(couponSchemas.id, { id });
  await withContext(io, async (ctx) => {
    const c = await ctx.coupons.revert(key.id, { actor: 'cli' });
    if (opts.json) return printJson(io, c);
    io.stdout.write(`coupon ${c.id} reverted to its text from before the AI rewrite\n`);
    printCoupon(io, c);
  });
}

/** Prints only the link (so `$(cashtrack coupons link ...)` works); `--json` the whole answer. */
export async function link(io: Io, id: string, opts: { member: string; json?: boolean }): Promise<void> {
  const key = await validateInput(couponSchemas.id, { id });
  const input = await validateInput(couponSchemas.link, { member: opts.member });
  await withContext(io, async (ctx) => {
    const result = await ctx.coupons.link(key.id, input.member);
    if (opts.json) return printJson(io, result);
    io.stdout.write(`${result.url}\n`);
  });
}

export async function refresh(io: Io, opts: { network?: string; force?: boolean; full?: boolean; json?: boolean; progress?: boolean }): Promise<void> {
  const input = await validateInput(couponSchemas.refresh, { network: opts.network, force: opts.force, full: opts.full });
  await withContext(io, async (ctx) => {
    const queued = await ctx.coupons.startRefresh(input, 'cli');
    if (!opts.json) io.stdout.write(`job ${queued.id} coupons.refresh started\n`);
    const job = await runInProcess(ctx, queued, jobProgressLine(io, opts));
    if (opts.json) return printJson(io, job);
    const result = (job.result ?? {}) as { networks?: Record<string, Record<string, unknown>>; failed?: Record<string, string> };
    // A network without a coupon list has a reason instead of counts: named under the table, not a column of its own.
    const entries = Object.entries(result.networks ?? {});
    const rows: Record<string, unknown>[] = entries.filter(([, c]) => c.skipped === undefined).map(([network, c]) => ({ network, ...c }));
    const skipped = entries.filter(([, c]) => c.skipped !== undefined);
    if (rows.length)
      printTable(io, rows, ['network', 'incremental', 'seen', 'created', 'updated', 'unchanged', 'removed', 'expired', 'failed', 'duplicates', 'bad_dates']);
    else if (skipped.length === 0) io.stdout.write('no enabled, configured network with coupons to refresh\n');
    for (const [network, c] of skipped) io.stdout.write(`${network}: skipped (${String(c.skipped)})\n`);
    for (const [network, error] of Object.entries(result.failed ?? {})) io.stderr.write(`${network}: ${error}\n`);
  });
}
