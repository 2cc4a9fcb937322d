// What a migration receives, and column helpers for the places where SQLite and MariaDB differ.
import { createRequire } from 'node:module';
import type { DataTypes as SequelizeDataTypes, QueryInterface, Sequelize } from 'sequelize';
import type { Dialect } from './url.js';

export interface MigrationContext {
  qi: QueryInterface;
  sequelize: Sequelize;
  dialect: Dialect;
  /** Sequelize's DataTypes (passed in so that listing migrations does not load Sequelize). */
  types: typeof SequelizeDataTypes;
}

const require = createRequire(import.meta.url);
const dataTypes = (): typeof SequelizeDataTypes => (require('sequelize') as typeof import('sequelize')).DataTypes;

export interface Migration {
  name: string;
  up(ctx: MigrationContext): Promise<void>;
  down(ctx: MigrationContext): Promise<void>;
}

/** InnoDB, utf8mb4 and a case-insensitive collation on MariaDB; nothing to say on SQLite. */
export function tableOptions(dialect: Dialect): Record<string, string> {
  return dialect === 'mysql' ? { engine: 'InnoDB', charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' } : {};
}

/** Auto-increment primary key: INTEGER on SQLite (its rowid), BIGINT on MariaDB. */
export function primaryKey(dialect: Dialect) {
  return { type: dialect === 'sqlite' ? dataTypes().INTEGER : dataTypes().BIGINT, primaryKey: true, autoIncrement: true, allowNull: false };
}

/** Reference to another table's primary key. */
export function foreignKey(dialect: Dialect, allowNull = false) {
  return { type: dialect === 'sqlite' ? dataTypes().INTEGER : dataTypes().BIGINT, allowNull };
}

/** A string compared case-insensitively (prefix LIKE can use its index on both dialects). */
export function ciString(dialect: Dialect, length: number, allowNull = false) {
  return { type: dialect === 'sqlite' ? `VARCHAR(${length}) COLLATE NOCASE` : dataTypes().STRING(length), allowNull };
}

/** A string compared byte for byte (hashes, tokens, uuids). */
export function binaryString(dialect: Dialect, length: number, allowNull = false) {
  return { type: dialect === 'sqlite' ? `VARCHAR(${length})` : `VARCHAR(${length}) CHARACTER SET ascii COLLATE ascii_bin`, allowNull };
}

/** Millisecond timestamp, stored in UTC. */
export function timestamp(allowNull = false) {
  return { type: dataTypes().DATE(3), allowNull };
}
