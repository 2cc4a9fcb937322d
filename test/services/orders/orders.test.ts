import { afterEach, expect, it } from 'vitest';
import type { RecordInput } from '../../../src/services/orders/index.js';
import { describeEachDialect } from '../../helpers/context.js';

describeEachDialect('orders', (use) => {
  let n = 0;
  const member = async (login: string) => (await use().ctx.users.create({ login, email: `${login}@example.com` })).id;
  const record = (over: Partial<RecordInput> = {}) =>
    use().ctx.orders.record({ network: 'awin', transaction_id: `T-${++n}`, source: 'postback', sale_amount: '100.00', commission: '10.00', ...over }, 'system');
  const balance = (id: number, currency = 'USD') => use().ctx.ledger.balanceOf(id, currency);
  const entries = async (id: number) => (await use().ctx.ledger.listEntries({ member_id: id, page: 1, per_page: 100 })).items;

  afterEach(async () => {
    expect(await use().ctx.ledger.verify()).toEqual([]);
  });

  it('records a pending order once, counts its cashback as pending, and changes nothing on a repeat', async () => {
    const id = await member('ord-pending');
    const first = await record({ transaction_id: 'P-1', member_id: id, merchant_ref: 'SHOP-77', advertiser: '1001' });
    expect(first).toMatchObject({
      status: 'pending',
      cashback: '5.00',
      sale_amount: '100.00',
      commission: '10.00',
      currency: 'USD',
      duplicate: false,
      changes: ['created'],
      member: { id, login: 'ord-pending' },
    });
    expect(first.cashback_rule).toEqual({ type: 'percent_commission', value: '50', currency: null });
    const again = await record({ transaction_id: 'P-1', member_id: id, merchant_ref: 'SHOP-77', advertiser: '1001' });
    expect(again).toMatchObject({ id: first.id, duplicate: true, changes: [], ignored: [] });
    expect(await balance(id)).toMatchObject({ pending: '5.00', available: '0.00' });
    expect(await entries(id)).toHaveLength(0);
  });

  it('approves a pending order: pending becomes a cashback credit, and the referrer gets its share', async () => {
    const { ctx } = use();
    const referrer = await member('ord-referrer');
    const id = await member('ord-approve');
    const referral = await ctx.referrals.add({ referrer_id: referrer, referee_id: id }, 'user:1');
    await record({ transaction_id: 'A-1', member_id: id, commission: '12.35' });
    const approved = await record({ transaction_id: 'A-1', member_id: id, commission: '12.35', status: 'approved' });
    expect(approved).toMatchObject({ status: 'approved', cashback: '6.17', changes: ['status'], duplicate: false });
    expect(await balance(id)).toMatchObject({ pending: '0.00', available: '6.17', lifetime_earned: '6.17' });
    // 10% of 6.17 rounds down to 0.61.
    expect(await balance(referrer)).toMatchObject({ available: '0.61' });
    const [credit] = await entries(id);
    expect(credit).toMatchObject({
      type: 'cashback',
      amount: '6.17',
      source: { type: 'order', id: String(approved.id) },
      order_id: approved.id,
      actor: 'system',
    });
    const [bonus] = await entries(referrer);
    expect(bonus).toMatchObject({ type: 'referral', amount: '0.61', source: { type: 'referral', id: String(referral.id) }, order_id: approved.id });
    expect(approved.cashback_entry_id).toBe(credit.id);
    expect(approved.referral).toMatchObject({
      referral_id: referral.id,
      amount: '0.61',
      entry_id: bonus.id,
      referrer: { id: referrer, login: 'ord-referrer' },
    });
    expect((await record({ transaction_id: 'A-1', member_id: id, commission: '12.35', status: 'approved' })).duplicate).toBe(true);
    expect(await entries(id)).toHaveLength(1);
  });

  it('records an order first seen approved or declined with the effects of that status', async () => {
    const id = await member('ord-direct');
    const approved = await record({ member_id: id, status: 'approved', commission: '3.00' });
    expect(approved).toMatchObject({ status: 'approved', cashback: '1.50', changes: ['created'] });
    expect(await balance(id)).toMatchObject({ available: '1.50', pending: '0.00' });
    // A decline may come with the commission zeroed.
    const declined = await record({ member_id: id, status: 'declined', commission: '0' });
    expect(declined).toMatchObject({ status: 'declined', cashback: '0.00' });
    expect(await balance(id)).toMatchObject({ available: '1.50', pending: '0.00' });
  });

  it('declines a pending order: its pending cashback goes and nothing is credited', async () => {
    const id = await member('ord-decline');
    await record({ transaction_id: 'D-1', member_id: id });
    const declined = await record({ transaction_id: 'D-1', member_id: id, status: 'declined' });
    expect(declined).toMatchObject({ status: 'declined', changes: ['status'] });
    expect(await balance(id)).toMatchObject({ pending: '0.00', available: '0.00' });
    expect(await entries(id)).toHaveLength(0);
  });

  it('reverses cashback and referral when an approved order is declined, shows a negative balance, and credits again on re-approval', async () => {
    const { ctx } = use();
    const referrer = await member('rev-referrer');
    const id = await member('rev-member');
    await ctx.referrals.add({ referrer_id: referrer, referee_id: id }, 'user:1');
    const order = await record({ transaction_id: 'R-1', member_id: id, status: 'approved', commission: '20.00' });
    await ctx.ledger.adjust({ member_id: id, type: 'debit', amount: '8.00', note: 'spent' }, 'user:1');
    const declined = await record({ transaction_id: 'R-1', member_id: id, status: 'declined', commission: '20.00', source: 'poll' });
    expect(declined).toMatchObject({ status: 'declined', cashback_entry_id: null, referral: null });
    expect(await balance(id)).toMatchObject({ available: '-8.00', lifetime_earned: '0.00' });
    expect(await balance(referrer)).toMatchObject({ available: '0.00' });
    const reversals = (await entries(id)).filter((e) => e.type === 'reversal');
    expect(reversals).toHaveLength(1);
    expect(reversals[0]).toMatchObject({ amount: '-10.00', balance_after: '-8.00', order_id: order.id });

    const again = await record({ transaction_id: 'R-1', member_id: id, status: 'approved', commission: '20.00' });
    expect(again).toMatchObject({ status: 'approved', changes: ['status'] });
    expect(again.cashback_entry_id).not.toBe(order.cashback_entry_id);
    expect(await balance(id)).toMatchObject({ available: '2.00' });
    expect(await balance(referrer)).toMatchObject({ available: '1.00' });
    await record({ transaction_id: 'R-1', member_id: id, status: 'declined', commission: '20.00' });
    expect(await balance(id)).toMatchObject({ available: '-8.00' });
    expect((await entries(id)).filter((e) => e.type === 'cashback')).toHaveLength(2);
    expect((await entries(id)).filter((e) => e.type === 'reversal')).toHaveLength(2);
  });

  it('skips a credit an administrator already reversed when the order is declined', async () => {
    const { ctx } = use();
    const id = await member('rev-manual');
    const order = await record({ transaction_id: 'RM-1', member_id: id, status: 'approved' });
    await ctx.ledger.reverse(order.cashback_entry_id!, 'by hand', 'user:1');
    const declined = await record({ transaction_id: 'RM-1', member_id: id, status: 'declined' });
    expect(declined.status).toBe('declined');
    expect(await balance(id)).toMatchObject({ available: '0.00' });
    expect((await entries(id)).filter((e) => e.type === 'reversal')).toHaveLength(1);
  });

  it('corrects amounts while pending with the rule the order was recorded with, and not after', async () => {
    const { ctx } = use();
    const id = await member('ord-correct');
    await ctx.cashback.set('correctnet', null, 'percent_commission', '40', null, 'user:1');
    const order = await record({ network: 'correctnet', transaction_id: 'C-1', member_id: id, commission: '10.00' });
    expect(order.cashback).toBe('4.00');
    await ctx.cashback.set('correctnet', null, 'percent_commission', '90', null, 'user:1');
    const corrected = await record({ network: 'correctnet', transaction_id: 'C-1', member_id: id, sale_amount: '150.00', commission: '15.00' });
    expect(corrected).toMatchObject({
      cashback: '6.00',
      sale_amount: '150.00',
      commission: '15.00',
      changes: ['amounts'],
      cashback_rule: { type: 'percent_commission', value: '40' },
    });
    expect(await balance(id)).toMatchObject({ pending: '6.00' });
    const byAdmin = await ctx.orders.update(order.id, { commission: '5.00' }, 'user:1');
    expect(byAdmin).toMatchObject({ cashback: '2.00', sale_amount: '150.00', changes: ['amounts'] });
    expect(await balance(id)).toMatchObject({ pending: '2.00' });
    await ctx.orders.update(order.id, { status: 'approved', note: 'confirmed by the shop' }, 'user:1');
    expect(await balance(id)).toMatchObject({ pending: '0.00', available: '2.00' });
    const late = await record({ network: 'correctnet', transaction_id: 'C-1', member_id: id, commission: '50.00', status: 'approved' });
    expect(late).toMatchObject({ duplicate: true, ignored: ['amounts'], commission: '5.00' });
    await expect(ctx.orders.update(order.id, { commission: '6.00' }, 'user:1')).rejects.toMatchObject({ code: 'svc_order_not_pending', status: 409 });
    expect(((await entries(id))[0] as { note: string }).note).toBe(`Cashback for order correctnet:C-1: confirmed by the shop`);
  });

  it('moves pending between currencies when a pending order is corrected to another currency', async () => {
    const { ctx } = use();
    const id = await member('ord-currency');
    const order = await record({ member_id: id, commission: '10.00' });
    await expect(ctx.orders.update(order.id, { currency: 'EUR' }, 'user:1')).rejects.toMatchObject({ code: 'svc_invalid_order', data: { field: 'currency' } });
    await ctx.orders.update(order.id, { currency: 'EUR', sale_amount: '90.00', commission: '8.00' }, 'user:1');
    expect(await balance(id)).toMatchObject({ pending: '0.00' });
    expect(await balance(id, 'EUR')).toMatchObject({ pending: '4.00' });
  });

  it('ignores out-of-order network reports but refuses the same from an administrator', async () => {
    const { ctx } = use();
    const id = await member('ord-order');
    const order = await record({ transaction_id: 'O-1', member_id: id, status: 'approved' });
    const late = await record({ transaction_id: 'O-1', member_id: id, status: 'pending' });
    expect(late).toMatchObject({ status: 'approved', duplicate: true, ignored: ['status'] });
    await expect(record({ transaction_id: 'O-1', member_id: id, status: 'pending', source: 'manual' })).rejects.toMatchObject({
      code: 'svc_invalid_transition',
      status: 409,
    });
    await expect(record({ transaction_id: 'O-1', member_id: id, commission: '11.00', status: 'approved', source: 'manual' })).rejects.toMatchObject({
      code: 'svc_order_not_pending',
      status: 409,
    });
    await expect(ctx.orders.update(order.id, { status: 'pending' }, 'user:1')).rejects.toMatchObject({
      code: 'svc_invalid_transition',
      data: { from: 'approved', to: 'pending' },
    });
    expect(await balance(id)).toMatchObject({ available: '5.00' });
  });

  it('keeps the amounts of a decline report off the order, so a re-approval credits the cashback', async () => {
    const id = await member('ord-zeroed');
    await record({ transaction_id: 'Z-1', member_id: id, commission: '10.00' });
    const declined = await record({ transaction_id: 'Z-1', member_id: id, commission: '0', sale_amount: '0', status: 'declined' });
    expect(declined).toMatchObject({ status: 'declined', commission: '10.00', ignored: ['amounts'] });
    await record({ transaction_id: 'Z-1', member_id: id, commission: '10.00', status: 'approved' });
    expect(await balance(id)).toMatchObject({ available: '5.00', pending: '0.00' });
  });

  it('keeps an unmatched order and applies the effects of its status on assignment', async () => {
    const { ctx } = use();
    const id = await member('ord-assign');
    const other = await member('ord-assign-other');
    const approved = await record({ sub_id: 'nobody-here', status: 'approved' });
    const pending = await record({ sub_id: '99999999' });
    expect(approved.member).toBeNull();
    expect(pending.member).toBeNull();
    const assigned = await ctx.orders.assign(approved.id, id, 'user:1');
    expect(assigned).toMatchObject({ member: { id }, changes: ['member'] });
    expect(await balance(id)).toMatchObject({ available: '5.00' });
    await ctx.orders.assign(pending.id, id, 'user:1');
    expect(await balance(id)).toMatchObject({ pending: '5.00' });
    expect((await ctx.orders.assign(approved.id, id, 'user:1')).duplicate).toBe(true);
    await expect(ctx.orders.assign(approved.id, other, 'user:1')).rejects.toMatchObject({
      code: 'svc_order_already_assigned',
      status: 409,
      data: { member_id: id },
    });
    await expect(ctx.orders.assign(123_456_789, id, 'user:1')).rejects.toMatchObject({ code: 'svc_order_not_found', status: 404 });
    await expect(ctx.orders.assign(pending.id, 123_456_789, 'user:1')).rejects.toMatchObject({ code: 'svc_member_not_found', status: 404 });
    expect(await balance(id)).toMatchObject({ available: '5.00', pending: '5.00' });
    const unmatched = await ctx.orders.list({ unmatched: true, page: 1, per_page: 100 });
    expect(unmatched.items.map((o) => o.id)).not.toContain(approved.id);
  });

  it('matches the member from a numeric sub id or a login', async () => {
    const id = await member('subby');
    expect((await record({ sub_id: String(id) })).member?.id).toBe(id);
    expect((await record({ sub_id: 'subby' })).member?.id).toBe(id);
    expect((await record({ sub_id: 'SUBBY' })).member?.id).toBe(id);
    expect((await record({ sub_id: `${id}x` })).member).toBeNull();
  });

  it('counts a transaction once when it arrives by postback and by polling', async () => {
    const id = await member('ord-twice');
    await record({ transaction_id: 'TW-1', member_id: id, source: 'postback' });
    await record({ transaction_id: 'TW-1', sub_id: String(id), source: 'poll', status: 'approved' });
    const last = await record({ transaction_id: 'TW-1', member_id: id, source: 'postback', status: 'approved' });
    expect(last.duplicate).toBe(true);
    expect(last.source).toBe('postback');
    expect((await entries(id)).filter((e) => e.type === 'cashback')).toHaveLength(1);
    expect(await balance(id)).toMatchObject({ available: '5.00', pending: '0.00' });
  });

  it('credits exactly once when ten reports of the same transaction race', async () => {
    const { ctx } = use();
    const referrer = await member('race-referrer');
    const id = await member('race-member');
    await ctx.referrals.add({ referrer_id: referrer, referee_id: id }, 'user:1');
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => record({ transaction_id: 'RACE-1', member_id: id, status: 'approved', source: i % 2 ? 'poll' : 'postback' })),
    );
    expect(results.filter((r) => r.changes[0] === 'created')).toHaveLength(1);
    expect(results.filter((r) => r.duplicate)).toHaveLength(9);
    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    expect(await entries(id)).toHaveLength(1);
    expect(await balance(id)).toMatchObject({ available: '5.00' });
    expect(await balance(referrer)).toMatchObject({ available: '0.50' });
    // And a pending order approved by ten reports at once.
    await record({ transaction_id: 'RACE-2', member_id: id });
    const approvals = await Promise.all(Array.from({ length: 10 }, () => record({ transaction_id: 'RACE-2', member_id: id, status: 'approved' })));
    expect(approvals.filter((r) => r.changes.includes('status'))).toHaveLength(1);
    expect(await balance(id)).toMatchObject({ available: '10.00', pending: '0.00' });
  });

  it('keeps balances per currency with the currency exponent', async () => {
    const id = await member('ord-jpy');
    const order = await record({ member_id: id, currency: 'JPY', sale_amount: '12000', commission: '999', status: 'approved' });
    expect(order).toMatchObject({ sale_amount: '12000', commission: '999', cashback: '499', currency: 'JPY' });
    expect(await balance(id, 'JPY')).toMatchObject({ available: '499' });
  });

  it('refuses bad input with defined codes, and nothing is recorded', async () => {
    const { ctx } = use();
    const id = await member('ord-bad');
    for (const amount of ['-1.00', '0', '1.001', 'ten', '1e3', '99999999999999999', ''])
      await expect(record({ member_id: id, commission: amount })).rejects.toMatchObject({
        code: 'svc_invalid_amount',
        status: 400,
        data: { field: 'commission' },
      });
    await expect(record({ member_id: id, sale_amount: '-5.00' })).rejects.toMatchObject({ code: 'svc_invalid_amount', data: { field: 'sale_amount' } });
    await expect(record({ member_id: id, currency: 'ZZZ' })).rejects.toMatchObject({ code: 'svc_invalid_currency', status: 400 });
    await expect(record({ member_id: 123_456_789 })).rejects.toMatchObject({ code: 'svc_member_not_found', status: 404 });
    await expect(record({ member_id: id, status: 'paid' as never })).rejects.toMatchObject({ code: 'svc_invalid_order', data: { field: 'status' } });
    await expect(record({ member_id: id, transaction_id: 'tränsaction' })).rejects.toMatchObject({
      code: 'svc_invalid_order',
      data: { field: 'transaction_id' },
    });
    await expect(record({ member_id: id, network: '' })).rejects.toMatchObject({ code: 'svc_invalid_order', data: { field: 'network' } });
    await expect(record({ member_id: id, source: 'fax' as never })).rejects.toMatchObject({ code: 'svc_invalid_order', data: { field: 'source' } });
    await expect(record({ member_id: id, event_at: 'yesterday' })).rejects.toMatchObject({ code: 'svc_invalid_order', data: { field: 'event_at' } });
    await ctx.cashback.set('flatnet', null, 'flat', '2.00', 'EUR', 'user:1');
    await expect(record({ network: 'flatnet', member_id: id })).rejects.toMatchObject({
      code: 'svc_currency_mismatch',
      status: 409,
      data: { rule_currency: 'EUR', order_currency: 'USD' },
    });
    await expect(ctx.orders.update(123_456_789, { status: 'approved' }, 'user:1')).rejects.toMatchObject({ code: 'svc_order_not_found', status: 404 });
    await expect(ctx.orders.get(123_456_789)).rejects.toMatchObject({ code: 'svc_order_not_found' });
    expect((await ctx.orders.list({ member_id: id, page: 1, per_page: 10 })).total).toBe(0);
    expect(await balance(id)).toMatchObject({ pending: '0.00', available: '0.00' });
  });

  it('keeps the network record with secret-looking keys redacted, and bounded in size', async () => {
    const { ctx } = use();
    const order = await record({ raw: { txn: 'RAW-1', token: 'hunter2', nested: { signature: 'abc' }, amount: '10.00' } });
    expect((await ctx.orders.get(order.id)).raw).toEqual({ txn: 'RAW-1', token: '[redacted]', nested: { signature: '[redacted]' }, amount: '10.00' });
    const huge = await record({ raw: { text: 'ü'.repeat(40_000) } });
    expect((await ctx.orders.get(huge.id)).raw).toMatchObject({ truncated: true });
    const list = await ctx.orders.list({ network: 'awin', page: 1, per_page: 1 });
    expect(list.items[0]).not.toHaveProperty('raw');
  });

  it('logs every change and every refusal', async () => {
    const { ctx } = use();
    const id = await member('ord-logged');
    await record({ transaction_id: 'L-1', member_id: id });
    await record({ transaction_id: 'L-1', member_id: id, status: 'approved' });
    await record({ transaction_id: 'L-1', member_id: id, commission: 'x' }).catch(() => {});
    await ctx.logger.flush();
    const { items } = await ctx.logger.list({ source: 'orders', page: 1, per_page: 100 });
    const about = items.filter((l) => l.context?.transaction_id === 'L-1' || l.context?.order_id !== undefined);
    expect(about.map((l) => l.message)).toEqual(expect.arrayContaining(['Order recorded', 'Order status changed', 'Order report refused']));
    expect(items.find((l) => l.message === 'Order report refused' && l.context?.transaction_id === 'L-1')).toMatchObject({
      level: 'warning',
      context: { code: 'svc_invalid_amount' },
    });
  });
});
