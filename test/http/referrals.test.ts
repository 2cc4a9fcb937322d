import { expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/context.js';
import { adminClient, NS } from '../helpers/http.js';

type Json = Record<string, any>;

describeEachDialect('referrals over REST', (use) => {
  const api = adminClient(use, async (ctx) => {
    expect(await ctx.ledger.verify()).toEqual([]);
  });
  let seq = 0;

  const request = (method: string, url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    api.server.inject({ method, url: `${NS}${url}`, payload: payload as object, headers: { authorization: api.admin.authorization, ...headers } });
  const member = async () => (await use().ctx.users.create({ login: `friend${++seq}`, email: `friend${seq}@example.com` })).id;

  it('adds a referral with 201, lists it with earnings, and ends it with DELETE', async () => {
    const [referrer, referee] = [await member(), await member()];
    const res = await request('POST', '/referrals', { referrer_id: referrer, referee_id: referee });
    expect(res.statusCode).toBe(201);
    const referral = res.result as Json;
    expect(referral).toMatchObject({
      referrer: { id: referrer },
      referee: { id: referee },
      active: true,
      ended_at: null,
      earned: [],
      actor: `user:${api.admin.id}`,
    });
    expect(referral.since).toMatch(/Z$/);
    await request('POST', '/orders', {
      network: 'awin',
      transaction_id: `REF-${seq}`,
      member_id: referee,
      sale_amount: '50.00',
      commission: '5.00',
      status: 'approved',
      note: 'claim',
    });
    const list = await request('GET', `/referrals?referrer_id=${referrer}`);
    expect(list.headers['x-wp-total']).toBe('1');
    expect((list.result as Json[])[0]).toMatchObject({ id: referral.id, earned: [{ currency: 'USD', amount: '0.25' }] });
    expect(((await request('GET', `/referrals?referee_id=${referee}&active=false`)).result as Json[]).length).toBe(0);
    const live = await request('GET', `/referrals/${referee}`);
    expect(live.statusCode).toBe(200);
    expect(live.result).toMatchObject({ id: referral.id, active: true });
    const ended = await request('DELETE', `/referrals/${referee}`);
    expect(ended.statusCode).toBe(200);
    expect(ended.result).toMatchObject({ id: referral.id, active: false, earned: [{ currency: 'USD', amount: '0.25' }] });
    expect(((await request('GET', `/referrals?referee_id=${referee}&active=false`)).result as Json[]).map((r) => r.id)).toEqual([referral.id]);
    const again = await request('DELETE', `/referrals/${referee}`);
    expect(again.statusCode).toBe(404);
    expect(again.result).toMatchObject({ code: 'svc_referral_not_found' });
    // An ended referral is no live referral: GET /referrals/{referee_id} is 404 too.
    const gone = await request('GET', `/referrals/${referee}`);
    expect(gone.statusCode).toBe(404);
    expect(gone.result).toMatchObject({ code: 'svc_referral_not_found', data: { referee_id: referee } });
  });

  it('answers self, cycle, exists and unknown members with their codes', async () => {
    const [a, b] = [await member(), await member()];
    const code = async (payload: Json) => {
      const res = await request('POST', '/referrals', payload);
      return [res.statusCode, (res.result as Json).code];
    };
    expect(await code({ referrer_id: a, referee_id: a })).toEqual([400, 'svc_referral_self']);
    expect(await code({ referrer_id: a, referee_id: b })).toEqual([201, undefined]);
    expect(await code({ referrer_id: a, referee_id: b })).toEqual([409, 'svc_referral_exists']);
    expect(await code({ referrer_id: b, referee_id: a })).toEqual([400, 'svc_referral_cycle']);
    expect(await code({ referrer_id: 99999999, referee_id: a })).toEqual([404, 'svc_member_not_found']);
    expect(await code({ referrer_id: a })).toEqual([400, 'rest_missing_callback_param']);
    expect(await code({ referrer_id: 'x', referee_id: a })).toEqual([400, 'rest_invalid_param']);
    expect((await request('GET', '/referrals?active=perhaps')).statusCode).toBe(400);
  });

  it('replays POST /referrals for the same Idempotency-Key', async () => {
    const [a, b] = [await member(), await member()];
    const first = await request('POST', '/referrals', { referrer_id: a, referee_id: b }, { 'idempotency-key': `ref-${a}` });
    const retry = await request('POST', '/referrals', { referrer_id: a, referee_id: b }, { 'idempotency-key': `ref-${a}` });
    expect([first.statusCode, retry.statusCode]).toEqual([201, 201]);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect((retry.result as Json).id).toBe((first.result as Json).id);
  });
});
