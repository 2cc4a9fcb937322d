// Every statement and transaction goes straight to the driver: Sequelize's per-query machinery
// (stack capture, result shaping) costs several times the query itself on the hot read paths.
// Only the migrations (umzug, the query interface) still go through Sequelize.
import { createRequire } from 'node:module';
import type { Database as SqliteConnection } from 'sqlite3';
import type { Pool, ResultSetHeader } from 'mysql2';
import type { ParsedUrl } from './url.js';

export interface RunResult {
  affected: number;
  insertId: number | null;
}

/** Statements on one connection, inside BEGIN ... COMMIT. */
export interface TxConnection {
  all<T>(sql: string, params: unknown[]): Promise<T[]>;
  run(sql: string, params: unknown[]): Promise<RunResult>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

export interface DirectDriver {
  all<T>(sql: string, params: unknown[]): Promise<T[]>;
  run(sql: string, params: unknown[]): Promise<RunResult>;
  /** Starts a write transaction (SQLite: BEGIN IMMEDIATE on the writer; the caller serialises). */
  begin(): Promise<TxConnection>;
  close(): Promise<void>;
  /** Connections held and in use, and statements waiting for one: for the metrics. */
  stats(): PoolStats;
}

export interface PoolStats {
  max: number;
  open: number;
  busy: number;
  waiting: number;
}

const require = createRequire(import.meta.url);

/** A DATETIME value in the text form Sequelize writes on SQLite (so both paths compare equal). */
export function sqliteDate(d: Date): string {
  return d.toISOString().replace('T', ' ').replace('Z', ' +00:00');
}

/**
 * A placeholder takes one scalar. mysql2's `query` expands an array into a list (`IN (?)` with
 * ['a', 'b'] matches both; `LIMIT ?` with [0, 1000000] sets an offset) and, without
 * stringifyObjects in older releases, an object into `key = value` pairs; sqlite3 binds an object
 * by its own rules. So a value that slipped past validation could change the statement: both
 * drivers refuse it here, before they see it.
 */
function checkParams(sql: string, params: unknown[]): unknown[] {
  for (let i = 0; i < params.length; i++) {
    const v = params[i];
    if (v !== null && typeof v === 'object' && !(v instanceof Date) && !Buffer.isBuffer(v)) {
      throw new TypeError(`SQL parameter ${i + 1} is ${Array.isArray(v) ? 'an array' : 'an object'}, not a value (${sql.slice(0, 60)})`);
    }
  }
  return params;
}

function sqliteValue(v: unknown): unknown {
  if (v instanceof Date) return sqliteDate(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'bigint') return v.toString();
  return v === undefined ? null : v;
}

function sqliteAll<T>(conn: SqliteConnection, sql: string, params: unknown[]): Promise<T[]> {
  return new Promise((resolve, reject) => conn.all(sql, checkParams(sql, params).map(sqliteValue), (err, rows) => (err ? reject(err) : resolve(rows as T[]))));
}

function sqliteRun(conn: SqliteConnection, sql: string, params: unknown[]): Promise<RunResult> {
  return new Promise((resolve, reject) =>
    conn.run(sql, checkParams(sql, params).map(sqliteValue), function (err) {
      if (err) return reject(err);
      resolve({ affected: this.changes ?? 0, insertId: /^\s*insert/i.test(sql) ? (this.lastID ?? null) : null });
    }),
  );
}

/**
 * Connections of our own: a few readers (WAL lets them run side by side and beside a writer; each
 * connection runs one statement at a time) and one writer, which the caller serialises.
 */
export class SqliteDirect implements DirectDriver {
  private readers: { conn: Promise<SqliteConnection>; busy: number }[] = [];
  private writer: Promise<SqliteConnection> | null = null;
  private closed = false;

  constructor(
    private readonly storage: string,
    private readonly openConnection: (file: string) => Promise<SqliteConnection>,
    private readonly maxReaders = 3,
  ) {}

  private checkOpen(): void {
    if (this.closed) throw new Error('the database connection is closed');
  }

  /** The least busy reader, opening another while all are busy and the pool has room. */
  private reader(): { conn: Promise<SqliteConnection>; busy: number } {
    this.checkOpen();
    let best = this.readers[0];
    for (const r of this.readers) if (r.busy < best.busy) best = r;
    if (!best || (best.busy > 0 && this.readers.length < this.maxReaders)) {
      best = { conn: this.openConnection(this.storage), busy: 0 };
      this.readers.push(best);
    }
    return best;
  }

  async all<T>(sql: string, params: unknown[]): Promise<T[]> {
    const reader = this.reader();
    reader.busy++;
    try {
      return await sqliteAll<T>(await reader.conn, sql, params);
    } finally {
      reader.busy--;
    }
  }

  private writerConnection(): Promise<SqliteConnection> {
    this.checkOpen();
    return (this.writer ??= this.openConnection(this.storage));
  }

  async run(sql: string, params: unknown[]): Promise<RunResult> {
    return sqliteRun(await this.writerConnection(), sql, params);
  }

  async begin(): Promise<TxConnection> {
    const conn = await this.writerConnection();
    await sqliteRun(conn, 'BEGIN IMMEDIATE', []);
    return {
      all: (sql, params) => sqliteAll(conn, sql, params),
      run: (sql, params) => sqliteRun(conn, sql, params),
      commit: async () => void (await sqliteRun(conn, 'COMMIT', [])),
      rollback: async () => void (await sqliteRun(conn, 'ROLLBACK', [])),
    };
  }

  /** SQLite: the readers (statements queue on a reader rather than wait for one) and the one writer. */
  stats(): PoolStats {
    const busyReaders = this.readers.reduce((n, r) => n + (r.busy > 0 ? 1 : 0), 0);
    return { max: this.maxReaders + 1, open: this.readers.length + (this.writer !== null ? 1 : 0), busy: busyReaders, waiting: 0 };
  }

  async close(): Promise<void> {
    this.closed = true;
    const conns = [...this.readers.map((r) => r.conn), this.writer].filter(Boolean) as Promise<SqliteConnection>[];
    this.readers = [];
    this.writer = null;
    await Promise.all(
      conns.map(
        async (p) =>
          new Promise<void>((resolve) =>
            p.then(
              (c) => c.close(() => resolve()),
              () => resolve(),
            ),
          ),
      ),
    );
  }
}

/** A mysql2 pool of our own: statements, and transactions on a connection taken from it. */
export class MysqlDirect implements DirectDriver {
  private readonly pool: Pool;

  constructor(parsed: ParsedUrl, poolMax: number) {
    const mysql = require('mysql2') as typeof import('mysql2');
    this.pool = mysql.createPool({
      host: parsed.host,
      port: parsed.port,
      // A Unix socket skips the TCP stack for a server on the same host.
      socketPath: parsed.socketPath,
      user: parsed.username,
      password: parsed.password,
      database: parsed.database,
      connectionLimit: poolMax,
      timezone: 'Z',
      supportBigNumbers: true,
      bigNumberStrings: true,
      connectTimeout: 5_000,
      charset: 'utf8mb4',
      // Objects become '[object Object]', never `key = value` SQL (checkParams refuses them first).
      stringifyObjects: true,
    });
    this.pool.on('connection', (c) => {
      // A broken idle connection must not crash the process; the next query gets a fresh one.
      c.on('error', () => {});
      // On a Galera node, reads wait until the node has applied every write the cluster committed
      // before them (causal reads), so what one daemon committed through another node is seen by
      // the next request here (a revoked password, a claimed job). Queued before anything else on
      // the connection. Elsewhere it does nothing: a MariaDB server without a cluster ignores it
      // and MySQL refuses the unknown variable (the error is dropped).
      c.query('SET SESSION wsrep_sync_wait = 1', () => {});
    });
  }

  all<T>(sql: string, params: unknown[]): Promise<T[]> {
    return new Promise((resolve, reject) => this.pool.query(sql, checkParams(sql, params), (err, rows) => (err ? reject(err) : resolve(rows as T[]))));
  }

  run(sql: string, params: unknown[]): Promise<RunResult> {
    return new Promise((resolve, reject) =>
      this.pool.query(sql, checkParams(sql, params), (err, result) => {
        if (err) return reject(err);
        const r = result as ResultSetHeader;
        resolve({ affected: r.affectedRows ?? 0, insertId: r.insertId ? Number(r.insertId) : null });
      }),
    );
  }

  begin(): Promise<TxConnection> {
    return new Promise((resolve, reject) =>
      this.pool.getConnection((err, conn) => {
        if (err) return reject(err);
        const query = <T>(sql: string, params: unknown[]) =>
          new Promise<T>((res, rej) => conn.query(sql, checkParams(sql, params), (e, result) => (e ? rej(e) : res(result as T))));
        let done = false;
        const finish = (broken: boolean) => {
          if (done) return;
          done = true;
          if (broken) conn.destroy();
          else conn.release();
        };
        query('START TRANSACTION', []).then(
          () =>
            resolve({
              all: <T>(sql: string, params: unknown[]) => query<T[]>(sql, params),
              run: async (sql, params) => {
                const r = await query<ResultSetHeader>(sql, params);
                return { affected: r.affectedRows ?? 0, insertId: r.insertId ? Number(r.insertId) : null };
              },
              commit: async () => {
                try {
                  await query('COMMIT', []);
                  finish(false);
                } catch (e) {
                  finish(true);
                  throw e;
                }
              },
              rollback: async () => {
                try {
                  await query('ROLLBACK', []);
                  finish(false);
                } catch {
                  finish(true);
                }
              },
            }),
          (e) => {
            finish(true);
            reject(e);
          },
        );
      }),
    );
  }

  /** mysql2 keeps its counts in fields it does not type; read defensively (zero when absent). */
  stats(): PoolStats {
    const p = this.pool as unknown as {
      config?: { connectionLimit?: number };
      _allConnections?: { length: number };
      _freeConnections?: { length: number };
      _connectionQueue?: { length: number };
    };
    const open = p._allConnections?.length ?? 0;
    return { max: p.config?.connectionLimit ?? 0, open, busy: open - (p._freeConnections?.length ?? 0), waiting: p._connectionQueue?.length ?? 0 };
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.pool.end(() => resolve()));
  }
}
