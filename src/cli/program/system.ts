// The daemon and the site's own administration: `serve`, `db`, `users`, `app-passwords`, `logs`.
import { Option, type Command } from 'commander';
import { json, paging, port, positiveInt, type Lazy } from './options.js';

const commands = {
  serve: () => import('../commands/serve.js'),
  db: () => import('../commands/db.js'),
  users: () => import('../commands/users.js'),
  appPasswords: () => import('../commands/app-passwords.js'),
  logs: () => import('../commands/logs.js'),
};

export function registerSystem(program: Command, lazy: Lazy): void {
  program
    .command('serve')
    .description('run the daemon: the svc/v1 REST namespace, cookie login, the job runner and the schedules')
    .option('--port <n>', 'port to listen on (overrides CASHTRACK_PORT)', port)
    .option('--host <addr>', 'address to listen on (overrides CASHTRACK_HOST)')
    .option('--migrate', 'run pending migrations on MariaDB/MySQL before starting')
    .action(lazy(commands.serve, 'serve'));

  const db = program.command('db').description('database schema and backups');
  db.command('migrate').description('run pending migrations').addOption(json()).action(lazy(commands.db, 'migrate'));
  db.command('status').description('list executed and pending migrations').addOption(json()).action(lazy(commands.db, 'status'));
  db.command('backup <file>')
    .description('copy the SQLite database to FILE while the daemon runs (on MariaDB/MySQL: prints the dump command)')
    .option('--force', 'replace FILE when it exists')
    .addOption(json())
    .action(lazy(commands.db, 'backup'));

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
  paging(
    users
      .command('list')
      .description('list users (prefix search on login, email or display name)')
      .option('--search <s>', 'prefix of a login, email or display name')
      .addOption(new Option('--role <role>', 'only this role').choices(['administrator', 'member'])),
    'users',
    100,
  ).action(lazy(commands.users, 'list'));
  users.command('set-password <login>').description('set a login password, read from standard input; revokes their sessions').addOption(json()).action(lazy(commands.users, 'setPassword'));
  users.command('import <file>').description('import users from CSV: login,email,display_name[,role]').addOption(json()).action(lazy(commands.users, 'importCsv'));

  const ap = program.command('app-passwords').description('application passwords (HTTP Basic credentials for the REST API)');
  ap.command('create <login>').description('create one; the password is shown once').requiredOption('--name <name>', 'application name (unique per user)').addOption(json()).action(lazy(commands.appPasswords, 'create'));
  ap.command('list <login>').description("list a user's application passwords").addOption(json()).action(lazy(commands.appPasswords, 'list'));
  ap.command('revoke <login> <uuid>').description('revoke one (takes effect on the next request)').addOption(json()).action(lazy(commands.appPasswords, 'revoke'));

  const logs = program.command('logs').description('the plugin log (interactive view on a terminal)').enablePositionalOptions();
  logs
    .option('--level <level>', 'this level and above (debug, info, warning, error)')
    .option('--source <source>', 'only this source')
    .option('--search <text>', 'message contains')
    .option('--since <when>', 'entries after: 30m, 1h, 2d, 1w ago, or an ISO 8601 time')
    .option('--until <when>', 'entries before: a duration ago or an ISO 8601 time')
    .option('-f, --follow', 'when not on a terminal: keep printing new entries until interrupted')
    .option('--limit <n>', 'entries to print when not interactive (with --follow: to start with)', positiveInt, 50)
    .addOption(json())
    .action(lazy(commands.logs, 'view'));
  logs.command('prune').description('delete entries older than the retention').option('--days <n>', 'retention in days (default: log.retention_days)', positiveInt).addOption(json()).action(lazy(commands.logs, 'prune'));
}
