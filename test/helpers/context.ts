// Each test file gets its own freshly migrated database: a temporary SQLite file, and (when
// CASHTRACK_TEST_MYSQL_URL is set) a MariaDB database created for it and dropped afterwards.
// Under `vitest run` the migrations run once per run into a template (test/setup/templates.ts)
// and a fresh database is a copy of it; without the template folder (another config) each
// database is migrated itself.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, inject } from 'vitest';
import { loadConfig, type Config } from '../../src/config/index.js';
import { buildContext, ensureSchema, type Context, type ContextOptions } from '../../src/context.js';

export type TestDialect = 'sqlite' | 'mysql';

/** The dialects this run covers: SQLite always, MariaDB when CASHTRACK_TEST_MYSQL_URL is set. */
export const dialects: TestDialect[] = process.env.CASHTRACK_TEST_MYSQL_URL ? ['sqlite', 'mysql'] : ['sqlite'];

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the run's template databases are described (test/setup/templates.ts). */
    templateDir?: string;
  }
}

/** A migrated template: the SQLite file to copy, or the MariaDB database and the statements that copy it. */
export type Template = { file: string } | { database: string; url: string; statements: string[] };

export interface TestDatabase {
  url: string;
  dataDir: string;
  drop(): Promise<void>;
}

/** A connection to the MariaDB server of `url`, to a database of it when `database` is given. */
function mysqlConnection(url: string, database?: string, multipleStatements = false): Promise<mysql.Connection> {
  const base = new URL(url);
  return mysql.createConnection({
    host: base.hostname,
    port: Number(base.port || 3306),
    user: decodeURIComponent(base.username || 'root'),
    password: decodeURIComponent(base.password),
    database,
    multipleStatements,
  });
}

/**
 * An empty database, or with `migrated` a copy of the run's migrated template (migrated here
 * when the run has none). A test of the migrations themselves asks for an empty one.
 */
export async function createTestDatabase(dialect: TestDialect, { migrated = false } = {}): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cashtrack-test-'));
  if (dialect === 'sqlite') {
    const file = join(dataDir, 'test.sqlite');
    const template = migrated ? await templateOf('sqlite') : undefined;
    if (template && 'file' in template) copyFileSync(template.file, file);
    return { url: `sqlite:${file}`, dataDir, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  const base = process.env.CASHTRACK_TEST_MYSQL_URL!;
  const name = `ct_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = await mysqlConnection(base);
  await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await admin.end();
  const template = migrated ? await templateOf('mysql') : undefined;
  if (template && 'statements' in template) {
    const conn = await mysqlConnection(base, name, true);
    await conn.query(template.statements.join(';\n'));
    await conn.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    dataDir,
    async drop() {
      const conn = await mysqlConnection(base);
      await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await conn.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The run's migrated template of `dialect`, made by the first file that asks (the others wait for
 * it); none outside a run that set up the template folder.
 */
async function templateOf(dialect: TestDialect): Promise<Template | undefined> {
  const dir = inject('templateDir');
  if (!dir) return undefined;
  const described = join(dir, `${dialect}.json`);
  const lock = join(dir, `${dialect}.lock`);
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (existsSync(described)) return JSON.parse(readFileSync(described, 'utf8')) as Template;
    let mine = false;
    try {
      mkdirSync(lock);
      mine = true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (mine) {
      try {
        const template = await migrateTemplate(dialect, dir);
        // Written whole, then renamed: a waiting file never reads half of it.
        writeFileSync(`${described}.tmp`, JSON.stringify(template));
        renameSync(`${described}.tmp`, described);
        return template;
      } finally {
        // On a failure the next file tries again.
        rmSync(lock, { recursive: true, force: true });
      }
    }
    if (Date.now() > deadline) throw new Error(`The ${dialect} template database was not made within 180 s (${dir}).`);
    await sleep(100);
  }
}

async function migrateTemplate(dialect: TestDialect, dir: string): Promise<Template> {
  const db = await createTestDatabase(dialect);
  const ctx = buildContext(testConfig(db), { logStream: null });
  try {
    await ensureSchema(ctx, true);
  } finally {
    await ctx.close();
  }
  if (dialect === 'sqlite') {
    // Kept in the template folder, which the run's end removes.
    const file = join(dir, 'template.sqlite');
    copyFileSync(db.url.slice('sqlite:'.length), file);
    await db.drop();
    return { file };
  }
  rmSync(db.dataDir, { recursive: true, force: true });
  return { database: decodeURIComponent(new URL(db.url).pathname.slice(1)), url: db.url, statements: await mysqlTemplateStatements(db.url) };
}

/**
 * What makes an empty database a copy of the migrated one at `url`: each table as SHOW CREATE
 * TABLE gives it (foreign keys included, which CREATE TABLE ... LIKE would drop), then the rows
 * the migrations wrote, read from the template while it lasts (the run's end).
 */
async function mysqlTemplateStatements(url: string): Promise<string[]> {
  const schema = decodeURIComponent(new URL(url).pathname.slice(1));
  const conn = await mysqlConnection(url, schema);
  try {
    const [tables] = await conn.query<mysql.RowDataPacket[]>(
      "SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME",
      [schema],
    );
    const creates: string[] = [];
    const copies: string[] = [];
    for (const { name } of tables) {
      const [[created]] = await conn.query<mysql.RowDataPacket[]>(`SHOW CREATE TABLE \`${name}\``);
      creates.push(created['Create Table']);
      const [[rows]] = await conn.query<mysql.RowDataPacket[]>(`SELECT COUNT(*) AS n FROM \`${name}\``);
      if (Number(rows.n) === 0) continue;
      // Generated columns are computed again, not copied.
      const [columns] = await conn.query<mysql.RowDataPacket[]>(
        "SELECT COLUMN_NAME AS name FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND EXTRA NOT LIKE '%GENERATED%' ORDER BY ORDINAL_POSITION",
        [schema, name],
      );
      const list = columns.map((c) => `\`${c.name}\``).join(', ');
      copies.push(`INSERT INTO \`${name}\` (${list}) SELECT ${list} FROM \`${schema}\`.\`${name}\``);
    }
    return ['SET FOREIGN_KEY_CHECKS = 0', ...creates, ...copies, 'SET FOREIGN_KEY_CHECKS = 1'];
  } finally {
    await conn.end();
  }
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
  const db = await createTestDatabase(dialect, { migrated: true });
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
