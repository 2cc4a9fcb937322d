import { prng, withTimeout } from './ledger-db.js';
import { benchAdmin, startDaemon } from './lib/daemon.js';
import { median } from './lib/fresh-db.js';
import { benchDatabases, insertRows, scratch } from './lib/run.js';
import { queryPlans } from './query-plans.js';

const CEILING_MS = 100;
const MEMBERS = 1_000;
const CALL_TIMEOUT_MS = 30_000;
const DAY = 86_400_000;
/** The seeded rows span this many days before this instant. */
const END = Date.parse('2026-11-27T00:00:00Z');
const SPAN_DAYS = 365;

class UsageError extends Error {}

function parseOptions(argv, env) {
  const opts = {
    rows: Number(env.CASHTRACK_BENCH_ROWS ?? 100_000),
    rounds: Number(env.CASHTRACK_BENCH_ROUNDS ?? 5),
    only: env.CASHTRACK_BENCH_ONLY || null,
    plans: true,
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i];
    if (flag === '--rows') opts.rows = Number(value());
    else if (flag === '--rounds') opts.rounds = Number(value());
    else if (flag === '--only') opts.only = value();
    else if (flag === '--no-plans') opts.plans = false;
    else throw new UsageError(`unknown option ${argv[i]} (use --rows N, --rounds N, --only sqlite|mysql, --no-plans)`);
  }
  if (!Number.isInteger(opts.rows) || opts.rows < 1_000 || opts.rows > 1_000_000) throw new UsageError('--rows must be 1000-1000000');
  if (!Number.isInteger(opts.rounds) || opts.rounds < 1 || opts.rounds > 50) throw new UsageError('--rounds must be 1-50');
  if (opts.only && !['sqlite', 'mysql'].includes(opts.only)) throw new UsageError('--only must be sqlite or mysql');
  return opts;
}

// ---- seeding -----------------------------------------------------------------------------------

async function seed(ctx, rows) {
  const rand = prng(0x11575);
  const at = (i) => new Date(END - SPAN_DAYS * DAY + Math.floor((i / rows) * SPAN_DAYS * DAY) + Math.floor(rand() * 60_000));
  const created = new Date(END - SPAN_DAYS * DAY);
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
  const memberId = (i) => Number(first) + (i % MEMBERS);
  const networks = ['awin', 'cj', 'impact', 'rakuten', 'tradedoubler'];
  const orderStatuses = ['pending', 'approved', 'approved', 'declined'];
  await insertRows(
    ctx,
    'orders',
    [
      'network',
      'transaction_id',
      'member_id',
      'sale_amount',
      'commission',
      'currency',
      'cashback',
      'status',
      'source',
      'event_at',
      'status_changed_at',
      'created_at',
      'updated_at',
    ],
    rows,
    (i) => {
      const when = at(i);
      const commission = 100 + Math.floor(rand() * 20_000);
      return [
        networks[i % networks.length],
        `TX${i}`,
        i % 50 === 0 ? null : memberId(i),
        commission * 10,
        commission,
        i % 7 === 0 ? 'EUR' : 'USD',
        Math.floor(commission / 2),
        orderStatuses[Math.floor(rand() * orderStatuses.length)],
        'poll',
        new Date(when.getTime() - 3_600_000),
        when,
        when,
        when,
      ];
    },
  );
  const payoutStatuses = ['pending', 'paid', 'paid', 'paid', 'cancelled'];
  await insertRows(ctx, 'payouts', ['member_id', 'amount', 'currency', 'method', 'status', 'actor', 'created_at', 'updated_at'], rows, (i) => {
    const when = at(i);
    return [
      memberId(i),
      500 + Math.floor(rand() * 50_000),
      'USD',
      i % 3 ? 'paypal' : 'bank_transfer',
      payoutStatuses[Math.floor(rand() * 5)],
      'bench',
      when,
      when,
    ];
  });
  const types = ['cashback', 'cashback', 'referral', 'adjustment', 'payout'];
  await insertRows(ctx, 'ledger_entries', ['member_id', 'currency', 'type', 'amount', 'balance_after', 'source_type', 'actor', 'created_at'], rows, (i) => [
    memberId(i),
    'USD',
    types[i % types.length],
    100 + (i % 5000),
    0,
    'admin',
    'bench',
    at(i),
  ]);
  if (ctx.db.dialect === 'mysql') {
    // What InnoDB's background statistics update would do shortly after such a load.
    for (const t of ['users', 'orders', 'payouts', 'ledger_entries']) await ctx.db.select(`ANALYZE TABLE ${t}`);
  }
  return { member: memberId(7) };
}

// ---- the queries -------------------------------------------------------------------------------

/** Every query measured: [label, path and query]. */
function queries(member) {
  const mid = new Date(END - 200 * DAY).toISOString();
  const from = new Date(END - 230 * DAY).toISOString();
  const out = [];
  const sorts = (path, columns, extra = '') => {
    for (const c of columns) for (const o of ['desc', 'asc']) out.push([`${path} orderby=${c} ${o}`, `${path}?${extra}orderby=${c}&order=${o}`]);
  };
  sorts('/orders', ['id', 'created_at', 'event_at', 'status_changed_at', 'status', 'commission', 'cashback']);
  out.push(['/orders status=pending', '/orders?status=pending']);
  out.push(['/orders status=pending,declined by created_at', '/orders?status=pending,declined&orderby=created_at']);
  out.push(['/orders status_exclude=approved', '/orders?status_exclude=approved']);
  out.push(['/orders 30 days', `/orders?after=${from}&before=${mid}`]);
  out.push(['/orders 30 days, pending', `/orders?after=${from}&before=${mid}&status=pending`]);
  out.push(['/orders network=awin,cj', '/orders?network=awin,cj']);
  out.push(['/orders/counts', '/orders/counts']);
  out.push(['/orders/counts 30 days', `/orders/counts?after=${from}&before=${mid}`]);
  out.push(['/orders/counts network=awin', '/orders/counts?network=awin']);
  sorts('/payouts', ['id', 'created_at', 'amount', 'status']);
  out.push(['/payouts status=pending', '/payouts?status=pending']);
  out.push(['/payouts status=pending by created_at asc', '/payouts?status=pending&orderby=created_at&order=asc']);
  out.push(['/payouts 30 days', `/payouts?after=${from}&before=${mid}`]);
  out.push(['/payouts/counts', '/payouts/counts']);
  out.push(['/payouts/counts 30 days', `/payouts/counts?after=${from}&before=${mid}`]);
  sorts('/ledger/entries', ['id', 'created_at', 'amount', 'type'], `member_id=${member}&`);
  out.push(['/ledger/entries type=cashback,referral', `/ledger/entries?member_id=${member}&type=cashback,referral`]);
  out.push(['/ledger/entries 30 days', `/ledger/entries?member_id=${member}&after=${from}&before=${mid}`]);
  return out;
}

async function measure(app, path, rounds) {
  const call = async () => {
    const res = await app.server.inject({ url: `${app.prefix}${path}`, headers: { authorization: app.authorization } });
    if (res.statusCode !== 200) throw new Error(`GET ${path} answered ${res.statusCode}: ${res.payload.slice(0, 300)}`);
    return res;
  };
  await withTimeout(call(), CALL_TIMEOUT_MS, `${path} (warm-up)`);
  const samples = [];
  let total = null;
  for (let i = 0; i < rounds; i++) {
    const start = process.hrtime.bigint();
    const res = await withTimeout(call(), CALL_TIMEOUT_MS, path);
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
    total = res.headers['x-wp-total'] ?? JSON.parse(res.payload).total;
  }
  return { ms: median(samples), max: Math.max(...samples), total };
}

/** What the service calls behind the slowest queries send, explained. */
function planCalls(ctx, member) {
  const from = new Date(END - 230 * DAY);
  const mid = new Date(END - 200 * DAY);
  const page = { page: 1, per_page: 10 };
  return [
    { label: 'orders.list', searches: ['commission desc'], run: () => ctx.orders.list({ ...page, orderby: 'commission', order: 'desc' }) },
    {
      label: 'orders.list',
      searches: ['status pending,declined by created_at'],
      run: () => ctx.orders.list({ ...page, status: ['pending', 'declined'], orderby: 'created_at', order: 'desc' }),
    },
    { label: 'orders.list', searches: ['30 days'], run: () => ctx.orders.list({ ...page, after: from, before: mid }) },
    { label: 'orders.counts', searches: ['all', '30 days'], run: (s) => ctx.orders.counts(s === 'all' ? {} : { after: from, before: mid }) },
    { label: 'payouts.list', searches: ['amount asc'], run: () => ctx.payouts.list({ ...page, orderby: 'amount', order: 'asc' }) },
    {
      label: 'payouts.list',
      searches: ['pending by created_at'],
      run: () => ctx.payouts.list({ ...page, status: ['pending'], orderby: 'created_at', order: 'asc' }),
    },
    { label: 'payouts.counts', searches: ['30 days'], run: () => ctx.payouts.counts({ after: from, before: mid }) },
    {
      label: 'ledger.listEntries',
      searches: ['amount desc'],
      run: () => ctx.ledger.listEntries({ ...page, member_id: member, orderby: 'amount', order: 'desc' }),
    },
  ];
}

// ---- main --------------------------------------------------------------------------------------

const fmt = (ms) => ms.toFixed(ms < 10 ? 2 : 1);

async function benchDatabase(db, opts, dataDir, secret, cleanups) {
  process.stdout.write(`[${db.name}] migrating and seeding ${opts.rows.toLocaleString('en-US')} orders, payouts and ledger entries… `);
  const started = Date.now();
  const app = await startDaemon({ dbUrl: db.url, dataDir, secret }, { listen: false, setup: async (ctx) => ({ admin: await benchAdmin(ctx, 'bench-admin') }) });
  cleanups.unshift(app.close);
  const { member } = await seed(app.ctx, opts.rows);
  console.log(`${((Date.now() - started) / 1000).toFixed(1)} s`);
  const target = { server: app.server, prefix: `/${app.config.server.rest_root}/${app.namespace}`, authorization: app.admin.authorization };
  const results = [];
  for (const [label, path] of queries(member)) results.push({ label, ...(await measure(target, path, opts.rounds)) });
  const plans = opts.plans ? await queryPlans(app.ctx.db, planCalls(app.ctx, member)) : [];
  await app.close();
  cleanups.splice(cleanups.indexOf(app.close), 1);
  return { results, plans };
}

function report(name, rows, results, plans) {
  console.log(`\n== ${name}: ${rows.toLocaleString('en-US')} rows each ==\n`);
  const width = Math.max(...results.map((r) => r.label.length));
  console.log(`${'query (page 1, 10 a page)'.padEnd(width)}  ${'median ms'.padStart(9)}  ${'max ms'.padStart(7)}  ${'total'.padStart(8)}  < ${CEILING_MS} ms`);
  for (const r of results) {
    console.log(
      `${r.label.padEnd(width)}  ${fmt(r.ms).padStart(9)}  ${fmt(r.max).padStart(7)}  ${String(r.total).padStart(8)}  ${r.ms < CEILING_MS ? 'PASS' : 'FAIL'}`,
    );
  }
  for (const p of plans) {
    console.log(`\n${p.title}`);
    for (const l of p.plan.lines) console.log(`  ${l}`);
    console.log(`  -> indexes: ${p.plan.indexes.join(', ') || 'none'}`);
  }
}

async function main() {
  const opts = parseOptions(process.argv.slice(2), process.env);
  const { tmp, dataDir, secret, cleanups, cleanup: runCleanups } = scratch();
  console.log(`cashtrack bench:lists: median of ${opts.rounds} calls per query after a warm-up call, sequential, in process; ceiling ${CEILING_MS} ms\n`);
  let failed = false;
  const verdicts = [];
  try {
    const { databases, missing } = await benchDatabases(tmp, opts.only, cleanups);
    failed ||= missing;
    for (const db of databases) {
      const { results, plans } = await benchDatabase(db, opts, dataDir, secret, cleanups);
      report(db.name, opts.rows, results, plans);
      const slow = results.filter((r) => r.ms >= CEILING_MS);
      verdicts.push(
        `${db.name.padEnd(6)}  ${results.length - slow.length}/${results.length} queries under ${CEILING_MS} ms: ${slow.length ? `FAIL (${slow.map((r) => r.label).join('; ')})` : 'PASS'}`,
      );
    }
    console.log('');
    for (const v of verdicts) console.log(v);
  } catch (err) {
    failed = true;
    console.error(`\nbench:lists failed: ${err.stack ?? err.message}`);
  } finally {
    await runCleanups();
  }
  process.exit(failed ? 1 : 0);
}

main().catch((err) => {
  console.error(err instanceof UsageError ? err.message : err.stack);
  process.exit(2);
});
