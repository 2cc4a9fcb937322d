// `npm run bench:content`: shop content at scale, on SQLite and on MariaDB, each run in its own
// process on a fresh database; prints one table with the median of 3 runs and a pass/fail column
// per target.
//
// Pages (this file): the `pages.bulk` job making a page for each of 10,000 advertisers (seeding is
// not timed). Targets: under 20 s and a peak RSS under 300 MB.
//
// Other parts add their rows from their own file: when `bench/content-logos.js` exists, it is
// imported and its `run(tools)` is awaited; it returns rows shaped like `pageRows` returns them
// ({ part, dialect, seconds, peakRssMb, rate, rateUnit, detail, targets: [{ name, pass }] }) and
// gets `tools` = { dialects, runs, median, args }.
//
// Options: --advertisers N (10000), --runs N (3), --only sqlite|mysql. MariaDB is found through
// CASHTRACK_BENCH_MYSQL_URL, else CASHTRACK_TEST_MYSQL_URL, else mysql://root@127.0.0.1:3306/test;
// a temporary ct_bench_* database is created there per run and dropped.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { median, dialectsToRun, runOnFreshDatabase } from './lib/fresh-db.js';
import { argReader } from './lib/args.js';

const args = process.argv.slice(2);
const arg = argReader(args);
const ADVERTISERS = Number(arg('advertisers', 10_000));
const RUNS = Number(arg('runs', 3));
const only = arg('only', null);
const PAGES_TIME_TARGET_S = 20;
const RSS_TARGET_MB = 300;

function pagesRun(dialect) {
  return runOnFreshDatabase(dialect, new URL('./content-pages-child.js', import.meta.url), { advertisers: ADVERTISERS });
}

/** The pages rows: per dialect, the median of `RUNS` bulk runs. */
export async function pageRows(dialects) {
  const rows = [];
  for (const dialect of dialects) {
    const runs = [];
    for (let i = 0; i < RUNS; i++) {
      process.stdout.write(`[${dialect}] pages: ${ADVERTISERS.toLocaleString('en')} advertisers, run ${i + 1}/${RUNS}… `);
      const r = await pagesRun(dialect);
      console.log(`${r.seconds.toFixed(1)} s, ${r.maxRssMb.toFixed(0)} MB`);
      if (r.status !== 'done' || r.stored !== ADVERTISERS || r.distinctSlugs !== ADVERTISERS)
        throw new Error(
          `[${dialect}] the bulk job ended ${r.status} with ${r.stored} pages and ${r.distinctSlugs} distinct slugs (${r.error ?? JSON.stringify(r.result)})`,
        );
      runs.push(r);
    }
    const seconds = median(runs.map((r) => r.seconds));
    const peakRssMb = median(runs.map((r) => r.maxRssMb));
    rows.push({
      part: `pages.bulk ×${ADVERTISERS.toLocaleString('en')}`,
      dialect,
      seconds,
      peakRssMb,
      rate: ADVERTISERS / seconds,
      rateUnit: 'pages/s',
      detail: `${runs[0].result.created} created, ${runs[0].result.failed} failed`,
      targets: [
        { name: `< ${PAGES_TIME_TARGET_S} s`, pass: seconds < PAGES_TIME_TARGET_S },
        { name: `RSS < ${RSS_TARGET_MB} MB`, pass: peakRssMb < RSS_TARGET_MB },
      ],
    });
  }
  return rows;
}

function printTable(rows) {
  console.log(`\nshop content, median of ${RUNS} run(s) per dialect, each in its own process on a fresh database`);
  const header = ['part', 'db', 'seconds', 'peak RSS MB', 'rate', 'detail', 'targets'];
  const cells = rows.map((r) => [
    r.part,
    r.dialect,
    r.seconds.toFixed(2),
    r.peakRssMb.toFixed(0),
    `${r.rate.toFixed(0)} ${r.rateUnit}`,
    r.detail ?? '',
    r.targets.map((t) => `${t.name}: ${t.pass ? 'PASS' : 'FAIL'}`).join(', '),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (vals) =>
    vals
      .map((v, i) => v.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  console.log(line(header));
  for (const c of cells) console.log(line(c));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dialects = await dialectsToRun(only);
  const rows = await pageRows(dialects);
  // ---- other parts of the content benchmark (logos) -------------------------------------------
  const logos = new URL('./content-logos.js', import.meta.url);
  if (existsSync(logos)) {
    const mod = await import(logos.href);
    rows.push(...(await mod.run({ dialects, runs: RUNS, median, args })));
  }
  printTable(rows);
  if (rows.some((r) => r.targets.some((t) => !t.pass))) process.exitCode = 1;
}
