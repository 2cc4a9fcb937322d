import { beforeAll, expect, it } from 'vitest';
import { HOOKS } from '../../src/hooks/index.js';
import { JobRunner } from '../../src/jobs/runner.js';
import { describeEachDialect } from '../helpers/context.js';
import { adminClient } from '../helpers/http.js';
import { image } from '../helpers/images.js';
import { addAdvertiser, shopnetDefinition } from '../helpers/networks.js';

type Json = Record<string, any>;

describeEachDialect('claims over REST', (use) => {
  const api = adminClient(use, async (ctx) => {
    await ctx.claims.idle();
    expect(await ctx.ledger.verify()).toEqual([]);
  });
  const { get, post } = api;
  let seq = 0;
  const member = async () => {
    const user = await use().ctx.users.create({ login: `claimant${++seq}`, email: `claimant${seq}@example.com`, display_name: `Claimant ${seq}` });
    return user.id;
  };
  const events: [string, Json][] = [];
  beforeAll(async () => {
    const { ctx } = use();
    // A network without a claim channel: claims stay open for support unless they match.
    await ctx.networks.saveCustom('shopnet', shopnetDefinition(), 'test');
    await addAdvertiser(ctx, 'shopnet', 'shop-1');
    await addAdvertiser(ctx, 'shopnet', 'shop-2');
    for (const hook of [HOOKS.claimCreated, HOOKS.claimStatusChanged])
      ctx.hooks.addAction(hook, 'test', (claim: Json, extra: Json) => void events.push([hook, { claim, ...extra }]));
  });
  const unmatchedOrder = async (extra: Json = {}) =>
    use().ctx.orders.record(
      {
        network: 'shopnet',
        transaction_id: `T-${++seq}`,
        advertiser: 'shop-1',
        merchant_ref: `REF-${seq}`,
        sale_amount: '120.00',
        commission: '12.00',
        currency: 'EUR',
        status: 'pending',
        event_at: new Date('2026-11-20T10:00:00Z'),
        source: 'poll',
        ...extra,
      },
      'poll',
    );
  const claim = (memberId: number, extra: Json = {}) => ({
    member_id: memberId,
    network: 'shopnet',
    advertiser: 'shop-1',
    order_ref: `ORD-${++seq}`,
    purchased_at: '2026-11-20T09:55:00Z',
    amount: '120.00',
    currency: 'EUR',
    note: 'Bought the red shoes, nothing tracked',
    ...extra,
  });

  it('matches a claim to an unmatched order with the same reference: the order becomes the member’s, the claim matched', async () => {
    const id = await member();
    const order = await unmatchedOrder();
    const res = await post('/claims', claim(id, { order_ref: order.merchant_ref }));
    expect(res.statusCode).toBe(201);
    const body = res.result as Json;
    expect(body).toMatchObject({ member: { id }, status: 'matched', order_id: order.id, duplicate: false, amount: '120.00', currency: 'EUR', receipt: false });
    expect(body.reason).toContain(`Order ${order.id} was assigned to the member`);
    const assigned = await get(`/orders/${order.id}`);
    expect(assigned.result).toMatchObject({ member: { id } });
    expect((await use().ctx.ledger.balanceOf(id, 'EUR')).pending).toBe('6.00');
    const mine = events.filter(([, e]) => e.claim.id === body.id);
    expect(mine.map(([h, e]) => [h, e.to ?? null])).toEqual([
      [HOOKS.claimCreated, null],
      [HOOKS.claimStatusChanged, 'matched'],
    ]);
  });

  it("answers a claim with its click as evidence, and refuses a click that is no click id, unknown, or another member's", async () => {
    const { ctx } = use();
    const id = await member();
    const other = await member();
    const link = await ctx.advertisers.trackingLink('shopnet', 'shop-1', { member: String(id) });
    const location = new URL(await ctx.clicks.go(link.go_token!, { ip: '192.0.2.10', userAgent: 'claims test' }));
    const clickId = [...location.searchParams.values()].find((v) => /^c[0-9a-v]{18}$/.test(v))!;
    expect(clickId).toBeDefined();
    const bad = await post('/claims', claim(id, { click_id: 'not-a-click', purchased_at: new Date().toISOString() }));
    expect(bad.statusCode).toBe(400);
    expect((bad.result as Json).code).toBe('rest_invalid_param');
    const unknown = await post('/claims', claim(id, { click_id: 'c0000000000aaaaaaaa', purchased_at: new Date().toISOString() }));
    expect(unknown.statusCode).toBe(404);
    expect((unknown.result as Json).code).toBe('svc_click_not_found');
    const theirs = await post('/claims', claim(other, { click_id: clickId, purchased_at: new Date().toISOString() }));
    expect(theirs.statusCode).toBe(409);
    expect((theirs.result as Json).code).toBe('svc_click_mismatch');
    // None given: the member's click before the purchase is attached; the answer shows when, and the rate shown.
    const res = await post('/claims', claim(id, { purchased_at: new Date(Date.now() + 1000).toISOString() }));
    expect(res.statusCode).toBe(201);
    const body = res.result as Json;
    expect(body).toMatchObject({ click_id: clickId, click: { id: clickId, cashback_rule: { type: expect.any(String), value: expect.any(String) } } });
    expect(Date.parse(body.click.created_at)).toBeLessThanOrEqual(Date.parse(body.purchased_at));
    expect(((await get(`/claims/${body.id}`)).result as Json).click).toEqual(body.click);
  });

  it('matches by amount within the tolerance and the date window when the order has no reference, and only a single candidate', async () => {
    const id = await member();
    const order = await unmatchedOrder({ merchant_ref: undefined, sale_amount: '87.30', event_at: new Date('2026-11-18T12:00:00Z') });
    const res = await post('/claims', claim(id, { amount: '88.00', purchased_at: '2026-11-19T08:00:00Z' }));
    expect(res.result).toMatchObject({ status: 'matched', order_id: order.id });
    // Two orders alike: left to support, naming both.
    const other = await member();
    const a = await unmatchedOrder({ merchant_ref: undefined, sale_amount: '41.00', advertiser: 'shop-2' });
    const b = await unmatchedOrder({ merchant_ref: undefined, sale_amount: '41.00', advertiser: 'shop-2' });
    const two = (await post('/claims', claim(other, { advertiser: 'shop-2', amount: '41.00' }))).result as Json;
    expect(two).toMatchObject({ status: 'open', order_id: null });
    expect(two.reason).toContain(`orders ${a.id}, ${b.id}`);
  });

  it('answers at once a claim for an order already credited to the member', async () => {
    const id = await member();
    const order = await unmatchedOrder({ member_id: id, status: 'approved' });
    const res = await post('/claims', claim(id, { order_ref: order.merchant_ref }));
    expect(res.result).toMatchObject({ status: 'matched', order_id: order.id });
    expect((res.result as Json).reason).toBe(`Order ${order.id} was already tracked for the member.`);
  });

  it('leaves a claim open with the reason when the network has no claim channel, and matches it when the order arrives later', async () => {
    const id = await member();
    const payload = claim(id);
    const res = await post('/claims', payload);
    const body = res.result as Json;
    expect(body).toMatchObject({ status: 'open', order_id: null, channel: null });
    expect(body.reason).toContain('has no claim channel');
    expect(new Date(body.deadline_at).getTime() - new Date(body.created_at).getTime()).toBe(60 * 86_400_000);
    const order = await unmatchedOrder({ merchant_ref: payload.order_ref });
    await use().ctx.claims.idle();
    const after = (await get(`/claims/${body.id}`)).result as Json;
    expect(after).toMatchObject({ status: 'matched', order_id: order.id });
    expect((await get(`/orders/${order.id}`)).result).toMatchObject({ member: { id } });
  });

  it('never makes two claims: the same member, shop and order reference answers the first (200, duplicate), and so does the same Idempotency-Key', async () => {
    const id = await member();
    const payload = claim(id);
    const first = await post('/claims', payload, { 'idempotency-key': `claim-${seq}` });
    expect(first.statusCode).toBe(201);
    const replay = await post('/claims', payload, { 'idempotency-key': `claim-${seq}` });
    expect(replay.statusCode).toBe(201);
    expect((replay.result as Json).id).toBe((first.result as Json).id);
    const again = await post('/claims', { ...payload, note: 'asked again' });
    expect(again.statusCode).toBe(200);
    expect(again.result).toMatchObject({ id: (first.result as Json).id, duplicate: true });
    const list = await get(`/claims?member_id=${id}`);
    expect(list.headers['x-wp-total']).toBe('1');
  });

  it('refuses bad input with stable codes', async () => {
    const id = await member();
    const codes = async (payload: Json) => {
      const res = await post('/claims', payload);
      return [res.statusCode, (res.result as Json).code];
    };
    expect(await codes(claim(999_999))).toEqual([404, 'svc_member_not_found']);
    expect(await codes(claim(id, { advertiser: 'no-such-shop' }))).toEqual([404, 'svc_advertiser_not_found']);
    expect(await codes(claim(id, { network: 'nonet' }))).toEqual([404, 'svc_network_not_found']);
    expect(await codes(claim(id, { purchased_at: new Date(Date.now() + 3 * 86_400_000).toISOString() }))).toEqual([400, 'svc_claim_purchase_in_future']);
    expect(await codes(claim(id, { amount: '12,50' }))).toEqual([400, 'svc_invalid_amount']);
    expect(await codes(claim(id, { amount: '0' }))).toEqual([400, 'svc_invalid_amount']);
    expect(await codes(claim(id, { receipt: Buffer.from('%PDF-1.4 not an image').toString('base64') }))).toEqual([400, 'svc_claim_receipt_not_image']);
    expect(await codes(claim(id, { receipt: 'not base64 at all!' }))).toEqual([400, 'svc_claim_receipt_not_image']);
    expect(await codes({ member_id: id })).toEqual([400, 'rest_missing_callback_param']);
    const missing = await get('/claims/999999');
    expect([missing.statusCode, (missing.result as Json).code]).toEqual([404, 'svc_claim_not_found']);
    expect((await get(`/claims?member_id=${id}`)).headers['x-wp-total']).toBe('0');
  });

  it('keeps the receipt private: served to administrators by the claim route, never on /media', async () => {
    const id = await member();
    const png = await image('png', 40, 30);
    const res = await post('/claims', claim(id, { receipt: `data:image/png;base64,${png.toString('base64')}` }));
    const body = res.result as Json;
    expect(body.receipt).toBe(true);
    const receipt = (await get(`/claims/${body.id}/receipt`)).result as Json;
    expect(receipt).toMatchObject({ type: 'image/png', width: 40, height: 30 });
    const bytes = Buffer.from(receipt.data, 'base64');
    const [row] = await use().ctx.db.select<{ sha256: string }>('SELECT sha256 FROM media WHERE private = ?', [true]);
    const pub = await api.server.inject({ url: `/media/${row.sha256}.png` });
    expect(pub.statusCode).toBe(404);
    expect(bytes.subarray(1, 4).toString()).toBe('PNG');
    const anonymous = await api.server.inject({ url: `/wp-json/svc/v1/claims/${body.id}/receipt` });
    expect(anonymous.statusCode).toBe(401);
    const without = (await post('/claims', claim(id))).result as Json;
    const none = await get(`/claims/${without.id}/receipt`);
    expect([none.statusCode, (none.result as Json).code]).toEqual([404, 'svc_claim_receipt_not_found']);
  });

  it('declines a claim with the reason, refuses a decline without one, and a second decline changes nothing', async () => {
    const id = await member();
    const body = (await post('/claims', claim(id))).result as Json;
    expect((await post(`/claims/${body.id}`, { status: 'declined' })).statusCode).toBe(400);
    const before = events.length;
    const res = await post(`/claims/${body.id}`, { status: 'declined', reason: 'Bought in the shop, not online' });
    expect(res.statusCode).toBe(200);
    expect(res.result).toMatchObject({ status: 'declined', reason: 'Bought in the shop, not online' });
    expect((res.result as Json).resolved_at).not.toBeNull();
    expect(events.length).toBe(before + 1);
    const again = await post(`/claims/${body.id}`, { status: 'declined', reason: 'Bought in the shop, not online' });
    expect(again.statusCode).toBe(200);
    expect(events.length).toBe(before + 1);
    const match = await post(`/claims/${body.id}`, { order_id: (await unmatchedOrder()).id });
    expect(match.statusCode).toBe(409);
    expect((match.result as Json).code).toBe('svc_claim_invalid_transition');
  });

  it("matches a claim to an order an administrator picks, refusing another shop's order", async () => {
    const id = await member();
    const body = (await post('/claims', claim(id))).result as Json;
    const elsewhere = await unmatchedOrder({ advertiser: 'shop-2' });
    const wrong = await post(`/claims/${body.id}`, { order_id: elsewhere.id });
    expect(wrong.statusCode).toBe(409);
    expect((wrong.result as Json).code).toBe('svc_claim_order_mismatch');
    const order = await unmatchedOrder({ merchant_ref: 'SOMETHING-ELSE' });
    const ok = await post(`/claims/${body.id}`, { order_id: order.id, note: 'Found it under another reference' });
    expect(ok.statusCode).toBe(200);
    expect(ok.result).toMatchObject({ status: 'matched', order_id: order.id, note: 'Found it under another reference' });
    expect((await get(`/orders/${order.id}`)).result).toMatchObject({ member: { id } });
  });

  it('lists claims with filters and orderby, and counts them per status', async () => {
    const id = await member();
    await post('/claims', claim(id, { amount: '10.00' }));
    await post('/claims', claim(id, { amount: '30.00' }));
    const list = await get(`/claims?member_id=${id}&orderby=amount&order=asc`);
    expect((list.result as Json[]).map((c) => c.amount)).toEqual(['10.00', '30.00']);
    const counts = await get(`/claims/counts?member_id=${id}`);
    expect(counts.result).toEqual({ total: 2, statuses: { open: 2, submitted: 0, matched: 0, approved: 0, declined: 0, expired: 0 } });
    const open = await get(`/claims?status=open&network=shopnet&search=ORD-`);
    expect(open.statusCode).toBe(200);
    expect((await get('/claims?status=lost')).statusCode).toBe(400);
  });

  it('starts a claims poll job with 202, and refuses a second while it is queued', async () => {
    const first = await post('/claims/poll', {});
    expect(first.statusCode).toBe(202);
    expect(first.result).toMatchObject({ type: 'claims.poll', status: 'queued' });
    const second = await post('/claims/poll', {});
    expect([second.statusCode, (second.result as Json).code]).toEqual([409, 'svc_job_already_running']);
    const { ctx } = use();
    await new JobRunner({ ctx, jobs: ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 20 }).runPending();
    const job = await ctx.jobs.get((first.result as Json).id);
    expect(job).toMatchObject({ status: 'done', actor: expect.any(String), result: { checked: 0, approved: 0, declined: 0, expired: 0, failed: 0 } });
  });
});
