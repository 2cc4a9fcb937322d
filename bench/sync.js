// `npm run bench:sync`: sync 100,000 advertisers from the Admitad fixture network (paged as
// Admitad pages: limit/offset, at most 500 a page), on SQLite and on MariaDB; prints the time and
// the peak memory of the syncing process. Targets: under 30 s, peak RSS under 300 MB.
import { dialectsToRun, runOnFreshDatabase } from './lib/fresh-db.js';
import { argReader } from './lib/args.js';

const arg = argReader();
const ADVERTISERS = Number(arg('advertisers', 100_000));
const only = arg('only', null);
const TIME_TARGET_S = 30;
const RSS_TARGET_MB = 300;

const { startAdmitadFixture } = await import('../dist/test/fixtures/networks/admitad.js');

function runOne(dialect, fixture) {
  return runOnFreshDatabase(dialect, new URL('./sync-child.js', import.meta.url), { settings: fixture.settings });
}

const fixture = await startAdmitadFixture({ advertisers: ADVERTISERS });
const rows = [];
try {
  for (const dialect of await dialectsToRun(only)) {
    process.stdout.write(`[${dialect}] syncing ${ADVERTISERS.toLocaleString('en')} advertisers… `);
    const r = await runOne(dialect, fixture);
    console.log('done');
    rows.push({ dialect, ...r });
  }
} finally {
  await fixture.close();
}

console.log(`\nadvertiser sync from the Admitad fixture (${ADVERTISERS.toLocaleString('en')} advertisers, 500 a page), in its own process`);
console.log('db      seconds  peak RSS MB  pages  created  failed  stored  time < 30 s  RSS < 300 MB');
for (const r of rows) {
  const pass = (ok) => (ok ? 'PASS' : 'FAIL');
  console.log(
    `${r.dialect.padEnd(6)}  ${r.seconds.toFixed(1).padStart(7)}  ${r.maxRssMb.toFixed(0).padStart(11)}  ${String(r.result.pages).padStart(5)}  ${String(r.result.created).padStart(7)}  ${String(r.result.failed).padStart(6)}  ${String(r.stored).padStart(6)}  ${pass(r.seconds < TIME_TARGET_S).padStart(11)}  ${pass(r.maxRssMb < RSS_TARGET_MB).padStart(12)}`,
  );
}
