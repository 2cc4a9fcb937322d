// `cashtrack logos fetch|bulk|status`: the logo schemas and services, in-process. `bulk` enqueues
// a `logos.bulk` job and runs it here to the end, with a progress line (count, percentage,
// estimate) on a terminal.
import { Option, type Command } from 'commander';
import { ADVERTISER_STATUSES, advertiserSchemas } from '../../services/advertisers/schemas.js';
import type { LogoBulkCounts } from '../../services/logos/index.js';
import { logoSchemas } from '../../services/logos/schemas.js';
import { printJson, printTable, validateInput, withContext, type Io } from '../io.js';
import { json, type Run } from '../options.js';
import { jobProgressLine } from '../progress.js';
import { runInProcess } from '../run-job.js';

export function register(logos: Command, run: Run): void {
  logos
    .command('fetch <module> <advertiser>')
    .description("fetch an advertiser's logo (the network's logo URL, else the shop's site icons, else /favicon.ico)")
    .option('--force', 'fetch again although the advertiser has a logo')
    .addOption(json())
    .action(run(fetch));
  logos
    .command('bulk')
    .description('fetch the logos of every advertiser without one (enqueues a logos.bulk job and runs it here)')
    .option('--network <id>', 'only advertisers of this network')
    .addOption(new Option('--status <status>', 'only advertisers with this status').choices(ADVERTISER_STATUSES))
    .option('--force', 'every advertiser in scope, those with a logo too')
    .option('--no-progress', 'no progress line on a terminal')
    .addOption(json())
    .action(run(bulk));
  logos.command('status').description('the last bulk run, and the active advertisers with and without a logo').addOption(json()).action(run(status));
}

export async function fetch(io: Io, module: string, advertiser: string, opts: { force?: boolean; json?: boolean }): Promise<void> {
  const key = await validateInput(advertiserSchemas.key, { module, advertiser });
  await withContext(io, async (ctx) => {
    const result = await ctx.logos.fetch(key.module, key.advertiser, { force: Boolean(opts.force), actor: 'cli' });
    if (opts.json) return printJson(io, result);
    const { media } = result;
    io.stdout.write(
      result.fetched
        ? `logo of ${result.module}/${result.advertiser} fetched from ${result.source} (${result.source_url}): ${media.type} ${media.width}x${media.height}, ${media.bytes} bytes\n${result.logo}\n`
        : `logo of ${result.module}/${result.advertiser} on file (--force fetches it again): ${media.type} ${media.width}x${media.height}\n${result.logo}\n`,
    );
  });
}

export async function bulk(io: Io, opts: { network?: string; status?: string; force?: boolean; json?: boolean; progress?: boolean }): Promise<void> {
  const input = await validateInput(logoSchemas.bulk, { network: opts.network, status: opts.status, force: Boolean(opts.force) });
  await withContext(io, async (ctx) => {
    const queued = await ctx.logoBulk.start(input, 'cli');
    if (!opts.json) io.stdout.write(`job ${queued.id} logos.bulk started\n`);
    const job = await runInProcess(ctx, queued, jobProgressLine(io, opts));
    if (opts.json) return printJson(io, job);
    const result = (job.result ?? {}) as Partial<LogoBulkCounts>;
    io.stdout.write(`${result.fetched ?? 0} logo(s) fetched, ${result.unchanged ?? 0} unchanged, ${result.failed ?? 0} failed\n`);
    if (result.failures?.length) printTable(io, result.failures, ['module', 'advertiser', 'code', 'message']);
  });
}

export async function status(io: Io, opts: { json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const state = await ctx.logoBulk.state();
    if (opts.json) return printJson(io, state);
    const { advertisers: a, media, job } = state;
    io.stdout.write(`active advertisers  ${a.total} (${a.with_logo} with a logo, ${a.without_logo} without)\n`);
    io.stdout.write(`media               ${media.files} file(s), ${media.bytes} bytes\n`);
    io.stdout.write(
      job
        ? `last run            job ${job.id} ${job.status}, ${job.progress.done}${job.progress.total === null ? '' : `/${job.progress.total}`} done, ${job.progress.failed} failed\n`
        : 'last run            none\n',
    );
  });
}
