import { expect, it } from 'vitest';
import { requestHash } from '../../../src/services/idempotency/index.js';
import { describeEachDialect } from '../../helpers/context.js';
import { inOneGroup } from '../../helpers/groups.js';

/** What a caller sees of an outcome, without the ids and times that differ between two runs. */
function seen(outcome: PromiseSettledResult<unknown>): unknown {
  if (outcome.status === 'rejected') {
    const err = outcome.reason as { code?: string; status?: number; data?: Record<string, unknown>; message?: string };
    const data = err.data && 'reversed_by' in err.data ? { ...err.data, reversed_by: 'an id' } : err.data;
    return { refused: err.code ?? err.message, status: err.status, data };
  }
  const v = outcome.value as { entry?: { amount: string; type: string }; balance?: { available: string }; reversal?: { amount: string } };
  return { amount: v.entry?.amount ?? v.reversal?.amount, type: v.entry?.type ?? 'reversal', available: v.balance?.available };
}

describeEachDialect('money writes in groups', (use) => {
  let seq = 0;
  const member = async () => {
    const login = `grouped-${++seq}`;
    return (await use().ctx.users.create({ login, email: `${login}@example.com` })).id;
  };

  it('answers adjustments and reversals in one group exactly as the same calls one after the other', async () => {
    const { ctx } = use();
    const { ledger, db } = ctx;
    const calls = async (id: number) => {
      const opening = await ledger.adjust({ member_id: id, type: 'credit', amount: '10.00', note: 'opening' }, 'user:1');
      const entry = opening.entry.id;
      return [
        () => ledger.adjust({ member_id: id, type: 'debit', amount: '6.00', note: 'first debit' }, 'user:1'),
        // The sum of both debits exceeds the balance: the first in the group wins.
        () => ledger.adjust({ member_id: id, type: 'debit', amount: '6.00', note: 'second debit' }, 'user:1'),
        // Checked in the group (a credit to an unknown member is refused before it joins one).
        () => ledger.adjust({ member_id: 999_999, type: 'debit', amount: '1.00', note: 'nobody' }, 'user:1'),
        () => ledger.reverse(entry, 'wrong opening', 'user:1'),
        () => ledger.reverse(entry, 'again', 'user:1'),
        () => ledger.adjust({ member_id: id, type: 'credit', amount: '1.00', note: 'after' }, 'user:1'),
        () => ledger.adjust({ member_id: id, type: 'debit', amount: '1.00', note: 'negative', allow_negative: true }, 'user:1'),
      ];
    };
    const alone: PromiseSettledResult<unknown>[] = [];
    for (const call of await calls(await member())) alone.push(await Promise.allSettled([call()]).then(([o]) => o));
    const grouped = await calls(await member());
    const before = { ...db.groups.stats };
    const together = await inOneGroup(db.groups, grouped as (() => Promise<unknown>)[]);
    expect(together.map(seen)).toEqual(alone.map(seen));
    expect(together.map(seen)).toEqual([
      { amount: '-6.00', type: 'adjustment', available: '4.00' },
      { refused: 'svc_insufficient_funds', status: 409, data: { available: '4.00', currency: 'USD' } },
      { refused: 'svc_member_not_found', status: 404, data: {} },
      { amount: '-10.00', type: 'reversal', available: undefined },
      { refused: 'svc_already_reversed', status: 409, data: { reversed_by: 'an id' } },
      { amount: '1.00', type: 'adjustment', available: '-5.00' },
      { amount: '-1.00', type: 'adjustment', available: '-6.00' },
    ]);
    expect(db.groups.stats.failed).toBe(before.failed);
    expect(db.groups.stats.grouped - before.grouped).toBeGreaterThanOrEqual(grouped.length);
    expect(await ledger.verify()).toEqual([]);
  });

  it('applies one Idempotency-Key once in a group: the same request again is a replay, another request 422', async () => {
    const { ctx } = use();
    const { ledger, db, idempotency } = ctx;
    const id = await member();
    await ledger.adjust({ member_id: id, type: 'credit', amount: '10.00', note: 'opening' }, 'user:1');
    const keyed = (key: string, payload: { member_id: number; type: 'credit' | 'debit'; amount: string; note: string }) =>
      idempotency.run(
        { scope: 'ledger.adjust', owner: 'user:1', key, hash: requestHash(payload) },
        (hold) => ledger.adjust(payload, 'user:1', hold.once(201)),
        (result) => ({ status: 201, body: result }),
      );
    const debit = { member_id: id, type: 'debit' as const, amount: '2.00', note: 'keyed debit' };
    const before = { ...db.groups.stats };
    const [first, second] = await inOneGroup(db.groups, [() => keyed('k1', debit), () => keyed('k1', debit)]);
    expect(db.groups.stats.failed).toBe(before.failed);
    const answers = [first, second].map((o) => (o as PromiseFulfilledResult<Awaited<ReturnType<typeof keyed>>>).value);
    const ran = answers.find((a) => !a.replayed);
    const replay = answers.find((a) => a.replayed);
    expect(ran && replay).toBeTruthy();
    expect(replay).toEqual({ replayed: true, status: 201, body: JSON.parse(JSON.stringify((ran as { result: unknown }).result)) });

    // The key again, with the same request (a replay) and with another one (422), both answered
    // before they join a group, and a new key used by two different requests of one group: one
    // of them runs, the other is 422.
    const other = { ...debit, amount: '3.00' };
    const outcomes = await inOneGroup(db.groups, [() => keyed('k1', debit), () => keyed('k1', other), () => keyed('k2', debit), () => keyed('k2', other)]);
    expect(outcomes[0]).toMatchObject({ status: 'fulfilled', value: { replayed: true, status: 201 } });
    expect(outcomes[1]).toMatchObject({ status: 'rejected', reason: { code: 'svc_idempotency_key_reused', status: 422 } });
    const k2 = outcomes.slice(2);
    expect(k2.filter((o) => o.status === 'fulfilled' && !o.value.replayed)).toHaveLength(1);
    expect(k2.filter((o) => o.status === 'rejected' && (o.reason as { code: string }).code === 'svc_idempotency_key_reused')).toHaveLength(1);
    const entries = await ledger.listEntries({ member_id: id, page: 1, per_page: 50 });
    expect(entries.items.filter((e) => e.note === 'keyed debit')).toHaveLength(2);
    expect(await ledger.balanceOf(id, 'USD')).toMatchObject({ available: (10 - 2 - (k2[0].status === 'fulfilled' ? 2 : 3)).toFixed(2) });
    expect(await ledger.verify()).toEqual([]);
  });

  it('answers many parallel adjustments as many sequential ones: every credit and debit once, no overdraft', async () => {
    const { ledger } = use().ctx;
    const id = await member();
    await ledger.adjust({ member_id: id, type: 'credit', amount: '5.00', note: 'opening' }, 'user:1');
    const outcomes = await Promise.allSettled(
      Array.from({ length: 60 }, (_, i) =>
        ledger.adjust({ member_id: id, type: i % 3 === 0 ? 'credit' : 'debit', amount: '1.00', note: `parallel ${i}` }, 'user:1'),
      ),
    );
    const done = outcomes.filter((o) => o.status === 'fulfilled');
    const refused = outcomes.filter((o) => o.status === 'rejected');
    expect(refused.every((o) => (o.reason as { code: string }).code === 'svc_insufficient_funds')).toBe(true);
    const credits = 20;
    const debits = done.length - credits;
    expect(await ledger.balanceOf(id, 'USD')).toMatchObject({ available: (5 + credits - debits).toFixed(2) });
    expect(5 + credits - debits).toBeGreaterThanOrEqual(0);
    expect((await ledger.listEntries({ member_id: id, page: 1, per_page: 1 })).total).toBe(1 + done.length);
    expect(await ledger.verify()).toEqual([]);
  });
});
