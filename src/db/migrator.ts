// Migrations with umzug: the list is explicit (migrations/index.ts) so the compiler checks it.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { ServiceError } from '../errors.js';
import { sleep, type Database } from './database.js';
import type { MigrationContext } from './migration.js';
import { migrations } from '../../migrations/index.js';

export interface MigrationStatus {
  executed: string[];
  pending: string[];
}

const STORAGE_TABLE = 'migrations';
/** The migration lock's table: like umzug's, the migrator's own, made before any migration runs. */
export const LOCK_TABLE = 'migration_lock';
const LOCK_NAME = 'migrate';

const require = createRequire(import.meta.url);

// umzug (and its command-line tooling) is loaded only when there is something to migrate: every
// CLI command checks the schema, and most find it current.
async function createUmzug(db: Database) {
  const { Umzug, SequelizeStorage } = require('umzug') as typeof import('umzug');
  const { DataTypes } = require('sequelize') as typeof import('sequelize');
  const context: MigrationContext = { qi: db.sequelize.getQueryInterface(), sequelize: db.sequelize, dialect: db.dialect, types: DataTypes };
  return new Umzug<MigrationContext>({
    migrations: migrations.map((m) => ({ name: m.name, up: ({ context: c }) => m.up(c), down: ({ context: c }) => m.down(c) })),
    context,
    storage: new SequelizeStorage({ sequelize: db.sequelize, tableName: STORAGE_TABLE, modelName: 'CashtrackMigration' }),
    logger: undefined,
  });
}

/** Executed and pending names, read straight from umzug's table (no umzug load). */
export async function migrationStatus(db: Database): Promise<MigrationStatus> {
  let executed: string[] = [];
  try {
    executed = (await db.select<{ name: string }>(`SELECT name FROM ${STORAGE_TABLE}`)).map((r) => r.name);
  } catch (err) {
    const message = String((err as Error).message);
    if (!/no such table|doesn't exist|ER_NO_SUCH_TABLE/i.test(message) && (err as { code?: string }).code !== 'ER_NO_SUCH_TABLE') throw err;
  }
  const done = new Set(executed);
  return { executed: migrations.filter((m) => done.has(m.name)).map((m) => m.name), pending: migrations.filter((m) => !done.has(m.name)).map((m) => m.name) };
}

/** How long a migration lock lives without its holder renewing it (a holder renews it every 5 s). */
export const MIGRATION_LOCK_STALE_MS = 120_000;
const HEARTBEAT_MS = 5_000;

export interface MigrateOptions {
  /** How long to wait for another process's migration before 503 svc_migration_locked (60 s). */
  waitMs?: number;
  /** The lock holder's name (default host:pid:random). */
  holder?: string;
}

/**
 * Runs every pending migration, under the migration lock so that processes started together apply
 * each migration once. The lock is a row in `migration_lock`, made by an INSERT that only one
 * process can win: a unique key is enforced on every engine the project runs on, Galera included
 * (where the loser of two concurrent INSERTs on different nodes fails certification), whereas
 * GET_LOCK is local to one server and not replicated by Galera. The holder renews the row while it
 * migrates; the row of a process that died is taken over once it is `MIGRATION_LOCK_STALE_MS` old.
 */
export async function migrate(db: Database, options: MigrateOptions = {}): Promise<string[]> {
  const umzug = await createUmzug(db);
  const holder = (options.holder ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`).slice(0, 128);
  await db.execute(
    db.dialect === 'mysql'
      ? `CREATE TABLE IF NOT EXISTS ${LOCK_TABLE} (name VARCHAR(64) NOT NULL PRIMARY KEY, holder VARCHAR(128) NOT NULL, heartbeat_at DATETIME(3) NOT NULL) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`
      : `CREATE TABLE IF NOT EXISTS ${LOCK_TABLE} (name VARCHAR(64) NOT NULL PRIMARY KEY, holder VARCHAR(128) NOT NULL, heartbeat_at DATETIME NOT NULL)`,
  );
  const deadline = Date.now() + (options.waitMs ?? 60_000);
  for (;;) {
    // A holder that stopped renewing its row died mid-migration: its lock is void.
    await db.execute(`DELETE FROM ${LOCK_TABLE} WHERE name = ? AND heartbeat_at < ?`, [LOCK_NAME, new Date(Date.now() - MIGRATION_LOCK_STALE_MS)]);
    const { affected } = await db.execute(db.insertIgnore(LOCK_TABLE, ['name', 'holder', 'heartbeat_at']), [LOCK_NAME, holder, new Date()]);
    if (affected === 1) break;
    if (Date.now() >= deadline) {
      const [row] = await db.select<{ holder: string }>(`SELECT holder FROM ${LOCK_TABLE} WHERE name = ?`, [LOCK_NAME]);
      throw new ServiceError('svc_migration_locked', 'Another process is migrating the database; try again when it has finished.', 503, {
        holder: row?.holder ?? null,
      });
    }
    await sleep(200 + Math.random() * 300);
  }
  const renew = setInterval(() => {
    void db.execute(`UPDATE ${LOCK_TABLE} SET heartbeat_at = ? WHERE name = ? AND holder = ?`, [new Date(), LOCK_NAME, holder]).catch(() => {
      // The next renewal tries again; a lock left unrenewed this long is taken over (see above).
    });
  }, HEARTBEAT_MS);
  renew.unref();
  try {
    // umzug reads what is executed now, after the lock: what the previous holder applied is skipped.
    return (await umzug.up()).map((m) => m.name);
  } finally {
    clearInterval(renew);
    await db.execute(`DELETE FROM ${LOCK_TABLE} WHERE name = ? AND holder = ?`, [LOCK_NAME, holder]).catch(() => {});
  }
}
