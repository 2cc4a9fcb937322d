import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';
import type { Server } from '@hapi/hapi';
import { describeEachDialect } from '../helpers/context.js';
import { createActor, NS, testServer, type Actor } from '../helpers/http.js';
import { fakeModule, getPostback, postPostback, query, shopnetDefinition, signature } from '../helpers/networks.js';

type Json = Record<string, any>;

describeEachDialect(
  'the postback endpoint',
  (use) => {
    let server: Server;
    let admin: Actor;
    let token: string;
    let hmacSecret: string;
    let member: { id: number; login: string };
    let n = 0;

    beforeAll(async () => {
      const { ctx } = use();
      server = await testServer(ctx);
      admin = await createActor(ctx, 'administrator');
      const user = await ctx.users.create({ login: 'pb-member', email: 'pb-member@example.com' });
      member = { id: user.id, login: user.login };
      await ctx.networks.saveCustom('shopnet', shopnetDefinition(), 'test');
      token = (await ctx.networks.rotatePostbackSecret('shopnet', 'test')).secret;
      await ctx.networks.setPostbacks('shopnet', true, 'test');
      await ctx.networks.saveCustom('signnet', shopnetDefinition({ name: 'Sign Net' }), 'test');
      hmacSecret = (await ctx.networks.rotatePostbackSecret('signnet', 'test', { mode: 'hmac' })).secret;
      await ctx.networks.setPostbacks('signnet', true, 'test');
    });
    afterAll(async () => {
      await server.stop();
    });
    afterEach(async () => {
      expect(await use().ctx.ledger.verify()).toEqual([]);
    });

    const txn = () => `TX-${++n}`;
    const shop = (params: Record<string, string | string[]>, headers: Record<string, string> = {}) =>
      getPostback(server, 'shopnet', query({ token, ...params }), headers);
    const sale = (over: Record<string, string | string[]> = {}) => ({
      txn: txn(),
      status: 'pending',
      amount: '120.00',
      payout: '12.00',
      cur: 'EUR',
      subid: String(member.id),
      ...over,
    });
    const count = async (sql: string, params: unknown[] = []) =>
      Number((await use().ctx.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ${sql}`, params))[0].n);
    const record = async (id: number) => (await use().ctx.db.select<Json>('SELECT * FROM postbacks WHERE id = ?', [id]))[0];
    const lastRecord = async (network = 'shopnet') => (await use().ctx.postbacks.list({ network, page: 1, per_page: 1 })).items[0];
    const balance = () => use().ctx.ledger.balanceOf(member.id, 'EUR');

    it('records a pending order from a postback and answers with its id', async () => {
      const p = sale({ program: 'shop-7', order_id: '#A-1001', date: '2026-11-20 10:15:00' });
      const res = await shop(p);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        ok: true,
        status: 'pending',
        duplicate: false,
        test: false,
        order_id: expect.any(Number),
        postback_id: expect.any(Number),
      });
      expect(res.headers['x-request-id']).toEqual(expect.any(String));
      const order = await use().ctx.orders.get(res.body.order_id);
      expect(order).toMatchObject({
        network: 'shopnet',
        transaction_id: p.txn,
        source: 'postback',
        status: 'pending',
        sale_amount: '120.00',
        commission: '12.00',
        currency: 'EUR',
        cashback: '6.00',
        advertiser: 'shop-7',
        merchant_ref: '#A-1001',
        member: { id: member.id },
        event_at: '2026-11-20T10:15:00.000Z',
      });
      expect(JSON.stringify(order.raw)).not.toContain(token);
      const rec = await lastRecord();
      expect(rec).toMatchObject({
        id: res.body.postback_id,
        network: 'shopnet',
        method: 'GET',
        outcome: 'accepted',
        order_id: res.body.order_id,
        transaction_id: p.txn,
        status: 'pending',
        test: false,
        code: null,
      });
      expect((rec.params as Json).query.token).toBe('[redacted]');
      expect((rec.params as Json).query.txn).toBe(p.txn);
    });

    it('records an approved postback above the review ceiling (1000.00) but holds it: the member gets nothing until an administrator releases it', async () => {
      const before = await balance();
      const p = sale({ amount: '', payout: '9999999999.99', status: 'validated' });
      const res = await shop(p);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ ok: true, status: 'approved', duplicate: false });
      expect(await use().ctx.orders.get(res.body.order_id)).toMatchObject({
        commission: '9999999999.99',
        review: { state: 'held', reason: 'above_ceiling' },
        cashback_entry_id: null,
      });
      expect(await lastRecord()).toMatchObject({ id: res.body.postback_id, outcome: 'accepted', message: expect.stringContaining('Held for review') });
      // A commission above the sale it was paid on waits as well.
      const over = await shop(sale({ amount: '10.00', payout: '11.00', status: 'validated' }));
      expect((await use().ctx.orders.get(over.body.order_id)).review).toMatchObject({ state: 'held', reason: 'commission_exceeds_sale' });
      expect(await balance()).toEqual(before);
      await use().ctx.orders.declineHeld(res.body.order_id, 'test');
      await use().ctx.orders.release(over.body.order_id, 'test');
      expect(Number((await balance()).available) - Number(before.available)).toBeCloseTo(5.5, 5);
    });

    it('answers a repeated postback with duplicate: true and changes nothing', async () => {
      const p = sale();
      const first = await shop(p);
      const again = await shop(p);
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ ok: true, order_id: first.body.order_id, duplicate: true, status: 'pending' });
      expect(await count('orders WHERE network = ? AND transaction_id = ?', ['shopnet', p.txn])).toBe(1);
      expect((await lastRecord()).outcome).toBe('duplicate');
    });

    it('credits the member once when postbacks approve, and reverses on a later decline', async () => {
      const before = await balance();
      const p = sale({ payout: '20.00' });
      await shop(p);
      const approved = await shop({ ...p, status: 'validated' });
      expect(approved.body).toMatchObject({ status: 'approved', duplicate: false });
      const again = await shop({ ...p, status: 'approved' });
      expect(again.body).toMatchObject({ status: 'approved', duplicate: true });
      const after = await balance();
      expect(Number(after.available) - Number(before.available)).toBeCloseTo(10, 5);
      const entries = (await use().ctx.ledger.listEntries({ member_id: member.id, page: 1, per_page: 100 })).items.filter(
        (e) => e.order_id === approved.body.order_id,
      );
      expect(entries.map((e) => e.type)).toEqual(['cashback']);
      const declined = await shop({ ...p, status: 'rejected', payout: '0' });
      expect(declined.body).toMatchObject({ status: 'declined', duplicate: false });
      expect((await balance()).available).toBe(before.available);
    });

    it('counts concurrent copies of one approval once, signed or not', async () => {
      const before = await balance();
      const p = sale({ status: 'approved', payout: '8.00' });
      const results = await Promise.all(Array.from({ length: 12 }, () => shop(p)));
      expect(results.map((r) => r.status)).toEqual(Array(12).fill(200));
      expect(new Set(results.map((r) => r.body.order_id)).size).toBe(1);
      expect(results.filter((r) => !r.body.duplicate)).toHaveLength(1);
      const q = query(sale({ status: 'approved', payout: '6.00' }));
      const sig = signature(hmacSecret, q);
      const signed = await Promise.all(Array.from({ length: 8 }, () => getPostback(server, 'signnet', q, { 'x-postback-signature': sig })));
      expect(signed.map((r) => r.status)).toEqual(Array(8).fill(200));
      expect(signed.filter((r) => !r.body.duplicate)).toHaveLength(1);
      expect(Number((await balance()).available) - Number(before.available)).toBeCloseTo(7, 5);
    });

    it('answers each postback of a concurrent burst as if it came alone, though they are recorded in batches', async () => {
      const before = await balance();
      const beforeRecords = await count('postbacks');
      const fresh = Array.from({ length: 24 }, () => sale({ payout: '4.00' }));
      const created = await Promise.all(fresh.slice(0, 8).map((p) => shop(p)));
      expect(created.map((r) => r.status)).toEqual(Array(8).fill(200));
      // New orders, repeats of new and known ones, approvals and declines of known ones, a new
      // order approved in the same burst, an unmatched one, and one refused: all at once.
      const q = query(sale({ payout: '6.00' }));
      const sig = signature(hmacSecret, q);
      const qOld = query(sale({ payout: '2.00' }));
      const sigOld = signature(hmacSecret, qOld);
      const first = await getPostback(server, 'signnet', qOld, { 'x-postback-signature': sigOld });
      const batches = vi.spyOn(use().ctx.orders, 'recordOutcomes');
      const burst = await Promise.all([
        ...fresh.slice(8).map((p) => shop(p)),
        shop(fresh[8]),
        shop(fresh[0]),
        ...fresh.slice(1, 5).map((p) => shop({ ...p, status: 'approved' })),
        shop({ ...fresh[5], status: 'rejected', payout: '0' }),
        shop({ ...fresh[20], status: 'approved' }),
        shop(sale({ subid: 'nobody-in-a-burst' })),
        shop(sale({ payout: 'twelve' })),
        getPostback(server, 'signnet', q, { 'x-postback-signature': sig }),
        getPostback(server, 'signnet', q, { 'x-postback-signature': sig }),
        getPostback(server, 'signnet', qOld, { 'x-postback-signature': sigOld }),
        getPostback(server, 'signnet', qOld, { 'x-postback-signature': sigOld }),
      ]);
      const [news, [repeatNew, repeatKnown], approvals, [decline, approveNew, unmatched, refused, signedA, signedB, replayA, replayB]] = [
        burst.slice(0, 16),
        burst.slice(16, 18),
        burst.slice(18, 22),
        burst.slice(22),
      ];
      for (const replay of [replayA, replayB]) {
        expect(replay).toMatchObject({ status: 200, body: { duplicate: true, order_id: first.body.order_id, status: 'pending' } });
        expect(await record(replay.body.postback_id)).toMatchObject({ outcome: 'duplicate', code: 'svc_postback_replayed' });
      }
      expect(news.map((r) => [r.status, r.body.duplicate])).toEqual(Array(16).fill([200, false]));
      expect(new Set(news.map((r) => r.body.order_id)).size).toBe(16);
      expect(repeatNew.body).toMatchObject({ order_id: news[0].body.order_id });
      expect(repeatKnown.body).toMatchObject({ order_id: created[0].body.order_id, duplicate: true, status: 'pending' });
      expect(approvals.map((r) => [r.status, r.body.status, r.body.duplicate])).toEqual(Array(4).fill([200, 'approved', false]));
      expect(decline.body).toMatchObject({ status: 'declined', duplicate: false });
      expect(approveNew.status).toBe(200);
      expect(unmatched.status).toBe(200);
      expect((await use().ctx.orders.get(unmatched.body.order_id)).member).toBeNull();
      expect(refused).toMatchObject({ status: 400, body: { code: 'svc_postback_invalid_amount' } });
      expect([signedA.body.duplicate, signedB.body.duplicate].sort()).toEqual([false, true]);
      // Whatever the batches were, every transaction is one order in the status last reported.
      for (const p of fresh) expect(await count('orders WHERE network = ? AND transaction_id = ?', ['shopnet', p.txn])).toBe(1);
      expect((await use().ctx.orders.get(news[12].body.order_id)).status).toBe('approved');
      // Credits: 4 approvals and the new order approved in the burst, 2.00 each.
      expect(Number((await balance()).available) - Number(before.available)).toBeCloseTo(10, 5);
      expect(await count('postbacks')).toBe(beforeRecords + 9 + burst.length);
      const ids = burst.map((r) => r.body.postback_id ?? r.body.data?.postback_id);
      expect(new Set(ids).size).toBe(burst.length);
      for (const [i, res] of burst.entries()) {
        const rec = await record(ids[i]);
        expect(rec.request_id).toBe(res.headers['x-request-id']);
        if (res.status === 200) expect(Number(rec.order_id)).toBe(res.body.order_id);
      }
      expect(Math.max(...batches.mock.calls.map(([reports]) => reports.length))).toBeGreaterThan(1);
      batches.mockRestore();
    });

    it('keeps an order whose sub id matches no member, unmatched', async () => {
      const res = await shop(sale({ subid: 'nobody-knows-me' }));
      expect(res.status).toBe(200);
      const order = await use().ctx.orders.get(res.body.order_id);
      expect(order).toMatchObject({ member: null, sub_id: 'nobody-knows-me', status: 'pending' });
    });

    it('takes the token from the X-Postback-Token header too', async () => {
      const res = await getPostback(server, 'shopnet', query(sale()), { 'x-postback-token': token });
      expect(res.status).toBe(200);
    });

    it.each([
      ['no credentials', {}, {}, 'missing_credentials'],
      ['a wrong token', { token: 'x'.repeat(43) }, {}, 'bad_token'],
      ['a wrong header token', {}, { 'x-postback-token': 'nope' }, 'bad_token'],
      ['two different tokens', { token: ['a'.repeat(43), 'b'.repeat(43)] }, {}, 'ambiguous_token'],
      ['a malformed signature', {}, { 'x-postback-signature': 'v1=zz' }, 'malformed_signature'],
    ])('refuses %s with 401 svc_postback_unauthorized and records it', async (_name, auth, headers, reason) => {
      const before = await count('orders');
      const res = await getPostback(server, 'shopnet', query({ ...sale(), ...(auth as Record<string, string>) }), headers as Record<string, string>);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ code: 'svc_postback_unauthorized', message: expect.any(String), data: { status: 401 } });
      expect(await count('orders')).toBe(before);
      const rec = await lastRecord();
      expect(rec).toMatchObject({ outcome: 'rejected', code: 'svc_postback_unauthorized', order_id: null });
      expect(rec.message).toContain(reason);
      expect(JSON.stringify(rec.params)).not.toMatch(/a{43}|b{43}|x{43}|nope/);
    });

    it("refuses one network's token on another network", async () => {
      const res = await getPostback(server, 'signnet', query({ ...sale(), token }));
      expect(res.status).toBe(401);
    });

    it('accepts an HMAC-signed GET and POST, and refuses wrong, stale and unsigned ones', async () => {
      const q = query(sale());
      expect((await getPostback(server, 'signnet', q, { 'x-postback-signature': signature(hmacSecret, q) })).status).toBe(200);
      const q2 = query(sale());
      expect((await getPostback(server, 'signnet', q2, { 'x-postback-signature': signature('not-the-secret', q2) })).status).toBe(401);
      expect((await lastRecord('signnet')).message).toContain('bad_signature');
      const old = Math.floor(Date.now() / 1000) - 301;
      expect((await getPostback(server, 'signnet', q2, { 'x-postback-signature': signature(hmacSecret, q2, old) })).status).toBe(401);
      expect((await lastRecord('signnet')).message).toContain('stale_signature');
      const future = Math.floor(Date.now() / 1000) + 400;
      expect((await getPostback(server, 'signnet', q2, { 'x-postback-signature': signature(hmacSecret, q2, future) })).status).toBe(401);
      // Altering the signed query invalidates the signature.
      expect((await getPostback(server, 'signnet', q2.replace('12.00', '99.00'), { 'x-postback-signature': signature(hmacSecret, q2) })).status).toBe(401);
      expect((await getPostback(server, 'signnet', q2)).status).toBe(401);

      const body = query(sale());
      const post = await postPostback(server, 'signnet', body, 'application/x-www-form-urlencoded', { 'x-postback-signature': signature(hmacSecret, body) });
      expect(post.status).toBe(200);
      expect((await lastRecord('signnet')).method).toBe('POST');
      const json = JSON.stringify(sale());
      expect((await postPostback(server, 'signnet', json, 'application/json', { 'x-postback-signature': signature(hmacSecret, json) })).status).toBe(200);
      const unsigned = await postPostback(
        server,
        'signnet',
        body,
        'application/x-www-form-urlencoded',
        { 'x-postback-signature': signature(hmacSecret, body) },
        'payout=999.00',
      );
      expect(unsigned.status).toBe(401);
      expect((await lastRecord('signnet')).message).toContain('unsigned_query');
    });

    it('answers a replayed signed request as a duplicate without applying it again', async () => {
      const p = sale();
      const q = query(p);
      const sig = signature(hmacSecret, q);
      const first = await getPostback(server, 'signnet', q, { 'x-postback-signature': sig });
      await getPostback(server, 'signnet', query({ ...p, status: 'rejected', payout: '0' }), {
        'x-postback-signature': signature(hmacSecret, query({ ...p, status: 'rejected', payout: '0' })),
      });
      const replay = await getPostback(server, 'signnet', q, { 'x-postback-signature': sig });
      expect(replay.status).toBe(200);
      expect(replay.body).toMatchObject({ duplicate: true, order_id: first.body.order_id });
      expect((await lastRecord('signnet')).code).toBe('svc_postback_replayed');
      expect((await use().ctx.orders.get(first.body.order_id)).status).toBe('declined');
    });

    it.each([
      ['a missing transaction id', { txn: '' }, 'svc_postback_missing_param', { field: 'transaction_id', param: 'txn' }],
      ['a missing commission', { payout: [] }, 'svc_postback_missing_param', { field: 'commission', param: 'payout' }],
      ['a transaction id sent twice with different values', { txn: ['T-a', 'T-b'] }, 'svc_postback_repeated_param', { param: 'txn' }],
      ['an amount with a comma', { amount: '1,200.00' }, 'svc_postback_invalid_amount', { field: 'sale_amount', param: 'amount' }],
      ['an amount with a currency symbol', { payout: '€12.00' }, 'svc_postback_invalid_amount', { field: 'commission', param: 'payout' }],
      ['a non-numeric amount', { payout: 'twelve' }, 'svc_postback_invalid_amount', { field: 'commission', param: 'payout' }],
      ['a negative amount', { payout: '-3.00' }, 'svc_postback_invalid_amount', { field: 'commission', param: 'payout' }],
      ['an amount in exponent form', { amount: '1e3' }, 'svc_postback_invalid_amount', { field: 'sale_amount', param: 'amount' }],
      ['an amount too large for the ledger', { payout: '999999999999999.00' }, 'svc_postback_invalid_amount', { field: 'commission', param: 'payout' }],
      [
        "the security review's payout, past the bound of 10^12 minor units",
        { payout: '9999999999999.99' },
        'svc_postback_invalid_amount',
        { field: 'commission', param: 'payout' },
      ],
      ['a sale past the bound of 10^12 minor units', { amount: '10000000000.01' }, 'svc_postback_invalid_amount', { field: 'sale_amount', param: 'amount' }],
      ['a status word the mapping lacks', { status: 'paid' }, 'svc_postback_unknown_status', { field: 'status', param: 'status', word: 'paid' }],
      ['an unknown currency', { cur: 'XYZ' }, 'svc_postback_invalid_currency', { field: 'currency', param: 'cur' }],
      ['SQL in the transaction id', { txn: "1' OR '1'='1" }, 'svc_postback_invalid_param', { field: 'transaction_id', param: 'txn' }],
      ['SQL in the sub id', { subid: '1; DROP TABLE users;--' }, 'svc_postback_invalid_param', { field: 'sub_id', param: 'subid' }],
      ['script in the sub id', { subid: '<script>alert(1)</script>' }, 'svc_postback_invalid_param', { field: 'sub_id', param: 'subid' }],
      [
        'script in the advertiser id',
        { program: '"><img src=x onerror=alert(1)>' },
        'svc_postback_invalid_param',
        { field: 'advertiser_id', param: 'program' },
      ],
      [
        'SQL in the merchant ref',
        { order_id: "x' UNION SELECT password_hash FROM users--" },
        'svc_postback_invalid_param',
        { field: 'merchant_ref', param: 'order_id' },
      ],
      ['script in the status', { status: '<script>' }, 'svc_postback_unknown_status', { field: 'status', param: 'status' }],
      ['SQL in the amount', { amount: '1 OR 1=1' }, 'svc_postback_invalid_amount', { field: 'sale_amount', param: 'amount' }],
      ['script in the currency', { cur: '<b>' }, 'svc_postback_invalid_currency', { field: 'currency', param: 'cur' }],
      ['a date that is not a date', { date: "2026-13-45'--" }, 'svc_postback_invalid_param', { field: 'event_time', param: 'date' }],
    ])('refuses %s with 400, naming the field and its parameter, and records it as rejected', async (_name, over, code, data) => {
      const before = await count('orders');
      const res = await shop(sale(over as Record<string, string | string[]>));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code, data: { status: 400, ...data, postback_id: expect.any(Number) } });
      expect(await count('orders')).toBe(before);
      const rec = await record(res.body.data.postback_id);
      expect(rec).toMatchObject({ outcome: 'rejected', code, network: 'shopnet' });
      expect(rec.params).not.toContain(token);
    });

    it('refuses a signed JSON body naming a key twice as it refuses a repeated query parameter: 400, recorded as rejected', async () => {
      const before = await count('orders');
      const p = sale({ payout: '1.00' });
      // The last "payout" is what JSON.parse keeps; the signature covers both.
      const json = JSON.stringify(p).replace(/}$/, ',"payout":"999.00"}');
      expect(json).toMatch(/"payout":"1\.00".*"payout":"999\.00"/);
      const res = await postPostback(server, 'signnet', json, 'application/json', { 'x-postback-signature': signature(hmacSecret, json) });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'svc_postback_repeated_param', data: { status: 400, param: 'payout', postback_id: expect.any(Number) } });
      expect(await count('orders')).toBe(before);
      expect(await record(res.body.data.postback_id)).toMatchObject({ outcome: 'rejected', code: 'svc_postback_repeated_param', network: 'signnet' });
      // The same for the query string, for comparison, and for a key repeated inside a nested object or with an escape.
      const q = query({ ...sale(), payout: ['1.00', '999.00'] });
      const viaQuery = await getPostback(server, 'signnet', q, { 'x-postback-signature': signature(hmacSecret, q) });
      expect(viaQuery.status).toBe(400);
      expect(viaQuery.body).toMatchObject({ code: 'svc_postback_repeated_param' });
      for (const body of [
        JSON.stringify({ ...sale(), meta: { a: 1 } }).replace('"a":1', '"a":1,"a":2'),
        JSON.stringify(sale()).replace(/}$/, ',"\\u0074xn":"T-other"}'),
      ]) {
        const again = await postPostback(server, 'signnet', body, 'application/json', { 'x-postback-signature': signature(hmacSecret, body) });
        expect(again.body, body).toMatchObject({ code: 'svc_postback_repeated_param' });
      }
      expect(await count('orders')).toBe(before);
    });

    it('accepts a parameter repeated with the same value, and ignores unmapped junk', async () => {
      const p = sale();
      const res = await shop({ ...p, txn: [p.txn, p.txn], junk: "'; DROP TABLE orders; --", other: '<script>x</script>' });
      expect(res.status).toBe(200);
    });

    it('rounds amounts to the currency the way polling does', async () => {
      const res = await shop(sale({ amount: '10.005', payout: '1.2000' }));
      expect(res.status).toBe(200);
      expect(await use().ctx.orders.get(res.body.order_id)).toMatchObject({ sale_amount: '10.01', commission: '1.20' });
    });

    it('refuses non-UTF-8 bytes and broken escapes with svc_postback_invalid_encoding', async () => {
      for (const bad of ['%FF%FE', '%C3%28', '%E2%82', 'caf%e9']) {
        const res = await getPostback(server, 'shopnet', `${query({ token, ...sale() })}&subid=${bad}`);
        expect(res.status, bad).toBe(400);
        expect(res.body.code).toBe('svc_postback_invalid_encoding');
      }
      const res = await getPostback(server, 'shopnet', `${query({ token, ...sale() })}&x=%zz`);
      expect(res.body.code).toBe('svc_postback_invalid_encoding');
      expect((await lastRecord()).outcome).toBe('rejected');
      const utf8 = await shop(sale({ order_id: '#Zürich-1' }));
      expect(utf8.body.code).toBe('svc_postback_invalid_param');
    });

    it('refuses an enormous query string (414) and body (413), and records both', async () => {
      const huge = await getPostback(server, 'shopnet', `${query({ token, ...sale() })}&pad=${'a'.repeat(9000)}`);
      expect(huge.status).toBe(414);
      expect(huge.body).toMatchObject({ code: 'svc_postback_too_large', data: { postback_id: expect.any(Number) } });
      const rec = await lastRecord();
      expect(rec).toMatchObject({ outcome: 'rejected', code: 'svc_postback_too_large' });
      expect(JSON.stringify(rec.params).length).toBeLessThan(500);
      const big = await postPostback(server, 'shopnet', `token=${token}&pad=${'b'.repeat(70_000)}`, 'application/x-www-form-urlencoded');
      expect(big.status).toBe(413);
      expect(big.body.code).toBe('svc_postback_too_large');
    });

    it('refuses a body that is not JSON or form data', async () => {
      const bad = await postPostback(server, 'shopnet', '{"txn": ', 'application/json', { 'x-postback-token': token });
      expect(bad.body).toMatchObject({ code: 'svc_postback_invalid_body', data: { status: 400 } });
      const xml = await postPostback(server, 'shopnet', '<txn>1</txn>', 'application/xml', { 'x-postback-token': token });
      expect(xml.status).toBe(415);
      expect(xml.body.code).toBe('svc_postback_unsupported_media_type');
    });

    it('answers 404 for a network that does not exist, storing nothing', async () => {
      const before = await count('postbacks');
      for (const id of ['nonet', 'BAD ID', '..%2F..%2Fetc']) {
        const res = await getPostback(server, id, query(sale()));
        expect(res.status).toBe(404);
      }
      expect(await count('postbacks')).toBe(before);
    });

    it('lists stored postbacks newest first with filters, secrets redacted', async () => {
      const ok = await shop(sale());
      await shop(sale({ payout: 'bad' }));
      const res = await server.inject({ url: `${NS}/networks/shopnet/postbacks?per_page=2`, headers: { authorization: admin.authorization } });
      expect(res.statusCode).toBe(200);
      const items = res.result as Json[];
      expect(items[0]).toMatchObject({ outcome: 'rejected', code: 'svc_postback_invalid_amount' });
      expect(items[1]).toMatchObject({ id: ok.body.postback_id, outcome: 'accepted' });
      expect(Number(res.headers['x-wp-total'])).toBeGreaterThan(2);
      expect(JSON.stringify(items)).not.toContain(token);
      const rejected = await server.inject({
        url: `${NS}/networks/shopnet/postbacks?outcome=rejected&per_page=100`,
        headers: { authorization: admin.authorization },
      });
      expect((rejected.result as Json[]).every((r) => r.outcome === 'rejected')).toBe(true);
      const real = await server.inject({
        url: `${NS}/networks/shopnet/postbacks?test=false&after=2000-01-01T00:00:00Z&before=2999-01-01T00:00:00Z`,
        headers: { authorization: admin.authorization },
      });
      expect(real.statusCode).toBe(200);
      expect((real.result as Json[]).every((r) => r.test === false)).toBe(true);
      const none = await server.inject({ url: `${NS}/networks/nonet/postbacks`, headers: { authorization: admin.authorization } });
      expect(none.statusCode).toBe(404);
      expect((none.result as Json).code).toBe('svc_network_not_found');
      const anon = await server.inject({ url: `${NS}/networks/shopnet/postbacks` });
      expect(anon.statusCode).toBe(401);
    });

    it('reads a built-in network through its module and status words', async () => {
      const { ctx } = use();
      const secret = (await ctx.networks.rotatePostbackSecret('fakenet', 'test')).secret;
      await ctx.networks.setPostbacks('fakenet', true, 'test');
      const tid = txn();
      const res = await getPostback(server, 'fakenet', query({ token: secret, tid, state: 'OK', sale: '50.00', comm: '5.00', clickref: member.login }));
      expect(res.body).toMatchObject({ ok: true, status: 'approved' });
      expect(await ctx.orders.get(res.body.order_id)).toMatchObject({ network: 'fakenet', currency: 'USD', cashback: '2.50', member: { id: member.id } });
      const unknown = await getPostback(server, 'fakenet', query({ token: secret, tid: txn(), state: 'WEIRD', comm: '5.00' }));
      expect(unknown.body.code).toBe('svc_postback_unknown_status');
      const noStatus = await getPostback(server, 'fakenet', query({ token: secret, tid: txn(), comm: '5.00' }));
      expect(noStatus.body).toMatchObject({ ok: true, status: 'pending' });
    });

    it('fires cashtrack.postback.received after each record is stored', async () => {
      const seen: Json[] = [];
      use().ctx.hooks.addAction('cashtrack.postback.received', 'test/pb', (r: Json) => seen.push(r));
      await shop(sale());
      await shop(sale({ payout: 'x' }));
      expect(seen.map((r) => r.outcome)).toEqual(['accepted', 'rejected']);
      expect(JSON.stringify(seen)).not.toContain(token);
      use().ctx.hooks.wp.removeAction('cashtrack.postback.received', 'test/pb');
    });

    it('prunes records older than the retention', async () => {
      const { ctx } = use();
      const res = await shop(sale());
      await ctx.db.execute('UPDATE postbacks SET received_at = ? WHERE id = ?', [new Date(Date.now() - 91 * 86_400_000), res.body.postback_id]);
      expect(await ctx.postbacks.prune()).toBe(1);
      expect(await count('postbacks WHERE id = ?', [res.body.postback_id])).toBe(0);
      expect(await count('orders WHERE id = ?', [res.body.order_id])).toBe(1);
    });
  },
  // Every refusal here comes from one address and each is looked at on its own record: flood
  // control (aggregation, throttling) is out of the way, and tested in postback-flood.test.ts.
  { 'postbacks.enabled': true, 'postbacks.rejections.aggregate_after': 10_000, 'postbacks.rejections.max_per_address': 10_000 },
  { networkModules: [fakeModule()] },
);
