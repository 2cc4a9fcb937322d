// Migrations with umzug: the list is explicit (migrations/index.ts) so the compiler checks it.
import { QueryTypes } from 'sequelize';
import { ServiceError } from '../errors.js';
import type { Database } from './database.js';
import type { MigrationContext } from './migration.js';
import { migrations } from '../../migrations/index.js';

export interface MigrationStatus {
  executed: string[];
  pending: string[];
}

const STORAGE_TABLE = 'migrations';

// umzug (and its command-line tooling) is loaded only when there is something to migrate: every
// CLI command checks the schema, and most find it current.
async function createUmzug(db: Database) {
  const { Umzug, SequelizeStorage } = await import('umzug');
  const { DataTypes } = await import('sequelize');
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

/** Runs every pending migration; on MariaDB under a named lock so two processes never race. */
export async function migrate(db: Database): Promise<string[]> {
  const umzug = await createUmzug(db);
  if (db.dialect !== 'mysql') return (await umzug.up()).map((m) => m.name);
  const conn = await db.sequelize.transaction();
  try {
    const [row] = await db.sequelize.query<{ got: unknown }>("SELECT GET_LOCK('cashtrack_migrate', 60) AS got", { transaction: conn, type: QueryTypes.SELECT });
    if (Number(row?.got) !== 1) throw new ServiceError('svc_migration_locked', 'Another process is migrating the database; try again when it has finished.', 503);
    return (await umzug.up()).map((m) => m.name);
  } finally {
    await db.sequelize.query("SELECT RELEASE_LOCK('cashtrack_migrate')", { transaction: conn }).catch(() => {});
    await conn.commit().catch(() => {});
  }
}
