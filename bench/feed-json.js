// `npm run bench:feed`: sync a custom network's 200 MB JSON advertiser feed, generated as it is read
// by a feed server on 127.0.0.1 in this process, on SQLite and on MariaDB, three times each (a fresh
// database every run, the syncing side in its own process); prints the median time, peak RSS and
// longest event-loop stall of the syncing process. Target: peak RSS under 300 MB whatever the feed's
// size (JSON.parse of a 120 MB feed took the daemon to 3.4 GB), and no stall near a health probe's
// patience (/healthz must answer within 200 ms).
import http from 'node:http';
import { median, dialectsToRun, runOnFreshDatabase } from './lib/fresh-db.js';
import { argReader } from './lib/args.js';

const arg = argReader();
const MB = Number(arg('mb', 200));
const RUNS = Number(arg('runs', 3));
const only = arg('only', null);
const RSS_TARGET_MB = 300;

// About 2 KB a record, as a network's programme with its description: 200 MB is about 100,000.
const ABOUT = 'Tea, coffee and everything around them, shipped from our own roastery every week. '.repeat(20);
const record = (i) =>
  JSON.stringify({
    id: `P${i}`,
    name: `Shop ${i}`,
    url: `https://shop${i}.example.test/`,
    logo: `https://cdn.example.test/logos/${i}.png`,
    pay: { type: 'percent', min: '4', max: String(4 + (i % 7)) },
    cats: ['Food & Drink', 'Home'],
    geo: 'DE,AT,CH',
    state: i % 50 === 0 ? 'paused' : 'joined',
    about: ABOUT,
  });
// The shortest record: the feed is at least MB megabytes.
const RECORD_BYTES = Buffer.byteLength(record(0)) + 1;
// Decimal megabytes: 200 MB is just under the feed cap of 200 MiB.
const RECORDS = Math.ceil((MB * 1e6) / RECORD_BYTES);

/** Writes the document as the reader takes it (never more than the socket accepts). */
function startFeed() {
  let sent = 0;
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    sent = 0;
    let i = 0;
    const write = (text) => {
      sent += Buffer.byteLength(text);
      return res.write(text);
    };
    const pump = () => {
      if (i === 0) write('{"meta":{"source":"bench"},"data":{"programs":[');
      while (i < RECORDS) {
        const batch = [];
        for (const end = Math.min(RECORDS, i + 100); i < end; i++) batch.push(record(i));
        if (!write((i > 100 ? ',' : '') + batch.join(','))) return void res.once('drain', pump);
      }
      write(']}}');
      res.end();
    };
    res.on('error', () => {});
    pump();
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ url: `http://127.0.0.1:${server.address().port}/programs.json`, sent: () => sent, close: () => new Promise((r) => server.close(r)) }),
    ),
  );
}

const feed = await startFeed();
const rows = [];
try {
  for (const dialect of await dialectsToRun(only)) {
    const runs = [];
    for (let run = 0; run < RUNS; run++) {
      process.stdout.write(`[${dialect}] run ${run + 1}/${RUNS}: syncing a ${MB} MB JSON feed (${RECORDS.toLocaleString('en')} advertisers)… `);
      const r = await runOnFreshDatabase(dialect, new URL('./feed-json-child.js', import.meta.url), { feedUrl: feed.url }, { timeoutMs: 900_000 });
      if (r.result.seen !== RECORDS || r.stored !== RECORDS || feed.sent() < MB * 1e6)
        throw new Error(`[${dialect}] unexpected: ${JSON.stringify(r.result)}, stored ${r.stored}, ${feed.sent()} bytes sent`);
      console.log(`${r.seconds.toFixed(1)} s, peak RSS ${r.maxRssMb.toFixed(0)} MB, longest stall ${r.maxStallMs.toFixed(0)} ms`);
      runs.push(r);
    }
    const rss = median(runs.map((r) => r.maxRssMb));
    rows.push({ dialect, seconds: median(runs.map((r) => r.seconds)), rss, stall: median(runs.map((r) => r.maxStallMs)), pass: rss < RSS_TARGET_MB });
  }
} finally {
  await feed.close();
}

console.log(
  `\na custom network's ${MB} MB JSON advertiser feed (${RECORDS.toLocaleString('en')} records, 500 a page), synced in its own process; median of ${RUNS} run(s)`,
);
console.log(`db      seconds  peak RSS MB  longest stall ms  RSS < ${RSS_TARGET_MB} MB`);
for (const r of rows) {
  console.log(
    `${r.dialect.padEnd(6)}  ${r.seconds.toFixed(1).padStart(7)}  ${r.rss.toFixed(0).padStart(11)}  ${r.stall.toFixed(0).padStart(16)}  ${(r.pass ? 'PASS' : 'FAIL').padStart(12)}`,
  );
}
if (rows.some((r) => !r.pass)) process.exitCode = 1;
