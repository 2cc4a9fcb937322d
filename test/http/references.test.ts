// Every reference in a body names something that exists: 404 with the resource's code and
// nothing written. The case was POST /orders for a network that does not exist, accepted,
// approved and credited.
import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/context.js';
import { adminClient } from '../helpers/http.js';
import { addAdvertiser, shopnetDefinition } from '../helpers/networks.js';

type Json = Record<string, any>;

const TABLES = ['orders', 'payouts', 'ledger_entries', 'referrals', 'balances', 'jobs'];

describeEachDialect('references in request bodies', (use) => {
  const api = adminClient(use, async (ctx) => {
    expect(await ctx.ledger.verify()).toEqual([]);
  });
  const { get, post } = api;
  let memberId: number;
  let seq = 0;

  beforeAll(async () => {
    const { ctx } = use();
    memberId = (await ctx.users.create({ login: 'ref-member', email: 'ref-member@example.com' })).id;
    await ctx.networks.saveCustom('refnet', shopnetDefinition({ name: 'Ref Net' }), 'test');
    await addAdvertiser(ctx, 'refnet', 'shop-1');
  });

  const counts = async () => {
    const out: Record<string, number> = {};
    for (const table of TABLES) out[table] = Number((await use().ctx.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ${table}`))[0].n);
    return out;
  };
  /** Posts `payload` and expects 404 `code` with `data`, and no row written anywhere. */
  const refused = async (url: string, payload: Json, code: string, data: Json) => {
    const before = await counts();
    const res = await post(url, payload);
    expect(res.statusCode, res.payload).toBe(404);
    expect(res.result).toMatchObject({ code, data: { status: 404, ...data } });
    expect(await counts()).toEqual(before);
  };
  const order = (extra: Json = {}) => ({
    network: 'refnet',
    transaction_id: `REF-${++seq}`,
    sale_amount: '80.00',
    commission: '8.00',
    currency: 'EUR',
    status: 'approved',
    member_id: memberId,
    note: 'claim',
    ...extra,
  });

  it('refuses an order for a network that does not exist (404 svc_network_not_found) and credits nothing', async () => {
    // A member of its own: the other tests credit the shared one.
    const ghostMember = (await use().ctx.users.create({ login: 'ghost-claimant', email: 'ghost-claimant@example.com' })).id;
    await refused('/orders', order({ network: 'ghostnet', member_id: ghostMember }), 'svc_network_not_found', { network: 'ghostnet' });
    expect((await use().ctx.ledger.balanceOf(ghostMember, 'EUR')).available).toBe('0.00');
  });

  it('refuses an order for an advertiser the network does not have (404 svc_advertiser_not_found)', async () => {
    await refused('/orders', order({ advertiser: 'shop-9' }), 'svc_advertiser_not_found', { module: 'refnet', advertiser: 'shop-9' });
    // The same advertiser id on another network is another advertiser.
    await refused('/orders', order({ network: 'awin', advertiser: 'shop-1' }), 'svc_advertiser_not_found', { module: 'awin', advertiser: 'shop-1' });
  });

  it('refuses an order for a member that does not exist (404 svc_member_not_found)', async () => {
    await refused('/orders', order({ member_id: 99_999_999 }), 'svc_member_not_found', { member_id: 99_999_999 });
  });

  it('records an order whose references all exist (201)', async () => {
    const res = await post('/orders', order({ advertiser: 'shop-1' }));
    expect(res.statusCode).toBe(201);
    expect(res.result).toMatchObject({ network: 'refnet', advertiser: 'shop-1', member: { id: memberId }, status: 'approved', cashback: '4.00' });
  });

  it('refuses a payout, an adjustment and a referral for a member that does not exist', async () => {
    await refused('/payouts', { member_id: 99_999_998, amount: '10.00', currency: 'EUR', method: 'paypal' }, 'svc_member_not_found', {});
    await refused(
      '/ledger/adjustments',
      { member_id: 99_999_998, type: 'credit', amount: '10.00', currency: 'EUR', note: 'goodwill' },
      'svc_member_not_found',
      {},
    );
    await refused('/referrals', { referrer_id: 99_999_998, referee_id: memberId }, 'svc_member_not_found', { member_id: 99_999_998 });
    await refused('/referrals', { referrer_id: memberId, referee_id: 99_999_998 }, 'svc_member_not_found', { member_id: 99_999_998 });
  });

  it('refuses to assign an order to a member that does not exist', async () => {
    const unmatched = (await post('/orders', order({ member_id: undefined, sub_id: 'nobody-here', status: 'pending' }))).result as Json;
    expect(unmatched.member).toBeNull();
    await refused(`/orders/${unmatched.id}/assign`, { member_id: 99_999_997 }, 'svc_member_not_found', { member_id: 99_999_997 });
  });

  it('refuses to start a sync or a poll of a network that does not exist', async () => {
    await refused('/advertisers/sync', { network: 'ghostnet' }, 'svc_network_not_found', { network: 'ghostnet' });
    await refused('/orders/poll', { network: 'ghostnet' }, 'svc_network_not_found', { network: 'ghostnet' });
  });

  it('refuses a tracking link for an unknown advertiser or member', async () => {
    const noShop = await get(`/advertisers/refnet/shop-9/link?member=${memberId}`);
    expect(noShop.result).toMatchObject({ code: 'svc_advertiser_not_found', data: { status: 404 } });
    const noMember = await get('/advertisers/refnet/shop-1/link?member=nobody-at-all');
    expect(noMember.result).toMatchObject({ code: 'svc_member_not_found', data: { status: 404, member: 'nobody-at-all' } });
  });
});
