import { afterEach, beforeAll, expect, it } from 'vitest';
import { HOOKS } from '../../../src/hooks/index.js';
import type { RecordInput } from '../../../src/services/orders/index.js';
import { describeEachDialect } from '../../helpers/context.js';

// The site holds network orders whose commission is above 100.00 (units of the order's currency).
describeEachDialect(
  'orders held for review',
  (use) => {
    let n = 0;
    const seen: [string, Record<string, unknown>][] = [];
    beforeAll(() => {
      for (const hook of [HOOKS.orderHeld, HOOKS.orderReviewed])
        use().ctx.hooks.addAction(hook, 'test', (payload: Record<string, unknown>) => void seen.push([hook, payload]));
    });
    afterEach(async () => {
      expect(await use().ctx.ledger.verify()).toEqual([]);
    });
    const member = async (login: string) => (await use().ctx.users.create({ login, email: `${login}@example.com` })).id;
    // A sale of 0: not reported (only the commission counts against the ceiling).
    const report = (over: Partial<RecordInput> = {}): RecordInput => ({
      network: 'awin',
      transaction_id: `H-${++n}`,
      source: 'postback',
      sale_amount: '0',
      commission: '10.00',
      ...over,
    });
    const record = (over: Partial<RecordInput> = {}) => use().ctx.orders.record(report(over), 'postback');
    const balance = (id: number, currency = 'USD') => use().ctx.ledger.balanceOf(id, currency);
    const entries = async (id: number) => (await use().ctx.ledger.listEntries({ member_id: id, page: 1, per_page: 100 })).items;
    const untouched = { available: '0.00', pending: '0.00', lifetime_earned: '0.00' };

    it('records a network order above the ceiling but holds it: no pending, no credit, listed as held, announced', async () => {
      const { ctx } = use();
      const id = await member('held-new');
      // The review's attack, within the hard bound: an approved order with a commission of almost 10 billion.
      const order = await record({ member_id: id, commission: '9999999999.99', sale_amount: '0', status: 'approved' });
      expect(order).toMatchObject({
        status: 'approved',
        commission: '9999999999.99',
        cashback: '4999999999.99',
        changes: ['created'],
        review: { state: 'held', reason: 'above_ceiling', reviewed_by: null },
        cashback_entry_id: null,
      });
      expect(await balance(id)).toMatchObject(untouched);
      expect(await entries(id)).toHaveLength(0);
      const held = await ctx.orders.list({ review: 'held', member_id: id, page: 1, per_page: 10 });
      expect(held.items.map((o) => o.id)).toEqual([order.id]);
      expect(seen).toContainEqual([
        HOOKS.orderHeld,
        expect.objectContaining({ order_id: order.id, reason: 'above_ceiling', commission: '9999999999.99', currency: 'USD' }),
      ]);
      await ctx.logger.flush();
      const [line] = (await ctx.logger.list({ source: 'orders', search: 'held for review', page: 1, per_page: 1 })).items;
      expect(line).toMatchObject({ level: 'warning', context: expect.objectContaining({ order_id: order.id }) });
    });

    it("records the network's status changes on a held order without effect, and applies the current status exactly once on release", async () => {
      const { ctx } = use();
      const id = await member('held-release');
      const first = await record({ transaction_id: 'HR-1', member_id: id, commission: '400.00' });
      expect(first.review?.state).toBe('held');
      const approved = await record({ transaction_id: 'HR-1', member_id: id, commission: '400.00', status: 'approved' });
      expect(approved).toMatchObject({ status: 'approved', changes: ['status'], review: { state: 'held' }, cashback_entry_id: null });
      expect(await balance(id)).toMatchObject(untouched);
      const released = await ctx.orders.release(first.id, 'user:1', undefined, 'checked with the network');
      expect(released).toMatchObject({
        status: 'approved',
        changes: ['review'],
        review: { state: 'released', reason: 'above_ceiling', reviewed_by: 'user:1', reviewed_at: expect.any(String) },
        cashback_entry_id: expect.any(Number),
        note: 'checked with the network',
      });
      expect(await balance(id)).toMatchObject({ available: '200.00', pending: '0.00', lifetime_earned: '200.00' });
      const [credit] = await entries(id);
      expect(credit.note).toContain('released after review: checked with the network');
      await expect(ctx.orders.release(first.id, 'user:1')).rejects.toMatchObject({ code: 'svc_order_not_held', status: 409, data: { review: 'released' } });
      await expect(ctx.orders.declineHeld(first.id, 'user:1')).rejects.toMatchObject({ code: 'svc_order_not_held', status: 409 });
      expect(await entries(id)).toHaveLength(1);
      expect(seen).toContainEqual([HOOKS.orderReviewed, expect.objectContaining({ order_id: first.id, decision: 'released', status: 'approved' })]);
      // Released, it follows the network again: a decline reverses the credit.
      await record({ transaction_id: 'HR-1', member_id: id, commission: '400.00', status: 'declined' });
      expect(await balance(id)).toMatchObject({ available: '0.00' });
    });

    it('releases a held pending order into pending; its approval then credits it', async () => {
      const { ctx } = use();
      const id = await member('held-pending');
      const order = await record({ transaction_id: 'HP-1', member_id: id, commission: '150.00' });
      await ctx.orders.release(order.id, 'user:1');
      expect(await balance(id)).toMatchObject({ pending: '75.00', available: '0.00' });
      await record({ transaction_id: 'HP-1', member_id: id, commission: '150.00', status: 'approved' });
      expect(await balance(id)).toMatchObject({ pending: '0.00', available: '75.00' });
    });

    it("declines a held order: declined with no effect, and the network's later reports are ignored", async () => {
      const { ctx } = use();
      const id = await member('held-decline');
      const order = await record({ transaction_id: 'HD-1', member_id: id, commission: '5000.00' });
      const declined = await ctx.orders.declineHeld(order.id, 'user:1', undefined, 'fraud');
      expect(declined).toMatchObject({
        status: 'declined',
        changes: ['review', 'status'],
        review: { state: 'declined', reviewed_by: 'user:1' },
        note: 'fraud',
      });
      const later = await record({ transaction_id: 'HD-1', member_id: id, commission: '5000.00', status: 'approved' });
      expect(later).toMatchObject({ status: 'declined', duplicate: true, ignored: ['status'] });
      const corrected = await record({ transaction_id: 'HD-1', member_id: id, commission: '50.00', sale_amount: '500.00', status: 'approved' });
      expect(corrected).toMatchObject({ status: 'declined', commission: '5000.00', ignored: ['amounts', 'status'] });
      expect(await balance(id)).toMatchObject(untouched);
      expect(seen).toContainEqual([HOOKS.orderReviewed, expect.objectContaining({ order_id: order.id, decision: 'declined' })]);
    });

    it('holds an order whose commission is above its sale, but not one whose sale was not reported (0)', async () => {
      const id = await member('held-sale');
      expect((await record({ member_id: id, sale_amount: '5.00', commission: '6.00', status: 'approved' })).review).toEqual({
        state: 'held',
        reason: 'commission_exceeds_sale',
        reviewed_by: null,
        reviewed_at: null,
      });
      expect((await record({ member_id: id, sale_amount: '0', commission: '6.00', status: 'approved' })).review).toBeNull();
      expect((await record({ member_id: id, sale_amount: '6.00', commission: '6.00', status: 'approved' })).review).toBeNull();
      expect(await balance(id)).toMatchObject({ available: '6.00' });
    });

    it('holds a pending order when a network correction takes it above the ceiling, taking its cashback out of pending', async () => {
      const id = await member('held-correction');
      const small = await record({ transaction_id: 'HC-1', member_id: id, commission: '10.00' });
      expect(small.review).toBeNull();
      expect(await balance(id)).toMatchObject({ pending: '5.00' });
      // The attack: a small order first, then its "correction", then the approval.
      const big = await record({ transaction_id: 'HC-1', member_id: id, commission: '9000000.00' });
      expect(big).toMatchObject({ changes: ['amounts', 'review'], commission: '9000000.00', review: { state: 'held', reason: 'above_ceiling' } });
      expect(await balance(id)).toMatchObject({ pending: '0.00' });
      await record({ transaction_id: 'HC-1', member_id: id, commission: '9000000.00', status: 'approved' });
      expect(await balance(id)).toMatchObject(untouched);
      // While held, corrections are recorded and still move nothing.
      expect((await record({ transaction_id: 'HC-2', member_id: id, commission: '500.00' })).review?.state).toBe('held');
      expect(await record({ transaction_id: 'HC-2', member_id: id, commission: '20.00' })).toMatchObject({
        changes: ['amounts'],
        commission: '20.00',
        review: { state: 'held' },
      });
      expect(await balance(id)).toMatchObject(untouched);
    });

    it("never holds an administrator's own order or correction, and refuses an administrator's status change of a held order", async () => {
      const { ctx } = use();
      const id = await member('held-admin');
      const manual = await record({ source: 'manual', member_id: id, commission: '500.00', note: 'claim' });
      expect(manual.review).toBeNull();
      await ctx.orders.update(manual.id, { commission: '800.00' }, 'user:1');
      expect(await balance(id)).toMatchObject({ pending: '400.00' });
      const held = await record({ member_id: id, commission: '500.00' });
      await expect(ctx.orders.update(held.id, { status: 'approved' }, 'user:1')).rejects.toMatchObject({
        code: 'svc_order_held',
        status: 409,
        data: { reason: 'above_ceiling' },
      });
      // Amounts may be corrected while it waits; nothing moves until the release.
      await ctx.orders.update(held.id, { commission: '90.00' }, 'user:1');
      expect(await balance(id)).toMatchObject({ pending: '400.00' });
      await ctx.orders.release(held.id, 'user:1');
      expect(await balance(id)).toMatchObject({ pending: '445.00' });
      await expect(ctx.orders.release(999_999, 'user:1')).rejects.toMatchObject({ code: 'svc_order_not_found', status: 404 });
    });

    it('gives an unmatched held order its member without effect until the release', async () => {
      const { ctx } = use();
      const id = await member('held-assign');
      const order = await record({ sub_id: 'nobody-here', commission: '300.00', status: 'approved' });
      await ctx.orders.assign(order.id, id, 'user:1');
      expect(await balance(id)).toMatchObject(untouched);
      await ctx.orders.release(order.id, 'user:1');
      expect(await balance(id)).toMatchObject({ available: '150.00' });
    });

    it('holds a commission only above the ceiling: exactly the ceiling is not held, one minor unit more is', async () => {
      const { ctx } = use();
      const id = await member('held-boundary');
      // The site's ceiling, 100.00: a new order, and a pending order corrected up to it.
      const at = await record({ member_id: id, commission: '100.00' });
      expect(at.review).toBeNull();
      expect((await record({ member_id: id, commission: '100.01' })).review?.reason).toBe('above_ceiling');
      const corrected = await record({ transaction_id: `${at.transaction_id}-c`, member_id: id, commission: '1.00' });
      expect((await record({ transaction_id: corrected.transaction_id, member_id: id, commission: '100.00' })).review).toBeNull();
      // A network's own ceiling, named per currency and as a bare amount (a currency without decimals).
      await ctx.networks.configure('awin', { review_above: '50.00 EUR' }, 'user:1');
      expect((await record({ member_id: id, currency: 'EUR', commission: '50.00' })).review).toBeNull();
      expect((await record({ member_id: id, currency: 'EUR', commission: '50.01' })).review?.reason).toBe('above_ceiling');
      await ctx.networks.configure('awin', { review_above: '500' }, 'user:1');
      expect((await record({ member_id: id, currency: 'JPY', commission: '500' })).review).toBeNull();
      expect((await record({ member_id: id, currency: 'JPY', commission: '501' })).review?.reason).toBe('above_ceiling');
      await ctx.networks.configure('awin', { review_above: null }, 'user:1');
      // A commission equal to its sale is not "above the sale" either.
      expect((await record({ member_id: id, sale_amount: '80.00', commission: '80.00' })).review).toBeNull();
    });

    it("takes a network's review_above over the site's: per currency, a bare amount in any currency, or none", async () => {
      const { ctx } = use();
      const id = await member('held-network');
      await ctx.networks.configure('awin', { review_above: '50.00 EUR' }, 'user:1');
      expect((await ctx.networks.get('awin')).settings).toMatchObject({ review_above: '50.00 EUR' });
      expect((await record({ member_id: id, currency: 'EUR', commission: '40.00' })).review).toBeNull();
      expect((await record({ member_id: id, currency: 'EUR', commission: '60.00' })).review?.reason).toBe('above_ceiling');
      // A currency the ceiling does not name: the amounts cannot be compared, so the order waits.
      expect((await record({ member_id: id, currency: 'USD', commission: '1.00' })).review?.reason).toBe('currency_not_covered');
      await ctx.networks.configure('awin', { review_above: '500' }, 'user:1');
      expect((await record({ member_id: id, currency: 'JPY', sale_amount: '100000', commission: '501' })).review?.reason).toBe('above_ceiling');
      expect((await record({ member_id: id, currency: 'USD', commission: '499.99' })).review).toBeNull();
      await ctx.networks.configure('awin', { review_above: 'none' }, 'user:1');
      expect((await record({ member_id: id, commission: '100000.00' })).review).toBeNull();
      // Unset: the site's ceiling again. Another network keeps the site's all along.
      await ctx.networks.configure('awin', { review_above: null }, 'user:1');
      expect((await record({ member_id: id, commission: '100.01' })).review?.reason).toBe('above_ceiling');
      expect((await record({ network: 'admitad', member_id: id, commission: '100.01' })).review?.reason).toBe('above_ceiling');
      await expect(ctx.networks.configure('awin', { review_above: '50 pounds' }, 'user:1')).rejects.toMatchObject({
        code: 'svc_invalid_setting',
        status: 400,
        data: { field: 'review_above' },
      });
    });
  },
  { 'orders.review_above': '100.00' },
);
