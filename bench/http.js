// `npm run bench:http`: the svc/v1 namespace under load next to its fair ceiling (plain hapi running
// exactly the logs route's SQL on the same driver and database, with no authentication, validation
// or paging headers) and a bare hapi server answering a constant, per database; and the CLI's cold
// start (bench/startup.js). Run by hand; prints a table and PASS/FAIL against the targets.
//
//   node bench/http.js [--duration 10] [--connections 32] [--only sqlite|mysql] [--profile DIR] [--workers N]
//
// With `--workers N` (N > 1) the namespace is measured again, on the same database, as
// `cashtrack serve --workers N`, and the scaling from one worker to N is printed (the ceiling and
// the ratios stay those of one process).
//
// Each server runs in its own child process (bench/http-server.js); autocannon runs here.
// MariaDB: CASHTRACK_BENCH_MYSQL_URL, else CASHTRACK_TEST_MYSQL_URL, else
// mysql://root@127.0.0.1:3306/test; a fresh `ct_bench_*` database is created there and dropped.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { printProfiles } from './cpuprofile-top.js';
import { createMysqlDatabase, mysqlServer } from './ledger-db.js';
import { runCleanups, runMain, startChild, stopOnSignals } from './lib/child.js';
import { printScaling } from './lib/scaling.js';
import { measureStartup, startupLines } from './startup.js';

const serverScript = fileURLToPath(new URL('./http-server.js', import.meta.url));

const TARGETS = { ratio: 0.9, p99Ms: 10 };
const WARMUP_SECONDS = 2;
const CHILD_TIMEOUT_MS = 120_000;

class UsageError extends Error {}

function parseOptions(argv, env) {
  const opts = {
    duration: Number(env.CASHTRACK_BENCH_DURATION ?? 10),
    connections: Number(env.CASHTRACK_BENCH_CONNECTIONS ?? 32),
    only: env.CASHTRACK_BENCH_ONLY || null,
    profile: env.CASHTRACK_BENCH_PROFILE || null,
    workers: 1,
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i];
    if (flag === '--duration') opts.duration = Number(value());
    else if (flag === '--connections') opts.connections = Number(value());
    else if (flag === '--only') opts.only = value();
    else if (flag === '--profile') opts.profile = value();
    else if (flag === '--workers') opts.workers = Number(value());
    else throw new UsageError(`unknown option ${argv[i]} (use --duration N, --connections N, --only sqlite|mysql, --profile DIR, --workers N)`);
  }
  if (!Number.isInteger(opts.duration) || opts.duration < 1 || opts.duration > 300) throw new UsageError('--duration must be 1-300 seconds');
  if (!Number.isInteger(opts.connections) || opts.connections < 1 || opts.connections > 1000) throw new UsageError('--connections must be 1-1000');
  if (opts.only && !['sqlite', 'mysql'].includes(opts.only)) throw new UsageError('--only must be sqlite or mysql');
  if (!Number.isInteger(opts.workers) || opts.workers < 1 || opts.workers > 64) throw new UsageError('--workers must be 1-64');
  return opts;
}

// ---- child processes ---------------------------------------------------------------------------

/** Forks a server; resolves with its `ready` message and a handle to talk to it. */
function startServer(args, { execArgv = [] } = {}) {
  return startChild(serverScript, args, { timeoutMs: CHILD_TIMEOUT_MS, requestTimeoutMs: 30_000, execArgv });
}

// ---- load --------------------------------------------------------------------------------------

async function preflight(ready, expectRows) {
  const headers = ready.authorization ? { authorization: ready.authorization } : {};
  const res = await fetch(ready.url, { headers, signal: AbortSignal.timeout(10_000) });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`GET ${ready.url} answered ${res.status}: ${body.slice(0, 300)}`);
  if (expectRows) {
    const total = Number(res.headers.get('x-wp-total'));
    const items = JSON.parse(body);
    if (total < expectRows || !Array.isArray(items) || items.length !== 10) {
      throw new Error(
        `GET ${ready.url}: expected 10 of at least ${expectRows} entries, got ${Array.isArray(items) ? items.length : typeof items} of X-WP-Total ${total}`,
      );
    }
  }
}

function cannon(ready, opts, duration) {
  return autocannon({
    url: ready.url,
    connections: opts.connections,
    duration,
    headers: ready.authorization ? { authorization: ready.authorization } : {},
    timeout: 10,
  });
}

/** Warm-up, then the measured run; returns one table row. */
async function measure(label, db, handle, opts, profileFile) {
  await preflight(handle.ready, label === 'namespace' ? 10_000 : 0);
  await cannon(handle.ready, opts, WARMUP_SECONDS);
  if (profileFile) await handle.request({ type: 'profile-start' }, 'profile-started');
  const before = await handle.request({ type: 'cpu' }, 'cpu');
  const result = await cannon(handle.ready, opts, opts.duration);
  const after = await handle.request({ type: 'cpu' }, 'cpu');
  if (profileFile) await handle.request({ type: 'profile-stop', file: profileFile }, 'profile-stopped');
  const cpuUs = after.usage.user + after.usage.system - before.usage.user - before.usage.system;
  const row = {
    target: label,
    db,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    cpu: cpuUs / (after.at - before.at),
    statusCodes: result.statusCodeStats,
  };
  const total = row.ok + row.non2xx + row.errors;
  if (total === 0 || row.ok < total / 2) {
    throw new Error(
      `${label} on ${db}: ${row.ok} of ${total} responses were 2xx (status codes ${JSON.stringify(row.statusCodes)}, ${row.errors} errors/timeouts)`,
    );
  }
  return row;
}

/**
 * Starts one server, measures it (with a CPU profile named `<profileName>-<db>` when `--profile`
 * asks and a name is given), stops it and prints its rate: its row, its ready message and the profile's file.
 */
async function measureServer(args, label, db, opts, profileName = null) {
  const handle = await startServer(args);
  const profileFile = opts.profile && profileName ? join(opts.profile, `${profileName}-${db.name}.cpuprofile`) : null;
  try {
    const row = await measure(label, db.name, handle, opts, profileFile);
    console.log(`${row.rps.toFixed(0)} req/s`);
    return { row, ready: handle.ready, profileFile };
  } finally {
    await handle.stop();
  }
}

// ---- output ------------------------------------------------------------------------------------

function printTable(rows) {
  const columns = [
    ['target', (r) => r.target],
    ['db', (r) => r.db],
    ['req/s', (r) => r.rps.toFixed(0)],
    ['p50 ms', (r) => String(r.p50)],
    ['p99 ms', (r) => String(r.p99)],
    ['2xx', (r) => String(r.ok)],
    ['non-2xx', (r) => String(r.non2xx)],
    ['errors', (r) => String(r.errors)],
    ['server CPU', (r) => `${(100 * r.cpu).toFixed(0)}%`],
    ['CPU µs/req', (r) => (cpuPerRequest(r) * 1e6).toFixed(0)],
  ];
  const cells = rows.map((r) => columns.map(([, f]) => f(r)));
  const widths = columns.map(([h], i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (vals) => vals.map((v, i) => (i < 2 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  ');
  console.log(line(columns.map(([h]) => h)));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const c of cells) console.log(line(c));
}

/** Server CPU seconds per answered request: steadier than req/s on a shared machine. */
const cpuPerRequest = (r) => r.cpu / r.rps;

const verdict = (ok) => (ok ? 'PASS' : 'FAIL');

// ---- main --------------------------------------------------------------------------------------

async function main() {
  const opts = parseOptions(process.argv.slice(2), process.env);
  const tmp = mkdtempSync(join(tmpdir(), 'cashtrack-bench-'));
  const secret = randomBytes(24).toString('hex');
  const cleanups = [() => rmSync(tmp, { recursive: true, force: true })];
  const rows = [];
  const ratios = [];
  const notes = [];
  /** With --workers: the namespace's rate alone and with N workers, per database. */
  const scaling = [];
  // Missed targets are reported, not an exit status; a run that could not measure is.
  let failed = false;
  const sqliteUrl = `sqlite:${join(tmp, 'bench.sqlite')}`;
  const dataDir = join(tmp, 'data');
  mkdirSync(dataDir);

  stopOnSignals(cleanups);

  console.log(
    `cashtrack bench:http: ${opts.connections} connections, ${opts.duration} s per target (after ${WARMUP_SECONDS} s warm-up), GET /<rest_root>/svc/v1/logs?per_page=10 over 10,000 log rows\n`,
  );
  try {
    const databases = [];
    if (opts.only !== 'mysql') databases.push({ name: 'sqlite', url: sqliteUrl });
    if (opts.only !== 'sqlite') {
      try {
        const m = await createMysqlDatabase();
        cleanups.unshift(() => m.drop());
        databases.push({ name: 'mysql', url: m.url });
      } catch (err) {
        const note = `MariaDB skipped: ${mysqlServer().base.host} unreachable (${err.code ?? err.message})`;
        notes.push(note);
        console.log(note);
        if (opts.only === 'mysql') failed = true;
      }
    }
    if (opts.profile) mkdirSync(opts.profile, { recursive: true });

    for (const db of databases) {
      // Bare hapi next to each database's run, so both see the same machine state.
      process.stdout.write(`[${db.name}] bare hapi… `);
      const bareRow = (await measureServer(['bare'], 'bare hapi', db, opts)).row;
      rows.push(bareRow);

      // The ceiling right before the namespace, on the same database (the first to start seeds it).
      process.stdout.write(`[${db.name}] seeding and starting the fair ceiling… `);
      const ceiling = await measureServer(['ceiling', JSON.stringify({ dbUrl: db.url, dataDir, secret })], 'fair ceiling', db, opts, 'ceiling');
      const ceilingRow = ceiling.row;
      db.statements = ceiling.ready.statements;
      db.ceilingProfileFile = ceiling.profileFile;
      rows.push(ceilingRow);

      process.stdout.write(`[${db.name}] starting the daemon; namespace (10,000 log rows checked)… `);
      const ns = await measureServer(['cashtrack', JSON.stringify({ dbUrl: db.url, dataDir, secret })], 'namespace', db, opts, 'namespace');
      const nsRow = ns.row;
      db.profileFile = ns.profileFile;
      rows.push(nsRow);
      const ratio = nsRow.rps / ceilingRow.rps;
      const cpuRatio = cpuPerRequest(ceilingRow) / cpuPerRequest(nsRow);
      ratios.push({ db: db.name, ratio, cpuRatio, bare: nsRow.rps / bareRow.rps, p99: nsRow.p99, pass: ratio >= TARGETS.ratio && nsRow.p99 < TARGETS.p99Ms });

      if (opts.workers > 1) {
        process.stdout.write(`[${db.name}] cashtrack serve --workers ${opts.workers}… `);
        const manyRow = (await measureServer(['cashtrack', JSON.stringify({ dbUrl: db.url, dataDir, secret, workers: opts.workers })], 'namespace', db, opts))
          .row;
        manyRow.target = `namespace, ${opts.workers} workers`;
        rows.push(manyRow);
        scaling.push({ db: db.name, workers: 1, rps: nsRow.rps }, { db: db.name, workers: opts.workers, rps: manyRow.rps });
      }
    }

    process.stdout.write('cold start… ');
    const startup = measureStartup({ dbUrl: sqliteUrl, dataDir, secret });
    console.log('done\n');

    if (rows.length > 0) {
      printTable(rows);
      console.log('');
    }
    for (const r of ratios) {
      console.log(
        `${r.db.padEnd(6)}  namespace/fair ceiling = ${r.ratio.toFixed(2)} (target >= ${TARGETS.ratio}: ${verdict(r.ratio >= TARGETS.ratio)})  ` +
          `p99 = ${r.p99} ms at ${opts.connections} connections (target < ${TARGETS.p99Ms} ms: ${verdict(r.p99 < TARGETS.p99Ms)})  => ${verdict(r.pass)}  ` +
          `(CPU per request, fair ceiling/namespace = ${r.cpuRatio.toFixed(2)}; namespace/bare hapi = ${r.bare.toFixed(2)})`,
      );
    }
    printScaling(scaling, (r) => r.rps, 'req/s');
    for (const note of notes) console.log(note);
    console.log('');
    console.log(startupLines(startup).join('\n'));
    for (const db of databases) {
      if (db.statements) console.log(`\nthe fair ceiling's SQL on ${db.name} (captured from the route): ${db.statements.join('; ')}`);
    }
    for (const db of databases) {
      printProfiles(
        [
          [`the fair ceiling on ${db.name}`, db.ceilingProfileFile],
          [`the namespace server on ${db.name}`, db.profileFile],
        ].filter(([, file]) => file),
        12,
      );
    }
  } finally {
    await runCleanups(cleanups);
  }
  return failed ? 1 : 0;
}

runMain(main, 'bench:http', UsageError);
