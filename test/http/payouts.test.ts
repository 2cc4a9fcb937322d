import { expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { describeEachDialect } from '../helpers/context.js';
import { adminClient } from '../helpers/http.js';

type Json = Record<string, any>;

describeEachDialect('payouts over REST', (use) => {
  const api = adminClient(use, async (ctx) => {
    expect(await ctx.ledger.verify()).toEqual([]);
    expect(await ctx.payouts.verify()).toEqual([]);
  });
  const { get, post } = api;
  let seq = 0;
  /** A member with `amount` credited (in `currency`). */
  const member = async (amount?: string, currency = 'USD') => {
    const { ctx } = use();
    const user = await ctx.users.create({ login: `payee${++seq}`, email: `payee${seq}@example.com` });
    if (amount) await ctx.ledger.adjust({ member_id: user.id, type: 'credit', amount, currency, note: 'earned' }, 'test');
    return user.id;
  };
  const available = async (id: number, currency = 'USD') => (await use().ctx.ledger.balanceOf(id, currency)).available;
  const pay = (member_id: number, amount: string, extra: Json = {}, headers: Record<string, string> = {}) =>
    post('/payouts', { member_id, amount, method: 'paypal', ...extra }, headers);

  it('creates a pending payout and debits the balance in the same step', async () => {
    const id = await member('50.00');
    const res = await pay(id, '20.00', { details: 'ann@paypal.example', note: 'monthly run' });
    expect(res.statusCode).toBe(201);
    const body = res.result as Json;
    expect(body.payout).toMatchObject({
      member_id: id,
      amount: '20.00',
      currency: 'USD',
      method: 'paypal',
      details: 'ann@paypal.example',
      note: 'monthly run',
      status: 'pending',
      actor: `user:${api.admin.id}`,
      closed_at: null,
    });
    expect(body.entry).toMatchObject({ type: 'payout', amount: '-20.00', balance_after: '30.00', source: { type: 'payout', id: String(body.payout.id) } });
    expect(body.payout.entry_id).toBe(body.entry.id);
    expect(body.balance).toMatchObject({ available: '30.00', lifetime_paid: '20.00' });
    const one = await get(`/payouts/${body.payout.id}`);
    expect(one.statusCode).toBe(200);
    expect(one.result).toEqual(body.payout);
  });

  it('marks a payout paid with its reference and keeps the money debited', async () => {
    const id = await member('25.00');
    const { payout } = (await pay(id, '25.00')).result as Json;
    const res = await post(`/payouts/${payout.id}/complete`, { reference: 'PP-7781' });
    expect(res.statusCode).toBe(200);
    expect((res.result as Json).payout).toMatchObject({ status: 'paid', reference: 'PP-7781', closed_by: `user:${api.admin.id}` });
    expect((res.result as Json).payout.closed_at).toEqual(expect.any(String));
    expect(await available(id)).toBe('0.00');
    expect((await use().ctx.ledger.balanceOf(id, 'USD')).lifetime_paid).toBe('25.00');
  });

  it('cancels a pending payout with a reason and credits the amount back', async () => {
    const id = await member('40.00');
    const { payout } = (await pay(id, '15.00')).result as Json;
    const res = await post(`/payouts/${payout.id}/cancel`, { reason: 'PayPal account closed' });
    expect(res.statusCode).toBe(200);
    const body = res.result as Json;
    expect(body.payout).toMatchObject({ status: 'cancelled', reason: 'PayPal account closed', return_entry_id: body.entry.id });
    expect(body.entry).toMatchObject({ type: 'payout_return', amount: '15.00', balance_after: '40.00', source: { type: 'payout', id: String(payout.id) } });
    expect(body.balance).toMatchObject({ available: '40.00', lifetime_paid: '0.00' });
  });

  it('refuses to change a paid or cancelled payout again (409 svc_payout_closed)', async () => {
    const id = await member('30.00');
    const paid = ((await pay(id, '10.00')).result as Json).payout;
    const cancelled = ((await pay(id, '10.00')).result as Json).payout;
    expect((await post(`/payouts/${paid.id}/complete`, {})).statusCode).toBe(200);
    expect((await post(`/payouts/${cancelled.id}/cancel`, { reason: 'duplicate request' })).statusCode).toBe(200);
    for (const [pid, action, payload] of [
      [paid.id, 'complete', {}],
      [paid.id, 'cancel', { reason: 'too late' }],
      [cancelled.id, 'complete', {}],
      [cancelled.id, 'cancel', { reason: 'again' }],
    ] as const) {
      const res = await post(`/payouts/${pid}/${action}`, payload);
      expect(res.statusCode, `${action} ${pid}`).toBe(409);
      expect(res.result).toMatchObject({ code: 'svc_payout_closed', data: { status: 409 } });
    }
    expect(await available(id)).toBe('20.00');
  });

  it('requires a reason to cancel', async () => {
    const id = await member('12.00');
    const { payout } = (await pay(id, '12.00')).result as Json;
    const missing = await post(`/payouts/${payout.id}/cancel`, {});
    expect(missing.statusCode).toBe(400);
    expect(missing.result).toMatchObject({ code: 'rest_missing_callback_param', data: { params: ['reason'] } });
    for (const reason of ['', '   ']) {
      const res = await post(`/payouts/${payout.id}/cancel`, { reason });
      expect(res.statusCode).toBe(400);
      expect(res.result).toMatchObject({ code: 'rest_invalid_param' });
    }
    expect(((await get(`/payouts/${payout.id}`)).result as Json).status).toBe('pending');
  });

  it('refuses a payout under the minimum in the site currency, and applies none to other currencies', async () => {
    const id = await member('30.00');
    await use().ctx.ledger.adjust({ member_id: id, type: 'credit', amount: '500', currency: 'JPY', note: 'yen' }, 'test');
    const under = await pay(id, '9.99');
    expect(under.statusCode).toBe(409);
    expect(under.result).toMatchObject({ code: 'svc_payout_below_minimum', data: { minimum: '10.00', currency: 'USD' } });
    expect((await pay(id, '10.00')).statusCode).toBe(201);
    const yen = await pay(id, '100', { currency: 'JPY' });
    expect(yen.statusCode).toBe(201);
    expect((yen.result as Json).balance).toMatchObject({ currency: 'JPY', available: '400' });
    expect(await available(id)).toBe('20.00');
  });

  it('refuses a payout the balance does not cover, and leaves nothing behind', async () => {
    const id = await member('19.99');
    const res = await pay(id, '20.00');
    expect(res.statusCode).toBe(409);
    expect(res.result).toMatchObject({ code: 'svc_insufficient_funds', data: { available: '19.99', currency: 'USD' } });
    const other = await pay(id, '20.00', { currency: 'EUR' });
    expect(other.statusCode).toBe(409);
    expect(other.result).toMatchObject({ code: 'svc_insufficient_funds' });
    const list = await get(`/payouts?member_id=${id}`);
    expect(list.headers['x-wp-total']).toBe('0');
    expect(await available(id)).toBe('19.99');
  });

  it.each([
    ['a negative amount', { amount: '-5.00' }, 400, 'svc_invalid_amount'],
    ['a zero amount', { amount: '0.00' }, 400, 'svc_invalid_amount'],
    ['a too precise amount', { amount: '12.505' }, 400, 'svc_invalid_amount'],
    ['a non-numeric amount', { amount: 'ten' }, 400, 'svc_invalid_amount'],
    ['an exponent', { amount: '1e3' }, 400, 'svc_invalid_amount'],
    ['an absurd amount', { amount: '99999999999999999999' }, 400, 'svc_invalid_amount'],
    ['an amount given as a number', { amount: 12 }, 400, 'rest_invalid_param'],
    ['fractional yen', { amount: '12.5', currency: 'JPY' }, 400, 'svc_invalid_amount'],
    ['a lower-case currency', { currency: 'usd' }, 400, 'rest_invalid_param'],
    ['an unknown currency', { currency: 'XYZ' }, 400, 'svc_invalid_currency'],
    ['no method', { method: undefined }, 400, 'rest_missing_callback_param'],
    ['a blank method', { method: '  ' }, 400, 'rest_invalid_param'],
    ['an unknown field', { iban: 'DE00' }, 400, 'rest_invalid_param'],
    ['an unknown member', { member_id: 987_654 }, 404, 'svc_member_not_found'],
  ])('answers %s with a defined code and moves no money', async (_name, patch, status, code) => {
    const id = await member('100.00');
    const res = await post('/payouts', { member_id: id, amount: '25.00', method: 'paypal', ...patch });
    expect(res.statusCode).toBe(status);
    expect((res.result as Json).code).toBe(code);
    expect(await available(id)).toBe('100.00');
  });

  it('answers 404 svc_payout_not_found for an unknown payout and 400 for a malformed id', async () => {
    for (const res of [await get('/payouts/424242'), await post('/payouts/424242/complete', {}), await post('/payouts/424242/cancel', { reason: 'x' })]) {
      expect(res.statusCode).toBe(404);
      expect(res.result).toMatchObject({ code: 'svc_payout_not_found' });
    }
    const bad = await get('/payouts/abc');
    expect(bad.statusCode).toBe(400);
    expect(bad.result).toMatchObject({ code: 'rest_invalid_param' });
  });

  it('lets exactly the payouts that fit succeed when ten race for one balance', async () => {
    const id = await member('30.00');
    const results = await Promise.all(Array.from({ length: 10 }, () => pay(id, '10.00')));
    const ok = results.filter((r) => r.statusCode === 201);
    const refused = results.filter((r) => r.statusCode !== 201);
    expect(ok).toHaveLength(3);
    expect(refused).toHaveLength(7);
    for (const r of refused) expect(r.result).toMatchObject({ code: 'svc_insufficient_funds', data: { status: 409 } });
    for (const r of ok) expect(Number((r.result as Json).balance.available)).toBeGreaterThanOrEqual(0);
    expect(await available(id)).toBe('0.00');
    const list = await get(`/payouts?member_id=${id}&per_page=100`);
    expect(list.headers['x-wp-total']).toBe('3');
  });

  it('credits the amount back exactly once when cancels race for one payout', async () => {
    const id = await member('10.00');
    const { payout } = (await pay(id, '10.00')).result as Json;
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => post(`/payouts/${payout.id}/cancel`, { reason: `race ${i}` })));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1);
    for (const r of results.filter((r) => r.statusCode !== 200)) expect(r.result).toMatchObject({ code: 'svc_payout_closed' });
    expect(await available(id)).toBe('10.00');
    const returns = await get(`/ledger/entries?member_id=${id}&type=payout_return`);
    expect(returns.headers['x-wp-total']).toBe('1');
  });

  it('lets one of a racing complete and cancel win', async () => {
    const id = await member('10.00');
    const { payout } = (await pay(id, '10.00')).result as Json;
    const [done, cancelled] = await Promise.all([post(`/payouts/${payout.id}/complete`, {}), post(`/payouts/${payout.id}/cancel`, { reason: 'changed mind' })]);
    expect([done.statusCode, cancelled.statusCode].sort()).toEqual([200, 409]);
    const final = ((await get(`/payouts/${payout.id}`)).result as Json).status;
    expect(await available(id)).toBe(final === 'cancelled' ? '10.00' : '0.00');
  });

  it('refuses to reverse payout entries through the ledger (409 svc_reverse_payout)', async () => {
    const id = await member('20.00');
    const created = (await pay(id, '20.00')).result as Json;
    const cancelled = (await post(`/payouts/${created.payout.id}/cancel`, { reason: 'wrong account' })).result as Json;
    for (const entryId of [created.entry.id, cancelled.entry.id]) {
      const res = await post(`/ledger/entries/${entryId}/reverse`, { note: 'try' });
      expect(res.statusCode).toBe(409);
      expect(res.result).toMatchObject({ code: 'svc_reverse_payout' });
    }
    expect(await available(id)).toBe('20.00');
  });

  it('replays a retried create with the same Idempotency-Key and pays out once', async () => {
    const id = await member('50.00');
    const key = `payout-${id}-a`;
    const first = await pay(id, '20.00', {}, { 'idempotency-key': key });
    const again = await pay(id, '20.00', {}, { 'idempotency-key': key });
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.result).toEqual(JSON.parse(first.payload));
    expect((await get(`/payouts?member_id=${id}`)).headers['x-wp-total']).toBe('1');
    expect(await available(id)).toBe('30.00');
    const reused = await pay(id, '25.00', {}, { 'idempotency-key': key });
    expect(reused.statusCode).toBe(422);
    expect(reused.result).toMatchObject({ code: 'svc_idempotency_key_reused' });
  });

  it('replays a refusal under the same key even after the balance changed', async () => {
    const id = await member('5.00');
    const key = `payout-${id}-short`;
    expect((await pay(id, '10.00', {}, { 'idempotency-key': key })).statusCode).toBe(409);
    await use().ctx.ledger.adjust({ member_id: id, type: 'credit', amount: '10.00', note: 'top up' }, 'test');
    const retry = await pay(id, '10.00', {}, { 'idempotency-key': key });
    expect(retry.statusCode).toBe(409);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.result).toMatchObject({ code: 'svc_insufficient_funds' });
    expect((await pay(id, '10.00', {}, { 'idempotency-key': `${key}-2` })).statusCode).toBe(201);
  });

  it('replays a retried cancel or complete instead of answering 409', async () => {
    const id = await member('30.00');
    const a = ((await pay(id, '10.00')).result as Json).payout;
    const b = ((await pay(id, '10.00')).result as Json).payout;
    const cancel = () => post(`/payouts/${a.id}/cancel`, { reason: 'member asked' }, { 'idempotency-key': `cancel-${a.id}` });
    const first = await cancel();
    const retry = await cancel();
    expect(first.statusCode).toBe(200);
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.result).toEqual(JSON.parse(first.payload));
    const complete = () => post(`/payouts/${b.id}/complete`, { reference: 'T-1' }, { 'idempotency-key': `complete-${b.id}` });
    expect((await complete()).statusCode).toBe(200);
    expect((await complete()).headers['idempotent-replayed']).toBe('true');
    expect(await available(id)).toBe('20.00');
  });

  it('refuses a key used to cancel one payout when it comes back to cancel another: the path is part of the request', async () => {
    const id = await member('30.00');
    const a = ((await pay(id, '10.00')).result as Json).payout;
    const b = ((await pay(id, '10.00')).result as Json).payout;
    const key = `cancel-pair-${id}`;
    const first = await post(`/payouts/${a.id}/cancel`, { reason: 'member asked' }, { 'idempotency-key': key });
    expect(first.statusCode).toBe(200);
    expect((first.result as Json).payout).toMatchObject({ id: a.id, status: 'cancelled' });
    // Same route, same body, another id: not a retry of the first request, so no replay of it.
    const other = await post(`/payouts/${b.id}/cancel`, { reason: 'member asked' }, { 'idempotency-key': key });
    expect(other.statusCode).toBe(422);
    expect(other.headers['idempotent-replayed']).toBeUndefined();
    expect(other.result).toEqual({ code: 'svc_idempotency_key_reused', message: expect.any(String), data: { status: 422 } });
    expect(((await get(`/payouts/${b.id}`)).result as Json).status).toBe('pending');
    expect(await available(id)).toBe('20.00');
  });

  it('answers rest_invalid_pattern for a currency that is not three capitals', async () => {
    const res = await get('/payouts?currency=usd');
    expect(res.statusCode).toBe(400);
    expect(res.result).toMatchObject({ code: 'rest_invalid_param', data: { details: { currency: { code: 'rest_invalid_pattern', data: null } } } });
  });

  it('keeps a key used over HTTP apart from the same key on the command line, another caller', async () => {
    const id = await member('30.00');
    const key = `both-doors-${id}`;
    const http = await pay(id, '12.00', {}, { 'idempotency-key': key });
    expect(http.statusCode).toBe(201);
    const cli = await runCli(['payouts', 'create', String(id), '12.00', '--method', 'paypal', '--idempotency-key', key, '--json'], { db: use().db });
    expect(cli.code).toBe(0);
    expect((cli.json() as { payout: { id: number } }).payout.id).not.toBe((JSON.parse(http.payload) as { payout: { id: number } }).payout.id);
    expect(await available(id)).toBe('6.00');
  });

  it('answers 409 svc_idempotency_key_in_use to a key claimed by a daemon of the previous version, and frees it after 5 minutes', async () => {
    const { ctx } = use();
    const id = await member('30.00');
    const { requestHash, LEGACY_RUNNING_MS } = await import('../../src/services/idempotency/index.js');
    const payload = { member_id: id, amount: '10.00', method: 'paypal' };
    // The previous version committed a `running` claim before the effect.
    const claim = (key: string, age: number) =>
      ctx.db.execute(
        "INSERT INTO idempotency_keys (scope, owner, idem_key, request_hash, state, created_at, expires_at) VALUES ('payouts.create', ?, ?, ?, 'running', ?, ?)",
        [`user:${api.admin.id}`, key, requestHash({ params: {}, payload }), new Date(Date.now() - age), new Date(Date.now() + 86_400_000)],
      );
    await claim(`legacy-young-${id}`, 0);
    const res = await post('/payouts', payload, { 'idempotency-key': `legacy-young-${id}` });
    expect(res.statusCode).toBe(409);
    expect(res.result).toMatchObject({ code: 'svc_idempotency_key_in_use', data: { status: 409 } });
    expect(res.headers['retry-after']).toBe('1');
    expect(await available(id)).toBe('30.00');
    await claim(`legacy-old-${id}`, LEGACY_RUNNING_MS + 1000);
    const taken = await post('/payouts', payload, { 'idempotency-key': `legacy-old-${id}` });
    expect(taken.statusCode).toBe(201);
    expect(taken.headers['idempotent-replayed']).toBeUndefined();
    expect(await available(id)).toBe('20.00');
  });

  it('lists payouts newest first with status, member and currency filters and paging', async () => {
    const id = await member('100.00');
    await use().ctx.ledger.adjust({ member_id: id, type: 'credit', amount: '1000', currency: 'JPY', note: 'yen' }, 'test');
    const ids: number[] = [];
    for (const amount of ['10.00', '11.00', '12.00']) ids.push(((await pay(id, amount)).result as Json).payout.id);
    ids.push(((await pay(id, '300', { currency: 'JPY' })).result as Json).payout.id);
    await post(`/payouts/${ids[0]}/complete`, {});
    await post(`/payouts/${ids[1]}/cancel`, { reason: 'typo' });
    const all = await get(`/payouts?member_id=${id}&per_page=2`);
    expect(all.headers['x-wp-total']).toBe('4');
    expect(all.headers['x-wp-totalpages']).toBe('2');
    expect((all.result as Json[]).map((p) => p.id)).toEqual([ids[3], ids[2]]);
    expect(String(all.headers.link)).toContain('rel="next"');
    const pending = await get(`/payouts?member_id=${id}&status=pending`);
    expect((pending.result as Json[]).map((p) => p.id)).toEqual([ids[3], ids[2]]);
    const usdPending = await get(`/payouts?member_id=${id}&status=pending&currency=USD`);
    expect((usdPending.result as Json[]).map((p) => p.id)).toEqual([ids[2]]);
    expect(((await get(`/payouts?member_id=${id}&status=paid`)).result as Json[]).map((p) => p.id)).toEqual([ids[0]]);
    expect(((await get(`/payouts?member_id=${id}&status=cancelled`)).result as Json[]).map((p) => p.id)).toEqual([ids[1]]);
    expect((await get('/payouts?status=sent')).statusCode).toBe(400);
    expect((await get('/payouts?member_id=0')).statusCode).toBe(400);
  });

  it('never writes payment details, notes or reasons to the log', async () => {
    const { ctx } = use();
    const id = await member('40.00');
    const iban = 'DE89370400440532013000';
    const { payout } = (await pay(id, '20.00', { details: iban, note: `note ${iban}` })).result as Json;
    await pay(id, '99.00', { details: iban });
    await post(`/payouts/${payout.id}/cancel`, { reason: `wrong ${iban}` });
    await ctx.logger.flush();
    const [row] = await ctx.db.select<{ n: unknown }>('SELECT COUNT(*) AS n FROM logs WHERE context LIKE ? OR message LIKE ?', [`%${iban}%`, `%${iban}%`]);
    expect(Number(row.n)).toBe(0);
    const [logged] = await ctx.db.select<{ n: unknown }>("SELECT COUNT(*) AS n FROM logs WHERE source = 'payouts'");
    expect(Number(logged.n)).toBeGreaterThanOrEqual(3);
  });

  it('fires payout hooks once the change has committed', async () => {
    const { ctx } = use();
    const seen: string[] = [];
    ctx.hooks.addAction('cashtrack.payout.created', 'test/payouts', (p: Json) => seen.push(`created ${p.id}`));
    ctx.hooks.addAction('cashtrack.payout.status_changed', 'test/payouts', (p: Json, c: Json) => seen.push(`${c.from}->${c.to} ${p.id}`));
    const id = await member('20.00');
    const { payout } = (await pay(id, '10.00')).result as Json;
    await pay(id, '50.00');
    await post(`/payouts/${payout.id}/cancel`, { reason: 'x' });
    await post(`/payouts/${payout.id}/cancel`, { reason: 'x' });
    expect(seen).toEqual([`created ${payout.id}`, `pending->cancelled ${payout.id}`]);
    ctx.hooks.wp.removeAction('cashtrack.payout.created', 'test/payouts');
    ctx.hooks.wp.removeAction('cashtrack.payout.status_changed', 'test/payouts');
  });
});
