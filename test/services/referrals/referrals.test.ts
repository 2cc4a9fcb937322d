import { expect, it } from 'vitest';
import { describeEachDialect } from '../../helpers/context.js';

describeEachDialect('referrals', (use) => {
  const member = async (login: string) => (await use().ctx.users.create({ login, email: `${login}@example.com` })).id;

  it('adds a referral, lists it with what the referrer earned, and ends it without touching past credits', async () => {
    const { ctx } = use();
    const [ann, bob] = [await member('ref-ann'), await member('ref-bob')];
    const added = await ctx.referrals.add({ referrer_id: ann, referee_id: bob }, 'user:1');
    expect(added).toMatchObject({
      referrer: { id: ann, login: 'ref-ann', display_name: 'ref-ann' },
      referee: { id: bob, login: 'ref-bob' },
      ended_at: null,
      active: true,
      earned: [],
      actor: 'user:1',
    });
    const order = await ctx.orders.record(
      { network: 'awin', transaction_id: 'REF-1', source: 'poll', member_id: bob, sale_amount: '100.00', commission: '40.00', status: 'approved' },
      'system',
    );
    await ctx.orders.record(
      {
        network: 'awin',
        transaction_id: 'REF-2',
        source: 'poll',
        member_id: bob,
        sale_amount: '100.00',
        commission: '10.00',
        status: 'approved',
        currency: 'EUR',
      },
      'system',
    );
    const declined = await ctx.orders.record(
      { network: 'awin', transaction_id: 'REF-3', source: 'poll', member_id: bob, sale_amount: '100.00', commission: '10.00', status: 'approved' },
      'system',
    );
    await ctx.orders.update(declined.id, { status: 'declined' }, 'user:1');
    const [listed] = (await ctx.referrals.list({ referrer_id: ann, page: 1, per_page: 10 })).items;
    expect(listed.earned).toEqual([
      { currency: 'EUR', amount: '0.50' },
      { currency: 'USD', amount: '2.00' },
    ]);
    const ended = await ctx.referrals.remove(bob, 'user:1');
    expect(ended).toMatchObject({ id: added.id, active: false });
    expect(ended.ended_at).not.toBeNull();
    // Future cashback only: the next approval pays no share; the past credit stays.
    await ctx.orders.record(
      { network: 'awin', transaction_id: 'REF-4', source: 'poll', member_id: bob, sale_amount: '100.00', commission: '40.00', status: 'approved' },
      'system',
    );
    expect((await ctx.ledger.balanceOf(ann, 'USD')).available).toBe('2.00');
    expect((await ctx.orders.get(order.id)).referral).toMatchObject({ referral_id: added.id, amount: '2.00' });
    expect((await ctx.referrals.list({ active: false, referee_id: bob, page: 1, per_page: 10 })).total).toBe(1);
    expect((await ctx.referrals.list({ active: true, referee_id: bob, page: 1, per_page: 10 })).total).toBe(0);
    // A new referrer may follow an ended referral.
    const carl = await member('ref-carl');
    expect((await ctx.referrals.add({ referrer_id: carl, referee_id: bob }, 'user:1')).active).toBe(true);
    expect(await ctx.ledger.verify()).toEqual([]);
  });

  it("names the order's approver as the actor of the referral credit and of its reversal, as of the cashback credit", async () => {
    const { ctx } = use();
    const [ref, buyer] = [await member('act-ref'), await member('act-buyer')];
    await ctx.referrals.add({ referrer_id: ref, referee_id: buyer }, 'user:1');
    const order = await ctx.orders.record(
      { network: 'awin', transaction_id: 'ACT-1', source: 'manual', member_id: buyer, sale_amount: '100.00', commission: '40.00' },
      'user:1',
    );
    await ctx.orders.update(order.id, { status: 'approved' }, 'user:7');
    await ctx.orders.update(order.id, { status: 'declined' }, 'user:8');
    const entries = async (id: number) =>
      (await ctx.ledger.listEntries({ member_id: id, page: 1, per_page: 10 } as never)).items.map((e) => [e.type, e.actor]).sort();
    expect(await entries(buyer)).toEqual([
      ['cashback', 'user:7'],
      ['reversal', 'user:8'],
    ]);
    expect(await entries(ref)).toEqual([
      ['referral', 'user:7'],
      ['reversal', 'user:8'],
    ]);
  });

  it('refuses self-referral, a second live referrer, unknown members and cycles', async () => {
    const { ctx } = use();
    const [a, b, c] = [await member('cyc-a'), await member('cyc-b'), await member('cyc-c')];
    await expect(ctx.referrals.add({ referrer_id: a, referee_id: a }, 'user:1')).rejects.toMatchObject({ code: 'svc_referral_self', status: 400 });
    await ctx.referrals.add({ referrer_id: a, referee_id: b }, 'user:1');
    await expect(ctx.referrals.add({ referrer_id: c, referee_id: b }, 'user:1')).rejects.toMatchObject({
      code: 'svc_referral_exists',
      status: 409,
      data: { referrer_id: a },
    });
    await expect(ctx.referrals.add({ referrer_id: b, referee_id: a }, 'user:1')).rejects.toMatchObject({ code: 'svc_referral_cycle', status: 400 });
    await ctx.referrals.add({ referrer_id: b, referee_id: c }, 'user:1');
    await expect(ctx.referrals.add({ referrer_id: c, referee_id: a }, 'user:1')).rejects.toMatchObject({ code: 'svc_referral_cycle', status: 400 });
    await expect(ctx.referrals.add({ referrer_id: 123_456_789, referee_id: a }, 'user:1')).rejects.toMatchObject({ code: 'svc_member_not_found', status: 404 });
    await expect(ctx.referrals.add({ referrer_id: a, referee_id: 123_456_789 }, 'user:1')).rejects.toMatchObject({ code: 'svc_member_not_found', status: 404 });
    await expect(ctx.referrals.remove(a, 'user:1')).rejects.toMatchObject({ code: 'svc_referral_not_found', status: 404 });
    // Once the chain is broken, the same referral is no cycle.
    await ctx.referrals.remove(b, 'user:1');
    expect((await ctx.referrals.add({ referrer_id: c, referee_id: a }, 'user:1')).active).toBe(true);
  });

  it.each([
    ['referrer_id', { referrer_id: 0, referee_id: 1 }],
    ['referee_id', { referrer_id: 1, referee_id: 1.5 }],
    ['referrer_id', { referrer_id: -3, referee_id: 2 }],
  ])('refuses a %s that is not a positive integer with svc_invalid_referral', async (field, input) => {
    const before = (await use().ctx.referrals.list({ page: 1, per_page: 1 })).total;
    await expect(use().ctx.referrals.add(input, 'user:1')).rejects.toMatchObject({ code: 'svc_invalid_referral', status: 400, data: { field } });
    expect((await use().ctx.referrals.list({ page: 1, per_page: 1 })).total).toBe(before);
  });

  it('lets one of many concurrent referrals of a member win, and never makes a cycle under races', async () => {
    const { ctx } = use();
    const target = await member('race-target');
    const referrers = [await member('race-r1'), await member('race-r2'), await member('race-r3'), await member('race-r4')];
    const results = await Promise.allSettled(referrers.map((r) => ctx.referrals.add({ referrer_id: r, referee_id: target }, 'user:1')));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results.filter((r) => r.status === 'rejected')) expect((r as PromiseRejectedResult).reason).toMatchObject({ code: 'svc_referral_exists' });
    const [x, y] = [await member('race-x'), await member('race-y')];
    const opposed = await Promise.allSettled([
      ctx.referrals.add({ referrer_id: x, referee_id: y }, 'user:1'),
      ctx.referrals.add({ referrer_id: y, referee_id: x }, 'user:1'),
    ]);
    expect(opposed.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect((opposed.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({ code: 'svc_referral_cycle' });
  });
});
