// `cashtrack users create|list|import|set-password`.
import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import type { User } from '../../services/users/index.js';
import { ROLES, type Role } from '../../services/users/schemas.js';
import { ServiceError } from '../../errors.js';
import { printJson, readStdin, withContext, type Io } from '../io.js';
import { json, listCommand, type ListOptions, type ListPage, type Run } from '../options.js';

export function register(users: Command, run: Run): void {
  users
    .command('create <login>')
    .description('create a user')
    .requiredOption('--email <email>', 'email address')
    .addOption(new Option('--role <role>', 'role').choices(ROLES).default('member'))
    .option('--display-name <name>', 'display name (default: the login)')
    .option('--password-stdin', 'read a login password from standard input')
    .addOption(json())
    .action(run(create));
  listCommand(
    users
      .command('list')
      .description('list users (prefix search on login, email or display name)')
      .option('--search <s>', 'prefix of a login, email or display name')
      .addOption(new Option('--role <role>', 'only this role').choices(ROLES)),
    { items: 'users', perPage: 100, columns: ['id', 'login', 'email', 'display_name', 'role', 'status'], count: (total) => `${total} user(s)` },
    run,
    list,
  );
  users
    .command('set-password <login>')
    .description('set a login password, read from standard input; revokes their sessions')
    .addOption(json())
    .action(run(setPassword));
  users.command('import <file>').description('import users from CSV: login,email,display_name[,role]').addOption(json()).action(run(importCsv));
}

export async function create(
  io: Io,
  login: string,
  opts: { email: string; role: Role; displayName?: string; passwordStdin?: boolean; json?: boolean },
): Promise<void> {
  const password = opts.passwordStdin ? (await readStdin(io)).replace(/\r?\n$/, '') : undefined;
  await withContext(io, async (ctx) => {
    const user = await ctx.users.create({ login, email: opts.email, role: opts.role, display_name: opts.displayName, password }, 'cli');
    if (opts.json) return printJson(io, user);
    io.stdout.write(`created ${user.role} ${user.login} (id ${user.id})\n`);
  });
}

export async function list(io: Io, opts: ListOptions & { search?: string; role?: Role }): Promise<ListPage<User>> {
  return withContext(io, async (ctx) => ({
    ...(await ctx.users.list({ search: opts.search, role: opts.role, page: opts.page, per_page: opts.perPage })),
    page: opts.page,
  }));
}

export async function importCsv(io: Io, file: string, opts: { json?: boolean }): Promise<void> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ServiceError('svc_file_unreadable', `Cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, 400);
  }
  await withContext(io, async (ctx) => {
    const report = await ctx.users.importCsv(text, 'cli');
    if (opts.json) return printJson(io, report);
    io.stdout.write(`created ${report.created}, skipped ${report.skipped.length}\n`);
    for (const s of report.skipped) io.stdout.write(`  line ${s.line}${s.login ? ` (${s.login})` : ''}: ${s.code}: ${s.reason}\n`);
  });
}

export async function setPassword(io: Io, login: string, opts: { json?: boolean }): Promise<void> {
  const password = (await readStdin(io)).replace(/\r?\n$/, '');
  await withContext(io, async (ctx) => {
    const user = await ctx.users.requireByLogin(login);
    const { sessions_revoked: revoked } = await ctx.auth.setPassword(user.id, password, 'cli');
    if (opts.json) return printJson(io, { id: user.id, login: user.login, sessions_revoked: revoked });
    io.stdout.write(`password set for ${user.login}; ${revoked} session(s) revoked\n`);
  });
}
