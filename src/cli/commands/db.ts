// `cashtrack db migrate|status|backup`.
import { buildContext } from '../../context.js';
import { migrate as runMigrations, migrationStatus } from '../../db/migrator.js';
import { backupDatabase } from '../../db/backup.js';
import { parseDatabaseUrl } from '../../db/database.js';
import { loadCliConfig, printJson, type Io } from '../io.js';

async function withDb<T>(io: Io, fn: (ctx: ReturnType<typeof buildContext>) => Promise<T>): Promise<T> {
  const ctx = buildContext(await loadCliConfig(io), { logStream: null });
  try {
    return await fn(ctx);
  } finally {
    await ctx.close();
  }
}

export async function migrate(io: Io, opts: { json?: boolean }): Promise<void> {
  await withDb(io, async (ctx) => {
    const applied = await runMigrations(ctx.db);
    if (applied.length) ctx.logger.info('db', 'Migrations applied', { migrations: applied });
    if (opts.json) return printJson(io, { applied });
    io.stdout.write(applied.length ? applied.map((m) => `applied ${m}\n`).join('') : 'nothing to migrate: the schema is current\n');
  });
}

export async function status(io: Io, opts: { json?: boolean }): Promise<void> {
  await withDb(io, async (ctx) => {
    const s = await migrationStatus(ctx.db);
    if (opts.json) return printJson(io, { dialect: ctx.db.dialect, ...s });
    io.stdout.write(`database: ${ctx.db.dialect}\n`);
    for (const m of s.executed) io.stdout.write(`  executed  ${m}\n`);
    for (const m of s.pending) io.stdout.write(`  pending   ${m}\n`);
    io.stdout.write(s.pending.length ? `${s.pending.length} pending: run cashtrack db migrate\n` : 'schema is current\n');
  });
}

export async function backup(io: Io, file: string, opts: { force?: boolean; json?: boolean }): Promise<void> {
  const config = await loadCliConfig(io);
  const result = await backupDatabase(parseDatabaseUrl(config.database.url), file, { force: opts.force, busyTimeoutMs: config.database.busy_timeout_ms });
  if (opts.json) return printJson(io, result);
  io.stdout.write(`backed up to ${result.file}: ${result.bytes} bytes, ${result.pages} pages, integrity ok, ${result.seconds.toFixed(2)} s\n`);
}
