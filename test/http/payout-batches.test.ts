import { expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/context.js';
import { adminClient, createActor, NS } from '../helpers/http.js';

type Json = Record<string, any>;

describeEachDialect(
  'payout batches over REST',
  (use) => {
    const api = adminClient(use, async (ctx) => {
      expect(await ctx.ledger.verify()).toEqual([]);
      expect(await ctx.payouts.verify()).toEqual([]);
    });
    const { get, post } = api;
    let seq = 0;
    const payout = async (amount: string, method: string, display_name?: string) => {
      const { ctx } = use();
      const n = ++seq;
      const user = await ctx.users.create({ login: `restbatch${n}`, email: `restbatch${n}@example.com`, ...(display_name ? { display_name } : {}) });
      await ctx.ledger.adjust({ member_id: user.id, type: 'credit', amount: '100.00', note: 'earned' }, 'test');
      return (await ctx.payouts.create({ member_id: user.id, amount, method, details: `pay${n}@example.com` }, 'test')).payout;
    };

    it('makes a batch once per Idempotency-Key, lists it with paging headers and shows it', async () => {
      const p1 = await payout('10.00', 'giro');
      const p2 = await payout('15.00', 'giro');
      const preview = await post('/payouts/batches/preview', { method: 'giro' });
      expect(preview.statusCode).toBe(200);
      expect(preview.result).toMatchObject({ item_count: 2, total: '25.00', channel: 'csv', held: [] });
      const first = await post('/payouts/batches', { method: 'giro', note: 'Friday run' }, { 'idempotency-key': 'batch-friday' });
      expect(first.statusCode).toBe(201);
      const { batch } = first.result as Json;
      expect(batch).toMatchObject({ status: 'open', item_count: 2, total: '25.00', note: 'Friday run', actor: `user:${api.admin.id}` });
      expect(first.headers.location).toMatch(new RegExp(`${NS}/payouts/batches/${batch.id}$`));
      const again = await post('/payouts/batches', { method: 'giro', note: 'Friday run' }, { 'idempotency-key': 'batch-friday' });
      expect(again.statusCode).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect((again.result as Json).batch.id).toBe(batch.id);
      expect(Number((await use().ctx.db.select<{ n: unknown }>('SELECT COUNT(*) AS n FROM payout_batches WHERE method = ?', ['giro']))[0].n)).toBe(1);
      const list = await get('/payouts/batches?per_page=1&method=giro');
      expect(list.statusCode).toBe(200);
      expect(list.headers['x-wp-total']).toBe('1');
      expect(list.headers['x-wp-totalpages']).toBe('1');
      expect((list.result as Json[])[0]).toMatchObject({ id: batch.id, pending_count: 2 });
      const one = await get(`/payouts/batches/${batch.id}`);
      expect(one.statusCode).toBe(200);
      expect((one.result as Json).items.map((i: Json) => i.payout_id)).toEqual([p1.id, p2.id]);
      expect((await get('/payouts/batches/99999999')).result).toMatchObject({ code: 'svc_payout_batch_not_found' });
      const bad = await post('/payouts/batches', {});
      expect(bad.statusCode).toBe(400);
    });

    it('downloads the CSV as an authenticated attachment, then takes a result CSV once', async () => {
      const p1 = await payout('20.00', 'wise', '=HYPERLINK("x")');
      const p2 = await payout('30.00', 'wise');
      const { batch } = (await post('/payouts/batches', { payout_ids: [p1.id, p2.id] })).result as Json;
      const file = await get(`/payouts/batches/${batch.id}/file`);
      expect(file.statusCode).toBe(200);
      expect(file.headers['content-type']).toBe('text/csv; charset=utf-8');
      expect(file.headers['content-disposition']).toBe(`attachment; filename="payout-batch-${batch.id}.csv"`);
      expect(file.payload).toContain(`"'=HYPERLINK(""x"")"`);
      const anonymous = await api.server.inject({ url: `${NS}/payouts/batches/${batch.id}/file` });
      expect(anonymous.statusCode).toBe(401);
      const member = await createActor(use().ctx, 'member');
      expect((await api.server.inject({ url: `${NS}/payouts/batches/${batch.id}/file`, headers: { authorization: member.authorization } })).statusCode).toBe(
        403,
      );
      expect((await post(`/payouts/batches/${batch.id}/send`, {})).result).toMatchObject({ batch: { status: 'sent' } });
      const csv = `payout_id,status,reference,reason\r\n${p1.id},paid,BANK-77,\r\n${p2.id},failed,,Account closed\r\n`;
      const applied = await post(`/payouts/batches/${batch.id}/results`, { csv });
      expect(applied.statusCode).toBe(200);
      expect((applied.result as Json).results.map((r: Json) => r.effect)).toEqual(['applied', 'applied']);
      expect((applied.result as Json).batch).toMatchObject({ status: 'finished', paid_count: 1, failed_count: 1 });
      const twice = await post(`/payouts/batches/${batch.id}/results`, { csv });
      expect((twice.result as Json).results.map((r: Json) => r.effect)).toEqual(['unchanged', 'unchanged']);
      const returns = await use().ctx.db.select<{ n: unknown }>("SELECT COUNT(*) AS n FROM ledger_entries WHERE type = 'payout_return' AND source_id = ?", [
        String(p2.id),
      ]);
      expect(Number(returns[0].n)).toBe(1);
      const wrong = await post(`/payouts/batches/${batch.id}/results`, { csv: 'payout_id,status\r\n1,perhaps\r\n' });
      expect(wrong.statusCode).toBe(400);
      expect(wrong.result).toMatchObject({ code: 'svc_payout_results_invalid' });
    });

    it('marks a batch paid, and cancels an open one (not a sent one)', async () => {
      const p1 = await payout('11.00', 'cheque');
      const { batch } = (await post('/payouts/batches', { payout_ids: [p1.id] })).result as Json;
      const cancelled = await post(`/payouts/batches/${batch.id}/cancel`, {});
      expect(cancelled.result).toMatchObject({ batch: { status: 'cancelled' } });
      const { batch: next } = (await post('/payouts/batches', { method: 'cheque' })).result as Json;
      const paid = await post(`/payouts/batches/${next.id}/paid`, { reference: 'CHQ-1' });
      expect(paid.statusCode).toBe(200);
      expect((paid.result as Json).batch).toMatchObject({ status: 'finished', paid_count: 1 });
      const late = await post(`/payouts/batches/${next.id}/cancel`, {});
      expect(late.statusCode).toBe(409);
      expect(late.result).toMatchObject({ code: 'svc_payout_batch_closed' });
      expect((await get(`/payouts/${p1.id}`)).result).toMatchObject({ status: 'paid', reference: 'CHQ-1', batch_id: next.id });
    });
  },
  { 'payouts.minimum': '0' },
);
