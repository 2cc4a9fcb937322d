// The `cashtrack` command line. Each command's module is imported only when it runs, so a CLI
// command never pays for hapi or Ink at start-up.
import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { reportError, UsageError, type Io } from './io.js';

const pkg = JSON.parse(readFileSync(new URL(import.meta.url.includes('/dist/') ? '../../../package.json' : '../../package.json', import.meta.url), 'utf8')) as { version: string };

export const VERSION = pkg.version;

type Action = (io: Io, ...args: any[]) => Promise<void>;
type Loader = () => Promise<object>;

const commands = {
  serve: () => import('./commands/serve.js'),
  db: () => import('./commands/db.js'),
  users: () => import('./commands/users.js'),
  appPasswords: () => import('./commands/app-passwords.js'),
  logs: () => import('./commands/logs.js'),
  ledger: () => import('./commands/ledger.js'),
  payouts: () => import('./commands/payouts.js'),
  overview: () => import('./commands/overview.js'),
  orders: () => import('./commands/orders.js'),
  referrals: () => import('./commands/referrals.js'),
  networks: () => import('./commands/networks.js'),
  jobs: () => import('./commands/jobs.js'),
  advertisers: () => import('./commands/advertisers.js'),
} satisfies Record<string, Loader>;

export function buildProgram(io: Io, result: { run?: () => Promise<void> }): Command {
  const program = new Command('cashtrack')
    .description('Back office of a cashback site: networks, postbacks, member ledger, payouts and shop content.')
    .version(VERSION, '-V, --version')
    .exitOverride()
    .enablePositionalOptions()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) })
    .showHelpAfterError('(run cashtrack --help for usage)');

  // Commander parses synchronously; the chosen action is run afterwards by main().
  const lazy =
    (load: Loader, name: string) =>
    (...args: unknown[]) => {
      result.run = async () => {
        const mod = await load();
        await (mod as Record<string, Action>)[name](io, ...args.slice(0, -1));
      };
    };
  const json = () => new Option('--json', 'machine-readable output');
  const positiveInt = (value: string) => {
    if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`expected a positive integer, got "${value}"`);
    return Number(value);
  };
  const port = (value: string) => {
    if (!/^\d+$/.test(value) || Number(value) > 65535) throw new UsageError(`--port must be 0-65535, got "${value}"`);
    return Number(value);
  };

  program
    .command('serve')
    .description('run the daemon: the svc/v1 REST namespace, cookie login and scheduled maintenance')
    .option('--port <n>', 'port to listen on (overrides CASHTRACK_PORT)', port)
    .option('--host <addr>', 'address to listen on (overrides CASHTRACK_HOST)')
    .option('--migrate', 'run pending migrations on MariaDB/MySQL before starting')
    .action(lazy(commands.serve, 'serve'));

  const db = program.command('db').description('database schema');
  db.command('migrate').description('run pending migrations').addOption(json()).action(lazy(commands.db, 'migrate'));
  db.command('status').description('list executed and pending migrations').addOption(json()).action(lazy(commands.db, 'status'));

  const users = program.command('users').description('users and administrators');
  users
    .command('create <login>')
    .description('create a user')
    .requiredOption('--email <email>', 'email address')
    .addOption(new Option('--role <role>', 'role').choices(['administrator', 'member']).default('member'))
    .option('--display-name <name>', 'display name (default: the login)')
    .option('--password-stdin', 'read a login password from standard input')
    .addOption(json())
    .action(lazy(commands.users, 'create'));
  users
    .command('list')
    .description('list users (prefix search on login, email or display name)')
    .option('--search <s>', 'prefix of a login, email or display name')
    .addOption(new Option('--role <role>', 'only this role').choices(['administrator', 'member']))
    .option('--page <n>', 'page', positiveInt, 1)
    .option('--per-page <n>', 'users per page (1-100)', positiveInt, 100)
    .addOption(json())
    .action(lazy(commands.users, 'list'));
  users.command('set-password <login>').description('set a login password, read from standard input; revokes their sessions').addOption(json()).action(lazy(commands.users, 'setPassword'));
  users.command('import <file>').description('import users from CSV: login,email,display_name[,role]').addOption(json()).action(lazy(commands.users, 'importCsv'));

  const ap = program.command('app-passwords').description('application passwords (HTTP Basic credentials for the REST API)');
  ap.command('create <login>').description('create one; the password is shown once').requiredOption('--name <name>', 'application name (unique per user)').addOption(json()).action(lazy(commands.appPasswords, 'create'));
  ap.command('list <login>').description("list a user's application passwords").addOption(json()).action(lazy(commands.appPasswords, 'list'));
  ap.command('revoke <login> <uuid>').description('revoke one (takes effect on the next request)').addOption(json()).action(lazy(commands.appPasswords, 'revoke'));

  const ledger = program.command('ledger').description('member balances and ledger entries');
  ledger
    .command('members')
    .description('balances per member and currency')
    .option('--search <s>', 'prefix of a login, email or display name')
    .option('--currency <code>', 'only this currency')
    .option('--min-balance <amount>', 'only available balances of at least this')
    .addOption(new Option('--orderby <field>', 'sort by').choices(['available', 'pending', 'name', 'last_entry_at']).default('available'))
    .addOption(new Option('--order <dir>', 'asc or desc').choices(['asc', 'desc']))
    .option('--page <n>', 'page', positiveInt, 1)
    .option('--per-page <n>', 'rows per page (1-100)', positiveInt, 20)
    .addOption(json())
    .action(lazy(commands.ledger, 'members'));
  ledger
    .command('entries <member>')
    .description("one member's entries, newest first (member id or login)")
    .option('--type <type>', 'only this entry type')
    .option('--currency <code>', 'only this currency')
    .option('--page <n>', 'page', positiveInt, 1)
    .option('--per-page <n>', 'entries per page (1-100)', positiveInt, 20)
    .addOption(json())
    .action(lazy(commands.ledger, 'entries'));
  ledger
    .command('adjust <member> <type> <amount>')
    .description('credit or debit a member: TYPE is credit or debit, AMOUNT a decimal string such as 12.50')
    .requiredOption('--note <text>', 'who asked for it and why')
    .option('--currency <code>', 'currency (default: the site currency)')
    .option('--allow-negative', 'let a debit take the balance below zero')
    .option('--idempotency-key <key>', 'run at most once for this key (retries replay the first result)')
    .addOption(json())
    .action(lazy(commands.ledger, 'adjust'));
  ledger
    .command('reverse <entry-id>')
    .description('reverse an entry (not a payout, not a reversal, at most once)')
    .option('--note <text>', 'why')
    .option('--idempotency-key <key>', 'run at most once for this key')
    .addOption(json())
    .action(lazy(commands.ledger, 'reverse'));
  ledger.command('verify').description('recompute every balance from the entries and check every invariant; exit 1 on any discrepancy').addOption(json()).action(lazy(commands.ledger, 'verify'));

  const payouts = program.command('payouts').description("members' payouts: the amount leaves the balance when the payout is created");
  payouts
    .command('list')
    .description('payouts, newest first')
    .addOption(new Option('--status <status>', 'only this status').choices(['pending', 'paid', 'cancelled']))
    .option('--member <member>', 'only this member (id or login)')
    .option('--currency <code>', 'only this currency')
    .option('--page <n>', 'page', positiveInt, 1)
    .option('--per-page <n>', 'payouts per page (1-100)', positiveInt, 20)
    .addOption(json())
    .action(lazy(commands.payouts, 'list'));
  payouts.command('show <id>').description('one payout, with its payment details').addOption(json()).action(lazy(commands.payouts, 'show'));
  payouts
    .command('create <member> <amount>')
    .description('pay a member out (member id or login; AMOUNT a decimal string such as 25.00): debits the balance now')
    .requiredOption('--method <method>', 'how the money is sent, e.g. paypal or bank_transfer')
    .option('--currency <code>', 'currency (default: the site currency)')
    .option('--details <text>', 'where it is sent (PayPal address, IBAN...); never logged')
    .option('--note <text>', 'a note for administrators')
    .option('--idempotency-key <key>', 'run at most once for this key (retries replay the first result)')
    .addOption(json())
    .action(lazy(commands.payouts, 'create'));
  payouts
    .command('complete <id>')
    .description('mark a pending payout paid')
    .option('--reference <ref>', "the payment's reference, e.g. the PayPal transaction id")
    .option('--idempotency-key <key>', 'run at most once for this key')
    .addOption(json())
    .action(lazy(commands.payouts, 'complete'));
  payouts
    .command('cancel <id>')
    .description('cancel a pending payout and credit its amount back')
    .requiredOption('--reason <text>', 'why')
    .option('--idempotency-key <key>', 'run at most once for this key')
    .addOption(json())
    .action(lazy(commands.payouts, 'cancel'));

  program
    .command('overview')
    .description('members, liabilities, recent orders and margin, pending payouts, unmatched orders')
    .option('--days <n>', 'order window in days (1-366)', positiveInt, 30)
    .addOption(json())
    .action(lazy(commands.overview, 'show'));

  const orders = program.command('orders').description('orders from the networks or entered by hand, and their cashback');
  orders
    .command('list')
    .description('orders, newest first')
    .addOption(new Option('--status <status>', 'only this status').choices(['pending', 'approved', 'declined']))
    .option('--member <member>', "only this member's orders (id or login)")
    .option('--network <id>', 'only this network')
    .option('--advertiser <id>', 'only this advertiser id')
    .option('--unmatched', 'only orders without a member')
    .option('--matched', 'only orders with a member')
    .addOption(new Option('--review <state>', 'only orders held for review (held), or released or declined after it').choices(['held', 'released', 'declined']))
    .option('--search <s>', 'prefix of the transaction id or merchant order ref')
    .option('--after <time>', 'recorded after this ISO 8601 time')
    .option('--before <time>', 'recorded before this ISO 8601 time')
    .option('--page <n>', 'page', positiveInt, 1)
    .option('--per-page <n>', 'orders per page (1-100)', positiveInt, 20)
    .addOption(json())
    .action(lazy(commands.orders, 'list'));
  orders.command('show <id>').description('one order, with its credits').addOption(json()).action(lazy(commands.orders, 'show'));
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
    .addOption(new Option('--status <status>', 'status').choices(['pending', 'approved', 'declined']).default('pending'))
    .option('--clicked-at <time>', 'click time, ISO 8601')
    .option('--event-at <time>', 'purchase time, ISO 8601')
    .option('--idempotency-key <key>', 'run at most once for this key (retries replay the first result)')
    .addOption(json())
    .action(lazy(commands.orders, 'create'));
  orders
    .command('update <id>')
    .description('change the status of an order, or its amounts while pending')
    .addOption(new Option('--status <status>', 'new status').choices(['pending', 'approved', 'declined']))
    .option('--sale-amount <amount>', 'corrected sale amount (pending orders only)')
    .option('--commission <amount>', 'corrected commission (pending orders only)')
    .option('--currency <code>', 'corrected currency (with both amounts)')
    .option('--note <text>', 'why')
    .option('--idempotency-key <key>', 'run at most once for this key')
    .addOption(json())
    .action(lazy(commands.orders, 'update'));
  orders
    .command('assign <id> <member>')
    .description('give an unmatched order its member (id or login) and apply the effects of its status')
    .option('--note <text>', 'why')
    .option('--idempotency-key <key>', 'run at most once for this key')
    .addOption(json())
    .action(lazy(commands.orders, 'assign'));
  orders
    .command('release <id>')
    .description('release an order held for review: the ledger effects of its current status apply, once')
    .option('--note <text>', 'why')
    .option('--idempotency-key <key>', 'run at most once for this key')
    .addOption(json())
    .action(lazy(commands.orders, 'release'));
  orders
    .command('decline <id>')
    .description("decline an order held for review: declined with no ledger effect; the network's later reports of it are ignored")
    .option('--note <text>', 'why')
    .option('--idempotency-key <key>', 'run at most once for this key')
    .addOption(json())
    .action(lazy(commands.orders, 'decline'));
  orders
    .command('poll')
    .description("fetch the networks' transactions and record them (enqueues an orders.poll job and runs it here); status changes reach the ledger")
    .option('--network <id>', 'only this network (default: every enabled, configured network)')
    .option('--since <date>', 'start of the window, ISO 8601 (default: oldest pending order minus 7 days, else 30 days ago)')
    .option('--no-progress', 'no progress line on a terminal')
    .addOption(json())
    .action(lazy(commands.orders, 'poll'));

  const advertisers = program.command('advertisers').description('advertisers (programmes joined on the networks): sync, listing, tracking links, cashback overrides');
  advertisers
    .command('list')
    .description('advertisers, by name')
    .option('--network <id>', 'only this network')
    .option('--search <s>', 'prefix of the name')
    .addOption(new Option('--status <status>', 'only this status').choices(['active', 'inactive']))
    .option('--page <n>', 'page', positiveInt, 1)
    .option('--per-page <n>', 'advertisers per page (1-100)', positiveInt, 20)
    .addOption(json())
    .action(lazy(commands.advertisers, 'list'));
  advertisers.command('show <module> <advertiser>').description('one advertiser, with its effective cashback rule').addOption(json()).action(lazy(commands.advertisers, 'show'));
  advertisers
    .command('link <module> <advertiser>')
    .description("print the network's tracking link crediting a member for a visit to the advertiser")
    .requiredOption('--member <member>', 'the member credited (id, login or email)')
    .option('--url <url>', "deep link: the page to land on (http(s), on the advertiser's domain)")
    .addOption(json())
    .action(lazy(commands.advertisers, 'link'));
  advertisers
    .command('sync')
    .description('sync advertisers from the networks (enqueues an advertisers.sync job and runs it here)')
    .option('--network <id>', 'only this network (default: every enabled, configured network)')
    .option('--no-progress', 'no progress line on a terminal')
    .addOption(json())
    .action(lazy(commands.advertisers, 'sync'));
  advertisers
    .command('set-cashback <module> <advertiser>')
    .description("set the advertiser's member cashback override")
    .addOption(new Option('--type <type>', 'rule type').choices(['percent_commission', 'percent_sale', 'flat']).makeOptionMandatory())
    .requiredOption('--value <v>', 'percent, or a flat amount (decimal string)')
    .option('--currency <code>', 'currency of a flat amount')
    .addOption(json())
    .action(lazy(commands.advertisers, 'setCashback'));

  const referrals = program.command('referrals').description('who referred whom; referrers earn a share of their referees\' approved cashback');
  referrals
    .command('list')
    .description('referrals with what each referrer earned, newest first')
    .option('--referrer <member>', 'only referrals by this member (id or login)')
    .option('--referee <member>', 'only referrals of this member (id or login)')
    .option('--active', 'only live referrals')
    .option('--ended', 'only ended referrals')
    .option('--page <n>', 'page', positiveInt, 1)
    .option('--per-page <n>', 'referrals per page (1-100)', positiveInt, 20)
    .addOption(json())
    .action(lazy(commands.referrals, 'list'));
  referrals.command('add <referrer> <referee>').description('make REFERRER the referrer of REFEREE (ids or logins)').addOption(json()).action(lazy(commands.referrals, 'add'));
  referrals.command('remove <referee>').description("end a member's live referral (future cashback only; past credits stay)").addOption(json()).action(lazy(commands.referrals, 'remove'));

  const jobs = program.command('jobs').description('persisted jobs (sync, polling, maintenance): progress, cancellation, running them without the daemon');
  jobs
    .command('list')
    .description('jobs, newest first')
    .addOption(new Option('--status <status>', 'only this status').choices(['queued', 'running', 'cancelling', 'cancelled', 'done', 'failed']))
    .option('--type <type>', 'only this job type')
    .option('--page <n>', 'page', positiveInt, 1)
    .option('--per-page <n>', 'jobs per page (1-100)', positiveInt, 20)
    .addOption(json())
    .action(lazy(commands.jobs, 'list'));
  jobs.command('show <id>').description('one job, with its progress, result or error').addOption(json()).action(lazy(commands.jobs, 'show'));
  jobs.command('cancel <id>').description('cancel a job: a queued one at once, a running one at its next checkpoint').addOption(json()).action(lazy(commands.jobs, 'cancel'));
  jobs
    .command('enqueue <type>')
    .description('queue a job of TYPE (see jobs types); a daemon or jobs run-pending runs it')
    .option('--params <json>', 'parameters, a JSON object')
    .option('--unique', 'refuse when a job of this type with these parameters is queued or running')
    .addOption(json())
    .action(lazy(commands.jobs, 'enqueue'));
  jobs.command('types').description('the job types this version knows, with their parameters').addOption(json()).action(lazy(commands.jobs, 'types'));
  jobs
    .command('run-pending')
    .description('run queued jobs (and jobs whose process died) in this process until none is left, then exit; exit 1 if one failed')
    .option('--concurrency <n>', 'jobs at once (default: jobs.concurrency, at least 1)', positiveInt)
    .addOption(json())
    .action(lazy(commands.jobs, 'runPending'));

  const collect = (value: string, previous: string[] = []) => [...previous, value];
  const networks = program.command('networks').description('affiliate networks: built-in modules and custom networks, their settings, state and postbacks');
  networks
    .command('list')
    .description('every network and its state')
    .addOption(new Option('--kind <kind>', 'only built-in or only custom networks').choices(['builtin', 'custom']))
    .addOption(json())
    .action(lazy(commands.networks, 'list'));
  networks.command('show <id>').description('one network: settings (secrets only as set or not), cashback, postbacks, sync state').addOption(json()).action(lazy(commands.networks, 'show'));
  networks.command('save <id> <file>').description('create or update a custom network from a JSON definition (FILE, or - for standard input)').addOption(json()).action(lazy(commands.networks, 'save'));
  networks
    .command('configure <id>')
    .description('set settings of a network; secret settings only from standard input or the environment')
    .option('--set <key=value>', 'a non-secret setting (repeatable)', collect)
    .option('--unset <key>', 'remove a setting (repeatable)', collect)
    .option('--secret-stdin <key>', 'read the value of secret setting KEY from standard input')
    .option('--secret-env <key=VAR>', 'take the value of secret setting KEY from environment variable VAR (repeatable)', collect)
    .addOption(json())
    .action(lazy(commands.networks, 'configure'));
  networks.command('enable <id>').description('switch a network on (sync, polling, tracking links)').addOption(json()).action(lazy(commands.networks, 'enable'));
  networks.command('disable <id>').description('switch a network off (postbacks have their own switch)').addOption(json()).action(lazy(commands.networks, 'disable'));
  networks
    .command('postbacks <id> [state]')
    .description("switch a network's postbacks on or off (STATE), or list the postbacks it sent (no STATE)")
    .option('--allow-ip <cidrs>', 'with on/off: accept postbacks only from these addresses or CIDR ranges (comma-separated)')
    .option('--any-ip', 'with on/off: accept postbacks from any address')
    .addOption(new Option('--outcome <outcome>', 'list: only this outcome').choices(['accepted', 'duplicate', 'rejected', 'error']))
    .option('--test', 'list: only test postbacks')
    .option('--no-test', 'list: only real postbacks')
    .option('--after <time>', 'list: received after this ISO 8601 time')
    .option('--before <time>', 'list: received before this ISO 8601 time')
    .option('--page <n>', 'page', positiveInt, 1)
    .option('--per-page <n>', 'postbacks per page (1-100)', positiveInt, 20)
    .addOption(json())
    .action(lazy(commands.networks, 'postbacks'));
  networks
    .command('postback-secret <id>')
    .description("show whether a network has a postback secret, or make a new one (--rotate): shown once")
    .option('--rotate', 'generate a new secret (the old one stops working)')
    .addOption(new Option('--mode <mode>', 'token (default) or hmac; the mode changes only with a new secret').choices(['token', 'hmac']))
    .option('--grace-hours <n>', 'keep accepting the old secret for N hours (at most 168)', (v: string) => {
      if (!/^\d+$/.test(v)) throw new UsageError(`--grace-hours expects a whole number of hours, got "${v}"`);
      return Number(v);
    })
    .addOption(json())
    .action(lazy(commands.networks, 'postbackSecret'));
  networks
    .command('prune-postbacks')
    .description('delete stored postback records older than the retention')
    .option('--days <n>', 'retention in days (default: postbacks.retention_days)', positiveInt)
    .addOption(json())
    .action(lazy(commands.networks, 'prunePostbacks'));

  const logs = program.command('logs').description('the plugin log (interactive view on a terminal)').enablePositionalOptions();
  logs
    .option('--level <level>', 'only this level (debug, info, warning, error)')
    .option('--source <source>', 'only this source')
    .option('--search <text>', 'message contains')
    .option('--limit <n>', 'entries to print when not interactive', positiveInt, 50)
    .addOption(json())
    .action(lazy(commands.logs, 'view'));
  logs.command('prune').description('delete entries older than the retention').option('--days <n>', 'retention in days (default: log.retention_days)', positiveInt).addOption(json()).action(lazy(commands.logs, 'prune'));

  return program;
}

/** Runs the CLI; returns the exit code. */
export async function main(argv: string[], io: Io = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env }): Promise<number> {
  const result: { run?: () => Promise<void> } = {};
  const program = buildProgram(io, result);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      // `commander.help` is help shown because no subcommand was given: a usage error.
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return 0;
      return 2;
    }
    if (err instanceof UsageError) return reportError(io, err);
    throw err;
  }
  if (!result.run) {
    program.outputHelp();
    return 2;
  }
  try {
    await result.run();
    return 0;
  } catch (err) {
    return reportError(io, err);
  }
}
