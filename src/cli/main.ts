// The `cashtrack` command line: the program, its usage errors and the exit code. Each command
// group is one file, src/cli/commands/<group>.ts, declaring its commands with their actions; this
// file knows only the groups' names and descriptions, and imports the group a command line names
// (the program's own help loads only the single commands, whose options it shows). So `--version`
// loads no group, a command loads only its own group, and the group loads the context only when a
// command runs.
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { reportError, terminalSafe, UsageError, writeError, type Io } from './io.js';
import type { CommandGroup, Run } from './options.js';

const pkg = JSON.parse(readFileSync(new URL(import.meta.url.includes('/dist/') ? '../../../package.json' : '../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

export const VERSION = pkg.version;

/**
 * The command groups, in the order the help lists them. `command`: a single command rather than a
 * group, whose options the program's help shows beside its name.
 */
const GROUPS: { name: string; description: string; command?: true; load: () => Promise<CommandGroup> }[] = [
  {
    name: 'serve',
    description: 'run the daemon: the svc/v1 REST namespace, cookie login, the job runner and the schedules',
    command: true,
    load: () => import('./commands/serve.js'),
  },
  { name: 'db', description: 'database schema and backups', load: () => import('./commands/db.js') },
  { name: 'users', description: 'users and administrators', load: () => import('./commands/users.js') },
  {
    name: 'members',
    description: "a member's data: export (access request) and erase (anonymise, keep the amounts)",
    load: () => import('./commands/members.js'),
  },
  { name: 'app-passwords', description: 'application passwords (HTTP Basic credentials for the REST API)', load: () => import('./commands/app-passwords.js') },
  { name: 'logs', description: 'the plugin log (interactive view on a terminal)', command: true, load: () => import('./commands/logs.js') },
  { name: 'ledger', description: 'member balances and ledger entries', load: () => import('./commands/ledger.js') },
  {
    name: 'export',
    description: 'export a list (orders, ledger entries, payouts, balances, clicks, claims) to a CSV or JSON Lines file, as POST /exports does',
    command: true,
    load: () => import('./commands/export.js'),
  },
  { name: 'payouts', description: "members' payouts: the amount leaves the balance when the payout is created", load: () => import('./commands/payouts.js') },
  {
    name: 'overview',
    description: 'members, liabilities, recent orders and margin, pending payouts, unmatched orders',
    command: true,
    load: () => import('./commands/overview.js'),
  },
  { name: 'orders', description: 'orders from the networks or entered by hand, and their cashback', load: () => import('./commands/orders.js') },
  { name: 'clicks', description: "members' clicks through /go/ to the shops, and what was kept of each", load: () => import('./commands/clicks.js') },
  {
    name: 'claims',
    description: "members' missing-cashback claims: matched to orders, filed with the networks, followed to the answer",
    load: () => import('./commands/claims.js'),
  },
  {
    name: 'referrals',
    description: "who referred whom; referrers earn a share of their referees' approved cashback",
    load: () => import('./commands/referrals.js'),
  },
  {
    name: 'advertisers',
    description: 'advertisers (programmes joined on the networks): sync, listing, tracking links, cashback overrides',
    load: () => import('./commands/advertisers.js'),
  },
  { name: 'logos', description: "advertisers' logos: fetched into local media, one at a time or in bulk", load: () => import('./commands/logos.js') },
  {
    name: 'jobs',
    description: 'persisted jobs (sync, polling, maintenance): progress, cancellation, running them without the daemon',
    load: () => import('./commands/jobs.js'),
  },
  {
    name: 'schedules',
    description: 'when the periodic jobs run (node-cron in the daemon, each run once across daemons)',
    load: () => import('./commands/schedules.js'),
  },
  {
    name: 'networks',
    description: 'affiliate networks: built-in modules and custom networks, their settings, state and postbacks',
    load: () => import('./commands/networks.js'),
  },
  {
    name: 'pages',
    description: 'shop pages: made from templates, one per advertiser, singly or in bulk; edited and deleted',
    load: () => import('./commands/pages.js'),
  },
  { name: 'webhooks', description: 'outgoing webhooks: subscriptions, their delivery log, tests and redelivery', load: () => import('./commands/webhooks.js') },
  {
    name: 'coupons',
    description: 'coupons and deals from the networks: listing, edits a refresh keeps, revert of AI rewrites, refresh',
    load: () => import('./commands/coupons.js'),
  },
  {
    name: 'ai',
    description: 'AI content with an OpenAI-compatible provider: shop descriptions and pages, coupon rewrites, bulk runs, provider settings',
    load: () => import('./commands/ai.js'),
  },
];

/** Imports the groups the command line needs (see groupsFor). */
async function loadGroups(argv: string[]): Promise<Map<string, CommandGroup>> {
  return new Map(await Promise.all(groupsFor(argv).map(async (g) => [g.name, await g.load()] as const)));
}

/**
 * The groups a command line needs: none for the version, the group it names (its first word, or
 * the word after `help`), else the single commands alone: the program's help and its unknown-command
 * error list every group by name and description, which the program knows without loading them, and
 * only a single command's options show beside its name.
 */
function groupsFor(argv: string[]): typeof GROUPS {
  if (argv[0] === '-V' || argv[0] === '--version') return [];
  const words = argv.filter((a) => !a.startsWith('-'));
  const word = words[0] === 'help' ? words[1] : words[0];
  const named = GROUPS.filter((g) => g.name === word);
  return named.length ? named : GROUPS.filter((g) => g.command);
}

const USAGE_HINT = '(run cashtrack --help for usage)';

/**
 * The program: every group by name and description, the `loaded` ones with their commands. With
 * `json`, commander's own messages (usage errors, help shown because of one) are not written:
 * main() reports them as one JSON object instead.
 */
export function buildProgram(io: Io, result: { run?: () => Promise<void> }, options: { json?: boolean; loaded?: Map<string, CommandGroup> } = {}): Command {
  const silent = options.json === true;
  const program = new Command('cashtrack')
    .description('Back office of a cashback site: networks, postbacks, member ledger, payouts and shop content.')
    .version(VERSION, '-V, --version')
    .exitOverride()
    .enablePositionalOptions()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => (silent ? undefined : io.stderr.write(s)) })
    .showHelpAfterError(USAGE_HINT);

  // Commander parses synchronously; the chosen action is run afterwards by main().
  const run: Run =
    <A extends unknown[]>(action: (io: Io, ...args: A) => Promise<void>) =>
    (...args: unknown[]) => {
      // The last argument is commander's Command, which no action takes.
      result.run = () => action(io, ...(args.slice(0, -1) as A));
    };

  for (const { name, description } of GROUPS) {
    const group = program.command(name).description(description);
    options.loaded?.get(name)?.register(group, run);
  }
  return program;
}

/**
 * `--json` anywhere before `--`: the caller is a script, errors included. Decided on the raw
 * arguments because a usage error happens before commander has parsed any option.
 */
function wantsJson(argv: string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/** A commander usage error as the CLI reports it: `svc_usage` with commander's words. */
function usage(message: string): UsageError {
  return new UsageError(message.replace(/^error: /, '').trim() || 'usage error');
}

/** Runs the CLI; returns the exit code. Everything it prints passes the terminal gate (terminalSafe). */
export async function main(
  argv: string[],
  given: Io = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env },
): Promise<number> {
  const io = terminalSafe(given);
  const json = wantsJson(argv);
  const result: { run?: () => Promise<void> } = {};
  let loaded: Map<string, CommandGroup>;
  try {
    loaded = await loadGroups(argv);
  } catch (err) {
    return reportError(io, err, json);
  }
  const program = buildProgram(io, result, { json, loaded });
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return 0;
      // `commander.help`: help shown because a command group was given no subcommand.
      const message = err.code === 'commander.help' ? 'a subcommand is required' : err.message;
      if (json) writeError(io, { code: 'svc_usage', message: usage(message).message, data: { status: 400 }, exit: 2 }, true);
      return 2;
    }
    if (err instanceof UsageError) return reportError(io, err, json);
    throw err;
  }
  if (!result.run) {
    if (json) return reportError(io, usage('a command is required'), true);
    program.outputHelp({ error: true });
    return 2;
  }
  try {
    await result.run();
    return 0;
  } catch (err) {
    return reportError(io, err, json);
  }
}
