// The tables of `npm run bench:postbacks`: the postback run per database, the exactness checks and
// `ledger verify`, and CPU profile summaries.
import { LOAD_DESCRIPTION } from './postbacks-load.js';
import { printScaling } from './lib/scaling.js';

export const TARGETS = { postbacksPerSecond: 2_000 };

const verdict = (ok) => (ok ? 'PASS' : 'FAIL');
const pct = (v) => (v === null || v === undefined ? '-' : `${(100 * v).toFixed(0)}%`);
const cpuCell = (r) => `${pct(r.cpu)}/${pct(r.clientCpu)}/${pct(r.dbCpu)}`;
const ms = (v) => (Number.isInteger(v) ? String(v) : v.toFixed(1));
const verifyText = (v) =>
  v.count === null
    ? `${v.error} (${(v.ms / 1000).toFixed(1)} s)`
    : `${v.count} discrepancies in ${(v.ms / 1000).toFixed(1)} s${v.count ? ` ${JSON.stringify(v.kinds)}` : ''}`;

function printTable(columns, rows) {
  const cells = rows.map((r) => columns.map(([, f]) => f(r)));
  const widths = columns.map(([h], i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (vals) => vals.map((v, i) => (columns[i][2] === 'left' ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  ');
  console.log(line(columns.map(([h]) => h)));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const c of cells) console.log(line(c));
}

/** A run passes at the target rate (answered postbacks, new and duplicate) with everything exact. */
export const passed = (r) => r.rate >= TARGETS.postbacksPerSecond && r.other === 0 && r.check.ok && r.verify.count === 0;

export function printPostbacks(results, opts) {
  console.log(`\nGET /postback/{network}: ${opts.connections} clients, ${opts.duration} s measured, ${results[0].members} members; ${LOAD_DESCRIPTION}`);
  printTable(
    [
      ['db', (r) => r.db, 'left'],
      ['workers', (r) => String(r.workers)],
      ['postbacks/s', (r) => r.rate.toFixed(0)],
      ['accepted/s', (r) => (r.measured.accepted / r.seconds).toFixed(0)],
      ['duplicate/s', (r) => (r.measured.duplicate / r.seconds).toFixed(0)],
      ['p50 ms', (r) => ms(r.p50)],
      ['p99 ms', (r) => ms(r.p99)],
      ['non-2xx', (r) => String(r.non2xx)],
      ['errors', (r) => String(r.errors)],
      ['CPU daemon/client/db', cpuCell],
      ['orders', (r) => String(r.check.orders)],
      ['exact', (r) => verdict(r.check.ok)],
      ['verify', (r) => (r.verify.count === null ? 'n/a' : String(r.verify.count))],
    ],
    results,
  );
  console.log('CPU: during the measured run, in cores: the daemon (with its SQLite threads) / this process (autocannon) / a local MariaDB server');
  console.log('');
  for (const r of results) {
    console.log(
      `${r.db.padEnd(6)}  ${r.rate.toFixed(0)} postbacks/s answered 200 (target >= ${TARGETS.postbacksPerSecond}: ${verdict(r.rate >= TARGETS.postbacksPerSecond)})  ` +
        `non-2xx/errors: ${r.other} (${verdict(r.other === 0)})  exact orders and balances: ${verdict(r.check.ok)}  ledger verify: ${r.verify.count ?? 'n/a'} discrepancies (${verdict(r.verify.count === 0)})  => ${verdict(passed(r))}`,
    );
  }
  printScaling(results, (r) => r.rate, 'postbacks/s');
  for (const r of results) {
    const s = r.measured.sent;
    console.log(
      `\n[${r.db}] daemon: database.pool_max ${r.poolMax}; sent in the measured run: ${s.new} new, ${s.duplicate} duplicates, ${s.change} status changes; ` +
        `answers ${r.requestRate.toFixed(0)}/s; autocannon errors/timeouts ${r.errors}; load average ${r.load[0].toFixed(1)} -> ${r.load[1].toFixed(1)}`,
    );
    if (r.otherAnswers.length) console.log(`[${r.db}] other answers: ${r.otherAnswers.map(([k, n]) => `${k} ×${n}`).join(', ')}`);
    const c = r.check;
    console.log(
      `[${r.db}] exactness (preflight + warm-up + measured): ${c.transactions} transactions sent, ${c.orders} orders (${c.approved} approved), ${c.checked} checked against the last acknowledged status` +
        `${c.inflight ? `, ${c.inflight} in flight when autocannon stopped (either status allowed)` : ''}; balances of ${c.members} members = their orders' cashback => ${verdict(c.ok)}`,
    );
    for (const p of c.problems.slice(0, 12)) console.log(`[${r.db}]   ${p}`);
    console.log(`[${r.db}] ledger verify: ${verifyText(r.verify)} => ${verdict(r.verify.count === 0)}`);
  }
}
