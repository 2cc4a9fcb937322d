// `cashtrack pages list|show|create|update|delete|bulk|bulk-status|bulk-cancel`: the page schemas
// and service, in-process. `bulk` enqueues a `pages.bulk` job and runs it here to the end
// (progress bar on a terminal), or with --no-wait only queues it.
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline/promises';
import { Option, type Command } from 'commander';
import type { Page } from '../../services/pages/index.js';
import { PAGE_ORDERBY, PAGE_STATUSES, pageSchemas } from '../../services/pages/schemas.js';
import { printFields, printJson, readStdin, UsageError, validateInput, withContext, type Io } from '../io.js';
import { commaChoices, json, listCommand, type ListOptions, type ListPage, type Run, type SortOptions } from '../options.js';
import { jobProgressLine } from '../progress.js';
import { runInProcess } from '../run-job.js';

export function register(pages: Command, run: Run): void {
  const status = () => new Option('--status <status>', 'page status').choices(PAGE_STATUSES);
  listCommand(
    pages
      .command('list')
      .description('pages, newest first')
      .option('--status <list>', 'only these statuses, comma-separated', commaChoices('--status', PAGE_STATUSES))
      .option('--status-exclude <list>', 'none of these statuses, comma-separated', commaChoices('--status-exclude', PAGE_STATUSES))
      .option('--network <ids>', 'only pages of these networks, comma-separated')
      .option('--advertiser <id>', "only the page of this advertiser (the network's id)")
      .option('--search <s>', 'prefix of the title or the slug')
      .option('--after <time>', 'created strictly after this ISO 8601 time')
      .option('--before <time>', 'created strictly before this ISO 8601 time')
      .addOption(new Option('--orderby <field>', 'sort field (ties by id)').choices(Object.keys(PAGE_ORDERBY)).default('date'))
      .addOption(new Option('--order <order>', 'sort order').choices(['asc', 'desc']).default('desc')),
    {
      items: 'pages',
      perPage: 20,
      row: (p: Page) => ({ ...p, advertiser: `${p.module}/${p.advertiser}` }),
      columns: ['id', 'advertiser', 'title', 'slug', 'status', 'updated_at'],
      count: (total) => `${total} page(s)`,
    },
    run,
    list,
  );
  pages.command('show <id>').description('one page, with its body').addOption(json()).action(run(show));
  pages
    .command('create <module> <advertiser>')
    .description("make the advertiser's page from a template")
    .addOption(status())
    .option('--template <name>', 'template name (default: pages.default_template)')
    .addOption(json())
    .action(run(create));
  pages
    .command('update <id>')
    .description('change a page: title, slug, body (sanitised), excerpt, status')
    .option('--title <text>', 'new title (plain text, at most 200 characters)')
    .option('--slug <slug>', 'new slug (made unique with -2, -3 ... when taken)')
    .option('--body <html>', 'new body (HTML)')
    .option('--body-file <file>', 'new body from FILE, or - for standard input')
    .option('--excerpt <text>', 'new excerpt (plain text)')
    .addOption(status())
    .addOption(json())
    .action(run(update));
  pages
    .command('revert <id>')
    .description("restore the page body and the shop's description from before the AI wrote them")
    .addOption(json())
    .action(run(revert));
  pages
    .command('delete <id>')
    .description('delete a page for good (asks on a terminal; --yes otherwise)')
    .option('--yes', 'delete without asking')
    .addOption(json())
    .action(run(remove));
  pages
    .command('bulk')
    .description('make a page for every active advertiser without one (enqueues a pages.bulk job and runs it here)')
    .option('--network <id>', 'only advertisers of this network')
    .addOption(status())
    .option('--template <name>', 'template name (default: pages.default_template)')
    .option('--no-wait', 'only queue the job (a daemon or jobs run-pending runs it)')
    .option('--no-progress', 'no progress line on a terminal')
    .addOption(json())
    .action(run(bulk));
  pages.command('bulk-status').description('the latest pages.bulk job and how many active advertisers have a page').addOption(json()).action(run(bulkStatus));
  pages.command('bulk-cancel').description('cancel the running pages.bulk job').addOption(json()).action(run(bulkCancel));
}

function printPage(io: Io, p: Page, withBody = true): void {
  const rows: [string, unknown][] = [
    ['id', p.id],
    ['advertiser', `${p.module}/${p.advertiser}`],
    ['title', p.title],
    ['slug', p.slug],
    ['link', p.link],
    ['status', p.status],
    ['template', p.template],
    ['author', p.author],
    ['created', p.created_at],
    ['updated', p.updated_at],
    ['published', p.published_at],
    ['excerpt', p.excerpt],
  ];
  printFields(io, rows, 12);
  if (withBody && p.body) io.stdout.write(`\n${p.body}\n`);
}

async function pageId(id: string): Promise<number> {
  return (await validateInput(pageSchemas.pageId, { id })).id;
}

export async function list(
  io: Io,
  opts: ListOptions &
    SortOptions & { status?: string; statusExclude?: string; network?: string; advertiser?: string; search?: string; after?: string; before?: string },
): Promise<ListPage<Page>> {
  const query = await validateInput(pageSchemas.list, {
    status: opts.status,
    status_exclude: opts.statusExclude,
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
  return withContext(io, async (ctx) => ({ ...(await ctx.pages.list(query)), page: query.page }));
}

export async function show(io: Io, id: string, opts: { json?: boolean }): Promise<void> {
  const key = await pageId(id);
  await withContext(io, async (ctx) => {
    const page = await ctx.pages.get(key);
    if (opts.json) return printJson(io, page);
    printPage(io, page);
  });
}

export async function create(io: Io, module: string, advertiser: string, opts: { status?: string; template?: string; json?: boolean }): Promise<void> {
  const { advertiserSchemas } = await import('../../services/advertisers/schemas.js');
  const key = await validateInput(advertiserSchemas.key, { module, advertiser });
  const input = await validateInput(pageSchemas.make, { status: opts.status, template: opts.template });
  await withContext(io, async (ctx) => {
    const page = await ctx.pages.create(key.module, key.advertiser, input, 'cli');
    if (opts.json) return printJson(io, page);
    io.stdout.write(`page ${page.id} created for ${page.module}/${page.advertiser}\n`);
    printPage(io, page, false);
  });
}

export async function update(
  io: Io,
  id: string,
  opts: { title?: string; slug?: string; body?: string; bodyFile?: string; excerpt?: string; status?: string; json?: boolean },
): Promise<void> {
  if (opts.body !== undefined && opts.bodyFile !== undefined) throw new UsageError('give --body or --body-file, not both');
  let body = opts.body;
  if (opts.bodyFile !== undefined) {
    try {
      body = opts.bodyFile === '-' ? await readStdin(io) : await readFile(opts.bodyFile, 'utf8');
    } catch (err) {
      throw new UsageError(`cannot read --body-file ${opts.bodyFile}: ${(err as Error).message}`);
    }
  }
  const key = await pageId(id);
  const patch = await validateInput(pageSchemas.update, { title: opts.title, slug: opts.slug, body, excerpt: opts.excerpt, status: opts.status });
  if (Object.keys(patch).length === 0) throw new UsageError('nothing to change: give --title, --slug, --body, --body-file, --excerpt or --status');
  await withContext(io, async (ctx) => {
    const page = await ctx.pages.update(key, patch, 'cli');
    if (opts.json) return printJson(io, page);
    io.stdout.write(`page ${page.id} updated\n`);
    printPage(io, page, false);
  });
}

export async function revert(io: Io, id: string, opts: { json?: boolean }): Promise<void> {
  const key = await pageId(id);
  await withContext(io, async (ctx) => {
    const page = await ctx.pages.revert(key, 'cli');
    if (opts.json) return printJson(io, page);
    io.stdout.write(`page ${page.id} reverted to its text from before the AI wrote it\n`);
    printPage(io, page, false);
  });
}

/** Asks on a terminal; without one, `--yes` is the only way to say yes. */
async function confirmed(io: Io, question: string, yes: boolean | undefined): Promise<boolean> {
  if (yes) return true;
  if (!io.stdin.isTTY || !io.stderr.isTTY) throw new UsageError('refusing to delete without --yes when not run on a terminal');
  const rl = createInterface({ input: io.stdin, output: io.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

export async function remove(io: Io, id: string, opts: { yes?: boolean; json?: boolean }): Promise<void> {
  const key = await pageId(id);
  await withContext(io, async (ctx) => {
    const page = await ctx.pages.get(key);
    if (!(await confirmed(io, `Delete page ${page.id} "${page.title}" (${page.slug})?`, opts.yes))) {
      io.stderr.write('not deleted\n');
      throw Object.assign(new Error('not confirmed'), { silent: true });
    }
    const result = await ctx.pages.remove(key, 'cli');
    if (opts.json) return printJson(io, result);
    io.stdout.write(`page ${page.id} deleted\n`);
  });
}

export async function bulk(
  io: Io,
  opts: { network?: string; status?: string; template?: string; wait?: boolean; progress?: boolean; json?: boolean },
): Promise<void> {
  const input = await validateInput(pageSchemas.bulk, { network: opts.network, status: opts.status, template: opts.template });
  await withContext(io, async (ctx) => {
    const queued = await ctx.pages.startBulk(input, 'cli');
    if (opts.wait === false) {
      if (opts.json) return printJson(io, queued);
      io.stdout.write(`job ${queued.id} pages.bulk queued (a daemon runs it, or: cashtrack jobs run-pending)\n`);
      return;
    }
    if (!opts.json) io.stdout.write(`job ${queued.id} pages.bulk started\n`);
    const job = await runInProcess(ctx, queued, jobProgressLine(io, opts));
    if (opts.json) return printJson(io, job);
    const result = (job.result ?? {}) as {
      created?: number;
      skipped?: number;
      failed?: number;
      failures?: { module: string; advertiser: string; error: string }[];
    };
    io.stdout.write(`${result.created ?? 0} page(s) created, ${result.skipped ?? 0} skipped (made meanwhile), ${result.failed ?? 0} failed\n`);
    for (const f of result.failures ?? []) io.stderr.write(`${f.module}/${f.advertiser}: ${f.error}\n`);
  });
}

export async function bulkStatus(io: Io, opts: { json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const state = await ctx.pages.bulkState();
    if (opts.json) return printJson(io, state);
    const a = state.advertisers;
    io.stdout.write(`${a.active} active advertiser(s): ${a.with_page} with a page, ${a.without_page} without\n`);
    const j = state.job;
    if (!j) return void io.stdout.write('no pages.bulk job yet\n');
    const progress = `${j.progress.done}${j.progress.total === null ? '' : `/${j.progress.total}`}${j.progress.failed ? ` (${j.progress.failed} failed)` : ''}`;
    io.stdout.write(`job ${j.id} ${j.status}: ${progress} done, started ${j.started_at ?? j.created_at} by ${j.actor}${j.error ? ` (${j.error})` : ''}\n`);
  });
}

export async function bulkCancel(io: Io, opts: { json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const job = await ctx.pages.cancelBulk('cli');
    if (opts.json) return printJson(io, job);
    io.stdout.write(job.status === 'cancelled' ? `job ${job.id} cancelled\n` : `job ${job.id} is ${job.status}: its runner stops it at its next checkpoint\n`);
  });
}
