// `cashtrack db migrate|status|backup`. The context and the database layer load when a command
// runs.
import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { loadCliConfig, printJson, type Io } from '../io.js';
import { json, type Run } from '../options.js';

export function register(db: Command, run: Run): void {
  db.command('migrate').description('run pending migrations').addOption(json()).action(run(migrate));
  db.command('status').description('list executed and pending migrations').addOption(json()).action(run(status));
  db.command('backup <file>')
    .description('copy the SQLite database to FILE while the daemon runs (on MariaDB/MySQL: prints the dump command)')
    .option('--force', 'replace FILE when it exists')
    .addOption(json())
    .action(run(backup));
}

async function withDb<T>(io: Io, fn: (ctx: Context) => Promise<T>): Promise<T> {
  const config = await loadCliConfig(io);
  const { buildContext } = await import('../../context.js');
  const ctx = buildContext(config, { logStream: null });
  try {
    return await fn(ctx);
  } finally {
    await ctx.close();
  }
}

export async function migrate(io: Io, opts: { json?: boolean }): Promise<void> {
  const { migrate: runMigrations } = await import('../../db/migrator.js');
  await withDb(io, async (ctx) => {
    const applied = await runMigrations(ctx.db);
    if (applied.length) ctx.logger.info('db', 'Migrations applied', { migrations: applied });
    if (opts.json) return printJson(io, { applied });
    io.stdout.write(applied.length ? applied.map((m) => `applied ${m}\n`).join('') : 'nothing to migrate: the schema is current\n');
  });
}

export async function status(io: Io, opts: { json?: boolean }): Promise<void> {
  const { migrationStatus } = await import('../../db/migrator.js');
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
  const { backupDatabase } = await import('../../db/backup.js');
  const { parseDatabaseUrl } = await import('../../db/database.js');
  const result = await backupDatabase(parseDatabaseUrl(config.database.url), file, { force: opts.force, busyTimeoutMs: config.database.busy_timeout_ms });
  if (opts.json) return printJson(io, result);
  io.stdout.write(`backed up to ${result.file}: ${result.bytes} bytes, ${result.pages} pages, integrity ok, ${result.seconds.toFixed(2)} s\n`);
}
