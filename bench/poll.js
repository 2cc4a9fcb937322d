// `npm run bench:poll`: the order poll path. Polls N conversions from the Admitad fixture network
// (its statistics API, 500 a page) on a fresh database per run, twice: the first poll creates every
// order, the second reads them all again and changes nothing. Prints orders per second of each,
// the median of the runs. With `--before DIR` (another checkout, built) every run is paired: the
// same fixture, DIR's dist and this one's (alternating which goes first), so a change can be shown to be no slower.
//
//   node bench/poll.js [--actions 20000] [--runs 3] [--only sqlite|mysql] [--before DIR]
import { resolve } from 'node:path';
import { median, dialectsToRun, runOnFreshDatabase } from './lib/fresh-db.js';
import { argReader } from './lib/args.js';

const args = process.argv.slice(2);
const known = new Set(['actions', 'runs', 'only', 'before']);
for (let i = 0; i < args.length; i += 2) {
  if (!args[i].startsWith('--') || !known.has(args[i].slice(2)) || args[i + 1] === undefined) {
    console.error(`usage: node bench/poll.js [--actions N] [--runs N] [--only sqlite|mysql] [--before DIR] (got ${args[i]})`);
    process.exit(2);
  }
}
const arg = argReader(args);
const ACTIONS = Number(arg('actions', 20_000));
const RUNS = Number(arg('runs', 3));
const only = arg('only', null);
const before = arg('before', null);
if (!Number.isInteger(ACTIONS) || ACTIONS < 1 || !Number.isInteger(RUNS) || RUNS < 1 || (only && !['sqlite', 'mysql'].includes(only))) {
  console.error('--actions and --runs take positive integers, --only sqlite or mysql');
  process.exit(2);
}

const { startAdmitadFixture } = await import('../dist/test/fixtures/networks/admitad.js');
const DAY = 86_400_000;
const now = Date.now();
const fixture = await startAdmitadFixture({ actions: ACTIONS, actionsFrom: new Date(now - 10 * DAY), actionsTo: new Date(now - DAY) });
const trees = before
  ? [
      ['before', resolve(before)],
      ['after', null],
    ]
  : [['this', null]];
const results = new Map();
try {
  for (const dialect of await dialectsToRun(only)) {
    for (let run = 1; run <= RUNS; run++) {
      // Paired runs alternate which tree goes first, so neither always meets a warmer fixture.
      for (const [tree, root] of run % 2 ? trees : [...trees].reverse()) {
        const r = await runOnFreshDatabase(dialect, new URL('./poll-child.js', import.meta.url), {
          settings: fixture.settings,
          since: new Date(now - 11 * DAY).toISOString(),
          ...(root ? { root } : {}),
        });
        if (r.stored !== ACTIONS) throw new Error(`${tree} stored ${r.stored} orders of ${ACTIONS}`);
        const key = `${dialect} ${tree}`;
        results.set(key, [...(results.get(key) ?? []), r]);
        console.log(`[${key}] run ${run}: first poll ${(ACTIONS / r.first).toFixed(0)} orders/s, again ${(ACTIONS / r.again).toFixed(0)} orders/s`);
      }
    }
  }
} finally {
  await fixture.close();
}

console.log(`\norder poll from the Admitad fixture (${ACTIONS.toLocaleString('en')} conversions, 500 a page), orders per second, median of ${RUNS}`);
console.log('db      tree     first poll   poll again   runs (first)');
for (const [key, runs] of results) {
  const [dialect, tree] = key.split(' ');
  const first = median(runs.map((r) => ACTIONS / r.first));
  const again = median(runs.map((r) => ACTIONS / r.again));
  console.log(
    `${dialect.padEnd(6)}  ${tree.padEnd(6)}  ${first.toFixed(0).padStart(11)}  ${again.toFixed(0).padStart(11)}   ${runs.map((r) => (ACTIONS / r.first).toFixed(0)).join(', ')}`,
  );
}
if (before) {
  for (const dialect of ['sqlite', 'mysql']) {
    const b = results.get(`${dialect} before`);
    const a = results.get(`${dialect} after`);
    if (!a || !b) continue;
    const ratio = (pick) => median(a.map((r) => ACTIONS / pick(r))) / median(b.map((r) => ACTIONS / pick(r)));
    console.log(`${dialect}: after/before ${ratio((r) => r.first).toFixed(2)} (first poll), ${ratio((r) => r.again).toFixed(2)} (again)`);
  }
}
