// The click service on its own clock: an unmatched order's candidates (several members and shops,
// ranked by the network's click time, the address it reports and closeness to the sale, within
// the cookie window), the rate policy of an order that came through a click, and the prune.
import { beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock.js';
import type { Context } from '../../../src/context.js';
import { choosePolicyRule } from '../../../src/services/orders/index.js';
import { describeEachDialect } from '../../helpers/context.js';
import { shopnetDefinition } from '../../helpers/networks.js';
import { JobRunner } from '../../../src/jobs/runner.js';

const MIN = 60_000;
const DAY = 86_400_000;
const UA_A = 'Mozilla/5.0 (Phone A)';
const UA_B = 'Mozilla/5.0 (Laptop B)';

async function setUp(ctx: Context, logins: string[]): Promise<Record<string, number>> {
  await ctx.networks.saveCustom('shopnet', shopnetDefinition(), 'test');
  const now = ctx.clock.now();
  for (const adv of ['shoes', 'hats'])
    await ctx.db.execute(
      "INSERT INTO advertisers (module, advertiser, name, categories, countries, status, last_seen_sync, created_at, updated_at) VALUES ('shopnet', ?, ?, '[]', '[]', 'active', 1, ?, ?)",
      [adv, `Shop ${adv}`, now, now],
    );
  const ids: Record<string, number> = {};
  for (const login of logins) ids[login] = (await ctx.users.create({ login, email: `${login}@example.com` })).id;
  return ids;
}

/** A member's click on a shop at the clock's time, from an address and browser; answers the click id. */
async function click(ctx: Context, member: number, advertiser: string, ip: string, ua: string, url: string | null = null): Promise<string> {
  const link = await ctx.advertisers.trackingLink('shopnet', advertiser, { member, url });
  const location = await ctx.clicks.go(link.go_token!, { ip, userAgent: ua });
  return new URL(location).searchParams.get('subid')!;
}

const clock = new ManualClock('2026-11-20T10:00:00Z');

describeEachDialect(
  'order candidates',
  (use) => {
    let m: Record<string, number>;
    beforeAll(async () => {
      m = await setUp(use().ctx, ['ann', 'ben', 'cat', 'dan', 'eve']);
    });

    it('ranks the member whose click the network timed first, then the same address, then the closest click', async () => {
      const { ctx } = use();
      clock.set('2026-11-20T10:00:00Z');
      await click(ctx, m.dan, 'shoes', '198.51.100.9', UA_A); // outside the window by the sale below
      clock.set('2026-11-25T09:00:00Z');
      const annClick = await click(ctx, m.ann, 'shoes', '203.0.113.10', UA_A);
      clock.advance(10 * MIN);
      await click(ctx, m.ann, 'shoes', '203.0.113.11', UA_B, 'https://shoes.example/x');
      clock.advance(20 * MIN);
      const benClick = await click(ctx, m.ben, 'shoes', '192.0.2.50', UA_B);
      clock.advance(5 * MIN);
      await click(ctx, m.eve, 'hats', '203.0.113.12', UA_A); // another shop: never a candidate
      clock.advance(5 * MIN);
      const catClick = await click(ctx, m.cat, 'shoes', '198.51.100.7', UA_A);
      clock.advance(30 * MIN);

      // No network click time, no address: the closest click first.
      const plain = await ctx.orders.record(
        {
          network: 'shopnet',
          transaction_id: 'T-1',
          advertiser: 'shoes',
          status: 'pending',
          sale_amount: '100.00',
          commission: '10.00',
          currency: 'EUR',
          source: 'postback',
          event_at: clock.now(),
        },
        'postback',
      );
      expect(plain.member).toBeNull();
      const c1 = await ctx.clicks.candidates(await ctx.orders.get(plain.id));
      expect(c1.window_days).toBe(3);
      expect(c1.items.map((i) => i.member.login)).toEqual(['cat', 'ben', 'ann']);
      expect(c1.items[0]).toMatchObject({ click: { id: catClick }, gap_seconds: 1800, evidence: { last_click: true, click_time_match: false } });
      expect(c1.items[2]).toMatchObject({ clicks: 2, devices: 2 });

      // The address the network reports for the click puts its member first.
      const withIp = await ctx.orders.record(
        {
          network: 'shopnet',
          transaction_id: 'T-2',
          advertiser: 'shoes',
          status: 'pending',
          sale_amount: '100.00',
          commission: '10.00',
          currency: 'EUR',
          source: 'poll',
          event_at: clock.now(),
          raw: { click_user_ip: '192.0.2.77' },
        },
        'poll',
      );
      const c2 = await ctx.clicks.candidates(await ctx.orders.get(withIp.id));
      expect(c2.items[0]).toMatchObject({ member: { id: m.ben }, click: { id: benClick }, evidence: { same_address: true } });

      // The network's own click time wins over both.
      const timed = await ctx.orders.record(
        {
          network: 'shopnet',
          transaction_id: 'T-3',
          advertiser: 'shoes',
          status: 'pending',
          sale_amount: '100.00',
          commission: '10.00',
          currency: 'EUR',
          source: 'poll',
          event_at: clock.now(),
          clicked_at: new Date(Date.parse('2026-11-25T09:00:30Z')),
          raw: { click_user_ip: '192.0.2.77' },
        },
        'poll',
      );
      const c3 = await ctx.clicks.candidates(await ctx.orders.get(timed.id));
      expect(c3.items.map((i) => i.member.login)).toEqual(['ann', 'ben', 'cat']);
      expect(c3.items[0]).toMatchObject({ click: { id: annClick }, evidence: { click_time_match: true } });
    });

    it('refuses a bad token with svc_click_link_invalid and its reason', async () => {
      const { ctx } = use();
      const link = await ctx.advertisers.trackingLink('shopnet', 'shoes', { member: m.ann });
      const [payload, mac] = link.go_token!.split('.');
      await expect(ctx.clicks.go(`${payload}.${mac.replace(/^./, mac[0] === 'A' ? 'B' : 'A')}`, { ip: null, userAgent: null })).rejects.toMatchObject({
        code: 'svc_click_link_invalid',
        status: 404,
        data: { reason: 'forged' },
      });
      // A shop no click has read yet (a click's reads are kept a second).
      await ctx.db.execute(
        "INSERT INTO advertisers (module, advertiser, name, categories, countries, status, last_seen_sync, created_at, updated_at) VALUES ('shopnet', 'caps', 'Caps', '[]', '[]', 'active', 1, ?, ?)",
        [clock.now(), clock.now()],
      );
      const caps = await ctx.advertisers.trackingLink('shopnet', 'caps', { member: m.ann });
      await ctx.db.execute("UPDATE advertisers SET status = 'inactive' WHERE advertiser = 'caps'");
      await expect(ctx.clicks.go(caps.go_token!, { ip: null, userAgent: null })).rejects.toMatchObject({
        code: 'svc_click_link_invalid',
        data: { reason: 'svc_advertiser_inactive' },
      });
    });

    it('has no candidates for a shop nobody clicked, nor after the sale', async () => {
      const { ctx } = use();
      const early = await ctx.orders.record(
        {
          network: 'shopnet',
          transaction_id: 'T-4',
          advertiser: 'shoes',
          status: 'pending',
          sale_amount: '1.00',
          commission: '0.10',
          currency: 'EUR',
          source: 'poll',
          event_at: new Date('2026-11-24T00:00:00Z'),
        },
        'poll',
      );
      expect((await ctx.clicks.candidates(await ctx.orders.get(early.id))).items).toEqual([]);
      const none = await ctx.orders.record(
        { network: 'shopnet', transaction_id: 'T-5', status: 'pending', sale_amount: '1.00', commission: '0.10', currency: 'EUR', source: 'poll' },
        'poll',
      );
      expect((await ctx.clicks.candidates(await ctx.orders.get(none.id))).items).toEqual([]);
    });

    it('prunes clicks past clicks.retention_days in the nightly job', async () => {
      const { ctx } = use();
      const before = Number((await ctx.db.select<{ n: unknown }>('SELECT COUNT(*) AS n FROM clicks'))[0].n);
      // Ten days before is 2026-11-25T08:00: the click of the 20th is past, those of the 25th from 09:00 are not.
      clock.set(new Date(Date.parse('2026-11-25T08:00:00Z') + 10 * DAY));
      const queued = await ctx.jobs.enqueue('maintenance.prune', {}, 'test');
      await new JobRunner({ ctx, jobs: ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 20 }).runPending();
      const job = await ctx.jobs.get(queued.id);
      expect(job.status).toBe('done');
      expect((job.result as { deleted: Record<string, number> }).deleted.clicks).toBe(1);
      expect(Number((await ctx.db.select<{ n: unknown }>('SELECT COUNT(*) AS n FROM clicks'))[0].n)).toBe(before - 1);
    });
  },
  { 'clicks.retention_days': 10, 'clicks.cookie_days_by_network': { shopnet: 3 } },
  { clock },
);

for (const policy of ['order', 'click', 'best'] as const) {
  const policyClock = new ManualClock('2026-11-20T10:00:00Z');
  describeEachDialect(
    `cashback.rate_policy ${policy}`,
    (use) => {
      let m: Record<string, number>;
      beforeAll(async () => {
        m = await setUp(use().ctx, ['payee']);
      });
      const orderThrough = async (txn: string, clickId: string) =>
        use().ctx.orders.record(
          {
            network: 'shopnet',
            transaction_id: txn,
            sub_id: clickId,
            advertiser: 'shoes',
            status: 'pending',
            sale_amount: '100.00',
            commission: '10.00',
            currency: 'EUR',
            source: 'postback',
          },
          'postback',
        );

      it('pays an order by the rule its policy names when the rule changed after the click', async () => {
        const { ctx } = use();
        await ctx.advertisers.setCashback('shopnet', 'shoes', 'percent_commission', '50', 'test');
        const lowered = await click(ctx, m.payee, 'shoes', '203.0.113.1', UA_A);
        await ctx.advertisers.setCashback('shopnet', 'shoes', 'percent_commission', '30', 'test');
        const down = await orderThrough('P-1', lowered);
        expect(down.member?.id).toBe(m.payee);
        expect(down.cashback).toBe({ order: '3.00', click: '5.00', best: '5.00' }[policy]);
        expect(down.cashback_rule).toEqual({ type: 'percent_commission', value: { order: '30', click: '50', best: '50' }[policy], currency: null });

        policyClock.advance(MIN);
        const raised = await click(ctx, m.payee, 'shoes', '203.0.113.1', UA_A, 'https://shoes.example/raised');
        await ctx.advertisers.setCashback('shopnet', 'shoes', 'percent_commission', '70', 'test');
        const up = await orderThrough('P-2', raised);
        expect(up.cashback).toBe({ order: '7.00', click: '3.00', best: '7.00' }[policy]);
        expect(up.click_id).toBe(raised);

        // A manual order, or one without a click, is paid by the order's rule whatever the policy.
        const plain = await ctx.orders.record(
          {
            network: 'shopnet',
            transaction_id: 'P-3',
            member_id: m.payee,
            advertiser: 'shoes',
            status: 'pending',
            sale_amount: '100.00',
            commission: '10.00',
            currency: 'EUR',
            source: 'postback',
          },
          'postback',
        );
        expect(plain).toMatchObject({ cashback: '7.00', click_id: null });
        expect(await ctx.ledger.verify()).toEqual([]);
      });
    },
    { 'cashback.rate_policy': policy },
    { clock: policyClock },
  );
}

describe('choosePolicyRule', () => {
  const compute = (rule: { type: string; value: string; currency: string | null }, a: { commission: number; currency: string }) => {
    if (rule.type === 'flat') {
      if (rule.currency !== a.currency) throw new Error('currency');
      return Number(rule.value) * 100;
    }
    return Math.floor((a.commission * Number(rule.value)) / 100);
  };
  const cashback = { compute } as never;
  const amounts = { sale: 10_000, commission: 1000, currency: 'EUR' };
  const pct = (value: string) => ({ type: 'percent_commission' as const, value, currency: null });
  it('keeps the order rule on a tie and when the click rule cannot apply', () => {
    expect(choosePolicyRule('best', pct('50'), pct('50'), amounts, cashback)).toEqual(pct('50'));
    expect(choosePolicyRule('best', pct('10'), { type: 'flat', value: '9.00', currency: 'USD' }, amounts, cashback)).toEqual(pct('10'));
    expect(choosePolicyRule('best', pct('10'), { type: 'flat', value: '9.00', currency: 'EUR' }, amounts, cashback)).toEqual({
      type: 'flat',
      value: '9.00',
      currency: 'EUR',
    });
    expect(choosePolicyRule('click', pct('10'), null, amounts, cashback)).toEqual(pct('10'));
  });
});
