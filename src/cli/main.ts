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
