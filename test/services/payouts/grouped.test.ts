import { expect, it } from 'vitest';
import { describeEachDialect } from '../../helpers/context.js';
import { inOneGroup } from '../../helpers/groups.js';

/** What a caller sees of a payout write, without the ids and times that differ between two runs. */
function seen(outcome: PromiseSettledResult<unknown>): unknown {
  if (outcome.status === 'rejected') {
    const err = outcome.reason as { code?: string; status?: number; data?: unknown; message?: string };
    return { refused: err.code ?? err.message, status: err.status, data: err.data };
  }
  const v = outcome.value as { payout: { status: string; amount: string }; entry?: { amount: string }; balance?: { available: string } };
  return { status: v.payout.status, amount: v.payout.amount, entry: v.entry?.amount, available: v.balance?.available };
}

describeEachDialect('payout writes in groups', (use) => {
  let seq = 0;

  it('answers payout requests, completions and cancellations in one group exactly as the same calls one after the other', async () => {
    const { payouts, ledger, db, users } = use().ctx;
    const calls = async () => {
      const login = `grouped-payee${++seq}`;
      const id = (await users.create({ login, email: `${login}@example.com` })).id;
      await ledger.adjust({ member_id: id, type: 'credit', amount: '85.00', note: 'earned' }, 'test');
      const first = (await payouts.create({ member_id: id, amount: '25.00', method: 'paypal' }, 'test')).payout.id;
      const second = (await payouts.create({ member_id: id, amount: '25.00', method: 'paypal' }, 'test')).payout.id;
      return [
        () => payouts.create({ member_id: id, amount: '30.00', method: 'paypal' }, 'test'),
        // Both requests exceed the balance together: the first in the group wins.
        () => payouts.create({ member_id: id, amount: '30.00', method: 'paypal' }, 'test'),
        () => payouts.create({ member_id: 999_999, amount: '30.00', method: 'paypal' }, 'test'),
        () => payouts.complete(first, { reference: 'TX-1' }, 'test'),
        // Closed by the completion just before it in the group.
        () => payouts.cancel(first, { reason: 'too late' }, 'test'),
        () => payouts.cancel(second, { reason: 'member asked' }, 'test'),
        () => payouts.complete(second, {}, 'test'),
      ];
    };
    const alone: PromiseSettledResult<unknown>[] = [];
    for (const call of await calls()) alone.push((await Promise.allSettled([call()]))[0]);
    const grouped = await calls();
    const before = { ...db.groups.stats };
    const together = await inOneGroup(db.groups, grouped as (() => Promise<unknown>)[]);
    expect(together.map(seen)).toEqual(alone.map(seen));
    expect(together.map(seen)).toEqual([
      { status: 'pending', amount: '30.00', entry: '-30.00', available: '5.00' },
      { refused: 'svc_insufficient_funds', status: 409, data: { available: '5.00', currency: 'USD' } },
      { refused: 'svc_member_not_found', status: 404, data: {} },
      { status: 'paid', amount: '25.00', entry: undefined, available: undefined },
      { refused: 'svc_payout_closed', status: 409, data: expect.anything() },
      { status: 'cancelled', amount: '25.00', entry: '25.00', available: '30.00' },
      { refused: 'svc_payout_closed', status: 409, data: expect.anything() },
    ]);
    expect(db.groups.stats.failed).toBe(before.failed);
    expect(db.groups.stats.grouped - before.grouped).toBeGreaterThanOrEqual(grouped.length);
    expect(await ledger.verify()).toEqual([]);
    expect(await payouts.verify()).toEqual([]);
  });
});
