// `npm run bench:coupons`: refresh 100,000 coupons from the Admitad fixture network (paged as
// Admitad pages: limit/offset, 500 a page) into an empty database, then refresh again after 1% of
// them changed, on SQLite and on MariaDB, three times each (a fresh database every run); prints
// the median time of each refresh and the median peak RSS of the refreshing process.
// Targets: first refresh under 30 s and 300 MB; second (1% changed) under 5 s.
//
// The AI half of the benchmark (a bulk AI rewrite of 1,000 coupons) lives in bench/coupons-ai.js
// when the AI part is installed: its default export, `async ({ runs, only }) => rows`, answers
// rows `{ name, dialect, value, unit, target, pass }` printed in the same table.
import { existsSync } from 'node:fs';
import { median, dialectsToRun, runOnFreshDatabase } from './lib/fresh-db.js';
import { argReader } from './lib/args.js';

const arg = argReader();
const COUPONS = Number(arg('coupons', 100_000));
const RUNS = Number(arg('runs', 3));
const only = arg('only', null);
const CHANGED_EVERY = 100;

const { startAdmitadFixture } = await import('../dist/test/fixtures/networks/admitad.js');

function runOne(dialect, fixture, run) {
  fixture.setCouponRevision(() => 0);
  return runOnFreshDatabase(
    dialect,
    new URL('./coupons-child.js', import.meta.url),
    { settings: fixture.settings },
    {
      timeoutMs: 600_000,
      onMessage: (m, child) => {
        if (m.type !== 'first') return;
        // 1% of the coupons change at the network between the two refreshes.
        fixture.setCouponRevision((i) => (i % CHANGED_EVERY === 0 ? run + 1 : 0));
        child.send({ type: 'go' });
      },
    },
  );
}

const start = new Date(Date.now() - 86_400_000).toISOString().slice(0, 19);
const end = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 19);
const fixture = await startAdmitadFixture({ coupons: COUPONS, campaigns: 1_000, couponDates: { start, end } });
const rows = [];
try {
  for (const dialect of await dialectsToRun(only)) {
    const runs = [];
    for (let run = 0; run < RUNS; run++) {
      process.stdout.write(`[${dialect}] run ${run + 1}/${RUNS}: refreshing ${COUPONS.toLocaleString('en')} coupons twice… `);
      const r = await runOne(dialect, fixture, run);
      const expected = COUPONS / CHANGED_EVERY;
      if (r.first.result.created !== COUPONS || r.second.result.updated !== Math.ceil(expected) || r.stored !== COUPONS) {
        throw new Error(
          `[${dialect}] unexpected counts: first ${JSON.stringify(r.first.result)}, second ${JSON.stringify(r.second.result)}, stored ${r.stored}`,
        );
      }
      console.log(`${r.first.seconds.toFixed(1)} s, ${r.second.seconds.toFixed(1)} s, ${r.maxRssMb.toFixed(0)} MB`);
      runs.push(r);
    }
    const first = median(runs.map((r) => r.first.seconds));
    const second = median(runs.map((r) => r.second.seconds));
    const rss = median(runs.map((r) => r.maxRssMb));
    rows.push(
      { name: `refresh ${COUPONS.toLocaleString('en')} coupons (empty database)`, dialect, value: first, unit: 's', target: '< 30 s', pass: first < 30 },
      { name: 'peak RSS of that refresh', dialect, value: rss, unit: 'MB', target: '< 300 MB', pass: rss < 300 },
      { name: `second refresh, ${100 / CHANGED_EVERY}% changed`, dialect, value: second, unit: 's', target: '< 5 s', pass: second < 5 },
    );
  }
} finally {
  await fixture.close();
}

// The AI part's rows, when it is installed (see the header).
const ai = new URL('./coupons-ai.js', import.meta.url);
if (existsSync(ai)) {
  const { default: runAi } = await import(ai.href);
  rows.push(...(await runAi({ runs: RUNS, only })));
}

console.log(`\ncoupons from the Admitad fixture (500 a page), each refresh in its own process; median of ${RUNS} run(s)`);
console.log(`${'measure'.padEnd(48)}  ${'db'.padEnd(6)}  ${'median'.padStart(10)}  ${'target'.padEnd(16)}  result`);
for (const r of rows) {
  const value = `${r.value.toFixed(r.unit === 'MB' ? 0 : 2)} ${r.unit}`;
  console.log(`${r.name.padEnd(48)}  ${r.dialect.padEnd(6)}  ${value.padStart(10)}  ${String(r.target).padEnd(16)}  ${r.pass ? 'PASS' : 'FAIL'}`);
}
if (rows.some((r) => !r.pass)) process.exitCode = 1;
