// The database side of `npm run bench:ledger`, from the parent process: the `ct_bench_*` MariaDB
// database, a direct connection per dialect (seeding and the exactly-once checks go around the
// daemon), the raw INSERT + COMMIT baseline, and what the database server itself spends.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import mysql from 'mysql2/promise';

const require = createRequire(import.meta.url);

export function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** mulberry32: the same members, entries and requests on every run and both databases. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---- MariaDB server ----------------------------------------------------------------------------

export function mysqlServer() {
  const base = new URL(process.env.CASHTRACK_BENCH_MYSQL_URL || process.env.CASHTRACK_TEST_MYSQL_URL || 'mysql://root@127.0.0.1:3306/test');
  const options = {
    host: base.hostname || '127.0.0.1',
    port: Number(base.port || 3306),
    user: decodeURIComponent(base.username || 'root'),
    password: decodeURIComponent(base.password || ''),
    connectTimeout: 3_000,
    // `?socket=/run/mysqld/mysqld.sock`: the daemon and this process reach the server through its Unix socket.
    ...(base.searchParams.get('socket') ? { socketPath: base.searchParams.get('socket') } : {}),
  };
  return { base, options, connect: () => mysql.createConnection(options) };
}

/** A fresh `ct_bench_<hex>` database; `drop()` removes it. */
export async function createMysqlDatabase() {
  const server = mysqlServer();
  const name = `ct_bench_${randomBytes(4).toString('hex')}`;
  const conn = await server.connect();
  try {
    await conn.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  } finally {
    await conn.end();
  }
  const url = new URL(server.base.toString());
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      const c = await server.connect();
      try {
        // A statement still running in it (a `ledger verify` that timed out: killing the client
        // does not stop the server) would hold the DROP on a metadata lock.
        const [running] = await c.query('SELECT id FROM information_schema.processlist WHERE db = ? AND id <> CONNECTION_ID()', [name]);
        for (const r of running) await c.query(`KILL ${Number(r.id)}`).catch(() => {});
        await c.query(`DROP DATABASE IF EXISTS \`${name}\``);
      } finally {
        await c.end();
      }
    },
  };
}

function mysqlTarget(dbUrl) {
  const u = new URL(dbUrl);
  return {
    host: u.hostname || '127.0.0.1',
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username || 'root'),
    password: decodeURIComponent(u.password || ''),
    database: decodeURIComponent(u.pathname.replace(/^\//, '')),
    ...(u.searchParams.get('socket') ? { socketPath: u.searchParams.get('socket') } : {}),
    connectTimeout: 5_000,
    supportBigNumbers: true,
    bigNumberStrings: true,
    timezone: 'Z',
    charset: 'utf8mb4',
  };
}

const sqliteFile = (dbUrl) => dbUrl.slice('sqlite:'.length);

// ---- direct connections ------------------------------------------------------------------------

/**
 * One connection to the bench database: `all`, `run`, `exec` and `date` (a DATETIME(3) literal as
 * cashtrack writes it). `seed` relaxes durability and checks for this session only.
 */
export async function openDirect(dbUrl, { seed = false } = {}) {
  if (dbUrl.startsWith('sqlite:')) {
    const sqlite3 = require('sqlite3');
    const conn = await new Promise((resolve, reject) => {
      const c = new sqlite3.Database(sqliteFile(dbUrl), sqlite3.OPEN_READWRITE, (err) => (err ? reject(err) : resolve(c)));
    });
    conn.configure('busyTimeout', 10_000);
    const exec = (sql) => new Promise((resolve, reject) => conn.exec(sql, (err) => (err ? reject(err) : resolve())));
    // Like cashtrack's own connections; the seed session alone skips the fsyncs.
    await exec(`PRAGMA journal_mode=WAL; PRAGMA synchronous=${seed ? 'OFF' : 'FULL'}; PRAGMA cache_size=-262144;`);
    return {
      dialect: 'sqlite',
      exec,
      all: (sql, params = []) => new Promise((resolve, reject) => conn.all(sql, params, (err, rows) => (err ? reject(err) : resolve(rows)))),
      run: (sql, params = []) =>
        new Promise((resolve, reject) =>
          conn.run(sql, params, function (err) {
            if (err) reject(err);
            else resolve({ affected: this.changes });
          }),
        ),
      date: (d) => d.toISOString().replace('T', ' ').replace('Z', ' +00:00'),
      close: () => new Promise((resolve) => conn.close(() => resolve())),
    };
  }
  const conn = await mysql.createConnection(mysqlTarget(dbUrl));
  conn.on('error', () => {});
  if (seed) await conn.query('SET SESSION unique_checks = 0, foreign_key_checks = 0');
  return {
    dialect: 'mysql',
    exec: (sql) => conn.query(sql).then(() => undefined),
    all: async (sql, params = []) => (await conn.query(sql, params))[0],
    run: async (sql, params = []) => ({ affected: (await conn.query(sql, params))[0].affectedRows }),
    date: (d) => d.toISOString().replace('T', ' ').replace('Z', ''),
    close: () => conn.end().catch(() => conn.destroy()),
  };
}

// ---- raw baseline ------------------------------------------------------------------------------

function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * `connections` loops of one-row INSERT + COMMIT transactions for `durationMs` on the bench
 * database, straight through the driver. MariaDB: a mysql2 pool, one connection per loop. SQLite:
 * one sqlite3 connection (WAL, synchronous=FULL, as cashtrack's), the loops taking turns through an
 * in-process lock, since SQLite has one writer at a time and cashtrack queues its writers the same way.
 */
export async function rawBaseline(dbUrl, { connections, durationMs, memberCount }) {
  const sqlite = dbUrl.startsWith('sqlite:');
  const rand = prng(0xba5e);
  const latencies = [];
  let commits = 0;
  let errors = 0;
  let firstError = null;
  let deadline = 0;

  if (sqlite) {
    const db = await openDirect(dbUrl);
    try {
      await db.exec('CREATE TABLE IF NOT EXISTS bench_raw (id INTEGER PRIMARY KEY AUTOINCREMENT, member_id INTEGER, amount INTEGER, created_at TEXT)');
      let turn = Promise.resolve();
      const loop = async () => {
        while (Date.now() < deadline) {
          const previous = turn;
          let release;
          turn = new Promise((r) => (release = r));
          await previous;
          const start = process.hrtime.bigint();
          try {
            await db.exec('BEGIN IMMEDIATE');
            await db.run('INSERT INTO bench_raw (member_id, amount, created_at) VALUES (?, ?, ?)', [
              1 + Math.floor(rand() * memberCount),
              1 + Math.floor(rand() * 500),
              db.date(new Date()),
            ]);
            await db.exec('COMMIT');
            commits++;
            latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
          } catch (err) {
            errors++;
            firstError ??= err;
            await db.exec('ROLLBACK').catch(() => {});
          } finally {
            release();
          }
        }
      };
      deadline = Date.now() + durationMs;
      const started = Date.now();
      await Promise.all(Array.from({ length: connections }, loop));
      const seconds = (Date.now() - started) / 1000;
      return summary(seconds, 'sqlite3, 1 connection, loops serialised in-process (BEGIN IMMEDIATE; INSERT; COMMIT), WAL, synchronous=FULL');
    } finally {
      await db.close();
    }
  }

  const pool = mysql.createPool({ ...mysqlTarget(dbUrl), connectionLimit: connections, waitForConnections: true });
  pool.on('connection', (c) => c.on('error', () => {}));
  try {
    await pool.query(
      'CREATE TABLE IF NOT EXISTS bench_raw (id BIGINT AUTO_INCREMENT PRIMARY KEY, member_id INT, amount BIGINT, created_at DATETIME(3)) ENGINE=InnoDB',
    );
    const conns = await Promise.all(Array.from({ length: connections }, () => pool.getConnection()));
    const loop = async (conn) => {
      while (Date.now() < deadline) {
        const start = process.hrtime.bigint();
        try {
          await conn.query('START TRANSACTION');
          await conn.query('INSERT INTO bench_raw (member_id, amount, created_at) VALUES (?, ?, NOW(3))', [
            1 + Math.floor(rand() * memberCount),
            1 + Math.floor(rand() * 500),
          ]);
          await conn.query('COMMIT');
          commits++;
          latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
        } catch (err) {
          errors++;
          firstError ??= err;
          await conn.query('ROLLBACK').catch(() => {});
        }
      }
      conn.release();
    };
    deadline = Date.now() + durationMs;
    const started = Date.now();
    await Promise.all(conns.map(loop));
    const seconds = (Date.now() - started) / 1000;
    return summary(seconds, `mysql2 pool, ${connections} connections, one loop each (START TRANSACTION; INSERT; COMMIT)`);
  } finally {
    await pool.end().catch(() => {});
  }

  function summary(seconds, mode) {
    return { mode, commits, errors, firstError: firstError?.message ?? null, seconds, rate: commits / seconds, latencies };
  }
}

/** One figure from several raw runs (the bench runs one half before the adjustments and one after). */
export function combineRaw(runs) {
  const latencies = runs.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const commits = runs.reduce((s, r) => s + r.commits, 0);
  const seconds = runs.reduce((s, r) => s + r.seconds, 0);
  return {
    mode: runs[0].mode,
    commits,
    errors: runs.reduce((s, r) => s + r.errors, 0),
    firstError: runs.find((r) => r.firstError)?.firstError ?? null,
    rate: commits / seconds,
    rates: runs.map((r) => r.rate),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

// ---- the database server's own CPU ------------------------------------------------------------

/**
 * CPU time of a local MariaDB server (mariadbd/mysqld found in /proc), to tell a saturated machine
 * from a slow daemon. Returns null when the server is not a local process this user can see.
 */
export function localServerCpu(dbUrl) {
  if (dbUrl.startsWith('sqlite:')) return null;
  const host = new URL(dbUrl).hostname;
  if (!['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host)) return null;
  let pids = [];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d) && ['mariadbd', 'mysqld'].includes(readProc(`/proc/${d}/comm`)?.trim()));
  } catch {
    return null;
  }
  if (pids.length !== 1) return null;
  const ticks = () => {
    const stat = readProc(`/proc/${pids[0]}/stat`);
    if (!stat) return null;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  };
  const clockTicks = 100;
  return () => {
    const before = ticks();
    const at = Date.now();
    return () => {
      const after = ticks();
      return before === null || after === null ? null : (after - before) / clockTicks / ((Date.now() - at) / 1000);
    };
  };
}

function readProc(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** InnoDB's server-wide deadlock and row-lock-wait counters (MariaDB only). */
export async function innodbLockCounters(db) {
  if (db.dialect !== 'mysql') return null;
  const rows = await db.all("SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_deadlocks', 'Innodb_row_lock_waits')");
  const out = {};
  for (const r of rows) out[r.Variable_name] = Number(r.Value);
  return { deadlocks: out.Innodb_deadlocks ?? 0, lockWaits: out.Innodb_row_lock_waits ?? 0 };
}
