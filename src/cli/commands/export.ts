// `cashtrack export KIND --out FILE`: the export POST /exports makes, in this process: the export is
// recorded, its exports.run job runs here with a progress bar on a terminal, and the finished file
// is copied to FILE (owner-only). The export stays listed (GET /exports) until its retention ends.
import { chmod } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { Option, type Command } from 'commander';
import { EXPORT_FORMATS, EXPORT_KINDS } from '../../services/exports/schemas.js';
import { memberId, printJson, UsageError, withContext, type Io } from '../io.js';
import { json, type Run } from '../options.js';

export function register(exp: Command, run: Run): void {
  exp
    .argument('<kind>', `what to export: ${EXPORT_KINDS.join(', ')}`)
    .requiredOption('--out <file>', 'write the file here (created owner-only)')
    .addOption(new Option('--format <format>', 'csv (header row, formula guard) or jsonl').choices(EXPORT_FORMATS).default('csv'))
    .option('--member <member>', 'only this member (id or login)')
    .option('--status <list>', 'only these statuses, comma-separated')
    .option('--status-exclude <list>', 'none of these statuses, comma-separated')
    .option('--type <list>', 'ledger entries: only these types, comma-separated')
    .option('--type-exclude <list>', 'ledger entries: none of these types, comma-separated')
    .option('--network <ids>', 'only these networks')
    .option('--advertiser <id>', 'only this advertiser id')
    .option('--currency <codes>', 'only these currencies')
    .option('--method <list>', 'payouts: only these methods')
    .option('--coupon <id>', "clicks: only those through this coupon's link")
    .option('--review <state>', 'orders: held, released or declined')
    .option('--unmatched', 'orders: only those without a member')
    .option('--matched', 'orders: only those with a member')
    .option('--search <s>', "the list's search prefix")
    .option('--min-balance <amount>', 'balances: available at least this')
    .option('--after <time>', 'created strictly after this ISO 8601 time')
    .option('--before <time>', 'created strictly before this ISO 8601 time')
    .option('--no-progress', 'no progress bar')
    .addOption(json())
    .action(run(exportCommand));
}

export interface ExportOptions {
  out: string;
  format: string;
  member?: string;
  status?: string;
  statusExclude?: string;
  type?: string;
  typeExclude?: string;
  network?: string;
  advertiser?: string;
  currency?: string;
  method?: string;
  coupon?: string;
  review?: string;
  unmatched?: boolean;
  matched?: boolean;
  search?: string;
  minBalance?: string;
  after?: string;
  before?: string;
  progress?: boolean;
  json?: boolean;
}

export async function exportCommand(io: Io, kind: string, opts: ExportOptions): Promise<void> {
  if (!(EXPORT_KINDS as readonly string[]).includes(kind)) throw new UsageError(`KIND must be one of ${EXPORT_KINDS.join(', ')}, got "${kind}"`);
  if (opts.unmatched && opts.matched) throw new UsageError('--unmatched and --matched exclude each other');
  await withContext(io, async (ctx) => {
    const given: Record<string, unknown> = {
      member_id: opts.member === undefined ? undefined : await memberId(ctx, opts.member),
      status: opts.status,
      status_exclude: opts.statusExclude,
      type: opts.type,
      type_exclude: opts.typeExclude,
      network: opts.network,
      advertiser: opts.advertiser,
      currency: opts.currency,
      method: opts.method,
      coupon_id: opts.coupon,
      review: opts.review,
      unmatched: opts.unmatched ? true : opts.matched ? false : undefined,
      search: opts.search,
      min_balance: opts.minBalance,
      after: opts.after,
      before: opts.before,
    };
    // Only the filters given: one the kind's list does not take is refused by the service, as the route refuses it.
    const filters = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined));
    const { runInProcess } = await import('../run-job.js');
    const { jobProgressLine } = await import('../progress.js');
    const queued = await ctx.exports.create(
      { kind: kind as (typeof EXPORT_KINDS)[number], format: opts.format as (typeof EXPORT_FORMATS)[number], ...filters },
      'cli',
    );
    await runInProcess(ctx, await ctx.jobs.get(queued.job_id!), jobProgressLine(io, opts));
    const file = await ctx.exports.open(queued.id);
    await pipeline(file.stream, createWriteStream(opts.out, { mode: 0o600 }));
    await chmod(opts.out, 0o600);
    const done = await ctx.exports.get(queued.id);
    if (opts.json) return printJson(io, { ...done, out: opts.out });
    io.stdout.write(`export ${done.id}: ${done.rows} ${kind} row(s), ${done.bytes} bytes written to ${opts.out}\n`);
  });
}
