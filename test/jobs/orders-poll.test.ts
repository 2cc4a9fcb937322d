import { afterAll, beforeAll, expect, it } from 'vitest';
import { JobRunner } from '../../src/jobs/runner.js';
import type { JobProgress } from '../../src/services/jobs/index.js';
import { startAdmitadFixture, type AdmitadFixture } from '../fixtures/networks/admitad.js';
import { startAwinFixture, type AwinFixture } from '../fixtures/networks/awin.js';
import { localUtc } from '../fixtures/networks/common.js';
import { describeEachDialect } from '../helpers/context.js';

const DAY = 86_400_000;

describeEachDialect('the orders.poll job', (use) => {
  let fixture: AdmitadFixture;
  beforeAll(async () => {
    const now = Date.now();
    // 12 actions over the last 10 days: statuses cycle pending, approved, declined, approved_but_stalled, ...
    fixture = await startAdmitadFixture({ actions: 12, actionsFrom: new Date(now - 10 * DAY), actionsTo: new Date(now - DAY) });
  });
  afterAll(() => fixture?.close());

  const poll = async (params: Record<string, unknown> = { network: 'admitad' }) => {
    const { ctx } = use();
    const queued = await ctx.jobs.enqueue('orders.poll', params, 'test');
    await new JobRunner({ ctx, jobs: ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 20 }).runPending();
    const job = await ctx.jobs.get(queued.id);
    expect(job.status).toBe('done');
    return (job.result as { networks: Record<string, Record<string, unknown>> }).networks;
  };
  const entries = async (id: number) => (await use().ctx.ledger.listEntries({ member_id: id, page: 1, per_page: 100 } as never)).items;
  const orderOf = async (txn: string) => {
    const rows = await use().ctx.db.select<{ id: unknown }>("SELECT id FROM orders WHERE network = 'admitad' AND transaction_id = ?", [txn]);
    expect(rows).toHaveLength(1);
    return use().ctx.orders.get(Number(rows[0].id));
  };
  let m0 = 0;
  let m1 = 0;

  it('records every transaction of the window; one already received by postback is counted once', async () => {
    const { ctx } = use();
    await ctx.networks.configure('admitad', { ...fixture.settings } as Record<string, string>, 'test');
    m0 = (await ctx.users.create({ login: 'u-000000', email: 'u0@example.com' })).id;
    m1 = (await ctx.users.create({ login: 'u-000001', email: 'u1@example.com' })).id;
    const a1 = fixture.actions[1];
    expect(a1.status).toBe('approved');
    await ctx.orders.record(
      {
        network: 'admitad',
        transaction_id: String(a1.id),
        status: 'approved',
        sub_id: String(a1.subid),
        advertiser: String(a1.advcampaign_id),
        sale_amount: String(a1.cart),
        commission: String(a1.payment),
        currency: 'USD',
        source: 'postback',
      },
      'postback',
    );
    expect(await entries(m1)).toHaveLength(1);

    const first = await poll();
    expect(first.admitad).toMatchObject({ seen: 12, created: 11, duplicate: 1, updated: 0, failed: 0 });
    expect(Number((await ctx.db.select<{ n: unknown }>("SELECT COUNT(*) AS n FROM orders WHERE network = 'admitad'"))[0].n)).toBe(12);
    expect(await orderOf(String(a1.id))).toMatchObject({ status: 'approved', source: 'postback' });
    expect(await entries(m1)).toHaveLength(1);
    expect(await orderOf(String(fixture.actions[0].id))).toMatchObject({ status: 'pending', source: 'poll', member: { id: m0 } });
    expect(await entries(m0)).toHaveLength(0);
    const network = await ctx.networks.get('admitad');
    expect(network.last_sync_result).toMatchObject({ orders: { created: 11, duplicate: 1, updated: 0, failed: 0 } });
    expect(await ctx.ledger.verify()).toEqual([]);
  });

  it('picks up a status change on the next poll and credits the member once', async () => {
    const { ctx } = use();
    const a0 = fixture.actions[0];
    a0.status = 'approved';
    a0.status_updated = localUtc(new Date(Date.now() - 60_000), ' ');
    const second = await poll();
    expect(second.admitad).toMatchObject({ updated: 1, created: 0, failed: 0 });
    expect(await orderOf(String(a0.id))).toMatchObject({ status: 'approved' });
    expect(await entries(m0)).toHaveLength(1);

    await ctx.networks.enable('admitad', 'test');
    const third = await poll({});
    expect(third.admitad).toMatchObject({ created: 0, updated: 0, failed: 0 });
    expect(await entries(m0)).toHaveLength(1);
    expect(await ctx.ledger.verify()).toEqual([]);
  });

  it('names the poll as the actor of the credits its reports bring, as the docs say', async () => {
    // m0's order was approved by the poll above: its cashback credit is the poll's doing.
    expect((await entries(m0)).map((e) => [e.type, e.actor])).toEqual([['cashback', 'poll']]);
  });

  it('counts a refused transaction as failed without failing the poll', async () => {
    const { ctx } = use();
    fixture.actions.push({
      ...fixture.actions[2],
      id: 807_999_999,
      action_id: 807_999_999,
      status: 'approved',
      payment: 0,
      status_updated: localUtc(new Date(Date.now() - 30_000), ' '),
    });
    const result = await poll({ network: 'admitad', since: new Date(Date.now() - 2 * DAY).toISOString() });
    expect(result.admitad).toMatchObject({ failed: 1 });
    // A refused transaction is handled: counted in done (which reaches the total) and in failed.
    const [job] = (await ctx.jobs.list({ type: 'orders.poll', page: 1, per_page: 1 })).items;
    expect(job.progress).toEqual({ total: result.admitad.seen, done: result.admitad.seen, failed: 1 });
    expect(await ctx.db.select("SELECT id FROM orders WHERE transaction_id = '807999999'")).toHaveLength(0);
    fixture.actions.pop();
  });

  it('records the rest of a page when one transaction is refused inside its batch, counting that one as failed', async () => {
    const { ctx } = use();
    // A flat rule in another currency refuses new USD orders of one advertiser (409 svc_currency_mismatch).
    const base = fixture.actions[0];
    await ctx.cashback.set('admitad', 'flat-only', 'flat', '1.00', 'EUR', 'test');
    const at = localUtc(new Date(Date.now() - 20_000), ' ');
    const extra = [807_888_001, 807_888_002, 807_888_003].map((id, i) => ({
      ...base,
      id,
      action_id: id,
      advcampaign_id: i === 1 ? 'flat-only' : base.advcampaign_id,
      status: 'pending',
      status_updated: at,
    }));
    fixture.actions.push(...(extra as never[]));
    try {
      const result = await poll({ network: 'admitad', since: new Date(Date.now() - DAY / 2).toISOString() });
      expect(result.admitad).toMatchObject({ created: 2, failed: 1 });
      const recorded = await ctx.db.select<{ transaction_id: string }>(
        "SELECT transaction_id FROM orders WHERE transaction_id LIKE '807888%' ORDER BY transaction_id",
      );
      expect(recorded.map((r) => String(r.transaction_id))).toEqual(['807888001', '807888003']);
      expect(await ctx.ledger.verify()).toEqual([]);
    } finally {
      fixture.actions.splice(-extra.length);
      await ctx.cashback.remove('admitad', 'flat-only', 'test');
    }
  });

  it('starts at since, else the oldest pending order minus 7 days, else 30 days ago, within the lookback', async () => {
    const { ctx } = use();
    const now = Date.now();
    const since = new Date(now - 3 * DAY);
    expect((await ctx.orders.pollWindow('admitad', since, null)).from).toEqual(since);
    expect((await ctx.orders.pollWindow('admitad', new Date(now - 400 * DAY), 45)).from.getTime()).toBeGreaterThanOrEqual(now - 45 * DAY - 1000);
    const oldestPending = await ctx.db.select<{ at: unknown }>("SELECT MIN(event_at) AS at FROM orders WHERE network = 'admitad' AND status = 'pending'");
    expect(oldestPending[0].at).not.toBeNull();
    const w = await ctx.orders.pollWindow('admitad', undefined, null);
    expect(w.from.getTime()).toBeLessThan(now - 7 * DAY);
    expect(w.from.getTime()).toBeGreaterThan(now - 20 * DAY);
    const empty = await ctx.orders.pollWindow('awin', undefined, null);
    expect(Math.round((empty.to.getTime() - empty.from.getTime()) / DAY)).toBe(30);
  });
});

describeEachDialect('the orders.poll job progress', (use) => {
  let admitad: AdmitadFixture;
  let awin: AwinFixture;
  beforeAll(async () => {
    const now = Date.now();
    // Admitad pages (5 a page here, so 3 pages) and tells `_meta.count`; Awin's window comes whole.
    admitad = await startAdmitadFixture({ actions: 12, actionsFrom: new Date(now - 10 * DAY), actionsTo: new Date(now - DAY), maxPageSize: 5 });
    awin = await startAwinFixture({ transactions: 9, transactionsFrom: new Date(now - 10 * DAY), transactionsTo: new Date(now - DAY), rateLimit: null });
    const { ctx } = use();
    await ctx.networks.configure('admitad', { ...admitad.settings } as Record<string, string>, 'test');
    await ctx.networks.configure('awin', { ...awin.settings } as Record<string, string>, 'test');
  });
  afterAll(async () => {
    await admitad?.close();
    await awin?.close();
  });

  const poll = async (params: Record<string, unknown>) => {
    const { ctx } = use();
    const queued = await ctx.jobs.enqueue('orders.poll', params, 'test');
    const writes: JobProgress[] = [];
    const off = ctx.jobs.onProgress((u) => u.id === queued.id && writes.push(u.progress));
    try {
      await new JobRunner({ ctx, jobs: ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 20 }).runPending();
    } finally {
      off();
    }
    const job = await ctx.jobs.get(queued.id);
    expect(job.status, job.error ?? '').toBe('done');
    return { job, writes };
  };

  it('knows the number of transactions in the window from its first page, and counts them up to it', async () => {
    const since = new Date(Date.now() - 11 * DAY).toISOString();
    const { job, writes } = await poll({ network: 'admitad', since });
    expect(writes.length).toBeGreaterThan(1);
    expect(writes.every((w) => w.total === 12 && w.done <= 12)).toBe(true);
    expect(writes.map((w) => w.done)).toContain(5);
    expect(job.progress).toEqual({ total: 12, done: 12, failed: 0 });
  });

  it('knows the number of transactions of a window that comes whole', async () => {
    const since = new Date(Date.now() - 11 * DAY).toISOString();
    const { job, writes } = await poll({ network: 'awin', since });
    expect(writes.every((w) => w.total === 9)).toBe(true);
    const { networks } = job.result as { networks: { awin: { seen: number; failed: number } } };
    expect(networks.awin.seen).toBe(9);
    expect(job.progress).toEqual({ total: 9, done: 9, failed: networks.awin.failed });
  });
});
