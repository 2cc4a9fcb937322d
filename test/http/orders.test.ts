import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/context.js';
import { adminClient, createActor, NS } from '../helpers/http.js';
import { addAdvertiser, shopnetDefinition } from '../helpers/networks.js';

type Json = Record<string, any>;

describeEachDialect('orders over REST', (use) => {
  const api = adminClient(use, async (ctx) => {
    expect(await ctx.ledger.verify()).toEqual([]);
  });
  const { get, post } = api;
  let seq = 0;
  const member = async () => {
    const user = await use().ctx.users.create({ login: `buyer${++seq}`, email: `buyer${seq}@example.com`, display_name: `Buyer ${seq}` });
    return user.id;
  };
  // What the manual orders below name exists: an order naming what does not is refused (404).
  beforeAll(async () => {
    const { ctx } = use();
    await ctx.networks.saveCustom('listnet', shopnetDefinition({ name: 'List Net' }), 'test');
    await addAdvertiser(ctx, 'awin', '7001');
    await addAdvertiser(ctx, 'listnet', 'shop-1');
    await addAdvertiser(ctx, 'listnet', 'shop-2');
  });
  const claim = (extra: Json = {}) => ({
    network: 'awin',
    transaction_id: `TX-${++seq}`,
    sale_amount: '80.00',
    commission: '8.00',
    note: 'missing cashback claim #12',
    ...extra,
  });

  it('records a manual order with 201, and answers 200 with duplicate: true when it is sent again', async () => {
    const id = await member();
    const payload = claim({ member_id: id, merchant_ref: 'ORD-5521', advertiser: '7001', event_at: '2026-11-20T10:00:00Z' });
    const res = await post('/orders', payload);
    expect(res.statusCode).toBe(201);
    const body = res.result as Json;
    expect(body).toMatchObject({
      network: 'awin',
      transaction_id: payload.transaction_id,
      merchant_ref: 'ORD-5521',
      advertiser: '7001',
      member: { id, login: `buyer${seq - 1}`, display_name: `Buyer ${seq - 1}` },
      sale_amount: '80.00',
      commission: '8.00',
      currency: 'USD',
      cashback: '4.00',
      cashback_rule: { type: 'percent_commission', value: '50', currency: null },
      status: 'pending',
      source: 'manual',
      cashback_entry_id: null,
      referral: null,
      event_at: '2026-11-20T10:00:00.000Z',
      note: 'missing cashback claim #12',
      raw: null,
      duplicate: false,
      changes: ['created'],
      ignored: [],
    });
    expect(body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const again = await post('/orders', payload);
    expect(again.statusCode).toBe(200);
    expect(again.result).toMatchObject({ id: body.id, duplicate: true, changes: [] });
    const one = await get(`/orders/${body.id}`);
    expect(one.statusCode).toBe(200);
    expect(one.result).toMatchObject({ id: body.id, status: 'pending', member: { id } });
    expect((await use().ctx.ledger.balanceOf(id, 'USD')).pending).toBe('4.00');
  });

  it('replays POST /orders for the same Idempotency-Key without a second effect, and refuses the key with another body', async () => {
    const id = await member();
    const payload = claim({ member_id: id, status: 'approved' });
    const key = `order-key-${seq}`;
    const first = await post('/orders', payload, { 'idempotency-key': key });
    const retry = await post('/orders', payload, { 'idempotency-key': key });
    expect(first.statusCode).toBe(201);
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.result).toEqual(JSON.parse(first.payload));
    const other = await post('/orders', { ...payload, commission: '9.00' }, { 'idempotency-key': key });
    expect(other.statusCode).toBe(422);
    expect(other.result).toMatchObject({ code: 'svc_idempotency_key_reused' });
    const { items } = await use().ctx.ledger.listEntries({ member_id: id, page: 1, per_page: 10 });
    expect(items).toHaveLength(1);
    // A refusal is replayed too.
    const bad = await post(`/orders/${(first.result as Json).id}`, { status: 'pending' }, { 'idempotency-key': `${key}-bad` });
    const badAgain = await post(`/orders/${(first.result as Json).id}`, { status: 'pending' }, { 'idempotency-key': `${key}-bad` });
    expect([bad.statusCode, badAgain.statusCode]).toEqual([409, 409]);
    expect(badAgain.headers['idempotent-replayed']).toBe('true');
  });

  it('approves, declines and re-approves through POST /orders/{id} with the ledger following', async () => {
    const id = await member();
    const { id: orderId } = (await post('/orders', claim({ member_id: id }))).result as Json;
    const approved = await post(`/orders/${orderId}`, { status: 'approved', note: 'shop confirmed' });
    expect(approved.statusCode).toBe(200);
    expect(approved.result).toMatchObject({ status: 'approved', changes: ['status', 'note'], note: 'shop confirmed' });
    expect((approved.result as Json).cashback_entry_id).toEqual(expect.any(Number));
    expect((await use().ctx.ledger.balanceOf(id, 'USD')).available).toBe('4.00');
    const declined = await post(`/orders/${orderId}`, { status: 'declined' });
    expect(declined.result).toMatchObject({ status: 'declined', cashback_entry_id: null });
    expect((await use().ctx.ledger.balanceOf(id, 'USD')).available).toBe('0.00');
    await post(`/orders/${orderId}`, { status: 'approved' });
    expect((await use().ctx.ledger.balanceOf(id, 'USD')).available).toBe('4.00');
    const same = await post(`/orders/${orderId}`, { status: 'approved' });
    expect(same.result).toMatchObject({ duplicate: true });
  });

  it('refuses moves the rules forbid and amounts after pending with 409', async () => {
    const id = await member();
    const { id: orderId } = (await post('/orders', claim({ member_id: id, status: 'approved' }))).result as Json;
    const back = await post(`/orders/${orderId}`, { status: 'pending' });
    expect(back.statusCode).toBe(409);
    expect(back.result).toMatchObject({ code: 'svc_invalid_transition', data: { status: 409, from: 'approved', to: 'pending' } });
    const amounts = await post(`/orders/${orderId}`, { commission: '1.00' });
    expect(amounts.statusCode).toBe(409);
    // The order's status, beside the HTTP status every error answer carries in data.status.
    expect(amounts.result).toMatchObject({ code: 'svc_order_not_pending', data: { status: 409, order_id: orderId, order_status: 'approved' } });
    const pending = (await post('/orders', claim({ member_id: id }))).result as Json;
    const corrected = await post(`/orders/${pending.id}`, { sale_amount: '100.00', commission: '12.00' });
    expect(corrected.result).toMatchObject({ sale_amount: '100.00', commission: '12.00', cashback: '6.00', changes: ['amounts'] });
  });

  it('keeps every field an update does not send: a note alone, or one amount alone, changes nothing else', async () => {
    const id = await member();
    const created = (await post('/orders', claim({ member_id: id, advertiser: '7001', merchant_ref: 'MR-KEEP' }))).result as Json;
    const noted = await post(`/orders/${created.id}`, { note: 'checked with the shop' });
    expect(noted.statusCode).toBe(200);
    expect(noted.result).toMatchObject({
      status: 'pending',
      sale_amount: '80.00',
      commission: '8.00',
      currency: 'USD',
      cashback: '4.00',
      advertiser: '7001',
      merchant_ref: 'MR-KEEP',
      member: { id },
      note: 'checked with the shop',
      changes: ['note'],
    });
    const corrected = await post(`/orders/${created.id}`, { commission: '10.00' });
    expect(corrected.result).toMatchObject({
      status: 'pending',
      sale_amount: '80.00',
      commission: '10.00',
      currency: 'USD',
      cashback: '5.00',
      note: 'checked with the shop',
      changes: ['amounts'],
    });
  });

  it('lists orders newest first with filters and paging headers', async () => {
    const id = await member();
    const a = (await post('/orders', claim({ member_id: id, network: 'listnet', advertiser: 'shop-1', merchant_ref: 'MR-ALPHA' }))).result as Json;
    const b = (await post('/orders', claim({ member_id: id, network: 'listnet', advertiser: 'shop-2', status: 'approved' }))).result as Json;
    const c = (await post('/orders', claim({ network: 'listnet', sub_id: 'no-such-login', transaction_id: 'LIST-Ü-1'.replace('Ü', 'U') }))).result as Json;
    const all = await get('/orders?network=listnet&per_page=2');
    expect(all.statusCode).toBe(200);
    expect(all.headers['x-wp-total']).toBe('3');
    expect(all.headers['x-wp-totalpages']).toBe('2');
    expect((all.result as Json[]).map((o) => o.id)).toEqual([c.id, b.id]);
    expect((all.result as Json[])[0]).not.toHaveProperty('raw');
    const ids = async (query: string) => ((await get(`/orders?network=listnet&${query}`)).result as Json[]).map((o) => o.id);
    expect(await ids('status=approved')).toEqual([b.id]);
    expect(await ids(`member_id=${id}`)).toEqual([b.id, a.id]);
    expect(await ids('unmatched=true')).toEqual([c.id]);
    expect(await ids('unmatched=0')).toEqual([b.id, a.id]);
    expect(await ids('advertiser=shop-1')).toEqual([a.id]);
    expect(await ids('search=MR-AL')).toEqual([a.id]);
    expect(await ids('search=LIST-U')).toEqual([c.id]);
    expect(await ids('search=%C3%BC')).toEqual([]);
    expect(await ids(`after=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).toEqual([]);
    expect(await ids(`before=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).toHaveLength(3);
  });

  it('assigns an unmatched order and applies its effects; refuses an order that has a member', async () => {
    const id = await member();
    const other = await member();
    const order = (await post('/orders', claim({ sub_id: 'ghost', status: 'approved' }))).result as Json;
    expect(order.member).toBeNull();
    const res = await post(`/orders/${order.id}/assign`, { member_id: id });
    expect(res.statusCode).toBe(200);
    expect(res.result).toMatchObject({ member: { id }, changes: ['member'] });
    expect((await use().ctx.ledger.balanceOf(id, 'USD')).available).toBe('4.00');
    const taken = await post(`/orders/${order.id}/assign`, { member_id: other });
    expect(taken.statusCode).toBe(409);
    expect(taken.result).toMatchObject({ code: 'svc_order_already_assigned', data: { member_id: id } });
    expect((await post('/orders/99999999/assign', { member_id: id })).result).toMatchObject({ code: 'svc_order_not_found', data: { status: 404 } });
    expect((await post(`/orders/${order.id}/assign`, { member_id: 99999999 })).result).toMatchObject({ code: 'svc_member_not_found', data: { status: 404 } });
  });

  it('answers bad input with defined codes', async () => {
    const id = await member();
    const code = async (payload: Json) => {
      const res = await post('/orders', claim({ member_id: id, ...payload }));
      return [res.statusCode, (res.result as Json).code];
    };
    for (const amount of ['-1.00', '0', 'abc', '1.001', '1e5', '1000000000000000000'])
      expect(await code({ commission: amount })).toEqual([400, 'svc_invalid_amount']);
    expect(await code({ sale_amount: 12.5 })).toEqual([400, 'rest_invalid_param']);
    expect(await code({ member_id: 99999999 })).toEqual([404, 'svc_member_not_found']);
    expect(await code({ currency: 'ZZZ' })).toEqual([400, 'svc_invalid_currency']);
    expect(await code({ currency: 'usd' })).toEqual([400, 'rest_invalid_param']);
    expect(await code({ status: 'paid' })).toEqual([400, 'rest_invalid_param']);
    expect(await code({ transaction_id: 'tx with spaces' })).toEqual([400, 'rest_invalid_param']);
    expect(await code({ network: 'nét' })).toEqual([400, 'rest_invalid_param']);
    expect(await code({ note: undefined })).toEqual([400, 'rest_missing_callback_param']);
    expect(await code({ surprise: 1 })).toEqual([400, 'rest_invalid_param']);
    expect((await get('/orders/99999999')).result).toMatchObject({ code: 'svc_order_not_found', data: { status: 404 } });
    expect((await post('/orders/99999999', { status: 'approved' })).statusCode).toBe(404);
    expect((await post('/orders/1', {})).result).toMatchObject({ code: 'rest_invalid_param' });
    expect((await post('/orders/1', { status: 'shipped' })).result).toMatchObject({ code: 'rest_invalid_param' });
    expect((await get('/orders?status=lost')).statusCode).toBe(400);
    expect((await get('/orders?unmatched=maybe')).statusCode).toBe(400);
    expect((await use().ctx.ledger.balanceOf(id, 'USD')).pending).toBe('0.00');
  });

  it('starts an order poll job (202), refuses the same poll while it is queued (409), and 404s an unknown network', async () => {
    const res = await post('/orders/poll', { network: 'awin', since: '2026-11-01T00:00:00Z' });
    expect(res.statusCode).toBe(202);
    expect(res.result).toMatchObject({ type: 'orders.poll', params: { network: 'awin', since: '2026-11-01T00:00:00.000Z' }, status: 'queued' });
    const again = await post('/orders/poll', { network: 'awin', since: '2026-11-01T00:00:00Z' });
    expect(again.statusCode).toBe(409);
    expect(again.result).toMatchObject({ code: 'svc_job_already_running', data: { job: { id: (res.result as Json).id } } });
    const every = await post('/orders/poll', {});
    expect(every.statusCode).toBe(202);
    expect(every.result).toMatchObject({ type: 'orders.poll', params: {} });
    expect((await post('/orders/poll', { network: 'nosuch' })).result).toMatchObject({ code: 'svc_network_not_found', data: { status: 404 } });
    expect((await post('/orders/poll', { network: 'Not A Network' })).result).toMatchObject({
      code: 'rest_invalid_param',
      data: { params: { network: expect.any(String) } },
    });
    expect((await post('/orders/poll', { since: 'yesterday' })).result).toMatchObject({
      code: 'rest_invalid_param',
      data: { params: { since: expect.any(String) } },
    });
    // Nothing runs them here: cancel, so no other test sees queued jobs.
    for (const job of [res.result, every.result] as Json[]) await use().ctx.jobs.cancel(job.id, 'test');
  });

  it('lists network orders held for review (?review=held), releases one once and declines another', async () => {
    const { ctx } = use();
    const id = await member();
    const report = (extra: Json = {}) => ({
      network: 'awin',
      transaction_id: `HELD-${++seq}`,
      source: 'poll' as const,
      member_id: id,
      sale_amount: '0',
      commission: '1500.00',
      status: 'approved' as const,
      ...extra,
    });
    const [a, b] = await ctx.orders.recordMany([report(), report({ currency: 'EUR' })], 'system');
    const list = await get(`/orders?review=held&member_id=${id}`);
    expect(list.statusCode).toBe(200);
    expect((list.result as Json[]).map((o) => [o.id, o.review.state, o.review.reason])).toEqual([
      [b.id, 'held', 'above_ceiling'],
      [a.id, 'held', 'above_ceiling'],
    ]);
    expect(list.headers['x-wp-total']).toBe('2');
    const moved = await post(`/orders/${a.id}`, { status: 'declined' });
    expect(moved.statusCode).toBe(409);
    expect(moved.result).toMatchObject({ code: 'svc_order_held', data: { status: 409, reason: 'above_ceiling' } });
    const released = await post(`/orders/${a.id}/release`, { note: 'confirmed by the network' });
    expect(released.statusCode).toBe(200);
    expect(released.result).toMatchObject({
      id: a.id,
      status: 'approved',
      changes: ['review'],
      review: { state: 'released', reviewed_by: `user:${api.admin.id}` },
      cashback_entry_id: expect.any(Number),
    });
    const twice = await post(`/orders/${a.id}/release`, {});
    expect(twice.statusCode).toBe(409);
    expect(twice.result).toMatchObject({ code: 'svc_order_not_held', data: { status: 409, review: 'released' } });
    const declined = await post(`/orders/${b.id}/decline`, {});
    expect(declined.statusCode).toBe(200);
    expect(declined.result).toMatchObject({ status: 'declined', review: { state: 'declined' }, cashback_entry_id: null });
    expect(await ctx.ledger.balanceOf(id, 'USD')).toMatchObject({ available: '750.00' });
    expect(await ctx.ledger.balanceOf(id, 'EUR')).toMatchObject({ available: '0.00', pending: '0.00' });
    expect((await post('/orders/999999/release', {})).statusCode).toBe(404);
    expect((await get('/orders?review=maybe')).statusCode).toBe(400);
  });

  it('filters orders held for review in or out (?held=true|false), on the list and its counts', async () => {
    const { ctx } = use();
    const id = await member();
    const report = (commission: string, extra: Json = {}) => ({
      network: 'awin',
      transaction_id: `HELD-${++seq}`,
      source: 'poll' as const,
      member_id: id,
      sale_amount: '0',
      commission,
      status: 'pending' as const,
      ...extra,
    });
    // Above the review ceiling: held; the second released, the third declined on review; the last never held.
    const [held, released, declined, plain] = await ctx.orders.recordMany(
      [report('1500.00'), report('1600.00'), report('1700.00', { status: 'approved' }), report('10.00')],
      'system',
    );
    expect((await post(`/orders/${released.id}/release`, {})).statusCode).toBe(200);
    expect((await post(`/orders/${declined.id}/decline`, {})).statusCode).toBe(200);
    const ids = async (q: string) => ((await get(`/orders?member_id=${id}&${q}`)).result as Json[]).map((o) => o.id);
    expect(await ids('held=false')).toEqual([plain.id, declined.id, released.id]);
    expect(await ids('held=0&status=pending')).toEqual([plain.id, released.id]);
    expect(await ids('held=true')).toEqual([held.id]);
    expect(await ids('held=1')).toEqual(await ids('review=held'));
    expect(await ids('held=false&review=held')).toEqual([]);
    const notHeld = await get(`/orders/counts?member_id=${id}&held=false`);
    expect(notHeld.statusCode).toBe(200);
    expect(notHeld.result).toMatchObject({ total: 3, statuses: { pending: 2, declined: 1 } });
    expect((await get(`/orders/counts?member_id=${id}&held=true`)).result).toMatchObject({ total: 1, statuses: { pending: 1 } });
    expect((await get('/orders?held=maybe')).statusCode).toBe(400);
    expect((await get('/orders/counts?held=maybe')).statusCode).toBe(400);
  });

  it('answers 401 without credentials and 403 to a member', async () => {
    const memberActor = await createActor(use().ctx, 'member');
    expect((await api.server.inject({ url: `${NS}/orders` })).statusCode).toBe(401);
    expect(
      (await api.server.inject({ method: 'POST', url: `${NS}/orders`, payload: claim(), headers: { authorization: memberActor.authorization } })).statusCode,
    ).toBe(403);
  });
});
