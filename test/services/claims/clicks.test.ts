// Claims and clicks together: a given click must be the member's, on the claim's shop; none given,
// the member's latest click on the shop within the network's cookie window before the purchase is
// the evidence. The claim shows the click (time, rate shown); the filings to Admitad, impact.com and
// Awin carry its time in their free text (none of the three formats has a field of its own) and
// the commission the site expects, from the advertiser's commission.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { newClickId } from '../../../src/services/clicks/ids.js';
import { isServiceError } from '../../../src/errors.js';
import { startAdmitadFixture, type AdmitadFixture } from '../../fixtures/networks/admitad.js';
import { startAwinFixture, type AwinFixture } from '../../fixtures/networks/awin.js';
import { multipartParts } from '../../fixtures/networks/common.js';
import { startImpactFixture, type ImpactFixture } from '../../fixtures/networks/impact.js';
import { describeEachDialect } from '../../helpers/context.js';
import { image } from '../../helpers/images.js';
import { addAdvertiser } from '../../helpers/networks.js';

type Json = Record<string, any>;
const DAY = 86_400_000;

describeEachDialect(
  'claims and their clicks',
  (use) => {
    let admitad: AdmitadFixture;
    let impact: ImpactFixture;
    let awin: AwinFixture;
    let seq = 0;
    beforeAll(async () => {
      [admitad, impact, awin] = await Promise.all([startAdmitadFixture(), startImpactFixture(), startAwinFixture()]);
      const { ctx } = use();
      for (const [id, f] of [
        ['admitad', admitad],
        ['impact', impact],
        ['awin', awin],
      ] as const) {
        await ctx.networks.configure(id, { ...f.settings } as Record<string, string>, 'test');
        await ctx.networks.enable(id, 'test');
      }
      await addAdvertiser(ctx, 'admitad', '6000');
      await addAdvertiser(ctx, 'admitad', '6001');
      await addAdvertiser(ctx, 'impact', '15745');
      await addAdvertiser(ctx, 'awin', '1001');
      // Commissions as the networks state them: a range (its lower end counts), a flat one in the claim's currency.
      await ctx.db.execute(
        "UPDATE advertisers SET commission_type = 'percent', commission_min = '4', commission_max = '8' WHERE module = 'admitad' AND advertiser = '6000'",
      );
      await ctx.db.execute("UPDATE advertisers SET commission_type = 'flat', commission_max = '3.50', commission_currency = 'USD' WHERE module = 'impact'");
      await ctx.db.execute("UPDATE advertisers SET commission_type = 'percent', commission_max = '5' WHERE module = 'awin'");
    });
    afterAll(async () => {
      await Promise.all([admitad?.close(), impact?.close(), awin?.close()]);
    });

    const member = async () => (await use().ctx.users.create({ login: `k${++seq}`, email: `k${seq}@example.com` })).id;
    /** A click stored as /go/ stores it, `ago` ms before now, with the rule shown then. */
    const click = async (memberId: number, network: string, advertiser: string, at: Date, rule = 'percent_commission:50') => {
      const id = newClickId(at);
      await use().ctx.db.execute(
        'INSERT INTO clicks (id, member_id, network, advertiser, coupon_id, url, cashback_rule, ip_prefix, ua_hash, created_at) VALUES (?, ?, ?, ?, NULL, NULL, ?, NULL, NULL, ?)',
        [id, memberId, network, advertiser, rule, at],
      );
      return id;
    };
    const purchasedAt = () => new Date(Date.now() - 2 * DAY);
    const claim = (memberId: number, extra: Json) =>
      use().ctx.claims.create(
        {
          member_id: memberId,
          order_ref: `KORD-${++seq}`,
          purchased_at: purchasedAt(),
          amount: '75.00',
          currency: 'USD',
          ...extra,
        } as never,
        'support',
      );
    const refused = async (p: Promise<unknown>) => {
      try {
        await p;
      } catch (err) {
        if (isServiceError(err)) return { code: err.code, status: err.status };
        throw err;
      }
      throw new Error('not refused');
    };

    it("takes a given click of the member on the shop, and refuses an unknown one, another member's, another shop's", async () => {
      const { ctx } = use();
      const ann = await member();
      const bob = await member();
      const at = new Date(purchasedAt().getTime() - 3_600_000);
      const own = await click(ann, 'admitad', '6000', at, 'percent_sale:3.5');
      const bobs = await click(bob, 'admitad', '6000', at);
      const otherShop = await click(ann, 'admitad', '6001', at);
      const count = async () => Number((await ctx.db.select<{ n: unknown }>('SELECT COUNT(*) AS n FROM claims'))[0].n);
      const before = await count();
      expect(await refused(claim(ann, { network: 'admitad', advertiser: '6000', click_id: 'c0000000000aaaaaaaa' }))).toEqual({
        code: 'svc_click_not_found',
        status: 404,
      });
      expect(await refused(claim(ann, { network: 'admitad', advertiser: '6000', click_id: bobs }))).toEqual({ code: 'svc_click_mismatch', status: 409 });
      expect(await refused(claim(ann, { network: 'admitad', advertiser: '6000', click_id: otherShop }))).toEqual({ code: 'svc_click_mismatch', status: 409 });
      expect(await count()).toBe(before);
      const taken = await claim(ann, { network: 'admitad', advertiser: '6000', click_id: own });
      expect(taken).toMatchObject({
        click_id: own,
        click: { id: own, created_at: at.toISOString(), cashback_rule: { type: 'percent_sale', value: '3.5', currency: null } },
      });
      // The list shows it too; a click pruned later leaves the id and no evidence.
      const listed = await ctx.claims.list({ member_id: ann, page: 1, per_page: 10 });
      expect(listed.items[0].click).toMatchObject({ id: own });
      await ctx.db.execute('DELETE FROM clicks WHERE id = ?', [own]);
      expect(await ctx.claims.get(taken.id)).toMatchObject({ click_id: own, click: null });
    });

    it("attaches the member's latest click on the shop within the network's cookie window before the purchase, or none", async () => {
      const ann = await member();
      const bob = await member();
      const sale = purchasedAt();
      const hour = 3_600_000;
      // impact.com's window is 5 days here (clicks.cookie_days_by_network).
      await click(ann, 'impact', '15745', new Date(sale.getTime() - 6 * DAY));
      const older = await click(ann, 'impact', '15745', new Date(sale.getTime() - 3 * DAY));
      const latest = await click(ann, 'impact', '15745', new Date(sale.getTime() - 2 * hour), 'flat:1.00:USD');
      await click(ann, 'impact', '15745', new Date(sale.getTime() + hour)); // after the purchase
      await click(bob, 'impact', '15745', new Date(sale.getTime() - hour)); // another member's
      await click(ann, 'admitad', '6000', new Date(sale.getTime() - hour)); // another shop
      const c = await claim(ann, { network: 'impact', advertiser: '15745', purchased_at: sale });
      expect(c.click_id).toBe(latest);
      expect(c.click).toMatchObject({ id: latest, cashback_rule: { type: 'flat', value: '1.00', currency: 'USD' } });
      expect(older).not.toBe(latest);
      // Only a click older than the window: none.
      const cleo = await member();
      await click(cleo, 'impact', '15745', new Date(sale.getTime() - 6 * DAY));
      expect(await claim(cleo, { network: 'impact', advertiser: '15745', purchased_at: sale })).toMatchObject({ click_id: null, click: null });
    });

    it("records the claim's click on the unmatched order it is matched to, and matches without it once the click is pruned", async () => {
      const { ctx } = use();
      const order = async (ref: string) => {
        return ctx.orders.record(
          {
            network: 'admitad',
            transaction_id: `KT-${++seq}`,
            advertiser: '6001',
            merchant_ref: ref,
            sale_amount: '75.00',
            commission: '3.00',
            currency: 'USD',
            status: 'pending',
            event_at: purchasedAt(),
            source: 'poll',
          },
          'poll',
        );
      };
      const clickOf = async (orderId: number) =>
        (await ctx.db.select<{ member_id: unknown; click_id: string | null }>('SELECT member_id, click_id FROM orders WHERE id = ?', [orderId]))[0];
      const ann = await member();
      const at = new Date(purchasedAt().getTime() - 3_600_000);
      const own = await click(ann, 'admitad', '6001', at);
      const first = await order('KREF-1');
      const matched = await claim(ann, { network: 'admitad', advertiser: '6001', order_ref: 'KREF-1', click_id: own });
      await ctx.claims.idle();
      expect(await ctx.claims.get(matched.id)).toMatchObject({ status: 'matched', order_id: first.id, click_id: own });
      expect(await clickOf(first.id)).toMatchObject({ click_id: own });
      expect(Number((await clickOf(first.id)).member_id)).toBe(ann);
      // The claim came first and its click was pruned before the order arrived: matched all the same, with no click.
      const bob = await member();
      const gone = await click(bob, 'admitad', '6001', at);
      const early = await claim(bob, { network: 'admitad', advertiser: '6001', order_ref: 'KREF-2', click_id: gone });
      await ctx.db.execute('DELETE FROM clicks WHERE id = ?', [gone]);
      const second = await order('KREF-2');
      await ctx.claims.idle();
      expect(await ctx.claims.get(early.id)).toMatchObject({ status: 'matched', order_id: second.id });
      expect(await clickOf(second.id)).toMatchObject({ click_id: null });
      expect(Number((await clickOf(second.id)).member_id)).toBe(bob);
    });

    it('matches on the next poll a claim whose order arrived while matching failed', async () => {
      const { ctx } = use();
      const ann = await member();
      const early = await claim(ann, { network: 'admitad', advertiser: '6001', order_ref: 'KREF-LATE' });
      await ctx.claims.idle();
      expect(await ctx.claims.get(early.id)).toMatchObject({ status: 'open', order_id: null });
      // The order arrives, and the listener's run fails (the database went away for a moment).
      const failed = vi.spyOn(ctx.claims.store, 'candidatesFor').mockRejectedValueOnce(new Error('connection lost'));
      const order = await ctx.orders.record(
        {
          network: 'admitad',
          transaction_id: `KT-${++seq}`,
          advertiser: '6001',
          merchant_ref: 'KREF-LATE',
          sale_amount: '75.00',
          commission: '3.00',
          currency: 'USD',
          status: 'pending',
          event_at: purchasedAt(),
          source: 'poll',
        },
        'poll',
      );
      await ctx.claims.idle();
      expect(failed).toHaveBeenCalledTimes(1);
      failed.mockRestore();
      expect(await ctx.claims.get(early.id)).toMatchObject({ status: 'open', order_id: null });
      const counts = await ctx.claims.poll('test');
      expect(counts.matched).toBeGreaterThanOrEqual(1);
      expect(await ctx.claims.get(early.id)).toMatchObject({ status: 'matched', order_id: order.id });
      // Once matched it is not matched again.
      const again = await ctx.claims.poll('test');
      expect(await ctx.claims.get(early.id)).toMatchObject({ status: 'matched', order_id: order.id });
      expect(again.matched).toBe(0);
    });

    it('files an Admitad lost order with the estimated reward and the click time', async () => {
      const id = await member();
      const at = new Date(purchasedAt().getTime() - 1_800_000);
      const clickId = await click(id, 'admitad', '6000', at);
      const png = await image('png', 40, 40);
      const filed = await claim(id, { network: 'admitad', advertiser: '6000', amount: '120.50', receipt: png.toString('base64'), note: 'Trainers' });
      expect(filed).toMatchObject({ status: 'submitted', click_id: clickId });
      const create = admitad.requests.filter((r) => r.path === '/lost_orders/create/').at(-1)!;
      const fields = multipartParts(create)!.fields;
      // 4 % (the range's lower end) of 120.50, rounded down to the cent.
      expect(fields.estimated_reward).toBe('4.82');
      expect(fields.comment).toBe(`Trainers Clicked through our link at ${at.toISOString().slice(0, 19)}Z (click ${clickId}).`);
      // A shop whose commission the network does not state: 0 as before (the field is required), no click sentence without a click.
      const plain = await claim(id, { network: 'admitad', advertiser: '6001', receipt: png.toString('base64') });
      expect(plain.status).toBe('submitted');
      const second = multipartParts(admitad.requests.filter((r) => r.path === '/lost_orders/create/').at(-1)!)!.fields;
      expect(second.estimated_reward).toBe('0');
      expect(second.comment).toBe(`Missing cashback claim ${plain.id}`);
    });

    it('files an impact.com action inquiry with the expected payout and the click time', async () => {
      const id = await member();
      const at = new Date(purchasedAt().getTime() - 600_000);
      const clickId = await click(id, 'impact', '15745', at);
      const filed = await claim(id, { network: 'impact', advertiser: '15745', amount: '64.00' });
      expect(filed).toMatchObject({ status: 'submitted', click_id: clickId });
      const inquiry = impact.inquiries.at(-1)!;
      expect(inquiry).toMatchObject({ MediaPartnerInquiryId: String(filed.id), ExpectedPayout: '3.50' });
      expect((inquiry.Comments as { Comment: string }[])[0].Comment).toBe(`Clicked through our link at ${at.toISOString().slice(0, 19)}Z (click ${clickId}).`);
      // A flat commission in another currency is no estimate: the field is left out.
      const eur = await claim(id, { network: 'impact', advertiser: '15745', currency: 'EUR', amount: '10.00' });
      expect(eur.status).toBe('submitted');
      expect(impact.inquiries.at(-1)!.ExpectedPayout).toBe('');
    });

    it('writes the Awin transaction-queries file with the click id, the commission and the click time', async () => {
      const { ctx, config } = use();
      const id = await member();
      const at = new Date(purchasedAt().getTime() - 7_200_000);
      const clickId = await click(id, 'awin', '1001', at);
      const a = await claim(id, { network: 'awin', advertiser: '1001', currency: 'GBP', amount: '48.00', note: 'Paid by card' });
      expect(a).toMatchObject({ status: 'open', channel: 'file', click_id: clickId });
      const file = (await ctx.claims.export()).files.find((f) => f.network === 'awin')!;
      const lines = readFileSync(join(config.data_dir, 'exports', file.file), 'utf8').split('\r\n');
      const line = lines.find((l) => l.startsWith(`${a.id},`))!;
      expect(line).toBe(
        `${a.id},1001,untracked,${clickId},48.00,2.40,${a.purchased_at.slice(0, 10)} ${a.purchased_at.slice(11, 19)},${id},${a.order_ref},Paid by card Clicked through our link at ${at.toISOString().slice(0, 19)}Z (click ${clickId}).`,
      );
    });
  },
  { 'clicks.cookie_days_by_network': { impact: 5 } },
);
