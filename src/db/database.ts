// The database handle: one Sequelize instance for SQLite (embedded default) or MariaDB/MySQL,
// write transactions that retry transient failures, and raw queries for hot paths.
import { createRequire } from 'node:module';
import { isAbsolute, resolve } from 'node:path';
import type { Options, QueryTypes as QueryTypesT, Sequelize, Transaction } from 'sequelize';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Database as SqliteConnection } from 'sqlite3';
import { ServiceError } from '../errors.js';
import { MysqlDirect, SqliteDirect, type DirectDriver } from './direct.js';
import { isTransientDbError } from './errors.js';

export type Dialect = 'sqlite' | 'mysql';

export interface DatabaseOptions {
  url: string;
  busyTimeoutMs?: number;
  poolMax?: number;
}

export interface ParsedUrl {
  dialect: Dialect;
  storage?: string;
  host?: string;
  port?: number;
  username?: string;
  password?: string;
  database?: string;
}

/** Parses `sqlite:path`, `sqlite:///abs/path`, `mysql://u:p@host:3306/db` or `mariadb://...`. */
export function parseDatabaseUrl(url: string): ParsedUrl {
  if (url.startsWith('sqlite:')) {
    let storage = url.slice('sqlite:'.length);
    if (storage.startsWith('//')) storage = storage.slice(2);
    if (!storage) throw new Error('sqlite URL needs a file path, e.g. sqlite:data/cashtrack.sqlite');
    if (storage !== ':memory:' && !isAbsolute(storage)) storage = resolve(process.cwd(), storage);
    return { dialect: 'sqlite', storage };
  }
  const u = new URL(url);
  if (u.protocol !== 'mysql:' && u.protocol !== 'mariadb:') throw new Error(`unsupported database URL scheme ${u.protocol}`);
  const database = decodeURIComponent(u.pathname.replace(/^\//, ''));
  if (!database) throw new Error('the database URL names no database, e.g. mysql://root@127.0.0.1:3306/cashtrack');
  return {
    dialect: 'mysql',
    host: u.hostname || '127.0.0.1',
    port: u.port ? Number(u.port) : 3306,
    username: decodeURIComponent(u.username || 'root'),
    password: decodeURIComponent(u.password || ''),
    database,
  };
}

const require = createRequire(import.meta.url);

/**
 * sqlite3 with every connection configured on open. Sequelize opens one connection per
 * transaction on SQLite, so per-connection settings (busy timeout, synchronous) belong here.
 */
function configuredSqlite3(busyTimeoutMs: number): typeof import('sqlite3') {
  const sqlite3 = require('sqlite3') as typeof import('sqlite3');
  class ConfiguredDatabase extends sqlite3.Database {
    constructor(filename: string, mode?: number, callback?: (err: Error | null) => void) {
      const done = callback ?? (() => {});
      super(filename, mode ?? sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE, (err) => {
        if (err) return done(err);
        this.configure('busyTimeout', busyTimeoutMs);
        // WAL lets readers run beside the writer; synchronous=FULL makes each commit durable.
        this.exec('PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;', (e) => done(e));
      });
    }
  }
  return { ...sqlite3, Database: ConfiguredDatabase as unknown as typeof sqlite3.Database };
}

// Sequelize is loaded on first use (transactions, migrations): a CLI command that only reads never
// pays for it. Its query types are plain strings.
const QueryTypes = { SELECT: 'SELECT', BULKUPDATE: 'BULKUPDATE', BULKDELETE: 'BULKDELETE' } as unknown as typeof QueryTypesT;

export class Database {
  private orm: Sequelize | null = null;
  private readonly createOrm: () => Sequelize;
  readonly dialect: Dialect;
  readonly parsed: ParsedUrl;
  private readonly busyTimeoutMs: number;
  private readonly direct: DirectDriver;
  /** Tail of the in-process queue of SQLite writers (SQLite has one writer at a time anyway). */
  private writeQueue: Promise<void> = Promise.resolve();

  constructor(options: DatabaseOptions) {
    try {
      this.parsed = parseDatabaseUrl(options.url);
    } catch (err) {
      throw new ServiceError('svc_invalid_config', `Invalid configuration CASHTRACK_DATABASE_URL (database.url): ${(err as Error).message}`, 500, { key: 'database.url' });
    }
    this.dialect = this.parsed.dialect;
    this.busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    const common: Options = {
      logging: false,
      define: { underscored: true, timestamps: false, freezeTableName: true },
    };
    if (this.dialect === 'sqlite') {
      const sqlite3 = configuredSqlite3(this.busyTimeoutMs);
      const storage = this.parsed.storage!;
      this.direct = new SqliteDirect(storage, (file) => {
        if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
        return new Promise<SqliteConnection>((resolve, reject) => {
          const conn: SqliteConnection = new sqlite3.Database(file, sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE, (err) => (err ? reject(err) : resolve(conn)));
        });
      });
      this.createOrm = () => new (require('sequelize') as typeof import('sequelize')).Sequelize({
        ...common,
        dialect: 'sqlite',
        storage,
        dialectModule: sqlite3,
        // BEGIN IMMEDIATE: a write transaction takes the write lock up front instead of failing
        // with SQLITE_BUSY when it first writes after reading.
        transactionType: 'IMMEDIATE' as Transaction.TYPES,
      });
    } else {
      this.createOrm = () => new (require('sequelize') as typeof import('sequelize')).Sequelize({
        ...common,
        dialect: 'mysql',
        host: this.parsed.host,
        port: this.parsed.port,
        username: this.parsed.username,
        password: this.parsed.password,
        database: this.parsed.database,
        timezone: '+00:00',
        pool: { max: options.poolMax ?? 10, min: 0, idle: 10_000, acquire: 10_000, evict: 5_000 },
        dialectOptions: { supportBigNumbers: true, bigNumberStrings: true, dateStrings: false, connectTimeout: 5_000 },
      });
      this.direct = new MysqlDirect(this.parsed, options.poolMax ?? 10);
    }
  }

  get sequelize(): Sequelize {
    return (this.orm ??= this.createOrm());
  }

  /** Runs `fn` in one transaction; retries the whole function on deadlock, lock wait or SQLITE_BUSY. */
  async transaction<T>(fn: (t: Transaction) => Promise<T>, retries = 5): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        if (this.dialect === 'sqlite') return await this.exclusive(() => this.sequelize.transaction((t) => fn(t)));
        return await this.sequelize.transaction((t) => fn(t));
      } catch (err) {
        if (attempt >= retries || !isTransientDbError(err)) throw err;
        await sleep(Math.min(200, 5 * 2 ** attempt) * (0.5 + Math.random()));
      }
    }
  }

  /**
   * Runs `fn` as this process's only SQLite writer. Writers waiting in SQLite's busy handler each
   * hold a libuv thread; queued here instead, the lock holder always has a thread to commit with,
   * and the busy timeout only arbitrates between processes. Waiting longer than the busy timeout
   * fails as SQLITE_BUSY would (and is retried like it).
   */
  private async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const previous = this.writeQueue;
    let release!: () => void;
    this.writeQueue = new Promise<void>((r) => (release = r));
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        previous,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(Object.assign(new Error('timed out waiting for the SQLite write lock'), { code: 'SQLITE_BUSY' })), this.busyTimeoutMs);
        }),
      ]);
    } catch (err) {
      // Keep the queue order: whoever is behind us waits for our predecessor, not for us.
      void previous.then(release);
      clearTimeout(timer);
      throw err;
    }
    clearTimeout(timer);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  /**
   * Dates as the column stores them. Sequelize's escaping drops milliseconds on MariaDB, so
   * DATETIME(3) values are formatted here (UTC); SQLite keeps Sequelize's own text format.
   */
  private prepare(replacements: unknown[] | Record<string, unknown>): unknown[] | Record<string, unknown> {
    if (this.dialect !== 'mysql') return replacements;
    const fix = (v: unknown) => (v instanceof Date ? v.toISOString().replace('T', ' ').replace('Z', '') : v);
    return Array.isArray(replacements) ? replacements.map(fix) : Object.fromEntries(Object.entries(replacements).map(([k, v]) => [k, fix(v)]));
  }

  /** A raw SELECT; reads outside a transaction are retried on transient errors. */
  async select<T extends object>(sql: string, replacements: unknown[] | Record<string, unknown> = [], transaction?: Transaction): Promise<T[]> {
    if (transaction || !Array.isArray(replacements)) {
      return this.sequelize.query<T>(sql, { replacements: this.prepare(replacements), type: QueryTypes.SELECT, transaction, raw: true });
    }
    const run = () => this.direct.all<T>(sql, replacements);
    for (let attempt = 0; ; attempt++) {
      try {
        return await run();
      } catch (err) {
        if (attempt >= 3 || !isTransientDbError(err)) throw err;
        await sleep(10 * 2 ** attempt);
      }
    }
  }

  /** A raw INSERT/UPDATE/DELETE; returns the affected row count (and the insert id of an INSERT). */
  async execute(sql: string, replacements: unknown[] | Record<string, unknown> = [], transaction?: Transaction): Promise<{ affected: number; insertId: number | null }> {
    if (!transaction && Array.isArray(replacements)) {
      const params = replacements;
      return this.dialect === 'sqlite' ? this.exclusive(() => this.direct.run(sql, params)) : this.direct.run(sql, params);
    }
    return this.executeNow(sql, replacements, transaction);
  }

  private async executeNow(sql: string, replacements: unknown[] | Record<string, unknown>, transaction?: Transaction): Promise<{ affected: number; insertId: number | null }> {
    replacements = this.prepare(replacements);
    const verb = sql.trimStart().slice(0, 6).toUpperCase();
    if (verb === 'UPDATE' || verb === 'DELETE') {
      // The bulk types make both dialects answer with the affected row count.
      const type = verb === 'UPDATE' ? QueryTypes.BULKUPDATE : QueryTypes.BULKDELETE;
      const affected = (await this.sequelize.query(sql, { replacements, transaction, type, raw: true })) as unknown as number;
      return { affected: Number(affected) || 0, insertId: null };
    }
    const [result, meta] = (await this.sequelize.query(sql, { replacements, transaction, raw: true })) as [unknown, unknown];
    if (this.dialect === 'mysql') {
      // An INSERT answers [insertId, affectedRows]; anything else the driver's result header.
      if (typeof result === 'number' || typeof result === 'string') return { affected: Number(meta) || 0, insertId: Number(result) || null };
      const r = result as { affectedRows?: number; insertId?: number };
      return { affected: r.affectedRows ?? 0, insertId: r.insertId ? Number(r.insertId) : null };
    }
    const m = meta as { changes?: number; lastID?: number } | undefined;
    return { affected: m?.changes ?? 0, insertId: m?.lastID ?? null };
  }

  /**
   * `LIKE` pattern for a prefix, with the input's wildcards escaped by `!` (use with
   * `LIKE ? ESCAPE '!'`: a backslash means different things in MariaDB and SQLite string literals).
   */
  static likePrefix(input: string): string {
    return input.replace(/[!%_]/g, (c) => '!' + c) + '%';
  }

  /** `LIKE` pattern for a substring. */
  static likeContains(input: string): string {
    return '%' + Database.likePrefix(input);
  }

  async ping(): Promise<void> {
    await this.sequelize.query('SELECT 1', { type: QueryTypes.SELECT });
  }

  private closing: Promise<void> | null = null;

  /** Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.direct.close().then(() => this.orm?.close());
    return this.closing;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
