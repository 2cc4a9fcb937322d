// What the one-process-per-run benchmarks share: a fresh database per run (a temporary SQLite file,
// or a ct_bench_* database on MariaDB dropped afterwards), the cashtrack side forked into its own
// process so its peak RSS is its own, and the median of the runs.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMysqlDatabase, mysqlServer } from '../ledger-db.js';

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export async function mysqlReachable() {
  try {
    const conn = await mysqlServer().connect();
    await conn.end();
    return true;
  } catch {
    return false;
  }
}

/**
 * The dialects a benchmark runs: both, or `only`; MariaDB is left out, saying so through `say`,
 * when it is not reachable.
 */
export async function dialectsToRun(only, { say = (text) => console.log(text), what = '' } = {}) {
  const dialects = [];
  for (const dialect of ['sqlite', 'mysql']) {
    if (only && only !== dialect) continue;
    if (dialect === 'mysql' && !(await mysqlReachable())) {
      say(`[mysql] ${what}skipped: MariaDB is not reachable (set CASHTRACK_BENCH_MYSQL_URL)`);
      continue;
    }
    dialects.push(dialect);
  }
  return dialects;
}

/**
 * Forks `script` with `{dbUrl, dataDir, secret, ...payload}` on a fresh database of `dialect` and
 * resolves with its `done` message (an `error` message, an early exit or the timeout rejects).
 * `onMessage(message, child)` sees every other message (a child asking the parent to act between
 * two phases). The database and the data directory are removed afterwards.
 */
export async function runOnFreshDatabase(dialect, script, payload, { timeoutMs = 300_000, onMessage = () => {} } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'cashtrack-bench-'));
  let mysqlDb = null;
  try {
    let dbUrl = `sqlite:${join(dataDir, 'bench.sqlite')}`;
    if (dialect === 'mysql') {
      mysqlDb = await createMysqlDatabase();
      dbUrl = mysqlDb.url;
    }
    const child = fork(script, [JSON.stringify({ dbUrl, dataDir, secret: randomBytes(24).toString('hex'), ...payload })], { stdio: 'inherit' });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const message = await new Promise((resolve) => {
      child.on('message', (m) => (m.type === 'done' || m.type === 'error' ? resolve(m) : onMessage(m, child)));
      child.on('exit', (code) => resolve({ type: 'error', message: `child exited with ${code}` }));
    });
    clearTimeout(timer);
    if (message.type !== 'done') throw new Error(message.message);
    return message;
  } finally {
    await mysqlDb?.drop().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
}
