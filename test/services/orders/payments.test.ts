import { afterEach, expect, it } from 'vitest';
import type { RecordInput } from '../../../src/services/orders/index.js';
import { describeEachDialect } from '../../helpers/context.js';

describeEachDialect('network payments', (use, dialect) => {
  let n = 0;
  const member = async (login: string) => (await use().ctx.users.create({ login, email: `${login}@example.com` })).id;
  const record = (over: Partial<RecordInput> = {}) =>
    use().ctx.orders.record({ network: 'awin', transaction_id: `T-${++n}`, source: 'postback', sale_amount: '100.00', commission: '10.00', ...over }, 'system');
  const balance = (id: number, currency = 'USD') => use().ctx.ledger.balanceOf(id, currency);
  const entries = async (id: number) => (await use().ctx.ledger.listEntries({ member_id: id, page: 1, per_page: 100 })).items;
  const pay = (network: string, lines: Parameters<ReturnType<typeof use>['ctx']['orders']['recordPayments']>[1], source: 'poll' | 'import' = 'poll') =>
    use().ctx.orders.recordPayments(network, lines, source, 'test');
  const lineCount = async (network: string) => (await use().ctx.orders.listPayments(network, { page: 1, per_page: 100 })).total;

  afterEach(async () => {
    expect(await use().ctx.ledger.verify()).toEqual([]);
  });

  it('stamps an order paid once, and a line read twice changes nothing and stores no second line', async () => {
    const id = await member('pay-once');
    const order = await record({ transaction_id: 'PO-1', member_id: id, status: 'approved' });
    const at = new Date('2026-11-01T10:00:00Z');
    const first = await pay('awin', [{ transaction_id: 'PO-1', payment_id: 'P-100', paid_at: at, amount: '10.00', currency: 'USD' }]);
    expect(first).toMatchObject({ recorded: 1, already: 0, unknown: 0, conflict: 0, invalid: 0 });
    expect(first.results[0]).toMatchObject({ result: 'recorded', order_id: order.id });
    const again = await pay('awin', [{ transaction_id: 'PO-1', payment_id: 'P-100', paid_at: at, amount: '10.00', currency: 'USD' }]);
    expect(again).toMatchObject({ recorded: 0, already: 1 });
    expect((await use().ctx.orders.get(order.id)).network_payment).toEqual({ paid_at: at.toISOString(), payment_id: 'P-100', amount: '10.00' });
    expect(await lineCount('awin')).toBe(1);
    // on_approval (the default): the credit came with the approval, the payment adds nothing.
    expect(await entries(id)).toHaveLength(1);
  });

  it('keeps a line for an unknown transaction and matches it when the order arrives', async () => {
    const id = await member('pay-later');
    const summary = await pay('awin', [
      { transaction_id: 'UL-1', payment_id: 'P-200', paid_at: new Date('2026-11-02T00:00:00Z'), amount: '4.00', currency: 'USD' },
    ]);
    expect(summary).toMatchObject({ unknown: 1 });
    expect((await use().ctx.orders.listPayments('awin', { unknown: true, page: 1, per_page: 100 })).items.map((p) => p.transaction_id)).toContain('UL-1');
    const order = await record({ transaction_id: 'UL-1', member_id: id, status: 'approved', commission: '8.00' });
    expect(order.network_payment).toEqual({ paid_at: '2026-11-02T00:00:00.000Z', payment_id: 'P-200', amount: '4.00' });
    expect((await use().ctx.orders.listPayments('awin', { unknown: true, page: 1, per_page: 100 })).items.map((p) => p.transaction_id)).not.toContain('UL-1');
    // Read again after the match: already on file.
    expect(await pay('awin', [{ transaction_id: 'UL-1', payment_id: 'P-200', paid_at: null }])).toMatchObject({ already: 1 });
  });

  it('keeps a second payment id for a paid order as a conflict and does not stamp it again', async () => {
    const order = await record({ transaction_id: 'CF-1', status: 'approved' });
    await pay('awin', [{ transaction_id: 'CF-1', payment_id: 'P-300', paid_at: new Date('2026-11-03T00:00:00Z') }]);
    const second = await pay('awin', [{ transaction_id: 'CF-1', payment_id: 'P-301', paid_at: new Date('2026-11-04T00:00:00Z') }]);
    expect(second).toMatchObject({ conflict: 1, recorded: 0 });
    expect((await use().ctx.orders.get(order.id)).network_payment?.payment_id).toBe('P-300');
    const lines = (await use().ctx.orders.listPayments('awin', { page: 1, per_page: 100 })).items.filter((p) => p.transaction_id === 'CF-1');
    expect(lines.map((p) => p.payment_id).sort()).toEqual(['P-300', 'P-301']);
    // The conflicting line again: already.
    expect(await pay('awin', [{ transaction_id: 'CF-1', payment_id: 'P-301', paid_at: null }])).toMatchObject({ already: 1 });
  });

  it('answers invalid lines one by one and records the others', async () => {
    const order = await record({ transaction_id: 'IV-1', status: 'approved' });
    const summary = await pay('awin', [
      { transaction_id: '', payment_id: 'P-1', paid_at: null },
      { transaction_id: 'IV-1', payment_id: 'P-400', paid_at: null, amount: '1.234' },
      { transaction_id: 'IV-1', payment_id: 'P-401', paid_at: null, amount: 'ten', currency: 'USD' },
      { transaction_id: 'IV-1', payment_id: 'P-402', paid_at: null, amount: '9.99', currency: 'EUR' },
    ]);
    expect(summary).toMatchObject({ invalid: 3, recorded: 1 });
    expect(summary.results.map((r) => r.result)).toEqual(['invalid', 'invalid', 'invalid', 'recorded']);
    expect(summary.results[1].error?.code).toBe('svc_invalid_amount');
    // An amount in another currency than the order's stays on the line, not on the order.
    expect((await use().ctx.orders.get(order.id)).network_payment).toMatchObject({ payment_id: 'P-402', amount: null });
  });

  it('on_network_payment: an approved order stays pending until the network paid it, then is credited once', async () => {
    const { ctx } = use();
    await ctx.networks.configure('admitad', { cashback_payable: 'on_network_payment' }, 'test');
    const id = await member('pay-policy');
    await record({ network: 'admitad', transaction_id: 'NP-1', member_id: id });
    await record({ network: 'admitad', transaction_id: 'NP-1', member_id: id, status: 'approved' });
    expect(await balance(id)).toMatchObject({ pending: '5.00', available: '0.00' });
    expect(await entries(id)).toHaveLength(0);
    const paid = await pay('admitad', [{ transaction_id: 'NP-1', payment_id: 'A-1', paid_at: null }], 'poll');
    expect(paid.results[0]).toMatchObject({ result: 'recorded', released: true });
    expect(await balance(id)).toMatchObject({ pending: '0.00', available: '5.00' });
    await pay('admitad', [{ transaction_id: 'NP-1', payment_id: 'A-1', paid_at: null }]);
    await pay('admitad', [{ transaction_id: 'NP-1', payment_id: 'A-2', paid_at: null }]);
    expect(await entries(id)).toHaveLength(1);
    expect(await balance(id)).toMatchObject({ pending: '0.00', available: '5.00' });
  });

  it('on_network_payment: a decline after payment reverses as today; a decline before payment only leaves pending', async () => {
    const { ctx } = use();
    await ctx.networks.configure('admitad', { cashback_payable: 'on_network_payment' }, 'test');
    const id = await member('pay-decline');
    await record({ network: 'admitad', transaction_id: 'ND-1', member_id: id, status: 'approved' });
    await record({ network: 'admitad', transaction_id: 'ND-2', member_id: id, status: 'approved' });
    expect(await balance(id)).toMatchObject({ pending: '10.00', available: '0.00' });
    await pay('admitad', [{ transaction_id: 'ND-1', payment_id: 'A-9', paid_at: null }]);
    await record({ network: 'admitad', transaction_id: 'ND-1', member_id: id, status: 'declined' });
    await record({ network: 'admitad', transaction_id: 'ND-2', member_id: id, status: 'declined' });
    expect(await balance(id)).toMatchObject({ pending: '0.00', available: '0.00' });
    expect((await entries(id)).map((e) => e.type).sort()).toEqual(['cashback', 'reversal']);
  });

  it('on_network_payment: a payment that came before the approval credits at approval', async () => {
    const { ctx } = use();
    await ctx.networks.configure('admitad', { cashback_payable: 'on_network_payment' }, 'test');
    const id = await member('pay-first');
    await record({ network: 'admitad', transaction_id: 'PF-1', member_id: id });
    await pay('admitad', [{ transaction_id: 'PF-1', payment_id: 'A-5', paid_at: null }]);
    expect(await balance(id)).toMatchObject({ pending: '5.00', available: '0.00' });
    await record({ network: 'admitad', transaction_id: 'PF-1', member_id: id, status: 'approved' });
    expect(await balance(id)).toMatchObject({ pending: '0.00', available: '5.00' });
    expect(await entries(id)).toHaveLength(1);
  });

  it('on_network_payment: the same payment read concurrently credits exactly once', async () => {
    const { ctx } = use();
    await ctx.networks.configure('admitad', { cashback_payable: 'on_network_payment' }, 'test');
    const id = await member(`pay-race-${dialect}`);
    const ids = Array.from({ length: 6 }, (_, i) => `RC-${i}`);
    for (const t of ids) await record({ network: 'admitad', transaction_id: t, member_id: id, status: 'approved' });
    expect(await balance(id)).toMatchObject({ pending: '30.00' });
    const lines = ids.map((t) => ({ transaction_id: t, payment_id: 'A-77', paid_at: null }));
    const results = await Promise.all(Array.from({ length: 4 }, (_, k) => pay('admitad', k % 2 ? [...lines].reverse() : lines)));
    expect(results.reduce((s, r) => s + r.recorded, 0)).toBe(6);
    expect(results.reduce((s, r) => s + r.already, 0)).toBe(18);
    expect(results.reduce((s, r) => s + r.released, 0)).toBe(6);
    expect(await entries(id)).toHaveLength(6);
    expect(await balance(id)).toMatchObject({ pending: '0.00', available: '30.00' });
  });

  it('refuses an unknown cashback_payable value', async () => {
    await expect(use().ctx.networks.configure('awin', { cashback_payable: 'sometimes' }, 'test')).rejects.toMatchObject({ code: 'svc_invalid_setting' });
  });
});
