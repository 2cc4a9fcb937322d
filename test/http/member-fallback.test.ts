// The member fallback field on Admitad (`subid1`) and impact.com (`SubId2`), by postback and by
// poll, through each network's fixture: an order whose click id is not on file gets the member the
// field names (and no click); a member id that is nobody leaves it unmatched. (Awin's `clickRef2`
// is in clicks.test.ts.)
import type { Server } from '@hapi/hapi';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { JobRunner } from '../../src/jobs/runner.js';
import { startAdmitadFixture, type AdmitadFixture } from '../fixtures/networks/admitad.js';
import { localUtc } from '../fixtures/networks/common.js';
import { impactAction, startImpactFixture, type ImpactFixture } from '../fixtures/networks/impact.js';
import { describeEachDialect } from '../helpers/context.js';
import { testServer } from '../helpers/http.js';
import { addAdvertiser, getPostback, query } from '../helpers/networks.js';

const PRUNED = 'c0000000002cccccccc';
const HOUR = 3_600_000;

describeEachDialect(
  'the member fallback sub-id field on Admitad and impact.com',
  (use) => {
    let admitad: AdmitadFixture;
    let impact: ImpactFixture;
    let server: Server;
    const tokens: Record<string, string> = {};
    const members: number[] = [];
    beforeAll(async () => {
      const { ctx } = use();
      [admitad, impact] = await Promise.all([startAdmitadFixture(), startImpactFixture()]);
      server = await testServer(ctx);
      for (const [id, f] of [
        ['admitad', admitad],
        ['impact', impact],
      ] as const) {
        await ctx.networks.configure(id, { ...f.settings } as Record<string, string>, 'test');
        await ctx.networks.enable(id, 'test');
        tokens[id] = (await ctx.networks.rotatePostbackSecret(id, 'test')).secret;
        await ctx.networks.setPostbacks(id, true, 'test');
      }
      await addAdvertiser(ctx, 'admitad', '6000');
      await addAdvertiser(ctx, 'impact', '15745');
      for (const login of ['fay', 'gus']) members.push((await ctx.users.create({ login, email: `${login}@example.com` })).id);
    });
    afterAll(async () => {
      await server?.stop();
      await Promise.all([admitad?.close(), impact?.close()]);
    });

    const orderOf = async (network: string, transactionId: string) => {
      const [row] = await use().ctx.db.select<{ id: unknown }>('SELECT id FROM orders WHERE network = ? AND transaction_id = ?', [network, transactionId]);
      return use().ctx.orders.get(Number(row.id));
    };
    const poll = async (network: string) => {
      const { ctx } = use();
      const queued = await ctx.jobs.enqueue('orders.poll', { network, since: new Date(Date.now() - 2 * 86_400_000) }, 'test');
      await new JobRunner({ ctx, jobs: ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 20 }).runPending();
      expect((await ctx.jobs.get(queued.id)).status).toBe('done');
    };

    it('Admitad: subid1 by postback (when the publisher adds it) and by poll', async () => {
      const [fay, gus] = members;
      const notify = (actionId: string, subid1: string) =>
        getPostback(
          server,
          'admitad',
          query({
            token: tokens.admitad,
            action_id: actionId,
            status: 'pending',
            order_sum: '50.00',
            payment_sum: '5.00',
            currency: 'USD',
            subid: PRUNED,
            subid1,
            offer_id: '6000',
          }),
        );
      const sent = await notify('808000001', String(fay));
      expect(sent.status).toBe(200);
      expect(await use().ctx.orders.get(sent.body.order_id)).toMatchObject({ member: { id: fay }, click_id: null, sub_id: PRUNED, cashback: '2.50' });
      const nobody = await notify('808000002', '999999');
      expect(await use().ctx.orders.get(nobody.body.order_id)).toMatchObject({ member: null });

      const at = new Date(Date.now() - 3 * HOUR);
      admitad.actions.push({
        id: 808_000_003,
        action_id: 808_000_003,
        order_id: 'A-808003',
        advcampaign_id: 6000,
        action_type: 'sale',
        cart: 30,
        payment: 3,
        currency: 'USD',
        status: 'pending',
        subid: PRUNED,
        subid1: String(gus),
        _website: admitad.websiteId,
        click_date: localUtc(new Date(at.getTime() - HOUR), ' '),
        action_date: localUtc(at, ' '),
        status_updated: localUtc(at, ' '),
      });
      await poll('admitad');
      expect(await orderOf('admitad', '808000003')).toMatchObject({ member: { id: gus }, click_id: null, sub_id: PRUNED, cashback: '1.50' });
    });

    it('impact.com: SubId2 by postback and by poll', async () => {
      const [fay, gus] = members;
      const notify = (actionId: string, subId2: string) =>
        getPostback(
          server,
          'impact',
          query({
            token: tokens.impact,
            ActionId: actionId,
            Status: 'PENDING',
            Amount: '40.00',
            Payout: '4.00',
            Currency: 'USD',
            SubId1: PRUNED,
            SubId2: subId2,
            CampaignId: '15745',
          }),
        );
      const sent = await notify('15745.4636.900001', String(gus));
      expect(sent.status).toBe(200);
      expect(await use().ctx.orders.get(sent.body.order_id)).toMatchObject({ member: { id: gus }, click_id: null, sub_id: PRUNED, cashback: '2.00' });
      // The macro left unreplaced is no member.
      const macro = await notify('15745.4636.900002', '{SubId2}');
      expect(await use().ctx.orders.get(macro.body.order_id)).toMatchObject({ member: null });

      impact.actions.push(
        impactAction(
          {
            Id: '15745.4636.900003',
            State: 'PENDING',
            Amount: '20.00',
            Payout: '2.00',
            IntendedAmount: '20.00',
            IntendedPayout: '2.00',
            SubId1: PRUNED,
            SubId2: String(fay),
          },
          new Date(Date.now() - 3 * HOUR),
          impact.accountSid,
        ),
      );
      await poll('impact');
      expect(await orderOf('impact', '15745.4636.900003')).toMatchObject({ member: { id: fay }, click_id: null, sub_id: PRUNED, cashback: '1.00' });
      expect(await use().ctx.ledger.verify()).toEqual([]);
    });
  },
  { 'postbacks.enabled': true },
);
