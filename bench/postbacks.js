// `npm run bench:postbacks`: the postback endpoint under load, per database (SQLite, MariaDB). A
// custom network with an HMAC postback secret and postbacks switched on (globally and for the
// network), 1,000 members; 32 clients send signed GET postbacks for 20 s: new transactions,
// duplicates and status changes of earlier ones (bench/postbacks-load.js). Then exactness: every
// transaction's order ends in the last status the daemon acknowledged, each member's balance is
// the cashback of their orders, and `cashtrack ledger verify` is clean. Run by hand; prints a
// table and PASS/FAIL. Loopback only.
//
//   node bench/postbacks.js [--duration 20] [--connections 32] [--only sqlite|mysql|mysql-socket] [--pool-max N] [--profile DIR]
//                           [--workers N]
//
// `mysql` reaches MariaDB over TCP as the URL says; `mysql-socket` reaches the same server through
// its Unix socket (`?socket=` in database.url, as a daemon on the database's host would be set up;
// the server's @@socket), when there is one.
//
// The daemon runs in a child process (bench/postbacks-server.js); autocannon and the seeding run
// here. MariaDB: CASHTRACK_BENCH_MYSQL_URL, else CASHTRACK_TEST_MYSQL_URL, else
// mysql://root@127.0.0.1:3306/test; a fresh `ct_bench_*` database is created there and dropped.
// With `--workers N` (N > 1) each database is measured twice, on a fresh database each, by the
// daemon alone and by `cashtrack serve --workers N`, and the scaling from one to N is printed.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { createMysqlDatabase, mysqlServer, openDirect } from './ledger-db.js';
import { insertMembers } from './ledger-seed.js';
import { checkPostbacks, postbackLoad } from './postbacks-load.js';
import { passed, printPostbacks } from './postbacks-report.js';
import { printProfiles } from './cpuprofile-top.js';
import { ledgerVerify as verifyLedger, runCleanups, runMain, startChild, stopOnSignals } from './lib/child.js';
import { cpuDuring } from './lib/load.js';

const serverScript = fileURLToPath(new URL('./postbacks-server.js', import.meta.url));

const MEMBERS = 1_000;
const WARMUP_SECONDS = 2;
const CHILD_TIMEOUT_MS = 180_000;
const VERIFY_TIMEOUT_MS = 240_000;
const WATCHDOG_MS_PER_DATABASE = 10 * 60_000;

class UsageError extends Error {}

function parseOptions(argv, env) {
  const opts = {
    duration: Number(env.CASHTRACK_BENCH_DURATION ?? 20),
    connections: Number(env.CASHTRACK_BENCH_CONNECTIONS ?? 32),
    only: env.CASHTRACK_BENCH_ONLY || null,
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
    else if (flag === '--pool-max') opts.poolMax = Number(value());
    else if (flag === '--profile') opts.profile = value();
    else if (flag === '--workers') opts.workers = Number(value());
    else
      throw new UsageError(
        `unknown option ${argv[i]} (use --duration N, --connections N, --only sqlite|mysql|mysql-socket, --pool-max N, --profile DIR, --workers N)`,
      );
  }
  const int = (v, lo, hi) => Number.isInteger(v) && v >= lo && v <= hi;
  if (!int(opts.duration, 1, 120)) throw new UsageError('--duration must be 1-120 seconds (signatures are valid for 300 s)');
  if (!int(opts.connections, 1, 1000)) throw new UsageError('--connections must be 1-1000');
  if (opts.only && !['sqlite', 'mysql', 'mysql-socket'].includes(opts.only)) throw new UsageError('--only must be sqlite, mysql or mysql-socket');
  if (opts.poolMax !== null && !int(opts.poolMax, 1, 500)) throw new UsageError('--pool-max must be 1-500');
  if (!int(opts.workers, 1, 64)) throw new UsageError('--workers must be 1-64');
  return opts;
}

// ---- child processes ---------------------------------------------------------------------------

/** Forks the daemon; resolves with its `ready` message and a handle to talk to it. */
function startServer(options) {
  return startChild(serverScript, [JSON.stringify(options)], { timeoutMs: CHILD_TIMEOUT_MS, requestTimeoutMs: 60_000 });
}

const ledgerVerify = (dbUrl, dataDir, secret) => verifyLedger(dbUrl, dataDir, secret, VERIFY_TIMEOUT_MS);

// ---- load --------------------------------------------------------------------------------------

async function run(db, opts, dataDir, secret, log, workers = 1) {
  const handle = await startServer({ dbUrl: db.url, dataDir, secret, poolMax: opts.poolMax, workers });
  const { ready } = handle;
  let direct = null;
  try {
    direct = await openDirect(db.url);
    const [next] = await direct.all('SELECT COALESCE(MAX(id), 0) + 1 AS next FROM users');
    const members = { first: Number(next.next), count: MEMBERS };
    await insertMembers(direct, { firstId: members.first, count: MEMBERS, prefix: 'p', now: Date.now() });
    const load = postbackLoad(ready, members, randomBytes(4).toString('hex'));
    const first = await load.once();
    if (first.status !== 200) throw new Error(`GET /postback/${ready.network} answered ${first.status}: ${first.text.slice(0, 300)}`);

    log('warm-up… ');
    load.setPhase('warmup');
    await autocannon({ url: ready.origin, timeout: 10, connections: opts.connections, duration: WARMUP_SECONDS, requests: [load.request] });

    log('postbacks… ');
    load.setPhase('measured');
    const profileFile = opts.profile ? join(opts.profile, `postbacks-${db.name}.cpuprofile`) : null;
    const load1 = loadavg()[0];
    const { result, cpu, clientCpu, dbCpu } = await cpuDuring(handle, profileFile, db.url, () =>
      autocannon({ url: ready.origin, timeout: 10, connections: opts.connections, duration: opts.duration, requests: [load.request] }),
    );
    const load2 = loadavg()[0];
    load.setPhase('after');
    const measured = load.tally.phases.measured ?? { accepted: 0, duplicate: 0, other: 0, sent: { new: 0, duplicate: 0, change: 0 } };
    await handle.stop();
    const check = await checkPostbacks(direct, load.tally, members, ready.network);
    await direct.close();
    direct = null;

    log('ledger verify… ');
    const verify = await ledgerVerify(db.url, dataDir, secret);
    return {
      db: db.name,
      workers,
      members: MEMBERS,
      poolMax: ready.poolMax,
      seconds: opts.duration,
      rate: (measured.accepted + measured.duplicate) / opts.duration,
      requestRate: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      non2xx: result.non2xx,
      errors: result.errors + result.timeouts,
      other: measured.other + result.errors + result.timeouts,
      measured,
      cpu,
      clientCpu,
      dbCpu,
      load: [load1, load2],
      check,
      verify,
      otherAnswers: [...load.tally.otherAnswers],
      profileFile,
    };
  } finally {
    await direct?.close();
    await handle.stop();
  }
}

/** The Unix socket of the MariaDB server, when it is on this host (else null). */
async function localSocket() {
  const server = mysqlServer();
  if (server.options.socketPath) return server.options.socketPath;
  if (!['127.0.0.1', 'localhost', '::1', '[::1]'].includes(server.base.hostname)) return null;
  try {
    const conn = await server.connect();
    try {
      const [[row]] = await conn.query('SELECT @@socket AS socket');
      return row?.socket && existsSync(row.socket) ? row.socket : null;
    } finally {
      await conn.end();
    }
  } catch {
    return null;
  }
}

// ---- main --------------------------------------------------------------------------------------

async function main() {
  const opts = parseOptions(process.argv.slice(2), process.env);
  const tmp = mkdtempSync(join(tmpdir(), 'cashtrack-bench-postbacks-'));
  const secret = randomBytes(24).toString('hex');
  const cleanups = [() => rmSync(tmp, { recursive: true, force: true })];
  const dataDir = join(tmp, 'data');
  mkdirSync(dataDir);
  const results = [];
  const notes = [];
  let failed = false;

  const onSignal = stopOnSignals(cleanups);

  const databases = opts.only ? [opts.only] : ['sqlite', 'mysql', 'mysql-socket'];
  const watchdog = setTimeout(
    () => onSignal(`watchdog (${(databases.length * WATCHDOG_MS_PER_DATABASE) / 60_000} min)`),
    databases.length * WATCHDOG_MS_PER_DATABASE,
  );
  watchdog.unref();
  if (opts.profile) mkdirSync(opts.profile, { recursive: true });

  console.log(
    `cashtrack bench:postbacks: ${opts.connections} connections, ${opts.duration} s per database; ${availableParallelism()} CPUs shared by the daemon, autocannon and the database (load average ${loadavg()[0].toFixed(1)})\n`,
  );
  try {
    const runs = databases.flatMap((name) => (opts.workers > 1 ? [1, opts.workers] : [1]).map((workers) => [name, workers]));
    for (const [name, workers] of runs) {
      const log = (s) => process.stdout.write(s);
      let db;
      try {
        if (name === 'sqlite') {
          const file = join(tmp, 'postbacks.sqlite');
          db = {
            name,
            url: `sqlite:${file}`,
            drop: async () => {
              for (const x of ['', '-wal', '-shm']) rmSync(`${file}${x}`, { force: true });
            },
          };
        } else {
          const socket = name === 'mysql-socket' ? await localSocket() : null;
          if (name === 'mysql-socket' && !socket) {
            notes.push('MariaDB over its Unix socket skipped: the server has no socket on this host');
            if (opts.only === name) failed = true;
            continue;
          }
          const m = await createMysqlDatabase();
          cleanups.unshift(() => m.drop());
          const url = new URL(m.url);
          if (socket) url.search = `?socket=${socket}`;
          db = { name, url: url.toString(), drop: () => m.drop() };
        }
      } catch (err) {
        const note = `MariaDB skipped: ${mysqlServer().base.host} unreachable (${err.code ?? err.message})`;
        notes.push(note);
        console.log(note);
        if (opts.only === name) failed = true;
        continue;
      }
      log(`[${name}]${workers > 1 ? ` ${workers} workers:` : ''} seeding… `);
      try {
        results.push(await run(db, opts, dataDir, secret, log, workers));
      } finally {
        await db.drop();
      }
      console.log('done');
    }
    if (results.length) printPostbacks(results, opts);
    for (const note of notes) console.log(note);
    printProfiles(results.filter((r) => r.profileFile).map((r) => [`the daemon, postbacks on ${r.db}`, r.profileFile]));
    if (results.some((r) => !passed(r))) failed = true;
  } finally {
    clearTimeout(watchdog);
    await runCleanups(cleanups);
  }
  return failed ? 1 : 0;
}

runMain(main, 'bench:postbacks', UsageError);
