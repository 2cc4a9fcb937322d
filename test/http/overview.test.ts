import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Server } from '@hapi/hapi';
import type { Context } from '../../src/context.js';
import { describeEachDialect, type TestContext } from '../helpers/context.js';
import { runCli } from '../helpers/cli.js';
import { adminClient, createActor, NS, testServer, type Actor } from '../helpers/http.js';

type Json = Record<string, any>;

const DAY = 86_400_000;
let txn = 0;

/** An order row written directly (the orders service is not needed to count orders). */
async function insertOrder(
  ctx: Context,
  o: { member_id: number | null; status: string; currency?: string; sale?: number; commission: number; cashback: number; ageDays?: number },
): Promise<number> {
  const at = new Date(Date.now() - (o.ageDays ?? 1) * DAY);
  const { insertId } = await ctx.db.execute(
    'INSERT INTO orders (network, transaction_id, member_id, sale_amount, commission, currency, cashback, status, source, status_changed_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ['awin', `T${++txn}`, o.member_id, o.sale ?? o.commission * 10, o.commission, o.currency ?? 'USD', o.cashback, o.status, 'manual', at, at, at],
  );
  return insertId!;
}

/** Posts an order-linked credit as the orders service would (cashback or referral). */
async function credit(ctx: Context, memberId: number, type: 'cashback' | 'referral', amount: number, orderId: number, currency = 'USD'): Promise<number> {
  const row = await ctx.db.transaction((t) =>
    ctx.ledger.post(
      { memberId, currency, type, amount, sourceType: type === 'cashback' ? 'order' : 'referral', sourceId: orderId, orderId, actor: 'system' },
      t,
    ),
  );
  return row.id;
}

describeEachDialect('the overview', (use) => {
  let server: Server;
  let admin: Actor;
  const m: Record<string, number> = {};

  beforeAll(async () => {
    const { ctx } = use();
    server = await testServer(ctx);
    admin = await createActor(ctx, 'administrator');
    for (const name of ['ann', 'bob', 'cat', 'dan']) m[name] = (await ctx.users.create({ login: `ov-${name}`, email: `ov-${name}@example.com` })).id;
    const adjust = (member: number, type: 'credit' | 'debit', amount: string, currency = 'USD', allow_negative = false) =>
      ctx.ledger.adjust({ member_id: member, type, amount, currency, note: 'seed', allow_negative }, 'test');

    // Orders in the window: approved (matched and unmatched), pending, declined; one in EUR.
    const o1 = await insertOrder(ctx, { member_id: m.ann, status: 'approved', commission: 1000, cashback: 500 });
    await credit(ctx, m.ann, 'cashback', 500, o1);
    await credit(ctx, m.bob, 'referral', 50, o1);
    await insertOrder(ctx, { member_id: null, status: 'approved', commission: 200, cashback: 100 });
    await insertOrder(ctx, { member_id: m.ann, status: 'pending', commission: 400, cashback: 200 });
    await ctx.db.transaction((t) => ctx.ledger.addPending(m.ann, 'USD', 200, t));
    const o4 = await insertOrder(ctx, { member_id: m.bob, status: 'declined', commission: 600, cashback: 300 });
    const referral = await credit(ctx, m.cat, 'referral', 30, o4);
    await ctx.ledger.reverse(referral, 'order declined', 'system');
    await insertOrder(ctx, { member_id: m.ann, status: 'approved', currency: 'EUR', commission: 800, cashback: 400 });
    // Outside the window (still unmatched).
    await insertOrder(ctx, { member_id: null, status: 'pending', commission: 10_000, cashback: 5000, ageDays: 40 });

    // Balances: ann 5.00 cashback + 50.00, bob 0.50 referral + 1000 JPY, cat overdrawn by the
    // reversal and an adjustment, dan back to zero.
    await adjust(m.ann, 'credit', '50.00');
    await adjust(m.bob, 'credit', '1000', 'JPY');
    await adjust(m.cat, 'debit', '2.00', 'USD', true);
    await adjust(m.dan, 'credit', '3.00');
    await adjust(m.dan, 'debit', '3.00');

    // Payouts: ann 20.00 pending and 10.00 paid, bob 300 JPY pending.
    await ctx.payouts.create({ member_id: m.ann, amount: '20.00', method: 'paypal' }, 'test');
    const paid = await ctx.payouts.create({ member_id: m.ann, amount: '10.00', method: 'paypal' }, 'test');
    await ctx.payouts.complete(paid.payout.id, {}, 'test');
    await ctx.payouts.create({ member_id: m.bob, amount: '300', currency: 'JPY', method: 'bank_transfer' }, 'test');
  });
  afterAll(async () => {
    await server.stop();
  });

  it('sums members, liabilities, recent orders with margin, pending payouts and unmatched orders', async () => {
    const res = await server.inject({ url: `${NS}/overview`, headers: { authorization: admin.authorization } });
    expect(res.statusCode).toBe(200);
    const o = res.result as Json;
    expect(o.currency).toBe('USD');
    expect(o.members).toEqual({ total: 4, with_balance: 3 });
    // ann 5.00 + 50.00 - 30.00 = 25.00; bob 0.50; cat -0.30 + 0.30 - 2.00 = -2.00; dan 0.
    expect(o.liabilities).toEqual([
      { currency: 'JPY', available: '700', pending: '0', overdrawn: '0', members_overdrawn: 0, owed: '700' },
      // owed: the positive balances (25.00 + 0.50) and the pending 2.00.
      { currency: 'USD', available: '23.50', pending: '2.00', overdrawn: '-2.00', members_overdrawn: 1, owed: '27.50' },
    ]);
    expect(o.orders.days).toBe(30);
    expect(o.orders.by_status).toEqual([
      { status: 'pending', currency: 'USD', count: 1, sale_amount: '40.00', commission: '4.00', cashback: '2.00', referral: '0.00', margin: '2.00' },
      { status: 'approved', currency: 'EUR', count: 1, sale_amount: '80.00', commission: '8.00', cashback: '4.00', referral: '0.00', margin: '4.00' },
      { status: 'approved', currency: 'USD', count: 2, sale_amount: '120.00', commission: '12.00', cashback: '6.00', referral: '0.50', margin: '5.50' },
      { status: 'declined', currency: 'USD', count: 1, sale_amount: '60.00', commission: '6.00', cashback: '3.00', referral: '0.00', margin: null },
    ]);
    expect(o.payouts).toEqual({
      pending: {
        count: 2,
        by_currency: [
          { currency: 'JPY', count: 1, amount: '300' },
          { currency: 'USD', count: 1, amount: '20.00' },
        ],
      },
    });
    expect(o.unmatched_orders).toEqual({ count: 2 });
    expect(await use().ctx.ledger.verify()).toEqual([]);
  });

  it('widens the order window with days and refuses a window past a year', async () => {
    const auth = { authorization: admin.authorization };
    const wide = (await server.inject({ url: `${NS}/overview?days=60`, headers: auth })).result as Json;
    expect(wide.orders.by_status.find((r: Json) => r.status === 'pending' && r.currency === 'USD')).toMatchObject({
      count: 2,
      commission: '104.00',
      margin: '52.00',
    });
    const bad = await server.inject({ url: `${NS}/overview?days=0`, headers: auth });
    expect(bad.statusCode).toBe(400);
    expect((await server.inject({ url: `${NS}/overview?days=367`, headers: auth })).statusCode).toBe(400);
  });

  it('prints the same figures on the command line', async () => {
    const { db } = use();
    const json = await runCli(['overview', '--json'], { db });
    expect(json.code).toBe(0);
    expect(json.json<Json>()).toMatchObject({ members: { total: 4, with_balance: 3 }, unmatched_orders: { count: 2 } });
    const text = await runCli(['overview'], { db });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('members: 4 (3 with a non-zero balance)');
    expect(text.stdout).toMatch(/approved\s+USD\s+2\s+12\.00\s+6\.00\s+0\.50\s+5\.50/);
    expect(text.stdout).toContain('pending payouts: 2');
    expect(text.stdout).toContain('unmatched orders: 2');
  });
});

/**
 * A server on the block's database and a getter for its overview. Each huge-amount test has a
 * database of its own: both assert on whole-table totals.
 */
function overviewOf(use: () => TestContext): () => Promise<Json> {
  const api = adminClient(use);
  return async () => {
    const res = await api.get('/overview');
    expect(res.statusCode).toBe(200);
    return res.result as Json;
  };
}

describeEachDialect('the overview under huge amounts held for review', (use) => {
  const get = overviewOf(use);

  it("refuses or holds the security review's postbacks, and still answers 200 with nothing credited", async () => {
    const { ctx } = use();
    const member = (await ctx.users.create({ login: 'huge-ann', email: 'huge-ann@example.com' })).id;
    const report = (i: number, commission: string) => ({
      network: 'awin',
      transaction_id: `HUGE-${commission}-${i}`,
      source: 'postback' as const,
      member_id: member,
      sale_amount: '0',
      commission,
      status: 'approved' as const,
    });
    for (let i = 0; i < 20; i++) {
      // Past the hard bound: refused, nothing recorded.
      await expect(ctx.orders.record(report(i, '9999999999999.99'), 'postback')).rejects.toMatchObject({ code: 'svc_invalid_amount', status: 400 });
      // Within it but past the ceiling: recorded and held.
      expect((await ctx.orders.record(report(i, '9999999999.99'), 'postback')).review?.state).toBe('held');
    }
    // The batch path (polls, postback batches) holds them the same way.
    const batch = await ctx.orders.recordMany(
      Array.from({ length: 20 }, (_, i) => report(100 + i, '9999999999.99')),
      'postback',
    );
    expect(batch.every((o) => o.review?.state === 'held')).toBe(true);
    const o = await get();
    expect(o.held_orders).toEqual({ count: 40 });
    expect(o.orders.by_status).toEqual([]);
    expect(o.liabilities).toEqual([]);
    expect(await ctx.ledger.balanceOf(member, 'USD')).toMatchObject({ available: '0.00', pending: '0.00', lifetime_earned: '0.00' });
    expect(await ctx.ledger.verify()).toEqual([]);
  });
});

describeEachDialect('the overview under huge amounts past 2^53', (use) => {
  const get = overviewOf(use);

  it('totals orders and balances whose sums pass 2^53 exactly, each amount within the bound', async () => {
    const { ctx } = use();
    // 9,100 orders of 10,000,000,000.00 (the hard bound) and 0.01 each: 91,000,000,000,091.00 in all.
    const at = new Date();
    const columns = [
      'network',
      'transaction_id',
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
    const rows = Array.from({ length: 9100 }, (_, i) => ['bignet', `BIG-${i}`, 1_000_000_000_000, 1_000_000_000_000, 'USD', 1, 'approved', 'poll', at, at, at]);
    await ctx.db.transaction((t) => ctx.db.insertMany('orders', columns, rows, t));
    // Two members at the largest balance kept exactly, one at its negative; the two with a pending
    // order of that cashback.
    const ids: number[] = [];
    for (const login of ['huge-bob', 'huge-cat', 'huge-dan']) ids.push((await ctx.users.create({ login, email: `${login}@example.com` })).id);
    const max = Number.MAX_SAFE_INTEGER;
    await ctx.db.transaction(async (t) => {
      for (const [i, amount] of [max, max, -max].entries())
        await ctx.ledger.post(
          { memberId: ids[i], currency: 'USD', type: 'adjustment', amount, sourceType: 'adjustment', actor: 'test', allowNegative: true },
          t,
        );
      await ctx.db.insertMany(
        'orders',
        [...columns, 'member_id'],
        ids.slice(0, 2).map((id) => ['bignet', `MAX-${id}`, max, max, 'USD', max, 'pending', 'poll', at, at, at, id]),
        t,
      );
      for (const id of ids.slice(0, 2)) await ctx.ledger.addPending(id, 'USD', max, t);
    });
    const o = await get();
    expect(o.orders.by_status).toEqual([
      {
        status: 'pending',
        currency: 'USD',
        count: 2,
        sale_amount: '180143985094819.82',
        commission: '180143985094819.82',
        cashback: '180143985094819.82',
        referral: '0.00',
        margin: '0.00',
      },
      {
        status: 'approved',
        currency: 'USD',
        count: 9100,
        sale_amount: '91000000000000.00',
        commission: '91000000000000.00',
        cashback: '91.00',
        referral: '0.00',
        margin: '90999999999909.00',
      },
    ]);
    // (2^53 - 1) × 2 - (2^53 - 1) available, 2 × (2^53 - 1) pending: past 2^53, to the cent.
    expect(o.liabilities).toEqual([
      {
        currency: 'USD',
        available: '90071992547409.91',
        pending: '180143985094819.82',
        overdrawn: '-90071992547409.91',
        members_overdrawn: 1,
        owed: '360287970189639.64',
      },
    ]);
    expect(await ctx.ledger.verify()).toEqual([]);
  });
});

describeEachDialect('the overview per day and per network', (use) => {
  const get = overviewOf(use);
  const api = adminClient(use);

  it('groups the window’s orders by the UTC day they were recorded, adding up to the statuses, held and older orders left out', async () => {
    const { ctx } = use();
    // Three days back, hours apart: their days are computed from the same instants the rows hold.
    const at = (days: number, hours = 0) => new Date(Date.now() - days * DAY - hours * 3_600_000);
    const columns = [
      'network',
      'transaction_id',
      'sale_amount',
      'commission',
      'currency',
      'cashback',
      'status',
      'source',
      'status_changed_at',
      'created_at',
      'updated_at',
      'review',
    ];
    const row = (id: string, when: Date, commission: number, cashback: number, status = 'approved', currency = 'USD', review: string | null = null) => [
      'awin',
      id,
      commission * 10,
      commission,
      currency,
      cashback,
      status,
      'poll',
      when,
      when,
      when,
      review,
    ];
    const d1 = at(1);
    const d3 = at(3);
    const d3b = at(3, 1);
    const d5 = at(5);
    await ctx.db.transaction((t) =>
      ctx.db.insertMany(
        'orders',
        columns,
        [
          row('D1-A', d1, 1000, 500),
          row('D1-B', d1, 250, 125, 'pending'),
          row('D3-A', d3, 300, 150, 'declined'),
          row('D3-B', d3b, 700, 350),
          row('D5-EUR', d5, 400, 200, 'approved', 'EUR'),
          row('D1-HELD', d1, 999_900, 99_900, 'approved', 'USD', 'held'),
          row('D40', at(40), 5000, 2500),
        ],
        t,
      ),
    );
    const day = (d: Date) => d.toISOString().slice(0, 10);
    const o = await get();
    const expected = [
      { day: day(d5), currency: 'EUR', count: 1, commission: '4.00', cashback: '2.00' },
      ...(day(d3) === day(d3b)
        ? [{ day: day(d3), currency: 'USD', count: 2, commission: '10.00', cashback: '5.00' }]
        : [
            { day: day(d3b), currency: 'USD', count: 1, commission: '7.00', cashback: '3.50' },
            { day: day(d3), currency: 'USD', count: 1, commission: '3.00', cashback: '1.50' },
          ]),
      { day: day(d1), currency: 'USD', count: 2, commission: '12.50', cashback: '6.25' },
    ];
    expect(o.orders.by_day).toEqual(expected);
    // The days add up to the statuses: the same orders, grouped two ways.
    const total = (rows: Json[], currency: string) => rows.filter((r) => r.currency === currency).reduce((n, r) => n + r.count, 0);
    for (const currency of ['USD', 'EUR']) expect(total(o.orders.by_day, currency)).toBe(total(o.orders.by_status, currency));
    const week = await api.get('/overview?days=2');
    expect((week.result as Json).orders.by_day).toEqual([{ day: day(d1), currency: 'USD', count: 2, commission: '12.50', cashback: '6.25' }]);
  });

  it('counts the window’s real postbacks per network and outcome, an aggregated refusal for every postback it stands for', async () => {
    const { ctx } = use();
    const now = Date.now();
    const columns = ['received_at', 'last_seen_at', 'network', 'method', 'outcome', 'test', 'repeat_count'];
    const pb = (network: string, outcome: string, ageDays = 1, test = false, repeat = 1) => {
      const when = new Date(now - ageDays * DAY);
      return [when, when, network, 'GET', outcome, test, repeat];
    };
    await ctx.db.transaction((t) =>
      ctx.db.insertMany(
        'postbacks',
        columns,
        [
          pb('awin', 'accepted'),
          pb('awin', 'accepted'),
          pb('awin', 'duplicate'),
          pb('awin', 'rejected', 1, false, 7),
          pb('awin', 'accepted', 1, true),
          pb('awin', 'accepted', 40),
          pb('shopnet', 'rejected'),
          pb('shopnet', 'error'),
        ],
        t,
      ),
    );
    const o = await get();
    expect(o.postbacks).toEqual({
      by_network: [
        { network: 'awin', accepted: 2, duplicate: 1, rejected: 7, error: 0 },
        { network: 'shopnet', accepted: 0, duplicate: 0, rejected: 1, error: 1 },
      ],
    });
  });
});
