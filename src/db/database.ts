// The database handle for SQLite (embedded default) or MariaDB/MySQL: statements and write
// transactions (retried on transient failures) on connections of our own (direct.ts), the
// dialect helpers that keep SQL differences out of the services, and Sequelize for migrations.
import { createRequire } from 'node:module';
import type { Options, Sequelize, Transaction as SequelizeTransaction } from 'sequelize';
import type { Database as SqliteConnection } from 'sqlite3';
import { ServiceError } from '../errors.js';
import { MysqlDirect, SqliteDirect, type DirectDriver, type PoolStats, type RunResult } from './direct.js';
import { isDeadlock, isTransientDbError } from './errors.js';
import { configuredSqlite3, prepareSqliteStorage } from './sqlite.js';
import type { Transaction } from './transaction.js';
import { parseDatabaseUrl, type Dialect, type ParsedUrl } from './url.js';
import { exactSum } from './values.js';
import { runTransaction, WriteQueue, type DirectTransaction } from './writes.js';

export type { Transaction };
export { parseDatabaseUrl, type Dialect, type ParsedUrl };

export interface DatabaseOptions {
  url: string;
  busyTimeoutMs?: number;
  poolMax?: number;
}

const require = createRequire(import.meta.url);

// Sequelize serves the migrations (umzug, the query interface); every other statement goes to the
// drivers directly (src/db/direct.ts). It is loaded on first use, so a command never pays for it.

export class Database {
  private orm: Sequelize | null = null;
  private readonly createOrm: () => Sequelize;
  readonly dialect: Dialect;
  readonly parsed: ParsedUrl;
  private readonly busyTimeoutMs: number;
  private readonly direct: DirectDriver;
  /** Transactions run again after a deadlock, lock wait timeout or SQLITE_BUSY: contention, for monitoring and tests. */
  retriedTransactions = 0;
  /** Statements outside a transaction run again after a deadlock or a Galera certification conflict. */
  retriedStatements = 0;
  /** The in-process queue of SQLite writers (SQLite has one writer at a time anyway). */
  private readonly writeQueue: WriteQueue;

  constructor(options: DatabaseOptions) {
    try {
      this.parsed = parseDatabaseUrl(options.url);
    } catch (err) {
      throw new ServiceError('svc_invalid_config', `Invalid configuration CASHTRACK_DATABASE_URL (database.url): ${(err as Error).message}`, 500, {
        key: 'database.url',
      });
    }
    this.dialect = this.parsed.dialect;
    this.busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    this.writeQueue = new WriteQueue(this.busyTimeoutMs);
    const common: Options = {
      logging: false,
      define: { underscored: true, timestamps: false, freezeTableName: true },
    };
    if (this.dialect === 'sqlite') {
      const sqlite3 = configuredSqlite3(this.busyTimeoutMs);
      const storage = this.parsed.storage!;
      this.direct = new SqliteDirect(storage, (file) => {
        this.prepareStorage();
        return new Promise<SqliteConnection>((resolve, reject) => {
          const conn: SqliteConnection = new sqlite3.Database(file, sqlite3.OPEN_READWRITE | sqlite3.OPEN_CREATE, (err) => (err ? reject(err) : resolve(conn)));
        });
      });
      this.createOrm = () => (
        this.prepareStorage(),
        new (require('sequelize') as typeof import('sequelize')).Sequelize({
          ...common,
          dialect: 'sqlite',
          storage,
          dialectModule: sqlite3,
          // BEGIN IMMEDIATE: a write transaction takes the write lock up front instead of failing
          // with SQLITE_BUSY when it first writes after reading.
          transactionType: 'IMMEDIATE' as SequelizeTransaction.TYPES,
        })
      );
    } else {
      this.createOrm = () =>
        new (require('sequelize') as typeof import('sequelize')).Sequelize({
          ...common,
          dialect: 'mysql',
          host: this.parsed.host,
          port: this.parsed.port,
          username: this.parsed.username,
          password: this.parsed.password,
          database: this.parsed.database,
          timezone: '+00:00',
          pool: { max: options.poolMax ?? 10, min: 0, idle: 10_000, acquire: 10_000, evict: 5_000 },
          // stringifyObjects: an object bound to a placeholder is a string, never `key = value` SQL.
          dialectOptions: {
            supportBigNumbers: true,
            bigNumberStrings: true,
            dateStrings: false,
            connectTimeout: 5_000,
            stringifyObjects: true,
            ...(this.parsed.socketPath ? { socketPath: this.parsed.socketPath } : {}),
          },
        });
      this.direct = new MysqlDirect(this.parsed, options.poolMax ?? 10);
    }
  }

  private storagePrepared = false;

  /** Once, before the first connection to the SQLite file (see `prepareSqliteStorage`). */
  private prepareStorage(): void {
    const file = this.parsed.storage;
    if (this.storagePrepared || !file || file === ':memory:') return;
    this.storagePrepared = true;
    prepareSqliteStorage(file);
  }

  /** The statement connections: open, in use, waiting (for the metrics). */
  poolStats(): PoolStats {
    return this.direct.stats();
  }

  get sequelize(): Sequelize {
    return (this.orm ??= this.createOrm());
  }

  /**
   * Runs `fn` in one write transaction on a connection of our own (SQLite: BEGIN IMMEDIATE, as this
   * process's only writer; MariaDB: a pooled connection). Deadlocks, lock waits and SQLITE_BUSY
   * roll back and run the whole function again (`retries` times, deadlocks twice that); `afterCommit`
   * work runs once, after the commit.
   */
  async transaction<T>(fn: (t: Transaction) => Promise<T>, retries = 5): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        const { result, after } =
          this.dialect === 'sqlite' ? await this.writeQueue.exclusive(() => runTransaction(this.direct, fn)) : await runTransaction(this.direct, fn);
        for (const hook of after) {
          try {
            await hook();
          } catch {
            // After-commit work (hooks, notifications) cannot undo the commit; its owner logs.
          }
        }
        return result;
      } catch (err) {
        // A deadlock is also how Galera aborts the loser of a certification conflict, which a
        // busy cluster does often: those get twice the retries, so they stay the server's business.
        if (attempt >= (isDeadlock(err) ? 2 * retries : retries) || !isTransientDbError(err)) throw err;
        this.retriedTransactions++;
        await sleep(Math.min(200, 5 * 2 ** attempt) * (0.5 + Math.random()));
      }
    }
  }

  /** A SELECT (`?` placeholders); reads outside a transaction are retried on transient errors. */
  async select<T extends object>(sql: string, params: unknown[] = [], transaction?: Transaction): Promise<T[]> {
    if (transaction) return (transaction as DirectTransaction).conn.all<T>(sql, params);
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.direct.all<T>(sql, params);
      } catch (err) {
        if (attempt >= 3 || !isTransientDbError(err)) throw err;
        await sleep(10 * 2 ** attempt);
      }
    }
  }

  /**
   * An INSERT/UPDATE/DELETE; returns the affected row count (and the insert id of an INSERT).
   * Outside a transaction, a statement aborted as a deadlock runs again: it was rolled back whole,
   * and on Galera that is how a statement loses to a conflicting write committed on another node
   * (the server retries it `wsrep_retry_autocommit` times, 1 by default, then gives up).
   */
  async execute(sql: string, params: unknown[] = [], transaction?: Transaction): Promise<RunResult> {
    if (transaction) return (transaction as DirectTransaction).conn.run(sql, params);
    if (this.dialect === 'sqlite') return this.writeQueue.exclusive(() => this.direct.run(sql, params));
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.direct.run(sql, params);
      } catch (err) {
        if (attempt >= 4 || !isDeadlock(err)) throw err;
        this.retriedStatements++;
        await sleep(Math.min(100, 5 * 2 ** attempt) * (0.5 + Math.random()));
      }
    }
  }

  /**
   * Inserts `rows` (each the values of `columns`) into a table with an auto-increment `id` and
   * answers their ids, in order. One multi-row statement when the ids it allocates are known:
   * always on SQLite (one writer; the last id is reported), and on MariaDB/MySQL when
   * `innodb_autoinc_lock_mode` is 0 or 1, where a multi-row INSERT takes consecutive ids (with
   * `auto_increment_increment` steps, as under Galera) from the first one reported. Under
   * lock mode 2 (interleaved) the rows are inserted one by one.
   */
  async insertMany(table: string, columns: string[], rows: unknown[][], t: Transaction): Promise<number[]> {
    if (rows.length === 0) return [];
    const one = `(${columns.map(() => '?').join(', ')})`;
    const sql = (n: number) => `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${Array.from({ length: n }, () => one).join(', ')}`;
    const step = await this.autoIncrementStep(t);
    if (step === null) {
      const ids: number[] = [];
      for (const row of rows) ids.push((await this.execute(sql(1), row, t)).insertId!);
      return ids;
    }
    const ids: number[] = [];
    for (let i = 0; i < rows.length; i += 200) {
      const chunk = rows.slice(i, i + 200);
      const { insertId } = await this.execute(sql(chunk.length), chunk.flat(), t);
      const first = this.dialect === 'sqlite' ? insertId! - (chunk.length - 1) : insertId!;
      for (let k = 0; k < chunk.length; k++) ids.push(first + k * step);
    }
    return ids;
  }

  private autoIncrement: Promise<number | null> | null = null;

  /** The id step of a multi-row INSERT, or null when its ids are not consecutive (read once). */
  private autoIncrementStep(t: Transaction): Promise<number | null> {
    if (this.dialect === 'sqlite') return Promise.resolve(1);
    this.autoIncrement ??= this.select<{ mode: unknown; step: unknown }>(
      'SELECT @@innodb_autoinc_lock_mode AS mode, @@auto_increment_increment AS step',
      [],
      t,
    ).then(
      ([r]) => (Number(r.mode) <= 1 ? Number(r.step) || 1 : null),
      (err) => {
        this.autoIncrement = null;
        throw err;
      },
    );
    return this.autoIncrement;
  }

  // Dialect helpers: every SQL difference between SQLite and MariaDB/MySQL is written here once,
  // so services write one statement and never branch on the dialect.

  /**
   * Whether a transaction locks the rows it reads for update (MariaDB/MySQL). A SQLite write
   * transaction holds the database's one write lock from BEGIN IMMEDIATE, so it needs no row locks.
   */
  get rowLocks(): boolean {
    return this.dialect === 'mysql';
  }

  /**
   * Whether one writer at a time is all the database takes (SQLite), so running several write
   * transactions side by side only queues them.
   */
  get singleWriter(): boolean {
    return this.dialect === 'sqlite';
  }

  /**
   * The locking clause that ends a SELECT inside a transaction: ` FOR UPDATE` (with `skipLocked`,
   * ` FOR UPDATE SKIP LOCKED`: rows another transaction holds are passed over instead of waited
   * for) on MariaDB/MySQL, nothing on SQLite (see `rowLocks`).
   */
  forUpdate(options: { skipLocked?: boolean } = {}): string {
    if (!this.rowLocks) return '';
    return options.skipLocked ? ' FOR UPDATE SKIP LOCKED' : ' FOR UPDATE';
  }

  /**
   * An index hint after a table name (`FORCE INDEX (PRIMARY)`, `IGNORE INDEX FOR ORDER BY (x)`),
   * for MariaDB/MySQL's planner; SQLite has no such hints and plans these queries well without.
   */
  indexHint(table: string, hint: string): string {
    return this.dialect === 'mysql' ? `${table} ${hint}` : table;
  }

  /**
   * The UTC calendar day of a timestamp column as `YYYY-MM-DD` text, to group by. SQLite keeps
   * timestamps as `YYYY-MM-DD HH:MM:SS.sss +00:00` text; MariaDB's connection runs in UTC.
   */
  dayOf(column: string): string {
    return this.dialect === 'mysql' ? `DATE_FORMAT(${column}, '%Y-%m-%d')` : `substr(${column}, 1, 10)`;
  }

  /** The UTC hour of a timestamp column as `YYYY-MM-DD HH` text, to group by (see `dayOf`). */
  hourOf(column: string): string {
    return this.dialect === 'mysql' ? `DATE_FORMAT(${column}, '%Y-%m-%d %H')` : `substr(${column}, 1, 13)`;
  }

  /** How the incoming row's value of `column` is named inside `upsert`'s assignments. */
  incoming(column: string): string {
    return this.dialect === 'mysql' ? `VALUES(${column})` : `excluded.${column}`;
  }

  /**
   * An INSERT of `rows` rows (`?` placeholders, row by row) that leaves alone a row whose unique
   * key already exists. The affected count is the number of rows inserted.
   */
  insertIgnore(table: string, columns: readonly string[], rows = 1): string {
    const values = this.valuesList(columns, rows);
    return this.dialect === 'mysql'
      ? `INSERT IGNORE INTO ${table} (${columns.join(', ')}) VALUES ${values}`
      : `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${values} ON CONFLICT DO NOTHING`;
  }

  /**
   * An INSERT of `rows` rows (`?` placeholders, row by row) that, for a row whose `key` exists
   * already, runs `set` instead. `set` lists columns that take the incoming value, or maps columns
   * to SQL expressions (the existing row's columns by name, the incoming ones by `incoming(c)`;
   * their `?` placeholders follow the rows'). MariaDB assigns left to right and a later
   * expression sees the earlier assignments, SQLite sees the old row throughout: assign a column
   * other expressions read last.
   */
  upsert(table: string, columns: readonly string[], key: readonly string[], set: readonly string[] | Readonly<Record<string, string>>, rows = 1): string {
    const assignments = Array.isArray(set)
      ? (set as readonly string[]).map((c) => `${c} = ${this.incoming(c)}`)
      : Object.entries(set).map(([c, expr]) => `${c} = ${expr}`);
    const insert = `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${this.valuesList(columns, rows)}`;
    return this.dialect === 'mysql'
      ? `${insert} ON DUPLICATE KEY UPDATE ${assignments.join(', ')}`
      : `${insert} ON CONFLICT (${key.join(', ')}) DO UPDATE SET ${assignments.join(', ')}`;
  }

  /**
   * Adds amounts to counter-like columns of many rows in `t`, making the rows that do not exist
   * yet (their other columns take their defaults, the added columns must default to 0), and
   * answers how many rows it made. Each row gives its `key` values, a non-zero amount for each
   * `add` column and the values of the `set` columns. MariaDB: one INSERT ... ON DUPLICATE KEY
   * UPDATE per 500 rows, where an updated row counts 2 and an inserted one 1 (so every row must
   * change). SQLite counts an upsert's update like an insert: the missing rows are made first
   * (counted), then each row is updated.
   */
  async addToRows(
    table: string,
    key: readonly string[],
    add: readonly string[],
    set: readonly string[],
    rows: { key: unknown[]; add: number[]; set: unknown[] }[],
    t: Transaction,
  ): Promise<number> {
    let created = 0;
    for (let i = 0; i < rows.length; i += 500) {
      const chunk = rows.slice(i, i + 500);
      if (this.dialect === 'mysql') {
        const columns = [...key, ...add, ...set];
        const updates = [...add.map((c) => `${c} = ${c} + VALUES(${c})`), ...set.map((c) => `${c} = VALUES(${c})`)];
        const { affected } = await this.execute(
          `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${this.valuesList(columns, chunk.length)} ON DUPLICATE KEY UPDATE ${updates.join(', ')}`,
          chunk.flatMap((r) => [...r.key, ...r.add, ...r.set]),
          t,
        );
        created += 2 * chunk.length - affected;
      } else {
        created += (
          await this.execute(
            this.insertIgnore(table, key, chunk.length),
            chunk.flatMap((r) => r.key),
            t,
          )
        ).affected;
        const assignments = [...add.map((c) => `${c} = ${c} + ?`), ...set.map((c) => `${c} = ?`)].join(', ');
        const where = key.map((c) => `${c} = ?`).join(' AND ');
        for (const r of chunk) await this.execute(`UPDATE ${table} SET ${assignments} WHERE ${where}`, [...r.add, ...r.set, ...r.key], t);
      }
    }
    return created;
  }

  /**
   * The select-list item(s) of an exact SUM of an integer expression, read back with `readSum`
   * under `alias` (see `exactSum` in values.ts for how each dialect keeps it exact).
   */
  exactSum(expr: string, alias: string): string {
    return exactSum(this.dialect, expr, alias);
  }

  private valuesList(columns: readonly string[], rows: number): string {
    const one = `(${columns.map(() => '?').join(', ')})`;
    return Array.from({ length: rows }, () => one).join(', ');
  }

  /**
   * `LIKE` pattern for a prefix, with the input's wildcards escaped by `!` (use with
   * `LIKE ? ESCAPE '!'`: a backslash means different things in MariaDB and SQLite string literals).
   */
  static likePrefix(input: string): string {
    return `${input.replace(/[!%_]/g, (c) => `!${c}`)}%`;
  }

  /** `LIKE` pattern for a substring. */
  static likeContains(input: string): string {
    return `%${Database.likePrefix(input)}`;
  }

  async ping(): Promise<void> {
    await this.direct.all('SELECT 1', []);
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
