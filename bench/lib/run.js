// What the in-process benchmarks (bench:admin, bench:lists) share around their measurements: a
// scratch directory with a data directory and a secret, cleanups run once (at the end, or on
// SIGINT/SIGTERM with exit 130), the databases to run on (a SQLite file in the scratch directory,
// a fresh ct_bench_* MariaDB database dropped afterwards), and multi-row INSERTs for seeding.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMysqlDatabase, mysqlServer, withTimeout } from '../ledger-db.js';

/** `{ tmp, dataDir, secret, cleanups, cleanup }`: `cleanups` run in order by `cleanup()`, once. */
export function scratch() {
  const tmp = mkdtempSync(join(tmpdir(), 'cashtrack-bench-'));
  const dataDir = join(tmp, 'data');
  mkdirSync(dataDir);
  const cleanups = [() => rmSync(tmp, { recursive: true, force: true })];
  let cleaning = null;
  const cleanup = () =>
    (cleaning ??= (async () => {
      for (const c of cleanups)
        await Promise.resolve()
          .then(c)
          .catch((err) => console.error(`cleanup failed: ${err.message}`));
    })());
  const onSignal = (signal) => {
    console.error(`\n${signal}: stopping`);
    cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return { tmp, dataDir, secret: randomBytes(24).toString('hex'), cleanups, cleanup };
}

/**
 * The databases to run on (`only`: 'sqlite', 'mysql' or null for both): `{ name, url }` each, the
 * MariaDB one created now and dropped by the cleanups. `missing` is true when `only` asked for
 * MariaDB and it is unreachable (said on stdout either way).
 */
export async function benchDatabases(tmp, only, cleanups) {
  const databases = [];
  if (only !== 'mysql') databases.push({ name: 'sqlite', url: `sqlite:${join(tmp, 'bench.sqlite')}` });
  if (only === 'sqlite') return { databases, missing: false };
  try {
    const m = await createMysqlDatabase();
    cleanups.unshift(() => m.drop());
    databases.push({ name: 'mysql', url: m.url });
    return { databases, missing: false };
  } catch (err) {
    console.log(`MariaDB skipped: ${mysqlServer().base.host} unreachable (${err.code ?? err.message})`);
    return { databases, missing: only === 'mysql' };
  }
}

/** Multi-row INSERTs of `count` rows made by `row(i)` (an array of the columns' values), `batch` a statement. */
export async function insertRows(ctx, table, columns, count, row, batch = 500) {
  const one = `(${columns.map(() => '?').join(', ')})`;
  for (let start = 0; start < count; start += batch) {
    const n = Math.min(batch, count - start);
    const params = [];
    for (let i = start; i < start + n; i++) params.push(...row(i));
    const sql = `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${Array.from({ length: n }, () => one).join(', ')}`;
    await withTimeout(ctx.db.execute(sql, params), 30_000, `inserting ${table} ${start + 1}-${start + n}`);
  }
}
