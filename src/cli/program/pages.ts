// Shop pages: `pages list|show|create|update|delete|bulk|bulk-status|bulk-cancel`.
import { Option, type Command } from 'commander';
import { json, paging, type Lazy } from './options.js';

const commands = () => import('../commands/pages.js');

export function registerPages(program: Command, lazy: Lazy): void {
  const pages = program.command('pages').description('shop pages: made from templates, one per advertiser, singly or in bulk; edited and deleted');
  const status = () => new Option('--status <status>', 'page status').choices(['draft', 'publish']);
  paging(
    pages
      .command('list')
      .description('pages, newest first')
      .addOption(status())
      .option('--network <id>', 'only pages of this network')
      .option('--advertiser <id>', "only the page of this advertiser (the network's id)")
      .option('--search <s>', 'prefix of the title or the slug')
      .addOption(new Option('--orderby <field>', 'sort field').choices(['date', 'title', 'updated']).default('date'))
      .addOption(new Option('--order <order>', 'sort order').choices(['asc', 'desc']).default('desc')),
    'pages',
    20,
  ).action(lazy(commands, 'list'));
  pages.command('show <id>').description('one page, with its body').addOption(json()).action(lazy(commands, 'show'));
  pages
    .command('create <module> <advertiser>')
    .description("make the advertiser's page from a template")
    .addOption(status())
    .option('--template <name>', 'template name (default: pages.default_template)')
    .addOption(json())
    .action(lazy(commands, 'create'));
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
    .action(lazy(commands, 'update'));
  pages
    .command('delete <id>')
    .description('delete a page for good (asks on a terminal; --yes otherwise)')
    .option('--yes', 'delete without asking')
    .addOption(json())
    .action(lazy(commands, 'remove'));
  pages
    .command('bulk')
    .description('make a page for every active advertiser without one (enqueues a pages.bulk job and runs it here)')
    .option('--network <id>', 'only advertisers of this network')
    .addOption(status())
    .option('--template <name>', 'template name (default: pages.default_template)')
    .option('--no-wait', 'only queue the job (a daemon or jobs run-pending runs it)')
    .option('--no-progress', 'no progress line on a terminal')
    .addOption(json())
    .action(lazy(commands, 'bulk'));
  pages.command('bulk-status').description('the latest pages.bulk job and how many active advertisers have a page').addOption(json()).action(lazy(commands, 'bulkStatus'));
  pages.command('bulk-cancel').description('cancel the running pages.bulk job').addOption(json()).action(lazy(commands, 'bulkCancel'));
}
