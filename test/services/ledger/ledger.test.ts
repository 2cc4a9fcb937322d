import { expect, it } from 'vitest';
import { describeEachDialect } from '../../helpers/context.js';

describeEachDialect('the ledger', (use) => {
  const member = async (login: string) => (await use().ctx.users.create({ login, email: `${login}@example.com` })).id;

  it('credits and debits with the balance after each entry, and refuses an overdraft', async () => {
    const { ledger } = use().ctx;
    const id = await member('ledger-a');
    const credit = await ledger.adjust({ member_id: id, type: 'credit', amount: '10.00', note: 'welcome bonus' }, 'user:1');
    expect(credit.entry).toMatchObject({
      type: 'adjustment',
      amount: '10.00',
      balance_after: '10.00',
      currency: 'USD',
      actor: 'user:1',
      note: 'welcome bonus',
    });
    const debit = await ledger.adjust({ member_id: id, type: 'debit', amount: '2.50', note: 'correction' }, 'user:1');
    expect(debit.balance.available).toBe('7.50');
    await expect(ledger.adjust({ member_id: id, type: 'debit', amount: '7.51', note: 'too much' }, 'user:1')).rejects.toMatchObject({
      code: 'svc_insufficient_funds',
      status: 409,
      data: { available: '7.50' },
    });
    const negative = await ledger.adjust({ member_id: id, type: 'debit', amount: '8.00', note: 'clawback', allow_negative: true }, 'user:1');
    expect(negative.balance.available).toBe('-0.50');
    expect(await ledger.verify()).toEqual([]);
  });

  it("posts a batch of earned credits with each entry's balance after it, and refuses anything else in one", async () => {
    const { ledger, db } = use().ctx;
    const a = await member('ledger-many-a');
    const b = await member('ledger-many-b');
    await ledger.adjust({ member_id: a, type: 'credit', amount: '1.00', note: 'start' }, 'user:1');
    const credit = (memberId: number, amount: number, type: 'cashback' | 'referral' = 'cashback') => ({
      memberId,
      currency: 'USD',
      type,
      amount,
      sourceType: 'order' as const,
      actor: 'system',
    });
    const rows = await db.transaction((t) => ledger.postMany([credit(a, 200), credit(b, 50, 'referral'), credit(a, 25)], t));
    expect(rows.map((r) => [r.member_id, r.amount, r.balance_after])).toEqual([
      [a, 200, 300],
      [b, 50, 50],
      [a, 25, 325],
    ]);
    expect(await ledger.balanceOf(a, 'USD')).toMatchObject({ available: '3.25', lifetime_earned: '2.25' });
    const payoutReturn = { ...credit(a, 100), type: 'payout_return' as const, sourceType: 'payout' as const };
    await expect(db.transaction((t) => ledger.postMany([credit(a, 1), payoutReturn], t))).rejects.toMatchObject({ code: 'svc_invalid_amount' });
    await expect(db.transaction((t) => ledger.postMany([credit(a, -1)], t))).rejects.toMatchObject({ code: 'svc_invalid_amount' });
    expect(await ledger.balanceOf(a, 'USD')).toMatchObject({ available: '3.25' });
    expect(await ledger.verify()).toEqual([]);
  });

  it('refuses a move that would take a balance past 2^53 - 1 (409 svc_amount_overflow), on every path, and changes nothing', async () => {
    const { ledger, db } = use().ctx;
    const id = await member('ledger-overflow');
    const near = Number.MAX_SAFE_INTEGER - 100;
    const entry = (amount: number, type: 'cashback' | 'adjustment' = 'cashback') => ({
      memberId: id,
      currency: 'USD',
      type,
      amount,
      sourceType: type === 'cashback' ? ('order' as const) : ('adjustment' as const),
      actor: 'system',
    });
    await db.transaction((t) => ledger.post(entry(near, 'adjustment'), t));
    const before = await ledger.balanceOf(id, 'USD');
    expect(before.available).toBe('90071992547408.91');
    const refused = { code: 'svc_amount_overflow', status: 409, data: { member_id: id, currency: 'USD' } };
    await expect(db.transaction((t) => ledger.post(entry(101, 'adjustment'), t))).rejects.toMatchObject(refused);
    await expect(ledger.adjust({ member_id: id, type: 'credit', amount: '1.01', note: 'one cent too many' }, 'user:1')).rejects.toMatchObject(refused);
    await expect(db.transaction((t) => ledger.postMany([entry(60), entry(41)], t))).rejects.toMatchObject(refused);
    await db.transaction((t) => ledger.addPending(id, 'USD', near, t));
    await expect(db.transaction((t) => ledger.addPending(id, 'USD', 101, t))).rejects.toMatchObject(refused);
    expect(await ledger.balanceOf(id, 'USD')).toEqual({ ...before, pending: '90071992547408.91' });
    // Below the negative bound as well.
    await expect(
      db.transaction((t) =>
        ledger.addPendingMany(
          [
            { memberId: id, currency: 'USD', delta: -near },
            { memberId: id, currency: 'USD', delta: -near },
          ],
          t,
        ),
      ),
    ).rejects.toMatchObject(refused);
    for (const _ of [1, 2]) await db.transaction((t) => ledger.addPending(id, 'USD', -near, t));
    await expect(db.transaction((t) => ledger.addPending(id, 'USD', -101, t))).rejects.toMatchObject(refused);
    expect((await ledger.balanceOf(id, 'USD')).pending).toBe('-90071992547408.91');
    // Up to the bound itself is fine.
    await db.transaction((t) => ledger.postMany([entry(60), entry(40)], t));
    expect((await ledger.balanceOf(id, 'USD')).available).toBe('90071992547409.91');
    await db.transaction((t) => ledger.addPending(id, 'USD', near, t));
    expect(await ledger.verify()).toEqual([]);
  });

  it('keeps balances per currency with each currency exponent', async () => {
    const { ledger } = use().ctx;
    const id = await member('ledger-jpy');
    const r = await ledger.adjust({ member_id: id, type: 'credit', amount: '1250', currency: 'JPY', note: 'yen' }, 'cli');
    expect(r.balance).toMatchObject({ currency: 'JPY', available: '1250' });
    await expect(ledger.adjust({ member_id: id, type: 'credit', amount: '12.5', currency: 'JPY', note: 'x' }, 'cli')).rejects.toMatchObject({
      code: 'svc_invalid_amount',
    });
    await expect(ledger.adjust({ member_id: id, type: 'credit', amount: '1', currency: 'ZZZ', note: 'x' }, 'cli')).rejects.toMatchObject({
      code: 'svc_invalid_currency',
    });
  });

  it('refuses unknown members, missing notes and bad amounts', async () => {
    const { ledger } = use().ctx;
    const id = await member('ledger-bad');
    await expect(ledger.adjust({ member_id: 999_999, type: 'credit', amount: '1.00', note: 'x' }, 'cli')).rejects.toMatchObject({
      code: 'svc_member_not_found',
      status: 404,
    });
    await expect(ledger.adjust({ member_id: id, type: 'credit', amount: '1.00', note: '  ' }, 'cli')).rejects.toMatchObject({ code: 'svc_note_required' });
    for (const amount of ['-1.00', '0', '1.001', 'ten', '99999999999999999'])
      await expect(ledger.adjust({ member_id: id, type: 'credit', amount, note: 'x' }, 'cli')).rejects.toMatchObject({ code: 'svc_invalid_amount' });
  });

  it('reverses an entry once, never a reversal, and may show a negative balance', async () => {
    const { ledger } = use().ctx;
    const id = await member('ledger-rev');
    const credit = await ledger.adjust({ member_id: id, type: 'credit', amount: '5.00', note: 'bonus' }, 'cli');
    await ledger.adjust({ member_id: id, type: 'debit', amount: '4.00', note: 'spent' }, 'cli');
    const { reversal, original } = await ledger.reverse(credit.entry.id, 'granted by mistake', 'cli');
    expect(reversal).toMatchObject({
      type: 'reversal',
      amount: '-5.00',
      balance_after: '-4.00',
      reverses_id: credit.entry.id,
      source: { type: 'reversal', id: String(credit.entry.id) },
    });
    expect(original.reversed_by).toBe(reversal.id);
    await expect(ledger.reverse(credit.entry.id, null, 'cli')).rejects.toMatchObject({ code: 'svc_already_reversed', status: 409 });
    await expect(ledger.reverse(reversal.id, null, 'cli')).rejects.toMatchObject({ code: 'svc_reverse_reversal', status: 409 });
    await expect(ledger.reverse(123_456_789, null, 'cli')).rejects.toMatchObject({ code: 'svc_entry_not_found', status: 404 });
    expect(await ledger.verify()).toEqual([]);
  });

  it('lets exactly one of many concurrent reversals of an entry win', async () => {
    const { ledger } = use().ctx;
    const id = await member('ledger-race');
    const credit = await ledger.adjust({ member_id: id, type: 'credit', amount: '3.00', note: 'x' }, 'cli');
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => ledger.reverse(credit.entry.id, null, 'cli')));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results.filter((r) => r.status === 'rejected')) expect((r as PromiseRejectedResult).reason).toMatchObject({ code: 'svc_already_reversed' });
    expect((await ledger.balanceOf(id, 'USD')).available).toBe('0.00');
    expect(await ledger.verify()).toEqual([]);
  });

  it('never overdraws under concurrent debits that together exceed the balance', async () => {
    const { ledger } = use().ctx;
    const id = await member('ledger-debits');
    await ledger.adjust({ member_id: id, type: 'credit', amount: '10.00', note: 'x' }, 'cli');
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, () => ledger.adjust({ member_id: id, type: 'debit', amount: '3.00', note: 'race' }, 'cli')),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    expect((await ledger.balanceOf(id, 'USD')).available).toBe('1.00');
    expect(await ledger.verify()).toEqual([]);
  });

  it('keeps balance == sum(entries) under mixed concurrent credits and debits', async () => {
    const { ledger } = use().ctx;
    const ids = [await member('mix1'), await member('mix2'), await member('mix3')];
    await Promise.all(ids.map((id) => ledger.adjust({ member_id: id, type: 'credit', amount: '5.00', note: 'seed' }, 'cli')));
    const ops = Array.from({ length: 60 }, (_, i) =>
      ledger.adjust({ member_id: ids[i % 3], type: i % 2 ? 'debit' : 'credit', amount: `${(i % 7) + 1}.00`, note: `op ${i}` }, 'cli').catch((e) => e),
    );
    await Promise.all(ops);
    expect(await ledger.verify()).toEqual([]);
    for (const id of ids) expect(Number((await ledger.balanceOf(id, 'USD')).available)).toBeGreaterThanOrEqual(0);
  });

  it('lists members with balances, filtered and ordered', async () => {
    const { ledger } = use().ctx;
    // Members of its own, so the test reads no other test's data.
    const [a, b, yen] = [await member('roster-a'), await member('roster-b'), await member('roster-yen')];
    await ledger.adjust({ member_id: a, type: 'debit', amount: '0.50', note: 'clawback', allow_negative: true }, 'user:1');
    await ledger.adjust({ member_id: b, type: 'credit', amount: '5.00', note: 'bonus' }, 'user:1');
    await ledger.adjust({ member_id: yen, type: 'credit', amount: '300', currency: 'JPY', note: 'bonus' }, 'user:1');
    const page = await ledger.listMembers({ search: 'roster-', currency: 'USD', orderby: 'available', order: 'desc', page: 1, per_page: 100 });
    expect(page.items.map((m) => [m.login, m.currency, m.available])).toEqual([
      ['roster-b', 'USD', '5.00'],
      ['roster-a', 'USD', '-0.50'],
    ]);
    const jpy = await ledger.listMembers({ search: 'roster-', currency: 'JPY', page: 1, per_page: 10 });
    expect(jpy.items.map((m) => m.login)).toEqual(['roster-yen']);
    const rich = await ledger.listMembers({ min_balance: '1.00', page: 1, per_page: 100 });
    expect(rich.items.every((m) => Number(m.available) >= 1)).toBe(true);
    expect(rich.items.map((m) => m.login)).toContain('roster-b');
  });

  it('finds a tampered balance, a broken chain and a reversed payout', async () => {
    const { ctx } = use();
    const id = await member('tampered');
    const credit = await ctx.ledger.adjust({ member_id: id, type: 'credit', amount: '2.00', note: 'x' }, 'cli');
    await ctx.db.execute("UPDATE balances SET available = available + 1 WHERE member_id = ? AND currency = 'USD'", [id]);
    await ctx.db.execute('UPDATE ledger_entries SET balance_after = 999 WHERE id = ?', [credit.entry.id]);
    const kinds = (await ctx.ledger.verify()).map((d) => d.kind).sort();
    expect(kinds).toEqual(['balance_after_mismatch', 'balance_mismatch']);
    await ctx.db.execute("UPDATE balances SET available = available - 1 WHERE member_id = ? AND currency = 'USD'", [id]);
    await ctx.db.execute('UPDATE ledger_entries SET balance_after = 200 WHERE id = ?', [credit.entry.id]);
    expect(await ctx.ledger.verify()).toEqual([]);
  });
});
