// The AI row of `npm run bench:coupons`: a bulk AI rewrite of 1,000 coupons (an `ai.bulk` job run
// by a job runner, as the daemon runs it) against the OpenAI-compatible fixture answering each
// call in 200 ms, on SQLite and on MariaDB. Throughput target: within 10% of the ideal,
// concurrency / 0.2 s. `bench/coupons.js` imports `benchCouponsAi`; it also runs alone:
// `tsc -p tsconfig.bench.json && node bench/coupons-ai.js [--coupons N] [--concurrency C] [--delay-ms D] [--only sqlite|mysql]`.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMysqlDatabase } from './ledger-db.js';
import { median, dialectsToRun } from './lib/fresh-db.js';

const TARGET_SHARE = 0.9;

/** Inserts `n` coupons of network `aibench` in multi-row statements. */
async function seedCoupons(ctx, n) {
  const now = new Date();
  const cols = [
    'network',
    'advertiser',
    'coupon_id',
    'code',
    'title',
    'description',
    'discount_type',
    'discount_value',
    'discount_text',
    'regions',
    'status',
    'last_seen_refresh',
    'created_at',
    'updated_at',
  ];
  for (let from = 0; from < n; from += 500) {
    const rows = [];
    for (let i = from; i < Math.min(n, from + 500); i++)
      rows.push([
        'aibench',
        String(1000 + (i % 50)),
        `ai-${i}`,
        `SAVE${i}`,
        `Offer ${i}: ten percent off`,
        `Ten percent off everything, offer ${i}.`,
        'percent',
        '10',
        '10%',
        '[]',
        'active',
        0,
        now,
        now,
      ]);
    await ctx.db.execute(`INSERT INTO coupons (${cols.join(', ')}) VALUES ${rows.map(() => `(${cols.map(() => '?').join(', ')})`).join(', ')}`, rows.flat());
  }
}

/**
 * What the machine allows: bare `fetch` calls at the same concurrency against the same fixture, no
 * SDK and no database. On a loaded machine timers fire late and this falls below the ideal too;
 * the distance between it and a dialect's row is what cashtrack itself costs.
 */
async function transportBaseline(fixture, { concurrency, delayMs, calls }) {
  await fixture.reset(delayMs);
  const body = JSON.stringify({
    model: 'bench-model',
    messages: [{ role: 'user', content: 'Rewrite this coupon of Bench.' }],
    response_format: { type: 'json_object' },
  });
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < calls) {
        const res = await fetch(`${fixture.baseUrl}/chat/completions`, {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench-key' },
        });
        await res.json();
      }
    }),
  );
  return calls / (Number(process.hrtime.bigint() - started) / 1e9);
}

/** The fixture in its child process, and the calls the bench makes of it. */
async function startFixture() {
  const child = fork(new URL('./openai-fixture-child.js', import.meta.url), [], { stdio: 'inherit' });
  const ask = async (message, answer) => {
    child.send(message);
    for (;;) {
      const [reply] = await once(child, 'message');
      if (reply.type === answer) return reply;
    }
  };
  const [ready] = await once(child, 'message');
  return {
    baseUrl: ready.baseUrl,
    reset: (delayMs) => ask({ type: 'reset', delayMs }, 'ok'),
    stats: () => ask({ type: 'stats' }, 'stats'),
    close: async () => {
      child.send({ type: 'close' });
      await once(child, 'exit');
    },
  };
}

async function runOne(dialect, fixture, options) {
  const { loadConfig } = await import('../dist/src/config/index.js');
  const { buildContext, ensureSchema } = await import('../dist/src/context.js');
  const { JobRunner } = await import('../dist/src/jobs/runner.js');
  const dataDir = mkdtempSync(join(tmpdir(), 'cashtrack-bench-ai-'));
  let mysqlDb = null;
  let ctx = null;
  try {
    let dbUrl = `sqlite:${join(dataDir, 'bench.sqlite')}`;
    if (dialect === 'mysql') {
      mysqlDb = await createMysqlDatabase();
      dbUrl = mysqlDb.url;
    }
    const config = loadConfig({
      env: { CASHTRACK_ENV: 'production' },
      overrides: {
        'database.url': dbUrl,
        data_dir: dataDir,
        secret: randomBytes(24).toString('hex'),
        'server.public_url': 'http://127.0.0.1',
        'log.stdout': false,
        'ai.base_url': fixture.baseUrl,
        // The fixture listens on loopback: the outbound guard lets the provider reach it only when allowed.
        'outbound.allow': ['127.0.0.1:*'],
        'ai.api_key': 'sk-bench-key',
        'ai.model': 'bench-model',
        'ai.concurrency': options.concurrency,
        'ai.token_budget': 0,
        'ai.timeout_ms': 30_000,
      },
    });
    ctx = buildContext(config, { logStream: null });
    await ensureSchema(ctx, true);
    await seedCoupons(ctx, options.coupons);
    await fixture.reset(options.delayMs);
    const runner = new JobRunner({ ctx, jobs: ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 50 });
    const started = process.hrtime.bigint();
    const job = await ctx.ai.startBulk({ kind: 'coupons', filter: { network: 'aibench' }, overwrite: false }, 'bench');
    await runner.runPending();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const done = await ctx.jobs.get(job.id);
    if (done.status !== 'done') throw new Error(`the ai.bulk job ended ${done.status}: ${done.error ?? ''}`);
    const perS = done.result.saved / seconds;
    const ideal = options.concurrency / (options.delayMs / 1000);
    const stats = await fixture.stats();
    return {
      dialect,
      items: done.result.saved,
      failed: done.result.failed,
      seconds,
      per_s: perS,
      ideal_per_s: ideal,
      max_in_flight: stats.maxInFlight,
      pass: perS >= ideal * TARGET_SHARE,
    };
  } finally {
    await ctx?.close().catch(() => {});
    await mysqlDb?.drop().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Runs the bulk AI rewrite on each reachable dialect and answers one row per dialect:
 * `{dialect, items, seconds, per_s, ideal_per_s, pass}` (plus `failed`, `max_in_flight`).
 */
export async function benchCouponsAi({ coupons = 1000, concurrency = 10, delayMs = 200, only = null, log = (line) => console.log(line) } = {}) {
  const fixture = await startFixture();
  const rows = [];
  try {
    const baseline = await transportBaseline(fixture, { concurrency, delayMs, calls: Math.min(coupons, 300) });
    log(`transport baseline (bare fetch, no SDK, no database): ${baseline.toFixed(1)} calls/s`);
    for (const dialect of await dialectsToRun(only, { say: log })) {
      log(`[${dialect}] bulk AI rewrite of ${coupons.toLocaleString('en')} coupons at concurrency ${concurrency}, ${delayMs} ms a call…`);
      rows.push({ ...(await runOne(dialect, fixture, { coupons, concurrency, delayMs })), baseline_per_s: baseline });
    }
  } finally {
    await fixture.close();
  }
  return rows;
}

/** The rows as a table. */
export function printCouponsAi(rows, log = (line) => console.log(line)) {
  log('db      items  failed  seconds  per s  ideal per s  bare fetch per s  max in flight  within 10%');
  for (const r of rows) {
    log(
      `${r.dialect.padEnd(6)}  ${String(r.items).padStart(5)}  ${String(r.failed).padStart(6)}  ${r.seconds.toFixed(1).padStart(7)}  ${r.per_s.toFixed(1).padStart(5)}  ${r.ideal_per_s.toFixed(1).padStart(11)}  ${r.baseline_per_s.toFixed(1).padStart(16)}  ${String(r.max_in_flight).padStart(13)}  ${(r.pass ? 'PASS' : 'FAIL').padStart(10)}`,
    );
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const arg = (name, fallback) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : fallback;
  };
  const rows = await benchCouponsAi({
    coupons: Number(arg('coupons', 1000)),
    concurrency: Number(arg('concurrency', 10)),
    delayMs: Number(arg('delay-ms', 200)),
    only: arg('only', null),
  });
  console.log('');
  printCouponsAi(rows);
  process.exitCode = rows.every((r) => r.pass) ? 0 : 1;
}

/**
 * What `bench/coupons.js` calls: `runs` runs per dialect, and per dialect one row with the median
 * throughput in its table's shape (`name`, `value`, `unit`, `target`) as well as this bench's own
 * fields (`items`, `seconds`, `per_s`, `ideal_per_s`, `pass`).
 */
export default async function runAi({ runs = 1, only = null, coupons = 1000, concurrency = 10, delayMs = 200 } = {}) {
  const all = [];
  for (let i = 0; i < runs; i++) all.push(...(await benchCouponsAi({ coupons, concurrency, delayMs, only })));
  return [...new Set(all.map((r) => r.dialect))].map((dialect) => {
    const mine = all.filter((r) => r.dialect === dialect);
    const perS = median(mine.map((r) => r.per_s));
    const ideal = mine[0].ideal_per_s;
    return {
      name: `bulk AI rewrite of ${coupons.toLocaleString('en')} coupons (${delayMs} ms a call, concurrency ${concurrency})`,
      dialect,
      value: perS,
      unit: '/s',
      target: `>= ${(ideal * TARGET_SHARE).toFixed(1)} /s`,
      items: mine[0].items,
      seconds: median(mine.map((r) => r.seconds)),
      per_s: perS,
      ideal_per_s: ideal,
      baseline_per_s: median(mine.map((r) => r.baseline_per_s)),
      pass: perS >= ideal * TARGET_SHARE,
    };
  });
}
