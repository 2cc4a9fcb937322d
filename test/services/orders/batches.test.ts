import { afterEach, expect, it } from 'vitest';
import type { OrderChange, RecordInput } from '../../../src/services/orders/index.js';
import { describeEachDialect } from '../../helpers/context.js';
import { shopnetDefinition } from '../../helpers/networks.js';

type Report = Omit<RecordInput, 'network' | 'sub_id'> & { member: number | 'nobody' | 'login' };

/**
 * One sequence of reports touching every rule: new orders in each status, repeats, approvals,
 * declines after approval and re-approval, corrections while pending, a decline with zeroed
 * amounts, a return to pending, an unmatched member, a login sub id, another currency, and
 * orders held for review (above the ceiling of 100.00, a commission above its sale, a
 * correction past the ceiling) with status changes while held.
 */
const SEQUENCE: Report[] = [
  { transaction_id: 'a', member: 0, source: 'postback', sale_amount: '100.00', commission: '10.00' },
  { transaction_id: 'b', member: 1, source: 'postback', sale_amount: '50.00', commission: '5.00', status: 'approved' },
  { transaction_id: 'a', member: 0, source: 'postback', sale_amount: '100.00', commission: '10.00' },
  { transaction_id: 'a', member: 0, source: 'postback', sale_amount: '120.00', commission: '12.00' },
  { transaction_id: 'c', member: 1, source: 'poll', sale_amount: '80.00', commission: '8.00' },
  { transaction_id: 'a', member: 0, source: 'poll', sale_amount: '120.00', commission: '12.00', status: 'approved' },
  { transaction_id: 'h', member: 0, source: 'postback', sale_amount: '0', commission: '150.00' },
  { transaction_id: 'j', member: 1, source: 'postback', sale_amount: '0', commission: '8.00' },
  { transaction_id: 'c', member: 1, source: 'postback', sale_amount: '0', commission: '0', status: 'declined' },
  { transaction_id: 'h', member: 0, source: 'poll', sale_amount: '0', commission: '150.00', status: 'approved' },
  { transaction_id: 'j', member: 1, source: 'postback', sale_amount: '0', commission: '800.00' },
  { transaction_id: 'i', member: 1, source: 'postback', sale_amount: '5.00', commission: '6.00', status: 'approved' },
  { transaction_id: 'k', member: 2, source: 'postback', sale_amount: '0', commission: '250.00' },
  { transaction_id: 'j', member: 1, source: 'poll', sale_amount: '0', commission: '800.00', status: 'approved' },
  { transaction_id: 'k', member: 2, source: 'poll', sale_amount: '0', commission: '250.00', status: 'declined' },
  { transaction_id: 'b', member: 1, source: 'poll', sale_amount: '50.00', commission: '5.00', status: 'declined' },
  { transaction_id: 'b', member: 1, source: 'poll', sale_amount: '50.00', commission: '5.00', status: 'approved' },
  { transaction_id: 'a', member: 0, source: 'postback', sale_amount: '120.00', commission: '12.00', status: 'pending' },
  { transaction_id: 'd', member: 'nobody', source: 'postback', sale_amount: '30.00', commission: '3.00', status: 'approved' },
  { transaction_id: 'e', member: 'login', source: 'postback', sale_amount: '40.00', commission: '4.00', currency: 'EUR' },
  { transaction_id: 'e', member: 'login', source: 'postback', sale_amount: '40.00', commission: '4.00', currency: 'EUR', status: 'approved' },
  { transaction_id: 'f', member: 2, source: 'postback', sale_amount: '10.00', commission: '1.00', status: 'declined' },
  { transaction_id: 'f', member: 2, source: 'postback', sale_amount: '10.00', commission: '1.00', status: 'approved' },
  { transaction_id: 'g', member: 2, source: 'postback', sale_amount: '0.00', commission: '0.01' },
  { transaction_id: 'b', member: 1, source: 'poll', sale_amount: '50.00', commission: '5.00', status: 'approved' },
];

describeEachDialect(
  'recording orders in batches',
  (use) => {
    afterEach(async () => {
      expect(await use().ctx.ledger.verify()).toEqual([]);
    });

    /** Three members (the second referred by the first) for one run of the sequence. */
    const members = async (prefix: string) => {
      const { ctx } = use();
      const ids: number[] = [];
      for (const n of [0, 1, 2]) ids.push((await ctx.users.create({ login: `${prefix}-${n}`, email: `${prefix}-${n}@example.com` })).id);
      await ctx.referrals.add({ referrer_id: ids[0], referee_id: ids[1] }, 'user:1');
      return ids;
    };
    const inputs = (network: string, prefix: string, ids: number[]): RecordInput[] =>
      SEQUENCE.map(({ member, ...r }) => ({
        ...r,
        network,
        sub_id: member === 'nobody' ? `${prefix}-nobody` : member === 'login' ? `${prefix.toUpperCase()}-2` : String(ids[member]),
      }));
    const answer = (c: OrderChange) => ({
      transaction_id: c.transaction_id,
      status: c.status,
      sale_amount: c.sale_amount,
      commission: c.commission,
      cashback: c.cashback,
      currency: c.currency,
      duplicate: c.duplicate,
      changes: c.changes,
      ignored: c.ignored,
      member: c.member?.login.replace(/^[a-z]+/, '') ?? null,
      review: c.review?.state ?? null,
    });
    /** Releases the held orders of a network, in transaction id order. */
    const releaseHeld = async (network: string) => {
      const { ctx } = use();
      const held = (await ctx.orders.list({ network, review: 'held', page: 1, per_page: 100 })).items.sort((a, b) =>
        a.transaction_id.localeCompare(b.transaction_id),
      );
      for (const o of held) await ctx.orders.release(o.id, 'user:1');
      return held.map((o) => [o.transaction_id, o.review?.reason]);
    };
    const ledgerOf = async (ids: number[]) => {
      const { ctx } = use();
      const out = [];
      for (const id of ids) {
        const entries = (await ctx.ledger.listEntries({ member_id: id, page: 1, per_page: 100 })).items.reverse();
        out.push({
          balances: await Promise.all(['USD', 'EUR'].map((c) => ctx.ledger.balanceOf(id, c).then((b) => [b.available, b.pending, b.lifetime_earned]))),
          entries: entries.map((e) => [e.type, e.amount, e.balance_after, e.currency]),
        });
      }
      return out;
    };

    it('has exactly the effects of recording the reports one by one, and answers each report as it left the order', async () => {
      const { ctx } = use();
      const one = await members('one');
      const alone: OrderChange[] = [];
      for (const input of inputs('seqnet', 'one', one)) alone.push(await ctx.orders.record(input, 'system'));
      const many = await members('many');
      const batch = await ctx.orders.recordMany(inputs('batnet', 'many', many), 'system');
      expect(batch.map(answer)).toEqual(alone.map(answer));
      expect(await ledgerOf(many)).toEqual(await ledgerOf(one));
      // Answering only what each report did changes nothing of what is recorded.
      const brief = await members('brief');
      const outcomes = await ctx.orders.recordOutcomes(inputs('briefnet', 'brief', brief), 'system');
      expect(outcomes.map((o) => [o.status, o.duplicate, o.changes, o.ignored])).toEqual(alone.map((c) => [c.status, c.duplicate, c.changes, c.ignored]));
      expect(new Set(outcomes.map((o) => o.id))).toEqual(
        new Set((await ctx.orders.list({ network: 'briefnet', page: 1, per_page: 100 })).items.map((o) => o.id)),
      );
      expect(await ledgerOf(brief)).toEqual(await ledgerOf(one));
      // The held orders waited the same way; released, they apply the same effects.
      const held = [
        ['h', 'above_ceiling'],
        ['i', 'commission_exceeds_sale'],
        ['j', 'above_ceiling'],
        ['k', 'above_ceiling'],
      ];
      for (const network of ['seqnet', 'batnet', 'briefnet']) expect(await releaseHeld(network)).toEqual(held);
      expect(await ledgerOf(many)).toEqual(await ledgerOf(one));
      expect(await ledgerOf(brief)).toEqual(await ledgerOf(one));
      // Member 0: a 6.00 + h 75.00, and the referral shares of b 0.25, i 0.30 and j 40.00.
      expect((await ledgerOf(one))[0].balances[0]).toEqual(['121.55', '0.00', '121.55']);
      // The entries cite the orders they came from.
      const cited = await ctx.db.select<{ n: unknown }>(
        "SELECT COUNT(*) AS n FROM ledger_entries e JOIN orders o ON o.id = e.order_id WHERE o.network = 'batnet'",
      );
      expect(Number(cited[0].n)).toBeGreaterThan(0);
    });

    it('answers a transaction reported twice in one batch with the order as each report left it', async () => {
      const [id] = await members('twice');
      const [created, approved] = await use().ctx.orders.recordMany(
        [
          { network: 'twicenet', transaction_id: 'T-1', source: 'postback', sub_id: String(id), sale_amount: '10.00', commission: '2.00' },
          { network: 'twicenet', transaction_id: 'T-1', source: 'postback', sub_id: String(id), sale_amount: '10.00', commission: '2.00', status: 'approved' },
        ],
        'system',
      );
      expect(created).toMatchObject({ id: approved.id, status: 'pending', changes: ['created'] });
      expect(approved).toMatchObject({ status: 'approved', changes: ['status'], cashback_entry_id: expect.any(Number) });
      expect(await use().ctx.ledger.balanceOf(id, 'USD')).toMatchObject({ available: '1.00', pending: '0.00' });
    });

    it('refuses a whole batch when one report fails inside it, and writes nothing', async () => {
      const { ctx } = use();
      const [id] = await members('refused');
      // The manual report's network exists: what refuses it is its member.
      await ctx.networks.saveCustom('refnet', shopnetDefinition(), 'test');
      const batch: RecordInput[] = [
        { network: 'refnet', transaction_id: 'R-1', source: 'postback', sub_id: String(id), sale_amount: '10.00', commission: '2.00', status: 'approved' },
        { network: 'refnet', transaction_id: 'R-2', source: 'manual', member_id: 999_999_999, sale_amount: '10.00', commission: '2.00' },
      ];
      await expect(ctx.orders.recordMany(batch, 'system')).rejects.toMatchObject({ code: 'svc_member_not_found', status: 404 });
      await expect(ctx.orders.recordMany([batch[0], { ...batch[1], member_id: undefined, commission: 'two' }], 'system')).rejects.toMatchObject({
        code: 'svc_invalid_amount',
        status: 400,
      });
      expect((await ctx.orders.list({ network: 'refnet', page: 1, per_page: 10 })).total).toBe(0);
      expect(await ctx.ledger.balanceOf(id, 'USD')).toMatchObject({ available: '0.00', pending: '0.00' });
    });
  },
  { 'orders.review_above': '100.00' },
);
