// `npm run bench:exports`: one export of 1,000,000 ledger entries (every member's, CSV by default)
// through the exports.run job, on SQLite and on MariaDB, a fresh database each: the entries are
// seeded by the parent with multi-row INSERTs (bench/ledger-seed.js, as bench:ledger's read half),
// the export runs in a child process so its peak RSS is its own. Targets: under 60 s and under
// 300 MB peak RSS. Prints each figure beside its budget and PASS/FAIL (exit 1 on a FAIL), and the
// CPU time of the export beside its wall time (on a machine shared with other work, the wall time
// is the CPU time plus the waiting for a core; the load average is printed with it).
//
//   node bench/exports.js [--entries 1000000] [--members 100000] [--format csv|jsonl] [--only sqlite|mysql]
//
// MariaDB: CASHTRACK_BENCH_MYSQL_URL, else CASHTRACK_TEST_MYSQL_URL, else mysql://root@127.0.0.1:3306/test
// (a fresh ct_bench_* database, dropped afterwards); skipped when it is not reachable.
import { availableParallelism, loadavg } from 'node:os';
import { openDirect } from './ledger-db.js';
import { seedHistory } from './ledger-seed.js';
import { dialectsToRun, runOnFreshDatabase } from './lib/fresh-db.js';

const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const ENTRIES = Number(arg('entries', 1_000_000));
const MEMBERS = Number(arg('members', 100_000));
const FORMAT = arg('format', 'csv');
const only = arg('only', null);
if (!Number.isInteger(ENTRIES) || ENTRIES < 1000) throw new Error('--entries must be an integer of at least 1000');
if (!Number.isInteger(MEMBERS) || MEMBERS < 1 || MEMBERS > ENTRIES) throw new Error('--members must be 1 to --entries');
if (!['csv', 'jsonl'].includes(FORMAT)) throw new Error('--format must be csv or jsonl');
if (only && !['sqlite', 'mysql'].includes(only)) throw new Error('--only must be sqlite or mysql');

const log = (s) => process.stdout.write(s);
const rows = [];
for (const dialect of await dialectsToRun(only)) {
  log(`[${dialect}] seeding ${ENTRIES.toLocaleString('en')} entries of ${MEMBERS.toLocaleString('en')} members… `);
  let seedSeconds = 0;
  const r = await runOnFreshDatabase(
    dialect,
    new URL('./exports-child.js', import.meta.url),
    { format: FORMAT },
    {
      timeoutMs: 1_200_000,
      onMessage: (m, child) => {
        if (m.type !== 'migrated') return;
        (async () => {
          const started = Date.now();
          const direct = await openDirect(m.dbUrl, { seed: true });
          try {
            await seedHistory(direct, { members: MEMBERS, entries: ENTRIES, currency: m.currency, actor: 'system', seed: 0xe4e4 });
          } finally {
            await direct.close();
          }
          seedSeconds = (Date.now() - started) / 1000;
          log(`${seedSeconds.toFixed(0)} s; exporting… `);
          child.send({ type: 'go' });
        })().catch((err) => {
          console.error(err);
          child.kill('SIGKILL');
        });
      },
    },
  );
  console.log(
    `${r.seconds.toFixed(1)} s (CPU ${r.cpuSeconds.toFixed(1)} s), ${r.rows.toLocaleString('en')} rows, ${(r.bytes / 1e6).toFixed(0)} MB file, peak RSS ${r.maxRssMb.toFixed(0)} MB`,
  );
  console.log(
    `  load average during the run: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} on ${availableParallelism()} cores`,
  );
  if (r.rows !== ENTRIES) throw new Error(`[${dialect}] the export holds ${r.rows} rows, not ${ENTRIES}`);
  if (r.mode !== 0o600) throw new Error(`[${dialect}] the export file has mode ${r.mode.toString(8)}, not 600`);
  rows.push(
    { name: `export ${ENTRIES.toLocaleString('en')} ledger entries (${FORMAT})`, dialect, value: r.seconds, unit: 's', target: '< 60 s', pass: r.seconds < 60 },
    { name: 'peak RSS of the exporting process', dialect, value: r.maxRssMb, unit: 'MB', target: '< 300 MB', pass: r.maxRssMb < 300 },
  );
}

console.log('');
console.log(`${'benchmark'.padEnd(44)} ${'dialect'.padEnd(8)} ${'figure'.padStart(10)}  ${'budget'.padEnd(10)} result`);
for (const row of rows) {
  console.log(
    `${row.name.padEnd(44)} ${row.dialect.padEnd(8)} ${`${row.value.toFixed(1)} ${row.unit}`.padStart(10)}  ${row.target.padEnd(10)} ${row.pass ? 'PASS' : 'FAIL'}`,
  );
}
if (rows.some((r) => !r.pass)) process.exitCode = 1;
