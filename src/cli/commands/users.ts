// `cashtrack users create|list|import|set-password`.
import { readFile } from 'node:fs/promises';
import type { Role } from '../../services/users/index.js';
import { ServiceError } from '../../errors.js';
import { printJson, printTable, readStdin, withContext, type Io } from '../io.js';

export async function create(io: Io, login: string, opts: { email: string; role: Role; displayName?: string; passwordStdin?: boolean; json?: boolean }): Promise<void> {
  const password = opts.passwordStdin ? (await readStdin(io)).replace(/\r?\n$/, '') : undefined;
  await withContext(io, async (ctx) => {
    const user = await ctx.users.create({ login, email: opts.email, role: opts.role, display_name: opts.displayName, password }, 'cli');
    if (opts.json) return printJson(io, user);
    io.stdout.write(`created ${user.role} ${user.login} (id ${user.id})\n`);
  });
}

export async function list(io: Io, opts: { search?: string; role?: Role; page: number; perPage: number; json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const { items, total } = await ctx.users.list({ search: opts.search, role: opts.role, page: opts.page, per_page: opts.perPage });
    if (opts.json) return printJson(io, items);
    printTable(io, items as unknown as Record<string, unknown>[], ['id', 'login', 'email', 'display_name', 'role', 'status']);
    io.stdout.write(`${total} user(s)${total > items.length ? `, page ${opts.page}` : ''}\n`);
  });
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
    await ctx.users.setPassword(user.id, password);
    const revoked = await ctx.sessions.revokeAll(user.id);
    if (opts.json) return printJson(io, { id: user.id, login: user.login, sessions_revoked: revoked });
    io.stdout.write(`password set for ${user.login}; ${revoked} session(s) revoked\n`);
  });
}
