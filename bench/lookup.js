// `npm run bench:lookup`: the users typeahead (`UserService.lookup`, `GET /lookup/users`) and the
// users list with a search, on 100,000 users, per database. Run by hand; prints a table per
// database, the query plans, and PASS/FAIL against the target.
//
//   node bench/lookup.js [--users 100000] [--rounds 3] [--only sqlite|mysql] [--analyze]
//
// Everything runs in this process on the compiled code in dist/ (service calls, and the HTTP
// layer through `server.inject`, so no port is opened). `--analyze` also runs ANALYZE on SQLite,
// which cashtrack itself never does (to see whether statistics would change a plan).
// MariaDB: CASHTRACK_BENCH_MYSQL_URL, else CASHTRACK_TEST_MYSQL_URL, else
// mysql://root@127.0.0.1:3306/test; a fresh `ct_bench_*` database is created there and dropped.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMysqlDatabase, mysqlServer, withTimeout } from './ledger-db.js';
import { benchAdmin, startDaemon } from './lib/daemon.js';
import { generateSearches, generateUsers, prng } from './lookup-data.js';
import { queryPlans } from './query-plans.js';

// Our own bar: the issue asks for "fast on 100,000 users" and names no number.
const TARGETS = { p99Ms: 25 };
const BATCH = 1_000;
const CALL_TIMEOUT_MS = 10_000;
/** Measured time per layer and database; rounds stop early (after the first) once it is spent. */
const LAYER_BUDGET_MS = 60_000;

class UsageError extends Error {}

/** Set by SIGINT/SIGTERM: the work still in flight then fails on closed pools, which is no news. */
let interrupted = false;

function parseOptions(argv, env) {
  const opts = {
    users: Number(env.CASHTRACK_BENCH_USERS ?? 100_000),
    rounds: Number(env.CASHTRACK_BENCH_ROUNDS ?? 3),
    only: env.CASHTRACK_BENCH_ONLY || null,
    analyze: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i];
    if (flag === '--users') opts.users = Number(value());
    else if (flag === '--rounds') opts.rounds = Number(value());
    else if (flag === '--only') opts.only = value();
    else if (flag === '--analyze') opts.analyze = true;
    else throw new UsageError(`unknown option ${argv[i]} (use --users N, --rounds N, --only sqlite|mysql, --analyze)`);
  }
  if (!Number.isInteger(opts.users) || opts.users < 1_000 || opts.users > 1_000_000) throw new UsageError('--users must be 1000-1000000');
  if (!Number.isInteger(opts.rounds) || opts.rounds < 1 || opts.rounds > 20) throw new UsageError('--rounds must be 1-20');
  if (opts.only && !['sqlite', 'mysql'].includes(opts.only)) throw new UsageError('--only must be sqlite or mysql');
  return opts;
}

// ---- databases ---------------------------------------------------------------------------------

/** A context and an injectable server on `dbUrl`, built from dist/ as bench/http-server.js does. */
async function startCashtrack({ dbUrl, dataDir, secret }) {
  // A hyphen: no seeded login has one.
  const { ctx, server, close, config, namespace, admin } = await startDaemon(
    { dbUrl, dataDir, secret },
    { listen: false, setup: async (ctx) => ({ admin: await benchAdmin(ctx, 'bench-admin') }) },
  );
  return { ctx, server, close, prefix: `/${config.server.rest_root}/${namespace}`, authorization: admin.authorization };
}

/** Multi-row INSERTs of `BATCH` users through the database handle. */
async function seedUsers(ctx, users) {
  const row = '(?, ?, ?, ?, ?, ?, ?, ?)';
  for (let start = 0; start < users.length; start += BATCH) {
    const chunk = users.slice(start, start + BATCH);
    const params = [];
    for (const u of chunk) params.push(u.login, u.email, u.display_name, u.role, null, u.status, u.created_at, u.created_at);
    const sql = `INSERT INTO users (login, email, display_name, role, password_hash, status, created_at, updated_at) VALUES ${chunk.map(() => row).join(', ')}`;
    await withTimeout(ctx.db.execute(sql, params), CALL_TIMEOUT_MS, `inserting users ${start + 1}-${start + chunk.length}`);
  }
}

// ---- measurement -------------------------------------------------------------------------------

function layers(app) {
  return [
    { name: 'lookup (service)', short: 'lookup', run: async (s) => (await app.ctx.users.lookup(s)).items },
    {
      name: 'GET /lookup/users',
      short: 'HTTP',
      run: async (s) => {
        const res = await app.server.inject({
          url: `${app.prefix}/lookup/users?search=${encodeURIComponent(s)}`,
          headers: { authorization: app.authorization },
        });
        if (res.statusCode !== 200) throw new Error(`GET /lookup/users?search=${s} answered ${res.statusCode}: ${res.payload.slice(0, 300)}`);
        return JSON.parse(res.payload);
      },
    },
    { name: 'list (service)', short: 'list', run: (s) => app.ctx.users.list({ search: s, page: 1, per_page: 20 }) },
  ];
}

function shuffled(items, rand) {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** One unmeasured pass, then up to `rounds` measured passes in shuffled order. */
async function measureLayer(layer, searches, rounds) {
  const rand = prng(0x5eed + 2);
  for (const s of searches) await withTimeout(layer.run(s.search), CALL_TIMEOUT_MS, `${layer.name} "${s.search}" (warm-up)`);
  const samples = [];
  let spent = 0;
  let done = 0;
  while (done < rounds && (done === 0 || spent < LAYER_BUDGET_MS)) {
    for (const s of shuffled(searches, rand)) {
      const start = process.hrtime.bigint();
      await withTimeout(layer.run(s.search), CALL_TIMEOUT_MS, `${layer.name} "${s.search}"`);
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      spent += ms;
      samples.push({ ...s, ms });
    }
    done++;
  }
  return { layer: layer.name, short: layer.short, samples, rounds: done };
}

function percentile(sorted, p) {
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)];
}

function stats(samples) {
  const ms = samples.map((s) => s.ms).sort((a, b) => a - b);
  return { n: ms.length, p50: percentile(ms, 0.5), p99: percentile(ms, 0.99), max: ms[ms.length - 1] };
}

// ---- output ------------------------------------------------------------------------------------

const verdict = (ok) => (ok ? 'PASS' : 'FAIL');
const fmt = (ms) => ms.toFixed(ms < 10 ? 2 : 1);

function printTable(columns, rows) {
  const cells = rows.map((r) => columns.map(([, f]) => f(r)));
  const widths = columns.map(([h], i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (vals) => vals.map((v, i) => (i === 0 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  ');
  console.log(line(columns.map(([h]) => h)));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const c of cells) console.log(line(c));
}

function report(db, results, matches, plans) {
  console.log(`\n== ${db.name}: ${db.users.toLocaleString('en-US')} users ==\n`);
  printTable(
    [
      ['layer', (r) => r.layer],
      ['calls', (r) => String(r.n)],
      ['p50 ms', (r) => fmt(r.p50)],
      ['p99 ms', (r) => fmt(r.p99)],
      ['max ms', (r) => fmt(r.max)],
      [`p99 < ${TARGETS.p99Ms} ms`, (r) => verdict(r.p99 < TARGETS.p99Ms)],
    ],
    results.map((r) => ({ layer: r.layer, ...stats(r.samples) })),
  );

  // Which kinds of search cost what, and how many rows they match (the list's total). Too few
  // calls per kind for a p99: the median and the worst call instead.
  console.log('');
  const categories = [...new Set(results[0].samples.map((s) => s.category))];
  printTable(
    [
      ['searches', (c) => c],
      ['n', (c) => String(new Set(results[0].samples.filter((s) => s.category === c).map((s) => s.search)).size)],
      [
        'matches min-max',
        (c) => {
          const m = [...matches.entries()].filter(([, v]) => v.category === c).map(([, v]) => v.total);
          return `${Math.min(...m)}-${Math.max(...m)}`;
        },
      ],
      ...results.map((r) => [
        `${r.short} p50 / max ms`,
        (c) => {
          const st = stats(r.samples.filter((s) => s.category === c));
          return `${fmt(st.p50)} / ${fmt(st.max)}`;
        },
      ]),
    ],
    categories,
  );

  for (const r of results) {
    const worst = [...r.samples].sort((a, b) => b.ms - a.ms);
    const seen = new Set();
    const top = worst.filter((s) => !seen.has(s.search) && seen.add(s.search)).slice(0, 5);
    console.log(
      `\nslowest ${r.layer} (${r.rounds} round${r.rounds === 1 ? '' : 's'}): ` +
        top.map((s) => `"${s.search}" ${fmt(s.ms)} ms (${matches.get(s.search).total} matches)`).join(', '),
    );
  }

  const lookupSql = plans.find((p) => p.label === 'lookup')?.sql;
  if (lookupSql) console.log(`\nlookup SQL: ${lookupSql}`);
  for (const p of plans) {
    console.log(`\n${p.title}`);
    for (const l of p.plan.lines) console.log(`  ${l}`);
    console.log(`  -> indexes: ${p.plan.indexes.join(', ') || 'none'}${p.plan.scans ? `; ${p.plan.scans} full scan(s) of users` : ''}`);
  }
}

// ---- main --------------------------------------------------------------------------------------

async function benchDatabase(db, opts, searches, dataDir, secret, cleanups) {
  process.stdout.write(`[${db.name}] migrating and seeding ${opts.users.toLocaleString('en-US')} users… `);
  const app = await startCashtrack({ dbUrl: db.url, dataDir, secret });
  cleanups.unshift(app.close);
  const seedStart = Date.now();
  // Generated again for each database (the same users), so they are garbage while measuring.
  await seedUsers(app.ctx, generateUsers(opts.users));
  if (app.ctx.db.dialect === 'mysql') {
    // What InnoDB's background statistics update would do shortly after such a load.
    await app.ctx.db.select('ANALYZE TABLE users');
  } else if (opts.analyze) {
    await app.ctx.db.select('ANALYZE');
  }
  const [{ n }] = await app.ctx.db.select('SELECT COUNT(*) AS n FROM users');
  db.users = Number(n);
  console.log(`${((Date.now() - seedStart) / 1000).toFixed(1)} s`);

  // How selective each search is, and a check that lookup and list agree on what matches.
  const matches = new Map();
  for (const s of searches) {
    const list = await withTimeout(app.ctx.users.list({ search: s.search, page: 1, per_page: 20 }), CALL_TIMEOUT_MS, `list "${s.search}"`);
    matches.set(s.search, { category: s.category, total: list.total });
    const found = (await app.ctx.users.lookup(s.search)).items.length;
    if (found !== Math.min(20, list.total) && s.search.trim() === s.search) {
      throw new Error(`lookup "${s.search}" found ${found} users where list counts ${list.total}`);
    }
  }

  const results = [];
  for (const layer of layers(app)) {
    process.stdout.write(`[${db.name}] ${layer.name}… `);
    const r = await measureLayer(layer, searches, opts.rounds);
    results.push(r);
    console.log(`p99 ${fmt(stats(r.samples).p99)} ms`);
  }

  // Plans of the statements the services really send: a broad prefix, the slowest search of the
  // layer, and a miss.
  const slowest = (name) => [...results.find((r) => r.layer === name).samples].sort((a, b) => b.ms - a.ms)[0].search;
  const plans = await queryPlans(app.ctx.db, [
    { label: 'lookup', searches: ['ma', slowest('lookup (service)'), 'zzq'], run: async (s) => (await app.ctx.users.lookup(s)).items },
    { label: 'list', searches: ['ma', slowest('list (service)'), 'zzq'], run: (s) => app.ctx.users.list({ search: s, page: 1, per_page: 20 }) },
  ]);
  await app.close();
  cleanups.splice(cleanups.indexOf(app.close), 1);
  return { results, matches, plans };
}

async function main() {
  const opts = parseOptions(process.argv.slice(2), process.env);
  const tmp = mkdtempSync(join(tmpdir(), 'cashtrack-bench-'));
  const secret = randomBytes(24).toString('hex');
  const cleanups = [() => rmSync(tmp, { recursive: true, force: true })];
  const notes = [];
  // Missed targets are reported, not an exit status; a run that could not measure is.
  let failed = false;
  const dataDir = join(tmp, 'data');
  mkdirSync(dataDir);

  // Once, whether the run ends or a signal stops it: both wait for the same cleanup.
  let cleaning = null;
  const runCleanups = () =>
    (cleaning ??= (async () => {
      for (const cleanup of cleanups) {
        try {
          await cleanup();
        } catch (err) {
          console.error(`cleanup failed: ${err.message}`);
        }
      }
    })());
  const onSignal = (signal) => {
    interrupted = true;
    console.error(`\n${signal}: stopping`);
    runCleanups().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const searches = generateSearches(generateUsers(opts.users));
  console.log(
    `cashtrack bench:lookup: ${searches.length} searches x ${opts.rounds} round(s) per layer (after a warm-up pass), ` +
      `sequential, in process; target p99 < ${TARGETS.p99Ms} ms (our own bar: the issue gives none)`,
  );
  console.log(
    `statistics: SQLite ${opts.analyze ? 'with ANALYZE (--analyze)' : 'without ANALYZE, as cashtrack leaves it'}; MariaDB after ANALYZE TABLE users\n`,
  );
  const verdicts = [];
  try {
    const databases = [];
    if (opts.only !== 'mysql') databases.push({ name: 'sqlite', url: `sqlite:${join(tmp, 'bench.sqlite')}` });
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

    for (const db of databases) {
      const { results, matches, plans } = await benchDatabase(db, opts, searches, dataDir, secret, cleanups);
      report(db, results, matches, plans);
      for (const r of results) verdicts.push({ db: db.name, layer: r.layer, p99: stats(r.samples).p99 });
    }

    console.log('');
    for (const v of verdicts) {
      console.log(
        `${v.db.padEnd(6)}  ${v.layer.padEnd(18)}  p99 = ${fmt(v.p99).padStart(6)} ms (target < ${TARGETS.p99Ms} ms): ${verdict(v.p99 < TARGETS.p99Ms)}`,
      );
    }
    for (const note of notes) console.log(note);
  } finally {
    await runCleanups();
  }
  return failed ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    if (interrupted) return;
    console.error(`\nbench:lookup failed: ${err instanceof UsageError ? err.message : (err.stack ?? err)}`);
    process.exitCode = 2;
  },
);
