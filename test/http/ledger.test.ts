import { expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { describeEachDialect } from '../helpers/context.js';
import { TransactionHold } from '../helpers/hold.js';
import { adminClient, createActor, NS } from '../helpers/http.js';

type Json = Record<string, any>;

const hold = new TransactionHold();

describeEachDialect(
  'ledger routes',
  (use) => {
    const api = adminClient(use, async (ctx) => {
      expect(await ctx.ledger.verify()).toEqual([]);
    });
    const { get, post } = api;
    let seq = 0;
    const member = async (prefix = 'lm') => {
      const login = `${prefix}${++seq}`;
      return (await use().ctx.users.create({ login, email: `${login}@example.com`, display_name: `${prefix.toUpperCase()} ${String(seq).padStart(3, '0')}` }))
        .id;
    };
    const adjust = (member_id: number, type: string, amount: string, extra: Json = {}, headers: Record<string, string> = {}) =>
      post('/ledger/adjustments', { member_id, type, amount, note: 'ticket 1', ...extra }, headers);

    it('credits a member and answers 201 with the entry and the new balance', async () => {
      const id = await member();
      const res = await adjust(id, 'credit', '12.50', { note: 'goodwill, ticket 77' });
      expect(res.statusCode).toBe(201);
      const body = res.result as Json;
      expect(body.entry).toMatchObject({
        member_id: id,
        currency: 'USD',
        type: 'adjustment',
        amount: '12.50',
        balance_after: '12.50',
        source: { type: 'adjustment', id: null },
        note: 'goodwill, ticket 77',
        actor: `user:${api.admin.id}`,
        reversed_by: null,
      });
      expect(body.balance).toMatchObject({
        member_id: id,
        currency: 'USD',
        available: '12.50',
        pending: '0.00',
        lifetime_earned: '0.00',
        lifetime_paid: '0.00',
      });
      const one = await get(`/ledger/entries/${body.entry.id}`);
      expect(one.statusCode).toBe(200);
      expect(one.result).toEqual(body.entry);
    });

    it('debits within the balance and refuses a debit past it with 409 svc_insufficient_funds', async () => {
      const id = await member();
      await adjust(id, 'credit', '10.00');
      const debit = await adjust(id, 'debit', '4.00');
      expect(debit.statusCode).toBe(201);
      expect((debit.result as Json).entry).toMatchObject({ amount: '-4.00', balance_after: '6.00' });
      const over = await adjust(id, 'debit', '6.01');
      expect(over.statusCode).toBe(409);
      expect(over.result).toMatchObject({ code: 'svc_insufficient_funds', data: { status: 409, available: '6.00', currency: 'USD' } });
      expect((await use().ctx.ledger.balanceOf(id, 'USD')).available).toBe('6.00');
    });

    it('takes the balance negative only with allow_negative, and shows it', async () => {
      const id = await member();
      await adjust(id, 'credit', '1.00');
      const res = await adjust(id, 'debit', '3.00', { allow_negative: true, note: 'chargeback' });
      expect(res.statusCode).toBe(201);
      expect((res.result as Json).balance.available).toBe('-2.00');
    });

    it('requires a note saying who and why', async () => {
      const id = await member();
      const missing = await post('/ledger/adjustments', { member_id: id, type: 'credit', amount: '1.00' });
      expect(missing.statusCode).toBe(400);
      expect(missing.result).toMatchObject({ code: 'rest_missing_callback_param', data: { params: ['note'] } });
      const blank = await adjust(id, 'credit', '1.00', { note: '   ' });
      expect(blank.statusCode).toBe(400);
      expect(blank.result).toMatchObject({ code: 'rest_invalid_param', data: { params: { note: expect.any(String) } } });
      await expect(use().ctx.ledger.adjust({ member_id: id, type: 'credit', amount: '1.00', note: ' ' }, 'test')).rejects.toMatchObject({
        code: 'svc_note_required',
        status: 400,
      });
    });

    it.each([
      ['12.505', 'USD', 400, 'svc_invalid_amount'],
      ['-1.00', 'USD', 400, 'svc_invalid_amount'],
      ['0', 'USD', 400, 'svc_invalid_amount'],
      ['1,00', 'USD', 400, 'svc_invalid_amount'],
      ['abc', 'USD', 400, 'svc_invalid_amount'],
      ['12.5', 'JPY', 400, 'svc_invalid_amount'],
      ['1.000', 'BHD', 201, null],
      ['1250', 'JPY', 201, null],
      ['1.00', 'XYZ', 400, 'svc_invalid_currency'],
      ['1.00', 'usd', 400, 'rest_invalid_param'],
    ])('answers amount %s %s with %i', async (amount, currency, status, code) => {
      const id = await member();
      const res = await adjust(id, 'credit', amount, { currency });
      expect(res.statusCode).toBe(status);
      if (code) expect((res.result as Json).code).toBe(code);
      else expect((res.result as Json).balance).toMatchObject({ currency, available: amount });
    });

    it('answers unknown members, bad types and unknown entries with defined codes', async () => {
      const unknown = await adjust(999_999, 'credit', '1.00');
      expect(unknown.statusCode).toBe(404);
      expect(unknown.result).toMatchObject({ code: 'svc_member_not_found' });
      const id = await member();
      expect(((await adjust(id, 'refund', '1.00')).result as Json).code).toBe('rest_invalid_param');
      for (const res of [await get('/ledger/entries/987654'), await post('/ledger/entries/987654/reverse', {})]) {
        expect(res.statusCode).toBe(404);
        expect(res.result).toMatchObject({ code: 'svc_entry_not_found' });
      }
    });

    it('refuses a key used to reverse one entry when it comes back to reverse another', async () => {
      const id = (await use().ctx.users.create({ login: 'rev-pair', email: 'rev-pair@example.com' })).id;
      const one = ((await adjust(id, 'credit', '3.00')).result as Json).entry;
      const two = ((await adjust(id, 'credit', '4.00')).result as Json).entry;
      const key = `reverse-pair-${id}`;
      expect((await post(`/ledger/entries/${one.id}/reverse`, { note: 'x' }, { 'idempotency-key': key })).statusCode).toBe(201);
      const other = await post(`/ledger/entries/${two.id}/reverse`, { note: 'x' }, { 'idempotency-key': key });
      expect(other.statusCode).toBe(422);
      expect(other.result).toMatchObject({ code: 'svc_idempotency_key_reused' });
      expect(((await get(`/ledger/entries/${two.id}`)).result as Json).reversed_by).toBeNull();
      expect((await use().ctx.ledger.balanceOf(id, 'USD')).available).toBe('4.00');
    });

    it('debits a balance down to exactly zero, then refuses one minor unit more', async () => {
      const id = await member();
      await adjust(id, 'credit', '7.25');
      const exact = await adjust(id, 'debit', '7.25');
      expect(exact.statusCode).toBe(201);
      expect((exact.result as Json).balance).toMatchObject({ available: '0.00' });
      const cent = await adjust(id, 'debit', '0.01');
      expect(cent.statusCode).toBe(409);
      expect(cent.result).toEqual({ code: 'svc_insufficient_funds', message: expect.any(String), data: { status: 409, available: '0.00', currency: 'USD' } });
      const zero = await adjust(id, 'credit', '0.00');
      expect(zero.statusCode).toBe(400);
      expect(zero.result).toEqual({ code: 'svc_invalid_amount', message: expect.any(String), data: { status: 400, field: 'amount', currency: 'USD' } });
      expect((await adjust(id, 'credit', '0.01')).statusCode).toBe(201);
    });

    it('reverses an entry once: 409 for a second reversal and for reversing the reversal', async () => {
      const id = await member();
      const credit = ((await adjust(id, 'credit', '5.00')).result as Json).entry;
      await adjust(id, 'debit', '4.00');
      const res = await post(`/ledger/entries/${credit.id}/reverse`, { note: 'granted twice' });
      expect(res.statusCode).toBe(201);
      const { reversal, original } = res.result as Json;
      expect(reversal).toMatchObject({ type: 'reversal', amount: '-5.00', balance_after: '-4.00', reverses_id: credit.id, note: 'granted twice' });
      expect(original).toMatchObject({ id: credit.id, reversed_by: reversal.id });
      const twice = await post(`/ledger/entries/${credit.id}/reverse`, {});
      expect(twice.statusCode).toBe(409);
      expect(twice.result).toMatchObject({ code: 'svc_already_reversed' });
      const ofReversal = await post(`/ledger/entries/${reversal.id}/reverse`, {});
      expect(ofReversal.statusCode).toBe(409);
      expect(ofReversal.result).toMatchObject({ code: 'svc_reverse_reversal' });
    });

    it('lets exactly one of concurrent reversals of one entry win', async () => {
      const id = await member();
      const credit = ((await adjust(id, 'credit', '7.00')).result as Json).entry;
      const results = await Promise.all(Array.from({ length: 6 }, () => post(`/ledger/entries/${credit.id}/reverse`, { note: 'race' })));
      expect(results.filter((r) => r.statusCode === 201)).toHaveLength(1);
      for (const r of results.filter((r) => r.statusCode !== 201)) {
        expect(r.statusCode).toBe(409);
        expect(r.result).toMatchObject({ code: 'svc_already_reversed' });
      }
      expect((await use().ctx.ledger.balanceOf(id, 'USD')).available).toBe('0.00');
    });

    it("lists one member's entries newest first, filtered and paged, and requires member_id", async () => {
      const missing = await get('/ledger/entries');
      expect(missing.statusCode).toBe(400);
      expect(missing.result).toMatchObject({ code: 'rest_missing_callback_param', data: { params: ['member_id'] } });
      expect(((await get('/ledger/entries?member_id=888888')).result as Json).code).toBe('svc_member_not_found');
      const id = await member();
      const ids: number[] = [];
      for (const amount of ['1.00', '2.00', '3.00']) ids.push(((await adjust(id, 'credit', amount)).result as Json).entry.id);
      const rev = ((await post(`/ledger/entries/${ids[0]}/reverse`, {})).result as Json).reversal.id;
      const page1 = await get(`/ledger/entries?member_id=${id}&per_page=3`);
      expect(page1.headers['x-wp-total']).toBe('4');
      expect(page1.headers['x-wp-totalpages']).toBe('2');
      expect((page1.result as Json[]).map((e) => e.id)).toEqual([rev, ids[2], ids[1]]);
      const page2 = await get(`/ledger/entries?member_id=${id}&per_page=3&page=2`);
      expect((page2.result as Json[]).map((e) => e.id)).toEqual([ids[0]]);
      expect((page2.result as Json[])[0].reversed_by).toBe(rev);
      const reversals = await get(`/ledger/entries?member_id=${id}&type=reversal`);
      expect((reversals.result as Json[]).map((e) => e.id)).toEqual([rev]);
      expect((await get(`/ledger/entries?member_id=${id}&page=3&per_page=3`)).statusCode).toBe(400);
      expect((await get(`/ledger/entries?member_id=${id}&type=gift`)).statusCode).toBe(400);
    });

    it('lists member balances with search, currency and min_balance filters, ordering and paging', async () => {
      const a = await member('zq');
      const b = await member('zq');
      const c = await member('zq');
      await adjust(a, 'credit', '30.00');
      await adjust(b, 'credit', '10.00');
      await adjust(c, 'credit', '20.00');
      await adjust(c, 'credit', '500', { currency: 'JPY' });
      const ids = (res: { result: unknown }) => (res.result as Json[]).map((r) => `${r.member_id}/${r.currency}`);
      const byAvailable = await get('/ledger/members?search=zq&currency=USD');
      expect(ids(byAvailable)).toEqual([`${a}/USD`, `${c}/USD`, `${b}/USD`]);
      expect((byAvailable.result as Json[])[0]).toMatchObject({
        login: `zq${seq - 2}`,
        display_name: expect.stringMatching(/^ZQ/),
        email: expect.stringContaining('@example.com'),
        available: '30.00',
      });
      expect(ids(await get('/ledger/members?search=zq&currency=USD&order=asc'))).toEqual([`${b}/USD`, `${c}/USD`, `${a}/USD`]);
      expect(ids(await get('/ledger/members?search=zq&currency=USD&orderby=name'))).toEqual([`${a}/USD`, `${b}/USD`, `${c}/USD`]);
      expect(ids(await get('/ledger/members?search=zq&currency=USD&min_balance=15.00'))).toEqual([`${a}/USD`, `${c}/USD`]);
      expect(ids(await get('/ledger/members?search=zq&currency=JPY'))).toEqual([`${c}/JPY`]);
      const paged = await get('/ledger/members?search=zq&per_page=2&orderby=last_entry_at');
      expect(paged.headers['x-wp-total']).toBe('4');
      expect(ids(paged)).toEqual([`${c}/JPY`, `${c}/USD`]);
      expect(String(paged.headers.link)).toMatch(/search=zq&per_page=2&orderby=last_entry_at&page=2>; rel="next"/);
      expect(((await get('/ledger/members?orderby=balance')).result as Json).code).toBe('rest_invalid_param');
      expect(((await get('/ledger/members?min_balance=lots')).result as Json).code).toBe('svc_invalid_amount');
    });

    it("lists one member's balances, one row per currency, with member_id", async () => {
      const id = await member('mb');
      const other = await member('mb');
      await adjust(id, 'credit', '5.00');
      await adjust(id, 'credit', '700', { currency: 'JPY' });
      await adjust(other, 'credit', '9.00');
      const res = await get(`/ledger/members?member_id=${id}&orderby=name`);
      expect(res.headers['x-wp-total']).toBe('2');
      expect((res.result as Json[]).map((r) => [r.member_id, r.currency, r.available])).toEqual([
        [id, 'JPY', '700'],
        [id, 'USD', '5.00'],
      ]);
      expect((await get(`/ledger/members?member_id=${id}&currency=USD`)).result).toEqual([expect.objectContaining({ member_id: id, available: '5.00' })]);
      const empty = await get(`/ledger/members?member_id=${await member('mb')}`);
      expect(empty.statusCode).toBe(200);
      expect(empty.result).toEqual([]);
      expect(((await get('/ledger/members?member_id=0')).result as Json).code).toBe('rest_invalid_param');
    });

    it('replays an adjustment retried with the same Idempotency-Key and posts it once', async () => {
      const id = await member();
      const key = `adj-${id}`;
      const first = await adjust(id, 'credit', '8.00', {}, { 'idempotency-key': key });
      const retry = await adjust(id, 'credit', '8.00', {}, { 'idempotency-key': key });
      expect(first.statusCode).toBe(201);
      expect(retry.statusCode).toBe(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.result).toEqual(JSON.parse(first.payload));
      expect((await use().ctx.ledger.balanceOf(id, 'USD')).available).toBe('8.00');
      const other = await adjust(id, 'credit', '9.00', {}, { 'idempotency-key': key });
      expect(other.statusCode).toBe(422);
      expect(other.result).toMatchObject({ code: 'svc_idempotency_key_reused' });
      // The same key on another route is another key.
      const reverse = await post(`/ledger/entries/${(first.result as Json).entry.id}/reverse`, {}, { 'idempotency-key': key });
      expect(reverse.statusCode).toBe(201);
      expect((await post(`/ledger/entries/${(first.result as Json).entry.id}/reverse`, {}, { 'idempotency-key': key })).headers['idempotent-replayed']).toBe(
        'true',
      );
    });

    it('replays a refusal under its key', async () => {
      const id = await member();
      const key = `refused-${id}`;
      expect((await adjust(id, 'debit', '5.00', {}, { 'idempotency-key': key })).statusCode).toBe(409);
      await adjust(id, 'credit', '10.00');
      const retry = await adjust(id, 'debit', '5.00', {}, { 'idempotency-key': key });
      expect(retry.statusCode).toBe(409);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.result).toMatchObject({ code: 'svc_insufficient_funds' });
      expect((await use().ctx.ledger.balanceOf(id, 'USD')).available).toBe('10.00');
    });

    it('makes a duplicate sent while the first request is inside its transaction wait for it, then replays its answer', async () => {
      const { ctx } = use();
      const id = await member();
      const key = `in-flight-${id}`;
      const held = hold.arm('ledger.adjust');
      const first = adjust(id, 'credit', '2.00', {}, { 'idempotency-key': key });
      await held.entered;
      let answered = false;
      const duplicate = adjust(id, 'credit', '2.00', {}, { 'idempotency-key': key }).finally(() => (answered = true));
      // The duplicate is not refused while the first holds the key: it waits for the outcome.
      await new Promise((r) => setTimeout(r, 150));
      expect(answered).toBe(false);
      held.release();
      const [one, two] = await Promise.all([first, duplicate]);
      expect(one.statusCode).toBe(201);
      expect(one.headers['idempotent-replayed']).toBeUndefined();
      expect(two.statusCode).toBe(201);
      expect(two.headers['idempotent-replayed']).toBe('true');
      expect(two.result).toEqual(JSON.parse(one.payload));
      expect((await ctx.ledger.balanceOf(id, 'USD')).available).toBe('2.00');
      expect((await ctx.ledger.listEntries({ member_id: id, page: 1, per_page: 10 })).total).toBe(1);
    });

    it('lets a duplicate run the effect itself when the first request with the key fails inside its transaction', async () => {
      const { ctx } = use();
      const id = await member();
      const key = `rolled-back-${id}`;
      const held = hold.arm('ledger.adjust');
      // The first request dies after claiming the key, as a killed process's transaction would.
      const original = ctx.ledger.postWithBalance.bind(ctx.ledger);
      let calls = 0;
      ctx.ledger.postWithBalance = async (...args) => {
        if (calls++ === 0) throw new Error('connection lost');
        return original(...args);
      };
      let two: Awaited<ReturnType<typeof adjust>>;
      try {
        const first = adjust(id, 'credit', '6.00', {}, { 'idempotency-key': key });
        await held.entered;
        const duplicate = adjust(id, 'credit', '6.00', {}, { 'idempotency-key': key });
        held.release();
        expect((await first).statusCode).toBe(500);
        two = await duplicate;
      } finally {
        ctx.ledger.postWithBalance = original;
      }
      expect(two.statusCode).toBe(201);
      expect(two.headers['idempotent-replayed']).toBeUndefined();
      expect((await ctx.ledger.balanceOf(id, 'USD')).available).toBe('6.00');
      const again = await adjust(id, 'credit', '6.00', {}, { 'idempotency-key': key });
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect((await ctx.ledger.balanceOf(id, 'USD')).available).toBe('6.00');
    });

    it('lets a retry run anew after a fault (a 500 is not replayed)', async () => {
      const { ctx } = use();
      const id = await member();
      const original = ctx.ledger.adjust.bind(ctx.ledger);
      ctx.ledger.adjust = async () => {
        throw new Error('connection dropped mid-flight');
      };
      try {
        expect((await adjust(id, 'credit', '3.00', {}, { 'idempotency-key': `fault-${id}` })).statusCode).toBe(500);
      } finally {
        ctx.ledger.adjust = original;
      }
      const retry = await adjust(id, 'credit', '3.00', {}, { 'idempotency-key': `fault-${id}` });
      expect(retry.statusCode).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect((await ctx.ledger.balanceOf(id, 'USD')).available).toBe('3.00');
    });

    it('keeps a key used over HTTP apart from the same key on the command line, another caller', async () => {
      const id = await member();
      const key = `adj-both-${id}`;
      const http = await adjust(id, 'credit', '4.00', {}, { 'idempotency-key': key });
      const cli = await runCli(['ledger', 'adjust', String(id), 'credit', '4.00', '--note', 'ticket 1', '--idempotency-key', key, '--json'], { db: use().db });
      expect(cli.code).toBe(0);
      expect((cli.json() as { entry: { id: number } }).entry.id).not.toBe((JSON.parse(http.payload) as { entry: { id: number } }).entry.id);
      expect((await use().ctx.ledger.balanceOf(id, 'USD')).available).toBe('8.00');
    });

    it("gives two administrators using the same Idempotency-Key each their own effect, never the other one's answer", async () => {
      const { ctx } = use();
      const other = await createActor(ctx, 'administrator');
      const id = await member();
      const key = `shared-${id}`;
      const mine = await adjust(id, 'credit', '5.00', {}, { 'idempotency-key': key });
      expect(mine.statusCode).toBe(201);
      // The same key and the same body from another administrator: its own adjustment, not a replay.
      const theirs = await api.server.inject({
        method: 'POST',
        url: `${NS}/ledger/adjustments`,
        payload: { member_id: id, type: 'credit', amount: '5.00', note: 'ticket 1' },
        headers: { authorization: other.authorization, 'idempotency-key': key },
      });
      expect(theirs.statusCode).toBe(201);
      expect(theirs.headers['idempotent-replayed']).toBeUndefined();
      expect((theirs.result as Json).entry).toMatchObject({ actor: `user:${other.id}` });
      expect((theirs.result as Json).entry.id).not.toBe((mine.result as Json).entry.id);
      expect((await ctx.ledger.balanceOf(id, 'USD')).available).toBe('10.00');
      // Each one's retry still replays its own answer.
      const myRetry = await adjust(id, 'credit', '5.00', {}, { 'idempotency-key': key });
      expect(myRetry.headers['idempotent-replayed']).toBe('true');
      expect(myRetry.result).toEqual(JSON.parse(mine.payload));
      expect((await ctx.ledger.balanceOf(id, 'USD')).available).toBe('10.00');
    });

    it('queues a burst of 32 concurrent first credits and debits of a member with no balance row: no 5xx, balances exact', async () => {
      const { ctx } = use();
      const id = await member('burst');
      expect((await ctx.db.select('SELECT 1 FROM balances WHERE member_id = ?', [id])).length).toBe(0);
      // One request first, so the burst meets verified (cached) credentials, not 32 cold checks at once.
      expect((await get(`/ledger/entries?member_id=${id}`)).statusCode).toBe(200);
      const retried = ctx.db.retriedTransactions;
      const burst = await Promise.all(
        Array.from({ length: 32 }, (_, i) =>
          i % 2 === 0
            ? adjust(id, 'credit', '5.00', {}, i % 4 === 0 ? { 'idempotency-key': `burst-${id}-${i}` } : {})
            : adjust(id, 'debit', '1.00', { allow_negative: true }, i % 4 === 1 ? { 'idempotency-key': `burst-${id}-${i}` } : {}),
        ),
      );
      expect(
        burst.map((r) => r.statusCode).filter((s) => s !== 201),
        JSON.stringify(burst.find((r) => r.statusCode !== 201)?.result),
      ).toEqual([]);
      // They queued on the balance row: not one deadlock (each a retry, and past five retries a 503).
      expect(ctx.db.retriedTransactions - retried).toBe(0);
      expect(await ctx.ledger.balanceOf(id, 'USD')).toMatchObject({ available: '64.00', lifetime_earned: '0.00' });
      expect((await ctx.ledger.listEntries({ member_id: id, page: 1, per_page: 1 })).total).toBe(32);
      // One balance row, counted once.
      expect((await ctx.db.select('SELECT 1 FROM balances WHERE member_id = ?', [id])).length).toBe(1);
    });

    it('refuses a malformed Idempotency-Key', async () => {
      const id = await member();
      for (const key of ['x'.repeat(256), 'has space', 'ключ']) {
        const res = await adjust(id, 'credit', '1.00', {}, { 'idempotency-key': key });
        expect(res.statusCode, key.slice(0, 10)).toBe(400);
        expect(res.result).toMatchObject({ code: 'svc_invalid_idempotency_key' });
      }
      expect((await adjust(id, 'credit', '1.00', {}, { 'idempotency-key': 'k'.repeat(255) })).statusCode).toBe(201);
    });
  },
  {},
  { holdInTransaction: hold.hook },
);
