// Each test file gets its own freshly migrated database: a temporary SQLite file, and (when
// CASHTRACK_TEST_MYSQL_URL is set) a MariaDB database created for it and dropped afterwards.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe } from 'vitest';
import { loadConfig, type Config } from '../../src/config/index.js';
import { buildContext, ensureSchema, type Context, type ContextOptions } from '../../src/context.js';

export type TestDialect = 'sqlite' | 'mysql';

/** The dialects this run covers: SQLite always, MariaDB when CASHTRACK_TEST_MYSQL_URL is set. */
export const dialects: TestDialect[] = process.env.CASHTRACK_TEST_MYSQL_URL ? ['sqlite', 'mysql'] : ['sqlite'];

export interface TestDatabase {
  url: string;
  dataDir: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(dialect: TestDialect): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cashtrack-test-'));
  if (dialect === 'sqlite') {
    return { url: `sqlite:${join(dataDir, 'test.sqlite')}`, dataDir, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  const base = new URL(process.env.CASHTRACK_TEST_MYSQL_URL!);
  const name = `ct_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = await mysql.createConnection({
    host: base.hostname,
    port: Number(base.port || 3306),
    user: decodeURIComponent(base.username || 'root'),
    password: decodeURIComponent(base.password),
  });
  await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await admin.end();
  const url = new URL(base.toString());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    dataDir,
    async drop() {
      const conn = await mysql.createConnection({
        host: base.hostname,
        port: Number(base.port || 3306),
        user: decodeURIComponent(base.username || 'root'),
        password: decodeURIComponent(base.password),
      });
      await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await conn.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function testConfig(db: TestDatabase, overrides: Record<string, unknown> = {}): Config {
  return loadConfig({
    env: { CASHTRACK_ENV: 'test' },
    overrides: { 'database.url': db.url, data_dir: db.dataDir, secret: 'test-secret-0123456789abcdef0123456789abcdef', 'log.stdout': false, ...overrides },
  });
}

export interface TestContext {
  ctx: Context;
  db: TestDatabase;
  config: Config;
}

/** A migrated context on a fresh database. */
export async function createTestContext(dialect: TestDialect, overrides: Record<string, unknown> = {}, options: ContextOptions = {}): Promise<TestContext> {
  const db = await createTestDatabase(dialect);
  const config = testConfig(db, overrides);
  const ctx = buildContext(config, { logStream: null, ...options });
  await ensureSchema(ctx, true);
  return { ctx, db, config };
}

export async function destroyTestContext(t: TestContext | undefined): Promise<void> {
  if (!t) return;
  await t.ctx.appPasswords.drain();
  await t.ctx.close();
  await t.db.drop();
}

/**
 * `describe` once per dialect with a fresh migrated context shared by that block's tests.
 * `use()` returns it inside tests.
 */
export function describeEachDialect(
  name: string,
  body: (use: () => TestContext, dialect: TestDialect) => void,
  overrides: Record<string, unknown> = {},
  options: ContextOptions = {},
): void {
  for (const dialect of dialects) {
    describe(`${name} [${dialect}]`, () => {
      let t: TestContext | undefined;
      beforeAll(async () => {
        t = await createTestContext(dialect, overrides, options);
      });
      afterAll(async () => {
        await destroyTestContext(t);
      });
      body(() => {
        if (!t) throw new Error('test context not ready');
        return t;
      }, dialect);
    });
  }
}
