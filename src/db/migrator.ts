// Migrations with umzug: the list is explicit (migrations/index.ts) so the compiler checks it.
import { QueryTypes } from 'sequelize';
import { Umzug, SequelizeStorage } from 'umzug';
import { ServiceError } from '../errors.js';
import type { Database } from './database.js';
import type { MigrationContext } from './migration.js';
import { migrations } from '../../migrations/index.js';

export interface MigrationStatus {
  executed: string[];
  pending: string[];
}

function createUmzug(db: Database) {
  const context: MigrationContext = { qi: db.sequelize.getQueryInterface(), sequelize: db.sequelize, dialect: db.dialect };
  return new Umzug<MigrationContext>({
    migrations: migrations.map((m) => ({ name: m.name, up: ({ context: c }) => m.up(c), down: ({ context: c }) => m.down(c) })),
    context,
    storage: new SequelizeStorage({ sequelize: db.sequelize, tableName: 'migrations', modelName: 'CashtrackMigration' }),
    logger: undefined,
  });
}

export async function migrationStatus(db: Database): Promise<MigrationStatus> {
  const umzug = createUmzug(db);
  const [executed, pending] = await Promise.all([umzug.executed(), umzug.pending()]);
  return { executed: executed.map((m) => m.name), pending: pending.map((m) => m.name) };
}

/** Runs every pending migration; on MariaDB under a named lock so two processes never race. */
export async function migrate(db: Database): Promise<string[]> {
  const umzug = createUmzug(db);
  if (db.dialect !== 'mysql') return (await umzug.up()).map((m) => m.name);
  const conn = await db.sequelize.transaction();
  try {
    const [row] = (await db.sequelize.query("SELECT GET_LOCK('cashtrack_migrate', 60) AS got", { transaction: conn, type: QueryTypes.SELECT })) as { got: unknown }[];
    if (Number(row?.got) !== 1) throw new ServiceError('svc_migration_locked', 'Another process is migrating the database; try again when it has finished.', 503);
    return (await umzug.up()).map((m) => m.name);
  } finally {
    await db.sequelize.query("SELECT RELEASE_LOCK('cashtrack_migrate')", { transaction: conn }).catch(() => {});
    await conn.commit().catch(() => {});
  }
}
