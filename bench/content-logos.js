// The logo half of `npm run bench:content`: a bulk logo fetch (`logos.bulk`) of 1,000 advertisers
// from a local fixture web: 20 sites on 127.0.0.1 (20 hosts, one port each, reached through
// `outbound.allow`), each answering with a distinct PNG per logo after a small delay, at the
// default concurrency (8 advertisers, at most 2 requests per host). The fetching runs in its own
// process (bench/content-logos-child.js) so its peak RSS is its own; SQLite and MariaDB.
// Target: 1,000 logos in under 30 s. Needs a build (`npm run build`).
//
// `node bench/content-logos.js [--logos N] [--hosts N] [--latency-ms N] [--only sqlite|mysql]`,
// or `import { runLogos } from './content-logos.js'` (bench/content.js does) for the rows.
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { dialectsToRun, runOnFreshDatabase } from './lib/fresh-db.js';

export const LOGOS_TARGET_S = 30;

/** Distinct logos (a colour and a stripe per index), made once before anything is timed. */
async function makeLogos(count) {
  const logos = [];
  for (let i = 0; i < count; i++) {
    const stripe = Buffer.from(
      `<svg width="240" height="120"><rect x="${(i * 7) % 200}" y="0" width="40" height="120" fill="#${((i * 2654435761) >>> 8).toString(16).padStart(6, '0').slice(0, 6)}"/></svg>`,
    );
    logos.push(
      await sharp({ create: { width: 240, height: 120, channels: 4, background: { r: i % 256, g: (i * 3) % 256, b: (i * 7) % 256, alpha: 1 } } })
        .composite([{ input: stripe }])
        .png()
        .toBuffer(),
    );
  }
  return logos;
}

/** The fixture web: `hosts` servers, each serving `/logo/<i>.png` after `latencyMs`; counts requests at once per host. */
async function startSites(logos, hosts, latencyMs) {
  const sites = [];
  for (let h = 0; h < hosts; h++) {
    const site = { origin: '', peak: 0, active: 0, served: 0 };
    const server = createServer((req, res) => {
      site.active++;
      site.peak = Math.max(site.peak, site.active);
      res.on('close', () => site.active--);
      const m = /^\/logo\/(\d+)\.png$/.exec(req.url ?? '');
      const body = m ? logos[Number(m[1])] : undefined;
      setTimeout(() => {
        if (!body) return void res.writeHead(404).end();
        site.served++;
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': body.length }).end(body);
      }, latencyMs);
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    site.origin = `http://127.0.0.1:${server.address().port}`;
    site.close = () => new Promise((resolve) => server.close(resolve));
    sites.push(site);
  }
  return sites;
}

function runOne(dialect, urls) {
  return runOnFreshDatabase(dialect, new URL('./content-logos-child.js', import.meta.url), { urls });
}

/**
 * Runs the bulk logo fetch on each dialect and returns one row per dialect:
 * `{dialect, logos, seconds, logos_per_s, peak_rss_mb, target, pass}` (plus `fetched`, `failed`,
 * `stored`, `peak_per_host`).
 */
export async function runLogos(options = {}) {
  const count = options.logos ?? 1000;
  const hosts = options.hosts ?? 20;
  const latencyMs = options.latencyMs ?? 20;
  const log = options.log ?? ((line) => process.stdout.write(line));
  const logos = await makeLogos(count);
  const rows = [];
  for (const dialect of await dialectsToRun(options.only, { say: (text) => log(`${text}\n`), what: 'logos ' })) {
    // Fresh sites per dialect, so that the per-host peaks are this run's.
    const sites = await startSites(logos, hosts, latencyMs);
    try {
      const urls = logos.map((_, i) => `${sites[i % hosts].origin}/logo/${i}.png`);
      log(`[${dialect}] fetching ${count.toLocaleString('en')} logos from ${hosts} hosts… `);
      const r = await runOne(dialect, urls);
      log('done\n');
      rows.push({
        dialect,
        logos: count,
        seconds: r.seconds,
        logos_per_s: r.result.fetched / r.seconds,
        peak_rss_mb: r.maxRssMb,
        target: `< ${LOGOS_TARGET_S} s`,
        pass: r.seconds < LOGOS_TARGET_S && r.result.fetched === count,
        fetched: r.result.fetched,
        failed: r.result.failed,
        stored: r.stored,
        peak_per_host: Math.max(...sites.map((s) => s.peak)),
      });
    } finally {
      await Promise.all(sites.map((s) => s.close()));
    }
  }
  return rows;
}

export function printLogoRows(rows, count = rows[0]?.logos ?? 1000) {
  console.log(`\nbulk logo fetch (${count.toLocaleString('en')} logos, 20 hosts, default concurrency: 8 at once, 2 per host), in its own process`);
  console.log('db      logos  seconds  logos/s  peak RSS MB  fetched  failed  stored  peak/host  time < 30 s');
  for (const r of rows) {
    console.log(
      `${r.dialect.padEnd(6)}  ${String(r.logos).padStart(5)}  ${r.seconds.toFixed(1).padStart(7)}  ${r.logos_per_s.toFixed(1).padStart(7)}  ${r.peak_rss_mb.toFixed(0).padStart(11)}  ${String(r.fetched).padStart(7)}  ${String(r.failed).padStart(6)}  ${String(r.stored).padStart(6)}  ${String(r.peak_per_host).padStart(9)}  ${(r.pass ? 'PASS' : 'FAIL').padStart(11)}`,
    );
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const arg = (name, fallback) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : fallback;
  };
  const rows = await runLogos({
    logos: Number(arg('logos', 1000)),
    hosts: Number(arg('hosts', 20)),
    latencyMs: Number(arg('latency-ms', 20)),
    only: arg('only', null),
  });
  printLogoRows(rows);
  if (rows.some((r) => !r.pass)) process.exitCode = 1;
}

/**
 * `bench/content.js`'s hook: the logo rows of its one table, each the median of `tools.runs` runs
 * per dialect it measures.
 */
export async function run(tools) {
  const rows = [];
  for (const dialect of tools.dialects) {
    const runs = [];
    for (let i = 0; i < tools.runs; i++) runs.push(...(await runLogos({ only: dialect, log: () => {} })));
    if (runs.length === 0) continue;
    const seconds = tools.median(runs.map((r) => r.seconds));
    const peakRssMb = tools.median(runs.map((r) => r.peak_rss_mb));
    const fetchedAll = runs.every((r) => r.fetched === r.logos);
    rows.push({
      part: `logos (${runs[0].logos.toLocaleString('en')}, 20 hosts)`,
      dialect,
      seconds,
      peakRssMb,
      rate: runs[0].logos / seconds,
      rateUnit: 'logos/s',
      detail: `${runs.length} runs; peak ${Math.max(...runs.map((r) => r.peak_per_host))} per host; ${fetchedAll ? 'all fetched' : 'some failed'}`,
      targets: [{ name: `< ${LOGOS_TARGET_S} s`, pass: seconds < LOGOS_TARGET_S && fetchedAll }],
    });
  }
  return rows;
}
