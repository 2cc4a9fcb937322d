// `npm run bench:ledger`: the member ledger under load, per database. 32 clients post
// `POST /ledger/adjustments` (mixed credits and debits, some with an Idempotency-Key) over HTTP with
// an application password, next to the raw rate of one-row INSERT + COMMIT transactions on the same
// database; then `ledger verify` and an exactly-once check of every acknowledged write. Then the
// read side on 100,000 members and 1,000,000 entries. Run by hand; prints tables and PASS/FAIL.
//
//   node bench/ledger.js [--duration 20] [--connections 32] [--only sqlite|mysql] [--skip-read]
//                        [--read-duration 10] [--read-members 100000] [--read-entries 1000000]
//                        [--skip-write] [--pool-max N] [--profile DIR] [--workers N]
//
// The daemon runs in a child process (bench/ledger-server.js); autocannon, the seeding and the raw
// baseline run here (bench/ledger-db.js, bench/ledger-load.js). MariaDB: CASHTRACK_BENCH_MYSQL_URL,
// else CASHTRACK_TEST_MYSQL_URL, else mysql://root@127.0.0.1:3306/test; fresh `ct_bench_*`
// databases are created there and dropped. With `--workers N` (N > 1) the write half runs twice,
// on a fresh database each, by the daemon alone and by `cashtrack serve --workers N`, and the
// scaling from one to N is printed.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { combineRaw, createMysqlDatabase, innodbLockCounters, mysqlServer, openDirect, prng, rawBaseline } from './ledger-db.js';
import { adjustmentLoad, checkExactlyOnce } from './ledger-load.js';
import { printRead, printWrite } from './ledger-report.js';
import { printProfiles } from './cpuprofile-top.js';
import { seedHistory, seedWriteSet } from './ledger-seed.js';
import { ledgerVerify as verifyLedger, runCleanups, runMain, startChild, stopOnSignals } from './lib/child.js';
import { cpuDuring } from './lib/load.js';

const serverScript = fileURLToPath(new URL('./ledger-server.js', import.meta.url));

const WRITE_MEMBERS = 1_000;
const OPENING_MINOR = 25_000;
const WARMUP_SECONDS = 2;
const CHILD_TIMEOUT_MS = 180_000;
/** `ledger verify` past this is reported as not finishing (and stopped), not waited for. */
const VERIFY_TIMEOUT_MS = 240_000;
/** The whole run, per database: past it everything is stopped and cleaned up. */
const WATCHDOG_MS_PER_DATABASE = 20 * 60_000;

class UsageError extends Error {}

function parseOptions(argv, env) {
  const opts = {
    duration: Number(env.CASHTRACK_BENCH_DURATION ?? 20),
    connections: Number(env.CASHTRACK_BENCH_CONNECTIONS ?? 32),
    only: env.CASHTRACK_BENCH_ONLY || null,
    skipRead: false,
    skipWrite: false,
    readDuration: 10,
    readMembers: 100_000,
    readEntries: 1_000_000,
    poolMax: null,
    profile: env.CASHTRACK_BENCH_PROFILE || null,
    workers: 1,
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i];
    if (flag === '--duration') opts.duration = Number(value());
    else if (flag === '--connections') opts.connections = Number(value());
    else if (flag === '--only') opts.only = value();
    else if (flag === '--skip-read') opts.skipRead = true;
    else if (flag === '--skip-write') opts.skipWrite = true;
    else if (flag === '--read-duration') opts.readDuration = Number(value());
    else if (flag === '--read-members') opts.readMembers = Number(value());
    else if (flag === '--read-entries') opts.readEntries = Number(value());
    else if (flag === '--pool-max') opts.poolMax = Number(value());
    else if (flag === '--profile') opts.profile = value();
    else if (flag === '--workers') opts.workers = Number(value());
    else
      throw new UsageError(
        `unknown option ${argv[i]} (use --duration N, --connections N, --only sqlite|mysql, --skip-read, --skip-write, --read-duration N, --read-members N, --read-entries N, --pool-max N, --profile DIR, --workers N)`,
      );
  }
  const int = (v, lo, hi) => Number.isInteger(v) && v >= lo && v <= hi;
  if (!int(opts.duration, 1, 300)) throw new UsageError('--duration must be 1-300 seconds');
  if (!int(opts.connections, 1, 1000)) throw new UsageError('--connections must be 1-1000');
  if (opts.only && !['sqlite', 'mysql'].includes(opts.only)) throw new UsageError('--only must be sqlite or mysql');
  if (!int(opts.readDuration, 1, 120)) throw new UsageError('--read-duration must be 1-120 seconds');
  if (!int(opts.readMembers, 1_000, 1_000_000)) throw new UsageError('--read-members must be 1000-1000000');
  if (!int(opts.readEntries, opts.readMembers, 10_000_000)) throw new UsageError('--read-entries must be at least --read-members and at most 10000000');
  if (opts.poolMax !== null && !int(opts.poolMax, 1, 500)) throw new UsageError('--pool-max must be 1-500');
  if (!int(opts.workers, 1, 64)) throw new UsageError('--workers must be 1-64');
  if (opts.skipRead && opts.skipWrite) throw new UsageError('--skip-read and --skip-write leave nothing to run');
  return opts;
}

// ---- child processes ---------------------------------------------------------------------------

/** Forks the daemon; resolves with its `ready` message and a handle to talk to it. */
function startServer(options) {
  return startChild(serverScript, [JSON.stringify(options)], { timeoutMs: CHILD_TIMEOUT_MS, requestTimeoutMs: 60_000 });
}

const ledgerVerify = (dbUrl, dataDir, secret) => verifyLedger(dbUrl, dataDir, secret, VERIFY_TIMEOUT_MS);

// ---- load --------------------------------------------------------------------------------------

function cannon(ready, opts) {
  return autocannon({ url: ready.origin, timeout: 10, ...opts });
}

/** The write half on a fresh database: seed, preflight, warm-up, raw baseline, measured run, checks. */
async function runWrite(db, opts, dataDir, secret, log, workers = 1) {
  const handle = await startServer({ dbUrl: db.url, dataDir, secret, poolMax: opts.poolMax, workers });
  const { ready } = handle;
  let direct = null;
  try {
    direct = await openDirect(db.url);
    const members = await seedWriteSet(direct, { count: WRITE_MEMBERS, openingMinor: OPENING_MINOR, currency: ready.currency, actor: `user:${ready.adminId}` });
    const load = adjustmentLoad(ready, members, randomBytes(4).toString('hex'));
    const first = await load.once();
    if (first.status !== 201) throw new Error(`POST /ledger/adjustments answered ${first.status}: ${first.text.slice(0, 300)}`);

    log('warm-up… ');
    load.setPhase('warmup');
    await cannon(ready, { connections: opts.connections, duration: WARMUP_SECONDS, requests: [load.request] });

    // The raw baseline in two halves, before and after the measured run, so that both see the
    // same machine (and the same disk cache and fsync weather) on average.
    const rawHalf = async () => {
      log('raw baseline… ');
      const half = await rawBaseline(db.url, { connections: opts.connections, durationMs: opts.duration * 500, memberCount: WRITE_MEMBERS });
      if (half.commits === 0) throw new Error(`raw baseline committed nothing: ${half.firstError}`);
      return half;
    };
    const rawBefore = await rawHalf();

    log('adjustments… ');
    load.setPhase('measured');
    const profileFile = opts.profile ? join(opts.profile, `adjustments-${db.name}.cpuprofile`) : null;
    const locksBefore = await innodbLockCounters(direct);
    const load1 = loadavg()[0];
    const { result, cpu, clientCpu, dbCpu } = await cpuDuring(handle, profileFile, db.url, () =>
      cannon(ready, { connections: opts.connections, duration: opts.duration, requests: [load.request] }),
    );
    const load2 = loadavg()[0];
    const locksAfter = await innodbLockCounters(direct);
    const locks =
      locksBefore && locksAfter ? { deadlocks: locksAfter.deadlocks - locksBefore.deadlocks, lockWaits: locksAfter.lockWaits - locksBefore.lockWaits } : null;
    load.setPhase('replay');
    const replay = await load.replay();
    const raw = combineRaw([rawBefore, await rawHalf()]);
    const measured = load.tally.phases.measured ?? { created: 0, funds: 0, other: 0, keyed: 0 };
    const answered = measured.created + measured.funds + measured.other;
    if (answered === 0 || measured.created < answered / 2) {
      throw new Error(
        `adjustments on ${db.name}: ${measured.created} of ${answered} answers were 201 (${JSON.stringify([...load.tally.otherAnswers])}, ${result.errors} errors, ${result.timeouts} timeouts)`,
      );
    }
    const once = await checkExactlyOnce(direct, load.tally, members, members.openingTotal);
    await direct.close();
    direct = null;
    await handle.stop();

    log('ledger verify… ');
    const verify = await ledgerVerify(db.url, dataDir, secret);
    return {
      db: db.name,
      workers,
      members: WRITE_MEMBERS,
      openingMinor: OPENING_MINOR,
      poolMax: ready.poolMax,
      seconds: opts.duration,
      rate: measured.created / opts.duration,
      requestRate: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      measured,
      errors: result.errors + result.timeouts,
      cpu,
      clientCpu,
      dbCpu,
      locks,
      load: [load1, load2],
      raw,
      ratio: measured.created / opts.duration / raw.rate,
      replay,
      once,
      verify,
      otherAnswers: [...load.tally.otherAnswers],
      profileFile,
    };
  } finally {
    await direct?.close();
    await handle.stop();
  }
}

/** The read half on a fresh database: 100,000 members and 1,000,000 entries, then two GETs. */
async function runRead(db, opts, dataDir, secret, log) {
  const handle = await startServer({ dbUrl: db.url, dataDir, secret, poolMax: opts.poolMax });
  const { ready } = handle;
  try {
    const direct = await openDirect(db.url, { seed: true });
    let seed;
    try {
      log('seeding… ');
      seed = await seedHistory(direct, {
        members: opts.readMembers,
        entries: opts.readEntries,
        currency: ready.currency,
        actor: 'system',
        seed: 0x5eed,
        onProgress: (n) => n % 250_000 === 0 && log(`${n / 1000}k `),
      });
    } finally {
      await direct.close();
    }
    log(`${(seed.totalMs / 1000).toFixed(0)} s; `);
    // Members with about ten entries, one per request at random.
    const rand = prng(0x7ead);
    const typical = [];
    for (let k = 0; k < seed.members && typical.length < 10_000; k++) {
      const id = seed.first + k;
      if (Math.abs(seed.countOf(id) - 10) <= 1) typical.push(id);
    }
    const targets = [
      { label: 'GET /ledger/members?per_page=100&orderby=available', path: () => `${ready.prefix}/ledger/members?per_page=100&orderby=available`, expect: 100 },
      {
        label: 'GET /ledger/entries?member_id=<~10 entries>',
        path: () => `${ready.prefix}/ledger/entries?member_id=${typical[Math.floor(rand() * typical.length)]}`,
        expect: 9,
      },
    ];
    const rows = [];
    for (const target of targets) {
      const res = await fetch(`${ready.origin}${target.path()}`, { headers: { authorization: ready.authorization }, signal: AbortSignal.timeout(30_000) });
      const body = await res.text();
      if (res.status !== 200 || JSON.parse(body).length < target.expect) throw new Error(`${target.label} answered ${res.status}: ${body.slice(0, 300)}`);
      const request = { method: 'GET', setupRequest: (req) => ({ ...req, path: target.path() }) };
      const base = { connections: 1, headers: { authorization: ready.authorization }, requests: [request] };
      log(`${target.label.split('?')[0].slice(4)}… `);
      await cannon(ready, { ...base, duration: WARMUP_SECONDS });
      const slug = target.label.includes('members') ? 'members' : 'entries';
      const profileFile = opts.profile ? join(opts.profile, `read-${slug}-${db.name}.cpuprofile`) : null;
      const { result, cpu, clientCpu, dbCpu } = await cpuDuring(handle, profileFile, db.url, () => cannon(ready, { ...base, duration: opts.readDuration }));
      rows.push({
        db: db.name,
        label: target.label,
        rps: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        max: result.latency.max,
        ok: result['2xx'],
        non2xx: result.non2xx,
        errors: result.errors + result.timeouts,
        cpu,
        clientCpu,
        dbCpu,
        profileFile,
      });
    }
    await handle.stop();
    log('ledger verify… ');
    const verify = await ledgerVerify(db.url, dataDir, secret);
    return { db: db.name, seed, rows, verify, warmupSeconds: WARMUP_SECONDS };
  } finally {
    await handle.stop();
  }
}

// ---- main --------------------------------------------------------------------------------------

async function main() {
  const opts = parseOptions(process.argv.slice(2), process.env);
  const tmp = mkdtempSync(join(tmpdir(), 'cashtrack-bench-ledger-'));
  const secret = randomBytes(24).toString('hex');
  const cleanups = [() => rmSync(tmp, { recursive: true, force: true })];
  const dataDir = join(tmp, 'data');
  mkdirSync(dataDir);
  const writes = [];
  const reads = [];
  const notes = [];
  let failed = false;

  const onSignal = stopOnSignals(cleanups);

  const databases = [];
  if (opts.only !== 'mysql') databases.push('sqlite');
  if (opts.only !== 'sqlite') databases.push('mysql');
  const watchdog = setTimeout(
    () => onSignal(`watchdog (${(databases.length * WATCHDOG_MS_PER_DATABASE) / 60_000} min)`),
    databases.length * WATCHDOG_MS_PER_DATABASE,
  );
  watchdog.unref();
  if (opts.profile) mkdirSync(opts.profile, { recursive: true });

  console.log(
    `cashtrack bench:ledger: ${opts.skipWrite ? '' : `${opts.connections} connections, ${opts.duration} s per write run; `}${opts.skipRead ? '' : `reads on ${opts.readMembers.toLocaleString('en-US')} members / ${opts.readEntries.toLocaleString('en-US')} entries; `}` +
      `${availableParallelism()} CPUs shared by the daemon, autocannon and the database (load average ${loadavg()[0].toFixed(1)})\n`,
  );
  try {
    for (const name of databases) {
      /** A fresh database per half (MariaDB: throws when the server is unreachable). */
      const fresh = async (half) => {
        const file = join(tmp, `${half}.sqlite`);
        if (name === 'sqlite')
          return {
            name,
            url: `sqlite:${file}`,
            drop: async () => {
              for (const x of ['', '-wal', '-shm']) rmSync(`${file}${x}`, { force: true });
            },
          };
        const m = await createMysqlDatabase();
        cleanups.unshift(() => m.drop());
        return { name, url: m.url, drop: () => m.drop() };
      };
      const log = (s) => process.stdout.write(s);
      let db;
      try {
        db = await fresh(opts.skipWrite ? 'read' : 'write');
      } catch (err) {
        const note = `MariaDB skipped: ${mysqlServer().base.host} unreachable (${err.code ?? err.message})`;
        notes.push(note);
        console.log(note);
        if (opts.only === 'mysql') failed = true;
        continue;
      }
      if (!opts.skipWrite) {
        for (const workers of opts.workers > 1 ? [1, opts.workers] : [1]) {
          if (workers > 1) db = await fresh(`write-${workers}`);
          log(`[${name}] adjustments${workers > 1 ? `, ${workers} workers` : ''}: seeding… `);
          try {
            writes.push(await runWrite(db, opts, dataDir, secret, log, workers));
          } finally {
            await db.drop();
          }
          console.log('done');
        }
        if (opts.skipRead) continue;
        db = await fresh('read');
      }
      log(`[${name}] reads: `);
      try {
        reads.push(await runRead(db, opts, dataDir, secret, log));
      } finally {
        await db.drop();
      }
      console.log('done');
    }

    if (writes.length) printWrite(writes, opts);
    if (reads.length) printRead(reads, opts);
    for (const note of notes) console.log(note);
    printProfiles(
      [
        ...writes.filter((r) => r.profileFile).map((r) => [`the daemon, adjustments on ${r.db}`, r.profileFile]),
        ...reads.flatMap((r) => r.rows.filter((x) => x.profileFile).map((x) => [`the daemon, ${x.label} on ${x.db}`, x.profileFile])),
      ],
      12,
    );
  } finally {
    clearTimeout(watchdog);
    await runCleanups(cleanups);
  }
  return failed ? 1 : 0;
}

runMain(main, 'bench:ledger', UsageError);
