// The tables of `npm run bench:ledger`: the adjustments run per database next to its raw baseline,
// the exactly-once and Idempotency-Key checks, the reads, and CPU profile summaries.
import { formatMinor, LOAD_DESCRIPTION } from './ledger-load.js';
import { printScaling } from './lib/scaling.js';

// Issue 22: at least half the raw commit rate on both databases, and 3,000/s on MariaDB.
const TARGETS = { adjustmentsPerSecond: { sqlite: 1_500, mysql: 3_000 }, ratio: 0.5, readP99Ms: 30 };

const verdict = (ok) => (ok ? 'PASS' : 'FAIL');
const pct = (v) => (v === null || v === undefined ? '-' : `${(100 * v).toFixed(0)}%`);
const cpuCell = (r) => `${pct(r.cpu)}/${pct(r.clientCpu)}/${pct(r.dbCpu)}`;
/** `ledger verify`'s outcome in words. */
const verifyText = (v) =>
  v.count === null
    ? `${v.error} (${(v.ms / 1000).toFixed(1)} s)`
    : `${v.count} discrepancies in ${(v.ms / 1000).toFixed(1)} s${v.count ? ` ${JSON.stringify(v.kinds)}` : ''}`;
const CPU_LEGEND = 'CPU: during the measured run, in cores: the daemon (with its SQLite threads) / this process (autocannon) / a local MariaDB server';
const ms = (v) => (Number.isInteger(v) ? String(v) : v.toFixed(1));

function printTable(columns, rows) {
  const cells = rows.map((r) => columns.map(([, f]) => f(r)));
  const widths = columns.map(([h], i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (vals) => vals.map((v, i) => (columns[i][2] === 'left' ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  ');
  console.log(line(columns.map(([h]) => h)));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const c of cells) console.log(line(c));
}

export function printWrite(results, opts) {
  const { members, openingMinor } = results[0];
  console.log(
    `\nPOST /ledger/adjustments: ${opts.connections} clients, ${opts.duration} s measured, ${members} members (opening credit ${formatMinor(openingMinor)} each); ${LOAD_DESCRIPTION}`,
  );
  printTable(
    [
      ['db', (r) => r.db, 'left'],
      ['workers', (r) => String(r.workers)],
      ['adjust/s', (r) => r.rate.toFixed(0)],
      ['p50 ms', (r) => ms(r.p50)],
      ['p99 ms', (r) => ms(r.p99)],
      ['201', (r) => String(r.measured.created)],
      ['409 funds', (r) => String(r.measured.funds)],
      ['other', (r) => String(r.measured.other + r.errors)],
      ['keyed', (r) => String(r.measured.keyed)],
      ['CPU daemon/client/db', cpuCell],
      ['raw txn/s', (r) => r.raw.rate.toFixed(0)],
      ['raw p50/p99 ms', (r) => `${r.raw.p50.toFixed(1)}/${r.raw.p99.toFixed(1)}`],
      ['ratio', (r) => r.ratio.toFixed(2)],
      ['verify', (r) => (r.verify.count === null ? 'n/a' : String(r.verify.count))],
    ],
    results,
  );
  console.log(CPU_LEGEND);
  console.log('');
  for (const r of results) {
    const floor = TARGETS.adjustmentsPerSecond[r.db];
    const pass = r.rate >= floor && r.ratio >= TARGETS.ratio && r.verify.count === 0 && r.once.ok;
    console.log(
      `${r.db.padEnd(6)}  ${r.rate.toFixed(0)} adjustments/s (target >= ${floor}: ${verdict(r.rate >= floor)})  ` +
        `ratio adjustments/raw = ${r.ratio.toFixed(2)} (target >= ${TARGETS.ratio}: ${verdict(r.ratio >= TARGETS.ratio)})  ` +
        `ledger verify: ${r.verify.count ?? 'n/a'} discrepancies (${verdict(r.verify.count === 0)})  exactly-once: ${verdict(r.once.ok)}  => ${verdict(pass)}`,
    );
  }
  printScaling(results, (r) => r.rate, 'adjustments/s');
  for (const r of results) {
    console.log(
      `\n[${r.db}] raw baseline: ${r.raw.mode}; ${opts.duration / 2} s before and ${opts.duration / 2} s after the adjustments: ${r.raw.rates.map((x) => x.toFixed(0)).join(' and ')} txn/s; ` +
        `${r.raw.commits} commits, ${r.raw.errors} errors${r.raw.firstError ? ` (${r.raw.firstError})` : ''}`,
    );
    console.log(
      `[${r.db}] daemon: database.pool_max ${r.poolMax}; ${r.requestRate.toFixed(0)} answers/s of which ${r.rate.toFixed(0)} 201/s; autocannon errors/timeouts ${r.errors}` +
        `${r.locks ? `; InnoDB (server-wide) ${r.locks.deadlocks} deadlocks, ${r.locks.lockWaits} row lock waits during the run` : ''}; load average ${r.load[0].toFixed(1)} -> ${r.load[1].toFixed(1)}`,
    );
    if (r.otherAnswers.length) console.log(`[${r.db}] other answers: ${r.otherAnswers.map(([k, n]) => `${k} ×${n}`).join(', ')}`);
    const o = r.once;
    console.log(
      `[${r.db}] exactly-once (preflight + warm-up + measured): ${o.acked} acknowledged 201s summing ${o.ackSum} minor units; ledger moved ${o.ledgerDelta}` +
        `${o.inflight ? `; ${o.inflight} requests in flight when autocannon stopped, ${o.inflightApplied} of them applied (counted once)` : ''} => ${verdict(o.ok)}`,
    );
    for (const p of o.problems.slice(0, 10)) console.log(`[${r.db}]   ${p}`);
    const i = o.idempotency;
    console.log(
      `[${r.db}] Idempotency-Key: ${i.keyedAnswered} keyed requests answered, ${i.recorded} records done (${Object.entries(i.byStatus)
        .map(([s, n]) => `${s}: ${n}`)
        .join(', ')}), ${i.running} left running; ` +
        `replayed ${r.replay.sent}: ${r.replay.identical} identical with Idempotent-Replayed${r.replay.reusedKey ? `; same key, other body: ${r.replay.reusedKey}` : ''} => ${verdict(r.replay.identical === r.replay.sent && r.replay.reusedKey?.startsWith('422'))}`,
    );
    for (const d of r.replay.differing.slice(0, 5)) console.log(`[${r.db}]   ${d}`);
    console.log(`[${r.db}] ledger verify: ${verifyText(r.verify)} => ${verdict(r.verify.count === 0)}`);
  }
}

export function printRead(results, opts) {
  console.log(
    `\nReads on ${opts.readMembers.toLocaleString('en-US')} members and ${opts.readEntries.toLocaleString('en-US')} entries: autocannon, 1 connection (sequential requests), ${opts.readDuration} s each after ${results[0].warmupSeconds} s warm-up; entries of a random member with 9-11 entries per request`,
  );
  printTable(
    [
      ['db', (r) => r.db, 'left'],
      ['request', (r) => r.label, 'left'],
      ['req/s', (r) => r.rps.toFixed(0)],
      ['p50 ms', (r) => ms(r.p50)],
      ['p99 ms', (r) => ms(r.p99)],
      ['max ms', (r) => ms(r.max)],
      ['2xx', (r) => String(r.ok)],
      ['non-2xx', (r) => String(r.non2xx)],
      ['errors', (r) => String(r.errors)],
      ['CPU daemon/client/db', cpuCell],
      [`p99 < ${TARGETS.readP99Ms} ms`, (r) => verdict(r.p99 < TARGETS.readP99Ms && r.non2xx === 0 && r.errors === 0)],
    ],
    results.flatMap((r) => r.rows),
  );
  console.log(CPU_LEGEND);
  console.log('');
  for (const r of results) {
    const s = r.seed;
    console.log(
      `[${r.db}] seed: ${s.members.toLocaleString('en-US')} members, ${s.entries.toLocaleString('en-US')} entries and their balances in ${(s.totalMs / 1000).toFixed(1)} s ` +
        `(members ${(s.usersMs / 1000).toFixed(1)} s, entries ${(s.entriesMs / 1000).toFixed(1)} s = ${Math.round(s.entries / (s.entriesMs / 1000)).toLocaleString('en-US')}/s, balances ${(s.balancesMs / 1000).toFixed(1)} s${s.analyzeMs === null ? '' : `, ANALYZE TABLE ${(s.analyzeMs / 1000).toFixed(1)} s`}); ` +
        `ledger verify: ${verifyText(r.verify)} => ${verdict(r.verify.count === 0)}`,
    );
    for (const d of r.verify.first) console.log(`[${r.db}]   ${d.kind}: ${d.detail}`);
  }
}
