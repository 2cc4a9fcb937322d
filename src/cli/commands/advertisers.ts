// `cashtrack advertisers list|show|link|sync|set-cashback`: the advertiser schemas and service,
// in-process. `sync` enqueues an `advertisers.sync` job and runs it here to the end, with a
// progress line on a terminal.
import { Option, type Command } from 'commander';
import type { Advertiser, AdvertiserDetail } from '../../services/advertisers/index.js';
import { ADVERTISER_ORDERBY, ADVERTISER_STATUSES, advertiserSchemas } from '../../services/advertisers/schemas.js';
import { CASHBACK_TYPES } from '../../cashback-rule.js';
import { printFields, printJson, printTable, validateInput, withContext, type Io } from '../io.js';
import { commaChoices, json, listCommand, type ListOptions, type ListPage, type Run, type SortOptions } from '../options.js';
import { jobProgressLine } from '../progress.js';
import { runInProcess } from '../run-job.js';

export function register(advertisers: Command, run: Run): void {
  listCommand(
    advertisers
      .command('list')
      .description('advertisers, by name')
      .option('--network <ids>', 'only these networks, comma-separated')
      .option('--search <s>', 'prefix of the name')
      .option('--status <list>', 'only these statuses, comma-separated', commaChoices('--status', ADVERTISER_STATUSES))
      .option('--status-exclude <list>', 'none of these statuses, comma-separated', commaChoices('--status-exclude', ADVERTISER_STATUSES))
      .addOption(new Option('--orderby <field>', 'sort by (default name; ties by id)').choices(Object.keys(ADVERTISER_ORDERBY)))
      .addOption(new Option('--order <dir>', 'sort direction (default asc)').choices(['asc', 'desc'])),
    {
      items: 'advertisers',
      perPage: 20,
      row: (a: Advertiser) => ({ ...a, commission: commissionText(a) }),
      columns: ['module', 'advertiser', 'name', 'status', 'domain', 'commission', 'updated_at'],
      count: (total) => `${total} advertiser(s)`,
    },
    run,
    list,
  );
  advertisers.command('show <module> <advertiser>').description('one advertiser, with its effective cashback rule').addOption(json()).action(run(show));
  advertisers
    .command('link <module> <advertiser>')
    .description("print the network's tracking link crediting a member for a visit to the advertiser")
    .requiredOption('--member <member>', 'the member credited (id, login or email)')
    .option('--url <url>', "deep link: the page to land on (http(s), on the advertiser's domain)")
    .addOption(json())
    .action(run(link));
  advertisers
    .command('sync')
    .description('sync advertisers from the networks (enqueues an advertisers.sync job and runs it here)')
    .option('--network <id>', 'only this network (default: every enabled, configured network)')
    .option('--no-progress', 'no progress line on a terminal')
    .addOption(json())
    .action(run(sync));
  advertisers
    .command('set-cashback <module> <advertiser>')
    .description("set the advertiser's member cashback override")
    .addOption(new Option('--type <type>', 'rule type').choices(CASHBACK_TYPES).makeOptionMandatory())
    .requiredOption('--value <v>', 'percent, or a flat amount (decimal string)')
    .option('--currency <code>', 'currency of a flat amount')
    .addOption(json())
    .action(run(setCashback));
}

const commissionText = (a: Advertiser) =>
  a.commission
    ? `${a.commission.type} ${a.commission.min ?? ''}${a.commission.max && a.commission.max !== a.commission.min ? `-${a.commission.max}` : ''}${a.commission.currency ? ` ${a.commission.currency}` : ''}`.trim()
    : '';

function printAdvertiser(io: Io, a: AdvertiserDetail): void {
  const rule: AdvertiserDetail['cashback_rule'] | null = a.cashback_rule;
  const rows: [string, unknown][] = [
    ['module', a.module],
    ['advertiser', a.advertiser],
    ['name', a.name_override ? `${a.name} (network: ${a.network_name})` : a.name],
    ['status', a.status],
    ['domain', a.domain],
    ['site', a.site_url],
    ['logo', a.logo ?? a.logo_url],
    ['commission', commissionText(a)],
    ['cashback', rule ? `${rule.type} ${rule.value}${rule.currency ? ` ${rule.currency}` : ''}${rule.source ? ` (${rule.source})` : ''}` : null],
    ['validation', a.validation_days === null ? null : `${a.validation_days} days`],
    ['categories', a.categories.join(', ')],
    ['countries', a.countries.join(', ')],
    ['page', a.page_id],
    ['updated', a.updated_at],
  ];
  printFields(io, rows, 12);
}

export async function list(
  io: Io,
  opts: ListOptions & SortOptions & { network?: string; search?: string; status?: string; statusExclude?: string },
): Promise<ListPage<Advertiser>> {
  return withContext(io, async (ctx) => {
    const query = await validateInput(advertiserSchemas.list, {
      network: opts.network,
      search: opts.search,
      status: opts.status,
      status_exclude: opts.statusExclude,
      orderby: opts.orderby,
      order: opts.order,
      page: opts.page,
      per_page: opts.perPage,
    });
    return { ...(await ctx.advertisers.list(query)), page: query.page };
  });
}

export async function show(io: Io, module: string, advertiser: string, opts: { json?: boolean }): Promise<void> {
  const key = await validateInput(advertiserSchemas.key, { module, advertiser });
  await withContext(io, async (ctx) => {
    const a = await ctx.advertisers.get(key.module, key.advertiser);
    if (opts.json) return printJson(io, a);
    printAdvertiser(io, a);
  });
}

/** Prints only the link (so `$(cashtrack advertisers link ...)` works); `--json` the whole answer. */
export async function link(io: Io, module: string, advertiser: string, opts: { member: string; url?: string; json?: boolean }): Promise<void> {
  const key = await validateInput(advertiserSchemas.key, { module, advertiser });
  const input = await validateInput(advertiserSchemas.link, { member: opts.member, url: opts.url });
  await withContext(io, async (ctx) => {
    const result = await ctx.advertisers.trackingLink(key.module, key.advertiser, { member: input.member, url: input.url ?? null });
    if (opts.json) return printJson(io, result);
    io.stdout.write(`${result.url}\n`);
  });
}

export async function sync(io: Io, opts: { network?: string; json?: boolean; progress?: boolean }): Promise<void> {
  const input = await validateInput(advertiserSchemas.sync, { network: opts.network });
  await withContext(io, async (ctx) => {
    const queued = await ctx.advertisers.startSync(input, 'cli');
    if (!opts.json) io.stdout.write(`job ${queued.id} advertisers.sync started\n`);
    const job = await runInProcess(ctx, queued, jobProgressLine(io, opts));
    if (opts.json) return printJson(io, job);
    const result = (job.result ?? {}) as { networks?: Record<string, Record<string, number>>; failed?: Record<string, string> };
    const rows: Record<string, unknown>[] = Object.entries(result.networks ?? {}).map(([network, c]) => ({ network, ...c }));
    if (rows.length) printTable(io, rows, ['network', 'pages', 'seen', 'created', 'updated', 'unchanged', 'deactivated', 'failed']);
    else io.stdout.write('no enabled, configured network to sync\n');
    for (const [network, error] of Object.entries(result.failed ?? {})) io.stderr.write(`${network}: ${error}\n`);
  });
}

export async function setCashback(
  io: Io,
  module: string,
  advertiser: string,
  opts: { type: string; value: string; currency?: string; json?: boolean },
): Promise<void> {
  const key = await validateInput(advertiserSchemas.key, { module, advertiser });
  const body = await validateInput(advertiserSchemas.cashback, { type: opts.type, value: opts.value, currency: opts.currency });
  await withContext(io, async (ctx) => {
    const a = await ctx.advertisers.setCashback(key.module, key.advertiser, body.type, body.value, 'cli', body.currency ?? null);
    if (opts.json) return printJson(io, a);
    io.stdout.write(`cashback of ${a.module}/${a.advertiser} set\n`);
    printAdvertiser(io, a);
  });
}
