import { expect, it } from 'vitest';
import { describeEachDialect } from '../../helpers/context.js';

// A database of this file's own: verify reads the whole ledger, so no other test's rows may be in it.
describeEachDialect('the ledger audit', (use) => {
  it('names every kind of damage: sums, lifetime totals, pending, missing rows, the row count and bad reversals', async () => {
    const { ctx } = use();
    const { db, ledger, users } = ctx;
    const a = (await users.create({ login: 'audit-a', email: 'audit-a@example.com' })).id;
    const c = (await users.create({ login: 'audit-c', email: 'audit-c@example.com' })).id;
    await ledger.adjust({ member_id: a, type: 'credit', amount: '5.00', note: 'bonus' }, 'user:1');
    expect(await ledger.verify()).toEqual([]);

    // Member a's row: lifetime totals and pending that no entry or order explains.
    await db.execute("UPDATE balances SET lifetime_earned = 100, lifetime_paid = 50, pending = 300 WHERE member_id = ? AND currency = 'USD'", [a]);
    // The running count of balance rows off by 5.
    await db.execute("UPDATE counters SET value = value + 5 WHERE name = 'balances'");
    // Member c: GBP entries without a balance row, each balance_after the running sum.
    const now = new Date();
    const entry = async (type: string, amount: number, balanceAfter: number, reverses: number | null) =>
      (
        await db.execute(
          'INSERT INTO ledger_entries (member_id, currency, type, amount, balance_after, source_type, source_id, order_id, reverses_id, note, actor, created_at) VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, ?, NULL, ?, ?)',
          [c, 'GBP', type, amount, balanceAfter, type === 'reversal' ? 'reversal' : type === 'payout' ? 'payout' : 'adjustment', reverses, 'test', now],
        )
      ).insertId!;
    const payout = await entry('payout', -100, -100, null);
    const reversedPayout = await entry('reversal', 100, 0, payout);
    const credit = await entry('adjustment', 300, 300, null);
    const halfReversal = await entry('reversal', -200, 100, credit);
    const reversedReversal = await entry('reversal', 200, 300, halfReversal);
    const stray = await entry('adjustment', 50, 350, reversedPayout);
    const orphanReversal = await entry('reversal', 10, 360, null);

    const found = await ledger.verify();
    const key = (d: { kind: string; entry_id?: number; detail: string }) => `${d.kind}:${d.entry_id ?? ''}:${d.detail}`;
    expect(found.map(key).sort()).toEqual(
      [
        'earned_mismatch::lifetime_earned differs from the entries',
        'paid_mismatch::lifetime_paid differs from the entries',
        'pending_mismatch::pending differs from the cashback of pending orders',
        'missing_balance::entries without a balance row',
        'balance_count_mismatch::the running count of balance rows differs from the table',
        `invalid_reversal:${reversedPayout}:reversal reverses a payout entry`,
        `invalid_reversal:${halfReversal}:reversal does not mirror the entry it reverses`,
        `invalid_reversal:${reversedReversal}:reversal reverses a reversal`,
        `invalid_reversal:${orphanReversal}:reversal reverses no existing entry`,
        `invalid_reversal:${stray}:reversal type and reverses_id disagree`,
        `invalid_reversal:${orphanReversal}:reversal type and reverses_id disagree`,
      ].sort(),
    );
    const byKind = (kind: string) => found.find((d) => d.kind === kind)!;
    expect(byKind('earned_mismatch')).toMatchObject({ member_id: a, currency: 'USD', expected: '0.00', actual: '1.00' });
    expect(byKind('paid_mismatch')).toMatchObject({ member_id: a, currency: 'USD', expected: '0.00', actual: '0.50' });
    expect(byKind('pending_mismatch')).toMatchObject({ member_id: a, currency: 'USD', expected: '0.00', actual: '3.00' });
    // -1.00 + 1.00 + 3.00 - 2.00 + 2.00 + 0.50 + 0.10
    expect(byKind('missing_balance')).toMatchObject({ member_id: c, currency: 'GBP', expected: '3.60' });
    expect(byKind('balance_count_mismatch')).toMatchObject({ expected: '1', actual: '6' });
  });
});
