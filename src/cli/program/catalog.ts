// The networks and what comes from them: `advertisers`, `logos`, `jobs`, `schedules`, `networks`.
import { Option, type Command } from 'commander';
import { UsageError } from '../io.js';
import { collect, json, paging, positiveInt, type Lazy } from './options.js';

const commands = {
  advertisers: () => import('../commands/advertisers.js'),
  jobs: () => import('../commands/jobs.js'),
  schedules: () => import('../commands/schedules.js'),
  logos: () => import('../commands/logos.js'),
  networks: () => import('../commands/networks.js'),
};

export function registerCatalog(program: Command, lazy: Lazy): void {
  const advertisers = program.command('advertisers').description('advertisers (programmes joined on the networks): sync, listing, tracking links, cashback overrides');
  paging(
    advertisers
      .command('list')
      .description('advertisers, by name')
      .option('--network <id>', 'only this network')
      .option('--search <s>', 'prefix of the name')
      .addOption(new Option('--status <status>', 'only this status').choices(['active', 'inactive'])),
    'advertisers',
    20,
  ).action(lazy(commands.advertisers, 'list'));
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

  const logos = program.command('logos').description("advertisers' logos: fetched into local media, one at a time or in bulk");
  logos
    .command('fetch <module> <advertiser>')
    .description("fetch an advertiser's logo (the network's logo URL, else the shop's site icons, else /favicon.ico)")
    .option('--force', 'fetch again although the advertiser has a logo')
    .addOption(json())
    .action(lazy(commands.logos, 'fetch'));
  logos
    .command('bulk')
    .description('fetch the logos of every advertiser without one (enqueues a logos.bulk job and runs it here)')
    .option('--network <id>', 'only advertisers of this network')
    .addOption(new Option('--status <status>', 'only advertisers with this status').choices(['active', 'inactive']))
    .option('--force', 'every advertiser in scope, those with a logo too')
    .option('--no-progress', 'no progress line on a terminal')
    .addOption(json())
    .action(lazy(commands.logos, 'bulk'));
  logos.command('status').description('the last bulk run, and the active advertisers with and without a logo').addOption(json()).action(lazy(commands.logos, 'status'));

  const jobs = program.command('jobs').description('persisted jobs (sync, polling, maintenance): progress, cancellation, running them without the daemon');
  paging(
    jobs
      .command('list')
      .description('jobs, newest first')
      .addOption(new Option('--status <status>', 'only this status').choices(['queued', 'running', 'cancelling', 'cancelled', 'done', 'failed']))
      .option('--type <type>', 'only this job type'),
    'jobs',
    20,
  ).action(lazy(commands.jobs, 'list'));
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

  const schedules = program.command('schedules').description('when the periodic jobs run (node-cron in the daemon, each run once across daemons)');
  schedules.command('list').description('every schedule: expression, time zone, next due, last run and its job, enabled').addOption(json()).action(lazy(commands.schedules, 'list'));
  schedules
    .command('run <name>')
    .description('run a schedule now, whether or not it is enabled (a run whose previous job is still under way is skipped)')
    .option('--network <id>', 'per-network schedules: only this network')
    .addOption(json())
    .action(lazy(commands.schedules, 'run'));

  const networks = program.command('networks').description('affiliate networks: built-in modules and custom networks, their settings, state and postbacks');
  paging(
    networks
      .command('list')
      .description('every network and its state, built-in then custom, by id')
      .addOption(new Option('--kind <kind>', 'only built-in or only custom networks').choices(['builtin', 'custom'])),
    'networks',
    20,
  ).action(lazy(commands.networks, 'list'));
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
  paging(
    networks
      .command('postbacks <id> [state]')
      .description("switch a network's postbacks on or off (STATE), or list the postbacks it sent (no STATE)")
      .option('--allow-ip <cidrs>', 'with on/off: accept postbacks only from these addresses or CIDR ranges (comma-separated)')
      .option('--any-ip', 'with on/off: accept postbacks from any address')
      .addOption(new Option('--outcome <outcome>', 'list: only this outcome').choices(['accepted', 'duplicate', 'rejected', 'error']))
      .option('--test', 'list: only test postbacks')
      .option('--no-test', 'list: only real postbacks')
      .option('--after <time>', 'list: received after this ISO 8601 time')
      .option('--before <time>', 'list: received before this ISO 8601 time'),
    'postbacks',
    20,
  ).action(lazy(commands.networks, 'postbacks'));
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
}
