import { afterAll, beforeAll, expect, it } from 'vitest';
import { JobRunner } from '../../src/jobs/runner.js';
import { startAdmitadFixture, type AdmitadFixture } from '../fixtures/networks/admitad.js';
import { startAwinFixture, type AwinFixture } from '../fixtures/networks/awin.js';
import { impactAction, startImpactFixture, type ImpactFixture } from '../fixtures/networks/impact.js';
import { describeEachDialect } from '../helpers/context.js';

const DAY = 86_400_000;

describeEachDialect('network payments from the networks', (use) => {
  let awin: AwinFixture;
  let admitad: AdmitadFixture;
  let impact: ImpactFixture;
  beforeAll(async () => {
    const now = Date.now();
    // Statuses cycle pending, approved, declined (Awin) and pending, approved, declined, approved_but_stalled (Admitad).
    awin = await startAwinFixture({ transactions: 6, transactionsFrom: new Date(now - 10 * DAY), transactionsTo: new Date(now - DAY) });
    admitad = await startAdmitadFixture({ actions: 6, actionsFrom: new Date(now - 10 * DAY), actionsTo: new Date(now - DAY) });
    impact = await startImpactFixture({ actions: 0 });
  });
  afterAll(async () => {
    await awin?.close();
    await admitad?.close();
    await impact?.close();
  });

  const run = async (type: string, params: Record<string, unknown>) => {
    const { ctx } = use();
    const queued = await ctx.jobs.enqueue(type, params, 'test');
    await new JobRunner({ ctx, jobs: ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 20 }).runPending();
    const job = await ctx.jobs.get(queued.id);
    expect(job.status).toBe('done');
    return (job.result as { networks: Record<string, Record<string, unknown>> }).networks;
  };
  const orderOf = async (network: string, txn: string) => {
    const rows = await use().ctx.db.select<{ id: unknown }>('SELECT id FROM orders WHERE network = ? AND transaction_id = ?', [network, txn]);
    expect(rows).toHaveLength(1);
    return use().ctx.orders.get(Number(rows[0].id));
  };

  it('Awin: the poll reads paidToPublisher and paymentId and marks the orders paid, once', async () => {
    const { ctx } = use();
    await ctx.networks.configure('awin', { ...awin.settings } as Record<string, string>, 'test');
    await run('orders.poll', { network: 'awin' });
    const approved = awin.transactions.filter((t) => t.commissionStatus === 'approved');
    expect(approved.length).toBe(2);
    expect((await orderOf('awin', String(approved[0].id))).network_payment).toBeNull();
    Object.assign(approved[0], { paidToPublisher: true, paymentId: 5512345 });
    const second = await run('orders.poll', { network: 'awin' });
    expect(second.awin).toMatchObject({ payments: { recorded: 1, unknown: 0, conflict: 0 } });
    const paid = await orderOf('awin', String(approved[0].id));
    expect(paid.network_payment).toMatchObject({ payment_id: '5512345', amount: paid.commission });
    expect((await orderOf('awin', String(approved[1].id))).network_payment).toBeNull();
    const third = await run('orders.poll', { network: 'awin' });
    expect(third.awin).toMatchObject({ payments: { recorded: 0 } });
    expect((await ctx.orders.listPayments('awin', { page: 1, per_page: 10 })).items).toHaveLength(1);
  });

  it('a poll of a network whose transactions carry payments reaches back to approved orders not paid yet', async () => {
    const { ctx } = use();
    const old = new Date(Date.now() - 60 * DAY);
    await ctx.orders.record(
      {
        network: 'reachnet',
        transaction_id: 'R-1',
        status: 'approved',
        source: 'postback',
        sale_amount: '10.00',
        commission: '1.00',
        event_at: old.toISOString(),
      },
      'test',
    );
    const plain = await ctx.orders.pollWindow('reachnet', undefined, null, false);
    const reaching = await ctx.orders.pollWindow('reachnet', undefined, null, true);
    expect(plain.from.getTime()).toBeGreaterThan(Date.now() - 31 * DAY);
    expect(reaching.from.getTime()).toBeLessThanOrEqual(old.getTime());
    await ctx.orders.recordPayments('reachnet', [{ transaction_id: 'R-1', payment_id: 'X', paid_at: null }], 'import', 'test');
    expect((await ctx.orders.pollWindow('reachnet', undefined, null, true)).from.getTime()).toBeGreaterThan(Date.now() - 31 * DAY);
  });

  it('Admitad: the networks.payments job reads the payments statement and marks the actions it covers paid; unknown actions are kept', async () => {
    const { ctx } = use();
    await ctx.networks.configure('admitad', { ...admitad.settings } as Record<string, string>, 'test');
    await run('orders.poll', { network: 'admitad' });
    const approved = admitad.actions.filter((a) => a.status === 'approved');
    expect(approved.length).toBeGreaterThanOrEqual(1);
    admitad.addPayment({
      id: 335,
      datetime: new Date(Date.now() - DAY).toISOString().slice(0, 19).replace('T', ' '),
      actions: [
        { id: approved[0].id as number, payment: String(approved[0].payment) },
        { id: 999_000_001, payment: '3.10' },
      ],
    });
    // A payment request not processed yet pays nothing.
    admitad.addPayment({
      id: 336,
      datetime: new Date().toISOString().slice(0, 19).replace('T', ' '),
      status: 'pending',
      actions: [{ id: 999_000_002, payment: '1.00' }],
    });
    const first = await run('networks.payments', { network: 'admitad' });
    expect(first.admitad).toMatchObject({ lines: 2, recorded: 1, unknown: 1, already: 0, conflict: 0 });
    expect((await orderOf('admitad', String(approved[0].id))).network_payment).toMatchObject({ payment_id: '335', amount: String(approved[0].payment) });
    const unknown = await ctx.orders.listPayments('admitad', { unknown: true, page: 1, per_page: 10 });
    expect(unknown.items.map((p) => [p.transaction_id, p.amount, p.currency, p.source])).toEqual([['999000001', '3.10', 'USD', 'statement']]);
    const again = await run('networks.payments', { network: 'admitad' });
    expect(again.admitad).toMatchObject({ recorded: 0, already: 2 });
    expect(admitad.requests.some((r) => r.path === '/payments/335/statement/' && r.query.get('detailed') === '1')).toBe(true);
    expect((await ctx.networks.get('admitad')).last_sync_result).toMatchObject({ payments: { recorded: 0, already: 2, error: null } });
  });

  it('refuses a payments read for a network without a statement', async () => {
    await expect(use().ctx.orders.startPaymentsRead({ network: 'awin' }, 'test')).rejects.toMatchObject({ code: 'svc_network_no_payments', status: 409 });
  });

  it('impact.com: an approved action whose ClearedDate has passed is paid under its clearing day', async () => {
    const { ctx } = use();
    await ctx.networks.configure('impact', { ...impact.settings } as Record<string, string>, 'test');
    const at = new Date(Date.now() - 5 * DAY);
    impact.actions.push(
      impactAction({ Id: '15745.4636.900001', State: 'APPROVED', Payout: '6.00', Amount: '120.00', ClearedDate: '2026-11-10T00:00:00-08:00' }, at),
      impactAction({ Id: '15745.4636.900002', State: 'APPROVED', Payout: '4.00', Amount: '80.00', ClearedDate: '2099-01-01T00:00:00-08:00' }, at),
    );
    await run('orders.poll', { network: 'impact' });
    expect((await orderOf('impact', '15745.4636.900001')).network_payment).toMatchObject({ payment_id: 'cleared:2026-11-10', amount: '6.00' });
    expect((await orderOf('impact', '15745.4636.900002')).network_payment).toBeNull();
    expect(await ctx.ledger.verify()).toEqual([]);
  });
});
