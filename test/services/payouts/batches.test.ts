import { expect, it } from 'vitest';
import { HOOKS } from '../../../src/hooks/index.js';
import { destinationKey, PayoutBatchService } from '../../../src/services/payouts/index.js';
import { describeEachDialect } from '../../helpers/context.js';

describeEachDialect(
  'payout batches',
  (use) => {
    let seq = 0;
    /** A member with `amount` USD credited. */
    const member = async (amount = '100.00', display_name?: string) => {
      const { ctx } = use();
      const n = ++seq;
      const user = await ctx.users.create({ login: `batchee${n}`, email: `batchee${n}@example.com`, ...(display_name ? { display_name } : {}) });
      await ctx.ledger.adjust({ member_id: user.id, type: 'credit', amount, note: 'earned' }, 'test');
      return user;
    };
    /** A method of its own per test, so batches by filter see only that test's payouts. */
    const freshMethod = () => `wire${++seq}`;
    const pay = async (memberId: number, amount: string, method: string, details: string | null = null, currency = 'USD') =>
      (await use().ctx.payouts.create({ member_id: memberId, amount, method, details, currency }, 'test')).payout;
    const clean = async () => {
      const { ctx } = use();
      expect(await ctx.ledger.verify()).toEqual([]);
      expect(await ctx.payouts.verify()).toEqual([]);
    };

    it('normalises destinations: e-mail lower-cased, IBAN without spaces and upper-cased', () => {
      expect(destinationKey(' Ann@PayPal.Example ')).toBe('ann@paypal.example');
      expect(destinationKey('de89 3704 0044 0532 0130 00')).toBe('DE89370400440532013000');
      expect(destinationKey('  ')).toBeNull();
      expect(destinationKey(null)).toBeNull();
    });

    it('makes a batch by filter of pending payouts of one method and currency, oldest first, and only once', async () => {
      const { ctx } = use();
      const method = freshMethod();
      const a = await member();
      const b = await member();
      const p1 = await pay(a.id, '10.00', method, `a${seq}@example.com`);
      const p2 = await pay(b.id, '12.50', method, `b${seq}@example.com`);
      const p3 = await pay(b.id, '5.00', method, `b${seq}@example.com`);
      const other = await pay(a.id, '7.00', freshMethod());
      await ctx.payouts.cancel(p3.id, { reason: 'changed mind' }, 'test');
      const { batch, held } = await ctx.payoutBatches.create({ method, max_items: 10 }, 'test');
      expect(held).toEqual([]);
      expect(batch).toMatchObject({
        method,
        currency: 'USD',
        channel: 'csv',
        status: 'open',
        item_count: 2,
        held_count: 0,
        total: '22.50',
        pending_count: 2,
        file_name: `payout-batch-${batch.id}.csv`,
      });
      const detail = await ctx.payoutBatches.get(batch.id);
      expect(detail.items.map((i) => [i.payout_id, i.item_ref, i.status])).toEqual([
        [p1.id, `${batch.id}-${p1.id}`, 'pending'],
        [p2.id, `${batch.id}-${p2.id}`, 'pending'],
      ]);
      expect((await ctx.payouts.get(p1.id)).batch_id).toBe(batch.id);
      expect((await ctx.payouts.get(other.id)).batch_id).toBeNull();
      // Nothing left to batch for that method; the payouts in the batch cannot go in another.
      await expect(ctx.payoutBatches.create({ method }, 'test')).rejects.toMatchObject({ code: 'svc_payout_batch_empty', status: 409 });
      await expect(ctx.payoutBatches.create({ payout_ids: [p1.id] }, 'test')).rejects.toMatchObject({
        code: 'svc_payout_in_batch',
        status: 409,
        data: { batch_ids: [batch.id] },
      });
      // Closing a batched payout by hand is refused: its batch's results close it.
      await expect(ctx.payouts.complete(p1.id, {}, 'test')).rejects.toMatchObject({ code: 'svc_payout_in_batch', status: 409 });
      await expect(ctx.payouts.cancel(p1.id, { reason: 'x' }, 'test')).rejects.toMatchObject({ code: 'svc_payout_in_batch' });
      await clean();
    });

    it('makes a batch of listed payouts, refusing mixed, closed, unknown and unavailable ones with clear codes', async () => {
      const { ctx } = use();
      const method = freshMethod();
      const a = await member('200.00');
      const p1 = await pay(a.id, '10.00', method);
      const p2 = await pay(a.id, '11.00', method);
      const otherMethod = await pay(a.id, '12.00', freshMethod());
      const closed = await pay(a.id, '13.00', method);
      await ctx.payouts.complete(closed.id, {}, 'test');
      await expect(ctx.payoutBatches.create({ payout_ids: [p1.id, otherMethod.id] }, 'test')).rejects.toMatchObject({
        code: 'svc_payout_batch_mixed',
        data: { payout_ids: [otherMethod.id] },
      });
      await expect(ctx.payoutBatches.create({ payout_ids: [p1.id, closed.id] }, 'test')).rejects.toMatchObject({ code: 'svc_payout_batch_not_pending' });
      await expect(ctx.payoutBatches.create({ payout_ids: [p1.id, 99_999_999] }, 'test')).rejects.toMatchObject({ code: 'svc_payout_not_found', status: 404 });
      await expect(ctx.payoutBatches.create({}, 'test')).rejects.toMatchObject({ code: 'svc_payout_batch_method_required', status: 400 });
      const pp = await pay(a.id, '10.00', 'paypal');
      // A PayPal payout without an e-mail address is held out by the PayPal channel's check.
      await expect(ctx.payoutBatches.create({ payout_ids: [pp.id] }, 'test')).rejects.toMatchObject({
        code: 'svc_payout_batch_empty',
        status: 409,
        data: { held: [expect.objectContaining({ payout_id: pp.id, code: 'channel_check', reason: expect.stringContaining('PayPal e-mail address') })] },
      });
      const sepaUsd = await pay(a.id, '10.00', 'sepa');
      await expect(ctx.payoutBatches.create({ payout_ids: [sepaUsd.id] }, 'test')).rejects.toMatchObject({ code: 'svc_payout_channel_currency' });
      const { batch } = await ctx.payoutBatches.create({ payout_ids: [p2.id, p1.id, p1.id] }, 'test');
      expect(batch).toMatchObject({ item_count: 2, total: '21.00', method });
      await clean();
    });

    it('holds a payout whose destination another member uses, naming that member, and releases it only with a note', async () => {
      const { ctx } = use();
      const method = freshMethod();
      const ann = await member();
      const bob = await member();
      const cid = await member();
      const shared = `DE89 3704 0044 0532 0130 ${String(seq).padStart(2, '0')}`;
      // Bob used the IBAN long ago (his payout is paid), written differently.
      const old = await pay(bob.id, '10.00', freshMethod(), shared.replace(/ /g, '').toLowerCase());
      await ctx.payouts.complete(old.id, {}, 'test');
      const annP = await pay(ann.id, '20.00', method, shared);
      const cidP = await pay(cid.id, '30.00', method, `cid${seq}@example.com`);
      const preview = await ctx.payoutBatches.preview({ method });
      expect(preview.items.map((i) => i.payout_id)).toEqual([cidP.id]);
      expect(preview.held).toEqual([
        expect.objectContaining({
          payout_id: annP.id,
          code: 'shared_destination',
          reason: `The destination is also used by ${bob.login} (member ${bob.id}).`,
        }),
      ]);
      await expect(ctx.payoutBatches.create({ method, override: [annP.id] }, 'test')).rejects.toMatchObject({ code: 'svc_payout_override_note_required' });
      const first = await ctx.payoutBatches.create({ method }, 'test');
      expect(first.batch).toMatchObject({ item_count: 1, held_count: 1 });
      expect((await ctx.payoutBatches.get(first.batch.id)).held).toEqual([expect.objectContaining({ payout_id: annP.id, login: ann.login })]);
      expect(await ctx.payouts.get(annP.id)).toMatchObject({ status: 'pending', batch_id: null });
      // Held again by a later batch, unless released with a note.
      await expect(ctx.payoutBatches.create({ method }, 'test')).rejects.toMatchObject({
        code: 'svc_payout_batch_empty',
        data: { held: [expect.objectContaining({ payout_id: annP.id })] },
      });
      const second = await ctx.payoutBatches.create({ method, override: [annP.id], override_note: 'Bob is her husband; checked by phone' }, 'test');
      expect(second.batch).toMatchObject({ item_count: 1, held_count: 0 });
      expect((await ctx.payoutBatches.get(second.batch.id)).items).toEqual([
        expect.objectContaining({ payout_id: annP.id, override_note: 'Bob is her husband; checked by phone' }),
      ]);
      await ctx.logger.flush();
      const logged = await ctx.db.select<{ message: string }>("SELECT message FROM logs WHERE message = 'Held payouts released into a batch'");
      expect(logged.length).toBeGreaterThan(0);
      await clean();
    });

    it('lets only one of two racing batches have a payout', async () => {
      const { ctx } = use();
      const method = freshMethod();
      const a = await member('500.00');
      const ids: number[] = [];
      for (let i = 0; i < 6; i++) ids.push((await pay(a.id, '10.00', method)).id);
      const listed = await Promise.allSettled([ctx.payoutBatches.create({ payout_ids: ids }, 'test'), ctx.payoutBatches.create({ payout_ids: ids }, 'test')]);
      const won = listed.filter((r) => r.status === 'fulfilled');
      const lost = listed.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(['svc_payout_in_batch', 'svc_payout_batch_conflict']).toContain(lost[0].reason.code);
      const winner = (won[0] as PromiseFulfilledResult<{ batch: { id: number } }>).value.batch.id;
      const rows = await ctx.db.select<{ batch_id: unknown }>(`SELECT batch_id FROM payouts WHERE id IN (${ids.join(',')})`);
      expect(rows.map((r) => Number(r.batch_id))).toEqual(ids.map(() => winner));
      // By filter: two at once never share a payout.
      await ctx.payoutBatches.cancel(winner, 'test');
      const filtered = await Promise.allSettled([
        ctx.payoutBatches.create({ method, max_items: 4 }, 'test'),
        ctx.payoutBatches.create({ method, max_items: 4 }, 'test'),
      ]);
      const batches = filtered.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<{ batch: { id: number } }>).value.batch.id);
      for (const r of filtered) if (r.status === 'rejected') expect(['svc_payout_batch_conflict', 'svc_payout_batch_empty']).toContain(r.reason.code);
      const items = await ctx.db.select<{ payout_id: unknown }>(`SELECT payout_id FROM payout_batch_items WHERE batch_id IN (${batches.join(',')})`);
      const itemIds = items.map((r) => Number(r.payout_id));
      expect(new Set(itemIds).size).toBe(itemIds.length);
      for (const id of itemIds) expect(batches).toContain(Number((await ctx.payouts.get(id)).batch_id));
      await clean();
    });

    it('applies results once, even twice or concurrently: one return entry per failed item, the batch finished once', async () => {
      const { ctx } = use();
      const method = freshMethod();
      const a = await member('100.00');
      const b = await member('100.00');
      const pa = await pay(a.id, '40.00', method);
      const pb = await pay(b.id, '30.00', method);
      const fired: string[] = [];
      ctx.hooks.addAction(HOOKS.payoutBatchSent, `t${seq}`, (batch: { id: number }) => fired.push(`sent:${batch.id}`));
      ctx.hooks.addAction(HOOKS.payoutBatchFinished, `t${seq}`, (batch: { id: number }) => fired.push(`finished:${batch.id}`));
      const { batch } = await ctx.payoutBatches.create({ method }, 'test');
      const results = [
        { item_ref: `${batch.id}-${pa.id}`, outcome: 'paid' as const, reference: 'BANK-1' },
        { item_ref: `${batch.id}-${pb.id}`, outcome: 'failed' as const, reason: 'Account closed' },
      ];
      const [one, two] = await Promise.all([
        ctx.payoutBatches.applyResults(batch.id, results, 'test'),
        ctx.payoutBatches.applyResults(batch.id, results, 'test'),
      ]);
      const effects = [...one.results, ...two.results].map((r) => r.effect).sort();
      expect(effects).toEqual(['applied', 'applied', 'unchanged', 'unchanged']);
      const again = await ctx.payoutBatches.applyResults(batch.id, results, 'test');
      expect(again.results.map((r) => r.effect)).toEqual(['unchanged', 'unchanged']);
      expect(again.batch).toMatchObject({ status: 'finished', paid_count: 1, failed_count: 1, pending_count: 0 });
      expect(await ctx.payouts.get(pa.id)).toMatchObject({ status: 'paid', reference: 'BANK-1' });
      expect(await ctx.payouts.get(pb.id)).toMatchObject({ status: 'cancelled', reason: 'Account closed' });
      const returns = await ctx.db.select<{ n: unknown }>("SELECT COUNT(*) AS n FROM ledger_entries WHERE type = 'payout_return' AND source_id = ?", [
        String(pb.id),
      ]);
      expect(Number(returns[0].n)).toBe(1);
      expect((await ctx.ledger.balanceOf(b.id, 'USD')).available).toBe('100.00');
      expect((await ctx.ledger.balanceOf(a.id, 'USD')).available).toBe('60.00');
      // A result the other way round is a conflict and changes nothing.
      const flipped = await ctx.payoutBatches.applyResults(batch.id, [{ item_ref: `${batch.id}-${pa.id}`, outcome: 'failed', reason: 'late' }], 'test');
      expect(flipped.results[0]).toMatchObject({ effect: 'conflict', status: 'paid' });
      await new Promise((r) => setTimeout(r, 20));
      expect(fired.filter((f) => f.endsWith(`:${batch.id}`))).toEqual([`sent:${batch.id}`, `finished:${batch.id}`]);
      await expect(ctx.payoutBatches.applyResults(batch.id, [{ item_ref: '1-1', outcome: 'paid' }], 'test')).rejects.toMatchObject({
        code: 'svc_payout_results_invalid',
      });
      await clean();
    });

    it('marks the rest of a batch paid, and cancels only an unsent batch, freeing its payouts', async () => {
      const { ctx } = use();
      const method = freshMethod();
      const a = await member('100.00');
      const p1 = await pay(a.id, '10.00', method);
      const p2 = await pay(a.id, '20.00', method);
      const open = await ctx.payoutBatches.create({ payout_ids: [p1.id] }, 'test');
      const cancelled = await ctx.payoutBatches.cancel(open.batch.id, 'test');
      expect(cancelled.batch).toMatchObject({ status: 'cancelled', closed_by: 'test' });
      expect((await ctx.payouts.get(p1.id)).batch_id).toBeNull();
      await expect(ctx.payoutBatches.cancel(open.batch.id, 'test')).rejects.toMatchObject({ code: 'svc_payout_batch_closed' });
      await expect(ctx.payoutBatches.file(open.batch.id)).rejects.toMatchObject({ code: 'svc_payout_batch_cancelled' });
      const { batch } = await ctx.payoutBatches.create({ method }, 'test');
      expect(batch.item_count).toBe(2);
      expect((await ctx.payoutBatches.send(batch.id, 'test')).batch.status).toBe('sent');
      await expect(ctx.payoutBatches.cancel(batch.id, 'test')).rejects.toMatchObject({ code: 'svc_payout_batch_sent' });
      await ctx.payoutBatches.applyResults(batch.id, [{ item_ref: `${batch.id}-${p2.id}`, outcome: 'failed', reason: 'IBAN unknown' }], 'test');
      const paid = await ctx.payoutBatches.markPaid(batch.id, { reference: 'TRF-9' }, 'test');
      expect(paid.results).toEqual([expect.objectContaining({ payout_id: p1.id, effect: 'applied' })]);
      expect(paid.batch).toMatchObject({ status: 'finished', paid_count: 1, failed_count: 1 });
      expect((await ctx.payouts.get(p1.id)).reference).toBe('TRF-9');
      await clean();
    });

    it('writes the CSV file with formula-looking cells neutralised', async () => {
      const { ctx } = use();
      const method = freshMethod();
      const a = await member('50.00', '=HYPERLINK("x")');
      const p = await pay(a.id, '12.34', method, '+49 details');
      const { batch } = await ctx.payoutBatches.create({ method }, 'test');
      const file = await ctx.payoutBatches.file(batch.id);
      expect(file.name).toBe(`payout-batch-${batch.id}.csv`);
      expect(file.type).toBe('text/csv; charset=utf-8');
      expect(file.body).toBe(
        'item_ref,payout_id,member_id,login,name,amount,currency,method,details\r\n' +
          `${batch.id}-${p.id},${p.id},${a.id},${a.login},"'=HYPERLINK(""x"")",12.34,USD,${method},'+49 details\r\n`,
      );
    });

    it('takes other channels through the seam: a check holds an item out, an API channel has no file', async () => {
      const { ctx } = use();
      const a = await member('100.00');
      const good = await pay(a.id, '10.00', 'paypal', `good${seq}@example.com`);
      const bad = await pay(a.id, '11.00', 'paypal', 'not-an-address');
      const svc = new PayoutBatchService({
        db: ctx.db,
        clock: ctx.clock,
        logger: ctx.logger,
        events: ctx.events,
        payouts: ctx.payouts,
        currency: 'USD',
        channels: { paypal: { name: 'paypal', check: (item) => (item.details?.includes('@') ? null : 'not an e-mail address') } },
      });
      const { batch, held } = await svc.create({ payout_ids: [good.id, bad.id] }, 'test');
      expect(batch).toMatchObject({ channel: 'paypal', item_count: 1, held_count: 1, file_name: null });
      expect(held).toEqual([expect.objectContaining({ payout_id: bad.id, code: 'channel_check', reason: 'not an e-mail address' })]);
      await expect(svc.file(batch.id)).rejects.toMatchObject({ code: 'svc_payout_batch_no_file' });
      await expect(svc.send(batch.id, 'test')).rejects.toMatchObject({ code: 'svc_payout_channel_unavailable' });
      // A channel check is no shared-destination hold: no override releases it.
      await expect(svc.create({ payout_ids: [bad.id], override: [bad.id], override_note: 'sure' }, 'test')).rejects.toMatchObject({
        code: 'svc_payout_batch_empty',
      });
      await svc.cancel(batch.id, 'test');
    });

    it('refuses overrides of payouts not in the batch, oversized lists, and results for another batch', async () => {
      const { ctx } = use();
      const method = freshMethod();
      const a = await member('100.00');
      const p = await pay(a.id, '10.00', method);
      const elsewhere = await pay(a.id, '10.00', freshMethod());
      await expect(ctx.payoutBatches.create({ method, override: [elsewhere.id], override_note: 'why not' }, 'test')).rejects.toMatchObject({
        code: 'svc_payout_override_not_selected',
        data: { payout_ids: [elsewhere.id] },
      });
      const many = Array.from({ length: 15_001 }, (_, i) => i + 1);
      await expect(ctx.payoutBatches.create({ payout_ids: many }, 'test')).rejects.toMatchObject({ code: 'svc_payout_batch_too_large' });
      const { batch } = await ctx.payoutBatches.create({ method }, 'test');
      await expect(ctx.payouts.complete(p.id, {}, 'test', undefined, { batchId: batch.id + 1000 })).rejects.toMatchObject({ code: 'svc_payout_not_in_batch' });
      await ctx.payoutBatches.cancel(batch.id, 'test');
      await clean();
    });

    it('reads a result CSV by item_ref or payout_id, refusing a bad one whole', () => {
      const svc = use().ctx.payoutBatches;
      expect(svc.parseResultsCsv(7, '\ufeffItem_Ref,Status,Reference,Reason\r\n7-3,PAID,R1,\r\n7-4,failed,,No such account\r\n')).toEqual([
        { item_ref: '7-3', outcome: 'paid', reference: 'R1', reason: null },
        { item_ref: '7-4', outcome: 'failed', reference: null, reason: 'No such account' },
      ]);
      expect(svc.parseResultsCsv(7, 'payout_id,status\n5,paid\n')).toEqual([{ item_ref: '7-5', outcome: 'paid', reference: null, reason: null }]);
      expect(() => svc.parseResultsCsv(7, 'payout_id,status\n5,maybe\n')).toThrow(expect.objectContaining({ code: 'svc_payout_results_invalid' }));
      expect(() => svc.parseResultsCsv(7, 'status\npaid\n')).toThrow(expect.objectContaining({ code: 'svc_payout_results_invalid' }));
      expect(() => svc.parseResultsCsv(7, 'a,b\n"x\n')).toThrow(expect.objectContaining({ code: 'svc_payout_results_invalid' }));
      expect(() => svc.parseResultsCsv(7, 'item_ref,status\n')).toThrow(expect.objectContaining({ code: 'svc_payout_results_invalid' }));
    });
  },
  { 'payouts.minimum': '0' },
);
