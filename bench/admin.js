// `npm run bench:admin`: the admin screens' budgets (issue 18), printed against their ceilings.
//
//   (a) JavaScript for sign-in + overview, gzipped, under 200 KB: read from dist/admin (the entry
//       chunk, the overview chunk and everything they import statically, each gzipped with zlib
//       as a server would send it), and cross-checked in Chromium: every script the browser loads
//       from the sign-in page to the overview rendered, gzipped the same way.
//   (b) The overview interactive within 1 s with 100,000 orders: a daemon on a seeded database,
//       headless Chromium (Debian's, no download) signed in; the time from navigation start to the
//       overview's cards rendered, with a cold cache each run. Measured for the default 30-day
//       window and for 365 days (every order in it).
//   (c) Every list interactive within 1 s (10,000 rows is the budget): the orders list on the same
//       100,000 orders, and the payouts list on 10,000 payouts (the members list shows members with a
//       ledger, which this seed has none of);
//       navigation start to the first page of rows rendered.
//   Median of 3 runs each, PASS/FAIL against the ceiling, on SQLite and on MariaDB.
//
//   node bench/admin.js [--rows 100000] [--runs 3] [--only sqlite|mysql]
//
// MariaDB: CASHTRACK_BENCH_MYSQL_URL, else CASHTRACK_TEST_MYSQL_URL, else
// mysql://root@127.0.0.1:3306/test; a fresh `ct_bench_*` database is created there and dropped.
// Chromium: CASHTRACK_CHROMIUM, else /usr/bin/chromium.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { prng } from './ledger-db.js';
import { gzipKb, initialChunks } from './lib/admin-bundle.js';
import { startDaemon } from './lib/daemon.js';
import { median } from './lib/fresh-db.js';
import { benchDatabases, insertRows, scratch } from './lib/run.js';

const JS_BUDGET_KB = 200;
const INTERACTIVE_MS = 1_000;
const MEMBERS = 10_000;
const PAYOUTS = 10_000;
const DAY = 86_400_000;
const CHROMIUM = process.env.CASHTRACK_CHROMIUM || '/usr/bin/chromium';
const DIST = fileURLToPath(new URL('../dist/admin/', import.meta.url));
const LOGIN = 'bench-admin';
const PASSWORD = randomBytes(12).toString('hex');

class UsageError extends Error {}

function parseOptions(argv, env) {
  const opts = { rows: Number(env.CASHTRACK_BENCH_ROWS ?? 100_000), runs: 3, only: env.CASHTRACK_BENCH_ONLY || null };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i];
    if (flag === '--rows') opts.rows = Number(value());
    else if (flag === '--runs') opts.runs = Number(value());
    else if (flag === '--only') opts.only = value();
    else throw new UsageError(`unknown option ${argv[i]} (use --rows N, --runs N, --only sqlite|mysql)`);
  }
  if (!Number.isInteger(opts.rows) || opts.rows < 1_000 || opts.rows > 1_000_000) throw new UsageError('--rows must be 1000-1000000');
  if (!Number.isInteger(opts.runs) || opts.runs < 1 || opts.runs > 20) throw new UsageError('--runs must be 1-20');
  if (opts.only && !['sqlite', 'mysql'].includes(opts.only)) throw new UsageError('--only must be sqlite or mysql');
  return opts;
}

// ---- seeding -----------------------------------------------------------------------------------

/**
 * `rows` orders over the last 365 days (a tenth unmatched, every 7th in EUR), 10,000 members,
 * 10,000 payouts (a tenth pending), postbacks, log errors.
 */
async function seed(ctx, rows) {
  const rand = prng(0xad317);
  const end = Date.now();
  const at = (i, n) => new Date(end - 365 * DAY + Math.floor(((i + 0.5) / n) * 365 * DAY));
  const created = new Date(end - 400 * DAY);
  await insertRows(ctx, 'users', ['login', 'email', 'display_name', 'role', 'status', 'created_at', 'updated_at'], MEMBERS, (i) => [
    `member${i}`,
    `member${i}@example.com`,
    `Member ${i}`,
    'member',
    'active',
    created,
    created,
  ]);
  const [{ first }] = await ctx.db.select('SELECT MIN(id) AS first FROM users WHERE login LIKE ?', ['member%']);
  const networks = ['awin', 'cj', 'impact', 'rakuten', 'tradedoubler'];
  const statuses = ['pending', 'approved', 'approved', 'declined'];
  const columns = [
    'network',
    'transaction_id',
    'member_id',
    'sale_amount',
    'commission',
    'currency',
    'cashback',
    'status',
    'source',
    'status_changed_at',
    'created_at',
    'updated_at',
  ];
  await insertRows(ctx, 'orders', columns, rows, (i) => {
    const when = at(i, rows);
    const commission = 100 + Math.floor(rand() * 20_000);
    return [
      networks[i % networks.length],
      `TX${i}`,
      i % 10 === 0 ? null : Number(first) + (i % MEMBERS),
      commission * 10,
      commission,
      i % 7 === 0 ? 'EUR' : 'USD',
      Math.floor(commission / 2),
      statuses[Math.floor(rand() * statuses.length)],
      'poll',
      when,
      when,
      when,
    ];
  });
  const payoutStatuses = ['pending', 'paid', 'paid', 'paid', 'paid', 'paid', 'paid', 'paid', 'paid', 'cancelled'];
  const payoutColumns = ['member_id', 'amount', 'currency', 'method', 'status', 'reference', 'actor', 'created_at', 'updated_at'];
  await insertRows(ctx, 'payouts', payoutColumns, PAYOUTS, (i) => {
    const when = at(i, PAYOUTS);
    const status = payoutStatuses[i % payoutStatuses.length];
    return [
      Number(first) + (i % MEMBERS),
      1_000 + (i % 9_000),
      i % 7 === 0 ? 'EUR' : 'USD',
      'paypal',
      status,
      status === 'paid' ? `PAY${i}` : null,
      'bench',
      when,
      when,
    ];
  });
  const outcomes = ['accepted', 'accepted', 'accepted', 'duplicate', 'rejected'];
  await insertRows(ctx, 'postbacks', ['received_at', 'last_seen_at', 'network', 'method', 'outcome', 'test', 'repeat_count'], 10_000, (i) => {
    const when = at(i, 10_000);
    return [when, when, networks[i % networks.length], 'GET', outcomes[i % outcomes.length], false, 1];
  });
  for (let i = 0; i < 20; i++) ctx.logger.error('bench', `Seeded error ${i}`);
  await ctx.logger.flush();
  if (ctx.db.dialect === 'mysql') for (const t of ['users', 'orders', 'payouts', 'postbacks']) await ctx.db.select(`ANALYZE TABLE ${t}`);
}

// ---- (b), (c) in Chromium ----------------------------------------------------------------------

/** A fresh browser context (cold cache) signed in through POST /login. */
async function signedIn(browser, url) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const res = await context.request.post(`${url}/login`, { data: { login: LOGIN, password: PASSWORD } });
  if (!res.ok()) throw new Error(`POST /login answered ${res.status()}: ${(await res.text()).slice(0, 200)}`);
  return context;
}

/**
 * Milliseconds from navigation start to `ready` (a function run in the page) answering true, cold
 * cache; and how long the screen's own API calls (`api`, a path prefix in the namespace) took, the
 * daemon's share of it.
 */
async function timeScreen(browser, url, path, ready, api) {
  const context = await signedIn(browser, url);
  try {
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (err) => errors.push(err.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.goto(`${url}${path}`, { waitUntil: 'commit' });
    const handle = await page.waitForFunction(ready, null, { polling: 'raf', timeout: 30_000 }).catch(async (err) => {
      const text = (
        await page
          .locator('main')
          .textContent()
          .catch(() => '')
      ).slice(0, 300);
      throw new Error(`${path} never got ready: ${err.message.split('\n')[0]}; errors: ${errors.join(' | ') || 'none'}; the screen: ${text}`);
    });
    const ms = await handle.jsonValue();
    const entries = await page.evaluate(() =>
      performance.getEntriesByType('resource').map((e) => ({ name: e.name.replace(location.origin, ''), start: e.startTime, end: e.responseEnd })),
    );
    if (process.env.CASHTRACK_BENCH_TRACE) console.log(entries.map((e) => `${e.name} ${e.start.toFixed(0)}-${e.end.toFixed(0)}`).join('\n'));
    const calls = entries.filter((e) => e.name.startsWith(`/wp-json/svc/v1${api}`));
    return { ms, apiMs: Math.max(0, ...calls.map((e) => e.end - e.start)) };
  } finally {
    await context.close();
  }
}

const overviewReady = () => (document.querySelector('.ct-cards .ct-daily-table tbody tr') ? performance.now() : false);
const overviewEmptyOk = () => (document.querySelector('.ct-cards h2') ? performance.now() : false);
const listReady = () => (document.querySelectorAll('.dataviews-view-table tbody tr').length >= 10 ? performance.now() : false);

/**
 * Every script the browser requests from the sign-in page to the overview rendered, gzipped. What
 * is requested after it (the lists' chunk the shell fetches when idle) is not the overview's.
 */
async function loadedScripts(browser, url) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const scripts = new Map();
    let rendered = false;
    page.on('request', (req) => {
      if (!rendered && req.resourceType() === 'script')
        scripts.set(
          new URL(req.url()).pathname,
          req.response().then(async (res) => gzipKb(await res.body())),
        );
    });
    await page.goto(`${url}/admin/`);
    await page.getByLabel('Username or email').fill(LOGIN);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel('Password').press('Enter');
    await page.waitForFunction(overviewEmptyOk, null, { polling: 'raf', timeout: 30_000 });
    rendered = true;
    const files = [];
    for (const [path, kb] of scripts) files.push({ file: path.split('/').pop(), kb: await kb });
    return { files, kb: files.reduce((a, f) => a + f.kb, 0) };
  } finally {
    await context.close();
  }
}

/** A free loopback port: the daemon's public URL must name it, as sign-in accepts only its own origin. */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function benchDatabase(db, opts, browser, dataDir, secret, cleanups) {
  process.stdout.write(`[${db.name}] migrating and seeding ${opts.rows.toLocaleString('en-US')} orders… `);
  const started = Date.now();
  const port = await freePort();
  const app = await startDaemon(
    { dbUrl: db.url, dataDir, secret },
    {
      port,
      overrides: { 'server.public_url': `http://127.0.0.1:${port}` },
      setup: async (ctx) => {
        await ctx.users.create({ login: LOGIN, email: `${LOGIN}@localhost.invalid`, role: 'administrator', password: PASSWORD }, 'bench');
        return {};
      },
    },
  );
  cleanups.unshift(app.close);
  await seed(app.ctx, opts.rows);
  console.log(`${((Date.now() - started) / 1000).toFixed(1)} s`);
  const url = app.server.info.uri;
  const scripts = await loadedScripts(browser, url);
  const screens = [
    { label: '(b) overview, last 30 days', path: '/admin/overview', ready: overviewReady, api: '/overview' },
    { label: '(b) overview, last 365 days', path: '/admin/overview?days=365', ready: overviewReady, api: '/overview' },
    { label: '(c) orders list, 20 a page', path: '/admin/orders?per_page=20', ready: listReady, api: '/orders' },
    { label: '(c) payouts list, 20 a page', path: '/admin/payouts', ready: listReady, api: '/payouts' },
  ];
  const results = [];
  for (const s of screens) {
    // One warm-up (the daemon's first queries, the OS file cache), then the measured runs.
    await timeScreen(browser, url, s.path, s.ready, s.api);
    const runs = [];
    for (let i = 0; i < opts.runs; i++) runs.push(await timeScreen(browser, url, s.path, s.ready, s.api));
    const samples = runs.map((r) => r.ms);
    results.push({ ...s, ms: median(samples), apiMs: median(runs.map((r) => r.apiMs)), samples });
  }
  await app.close();
  cleanups.splice(cleanups.indexOf(app.close), 1);
  return { scripts, results };
}

const verdict = (ok) => (ok ? 'PASS' : 'FAIL');

async function main() {
  const opts = parseOptions(process.argv.slice(2), process.env);
  if (!existsSync(CHROMIUM)) throw new Error(`bench:admin needs Chromium at ${CHROMIUM} (apt-get install -y chromium), or CASHTRACK_CHROMIUM`);
  const { tmp, dataDir, secret, cleanups, cleanup: runCleanups } = scratch();
  // Browser timings are wall-clock on a shared machine: say how busy it was.
  const load = loadavg().map((l) => l.toFixed(1));
  console.log(
    `cashtrack bench:admin: median of ${opts.runs} runs after a warm-up, cold browser cache each run; ${cpus().length} CPUs, load average ${load.join(' ')}\n`,
  );
  let failed = false;
  const lines = [];
  try {
    const bundle = initialChunks(DIST);
    console.log('(a) sign-in + overview JavaScript in dist/admin (entry, overview chunk, their static imports), gzipped:');
    for (const f of bundle.files) console.log(`    ${f.file.padEnd(36)} ${f.kb.toFixed(1).padStart(7)} KB`);
    lines.push(
      `(a) sign-in + overview JS, dist/admin        ${bundle.kb.toFixed(1).padStart(7)} KB  < ${JS_BUDGET_KB} KB  ${verdict(bundle.kb < JS_BUDGET_KB)}`,
    );
    failed ||= bundle.kb >= JS_BUDGET_KB;

    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    cleanups.unshift(() => browser.close());
    const { databases, missing } = await benchDatabases(tmp, opts.only, cleanups);
    failed ||= missing;
    for (const db of databases) {
      const { scripts, results } = await benchDatabase(db, opts, browser, dataDir, secret, cleanups);
      console.log(`[${db.name}] scripts loaded from sign-in to the overview: ${scripts.files.map((f) => `${f.file} ${f.kb.toFixed(1)} KB`).join(', ')}`);
      lines.push(
        `(a) sign-in + overview JS, loaded [${db.name}]`.padEnd(44) +
          ` ${scripts.kb.toFixed(1).padStart(7)} KB  < ${JS_BUDGET_KB} KB  ${verdict(scripts.kb < JS_BUDGET_KB)}`,
      );
      failed ||= scripts.kb >= JS_BUDGET_KB;
      for (const r of results) {
        const ok = r.ms < INTERACTIVE_MS;
        failed ||= !ok;
        lines.push(
          `${`${r.label} [${db.name}]`.padEnd(44)} ${r.ms.toFixed(0).padStart(7)} ms  < ${INTERACTIVE_MS} ms ${verdict(ok)}  (runs: ${r.samples.map((s) => s.toFixed(0)).join(', ')} ms; the API calls: ${r.apiMs.toFixed(0)} ms)`,
        );
      }
    }
    console.log(`\n== budgets (${opts.rows.toLocaleString('en-US')} orders; load average now ${loadavg()[0].toFixed(1)} on ${cpus().length} CPUs) ==\n`);
    for (const l of lines) console.log(l);
  } catch (err) {
    failed = true;
    console.error(`\nbench:admin failed: ${err.stack ?? err.message}`);
  } finally {
    await runCleanups();
  }
  process.exit(failed ? 1 : 0);
}

main().catch((err) => {
  console.error(err instanceof UsageError ? err.message : err.stack);
  process.exit(2);
});
