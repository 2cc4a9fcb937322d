import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Clock } from '../../../src/clock.js';
import { HOOKS } from '../../../src/hooks/index.js';
import { startAdmitadFixture, type AdmitadFixture } from '../../fixtures/networks/admitad.js';
import { startAwinFixture, type AwinFixture } from '../../fixtures/networks/awin.js';
import { multipartParts } from '../../fixtures/networks/common.js';
import { startImpactFixture, type ImpactFixture } from '../../fixtures/networks/impact.js';
import { describeEachDialect } from '../../helpers/context.js';
import { image } from '../../helpers/images.js';
import { addAdvertiser, shopnetDefinition } from '../../helpers/networks.js';

type Json = Record<string, any>;
const DAY = 86_400_000;

/** The system clock moved by `offset` (a claim's deadline passes without waiting for it). */
let offset = 0;
const clock: Clock = { now: () => new Date(Date.now() + offset) };

describeEachDialect(
  'claims filed with the networks and followed to the answer',
  (use) => {
    let admitad: AdmitadFixture;
    let impact: ImpactFixture;
    let awin: AwinFixture;
    let seq = 0;
    const events: [string, Json][] = [];
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
      await addAdvertiser(ctx, 'impact', '15745');
      await addAdvertiser(ctx, 'awin', '1001');
      await ctx.networks.saveCustom('shopnet', shopnetDefinition(), 'test');
      await addAdvertiser(ctx, 'shopnet', 'shop-1');
      ctx.hooks.addAction(HOOKS.claimStatusChanged, 'test', (claim: Json, extra: Json) => void events.push([HOOKS.claimStatusChanged, { claim, ...extra }]));
      ctx.hooks.addAction(HOOKS.claimDeadlineNear, 'test', (claim: Json) => void events.push([HOOKS.claimDeadlineNear, { claim }]));
    });
    afterAll(async () => {
      offset = 0;
      await Promise.all([admitad?.close(), impact?.close(), awin?.close()]);
    });

    const member = async () => (await use().ctx.users.create({ login: `m${++seq}`, email: `m${seq}@example.com` })).id;
    const claim = async (memberId: number, extra: Json) =>
      use().ctx.claims.create(
        {
          member_id: memberId,
          order_ref: `ORD-${++seq}`,
          purchased_at: new Date(Date.now() - 2 * DAY),
          amount: '75.00',
          currency: 'USD',
          note: 'Nothing tracked',
          ...extra,
        } as never,
        'support',
      );
    const poll = async () => {
      const counts = await use().ctx.claims.poll();
      await use().ctx.claims.idle();
      return counts;
    };
    const get = (id: number) => use().ctx.claims.get(id);

    it('files an Admitad lost order with its receipt, and follows it to approval and its order', async () => {
      const { ctx } = use();
      const id = await member();
      const bare = await claim(id, { network: 'admitad', advertiser: '6000' });
      expect(bare).toMatchObject({ status: 'open', channel: 'api', network_ref: null });
      expect(bare.reason).toContain('only with the receipt');

      const png = await image('png', 60, 80);
      const filed = await claim(id, { network: 'admitad', advertiser: '6000', receipt: png.toString('base64'), amount: '120.50' });
      expect(filed).toMatchObject({ status: 'submitted', channel: 'api', network_ref: '9001', network_status: 'processing', receipt: true });
      const create = admitad.requests.find((r) => r.path === '/lost_orders/create/')!;
      const parts = multipartParts(create)!;
      expect(parts.fields).toMatchObject({
        advcampaign: '6000',
        website: admitad.websiteId,
        order_id: filed.order_ref,
        order_price: '120.50',
        appeal_id: String(filed.id),
      });
      expect(parts.fields.order_date).toMatch(/^\d{2}\.\d{2}\.\d{4}$/);
      expect(parts.files.receipt.type).toBe('image/png');
      expect(parts.files.receipt.data.subarray(1, 4).toString()).toBe('PNG');

      expect(await poll()).toMatchObject({ checked: 1, approved: 0 });
      expect(await get(filed.id)).toMatchObject({ status: 'submitted' });
      admitad.decideLostOrder(9001, 'accepted');
      expect(await poll()).toMatchObject({ approved: 1 });
      const approved = await get(filed.id);
      expect(approved).toMatchObject({ status: 'approved', order_id: null, network_status: 'accepted' });
      expect(approved.reason).toContain('linked when the network reports it');
      // The network then reports the order (without the member's sub id): it is the member's now.
      const order = await ctx.orders.record(
        {
          network: 'admitad',
          transaction_id: '807999001',
          advertiser: '6000',
          merchant_ref: filed.order_ref,
          sale_amount: '120.50',
          commission: '7.23',
          currency: 'USD',
          status: 'approved',
          source: 'poll',
        },
        'poll',
      );
      await ctx.claims.idle();
      expect(await get(filed.id)).toMatchObject({ status: 'approved', order_id: order.id });
      expect(await ctx.orders.get(order.id)).toMatchObject({ member: { id } });
      expect((await ctx.ledger.balanceOf(id, 'USD')).available).not.toBe('0.00');
      expect(await ctx.ledger.verify()).toEqual([]);
    });

    it('follows an Admitad lost order to its rejection, with the reason', async () => {
      const id = await member();
      const filed = await claim(id, { network: 'admitad', advertiser: '6000', receipt: (await image('jpeg')).toString('base64') });
      expect(filed.status).toBe('submitted');
      admitad.decideLostOrder(Number(filed.network_ref), 'rejected', 'The order was cancelled');
      await poll();
      expect(await get(filed.id)).toMatchObject({ status: 'declined', reason: 'Admitad rejected the lost order: The order was cancelled' });
      expect(events.some(([, e]) => e.claim.id === filed.id && e.from === 'submitted' && e.to === 'declined')).toBe(true);
    });

    it('files an impact.com action inquiry, and follows it to approval on the action it names', async () => {
      const { ctx } = use();
      const id = await member();
      const filed = await claim(id, { network: 'impact', advertiser: '15745', amount: '64.00' });
      expect(filed).toMatchObject({ status: 'submitted', channel: 'api', network_ref: '15652378', network_status: 'UNRESOLVED' });
      const inquiry = impact.inquiries[0];
      expect(inquiry).toMatchObject({
        CampaignId: '15745',
        OrderId: filed.order_ref,
        TransactionAmount: '64.00',
        InquiryType: 'UNTRACKED',
        MediaPartnerInquiryId: String(filed.id),
        CustomerId: String(id),
      });
      // impact.com's own resolution deadline is the claim's.
      expect(filed.deadline_at).toBe(new Date(String(inquiry.ResolutionDeadlineDate)).toISOString());
      const order = await ctx.orders.record(
        {
          network: 'impact',
          transaction_id: '1017.4635.1023507',
          advertiser: '15745',
          sale_amount: '58.00',
          commission: '3.20',
          currency: 'USD',
          status: 'pending',
          source: 'poll',
        },
        'poll',
      );
      await ctx.claims.idle();
      expect((await get(filed.id)).status).toBe('submitted');
      impact.resolveInquiry('15652378', { status: 'VALID', actionId: '1017.4635.1023507' });
      await poll();
      expect(await get(filed.id)).toMatchObject({ status: 'approved', order_id: order.id, network_status: 'VALID' });
      expect(await ctx.orders.get(order.id)).toMatchObject({ member: { id } });
      expect((await ctx.ledger.balanceOf(id, 'USD')).pending).toBe('1.60');
    });

    it('follows an impact.com inquiry to its decline with the reason, and one marked incomplete back to support', async () => {
      const id = await member();
      const declined = await claim(id, { network: 'impact', advertiser: '15745' });
      const incomplete = await claim(id, { network: 'impact', advertiser: '15745' });
      impact.resolveInquiry(declined.network_ref!, { status: 'DECLINED', reason: 'Transaction cannot be traced' });
      impact.resolveInquiry(incomplete.network_ref!, { status: 'INCOMPLETE', reason: 'Enquiry does not provide complete information required for evaluation' });
      expect(await poll()).toMatchObject({ declined: 1, reopened: 1 });
      expect(await get(declined.id)).toMatchObject({ status: 'declined', reason: 'Transaction cannot be traced' });
      const back = await get(incomplete.id);
      expect(back.status).toBe('open');
      expect(back.reason).toContain('asks for more: Enquiry does not provide complete information');
    });

    it('puts Awin claims in the transaction-queries file, then reads the answers from the transactions API', async () => {
      const { ctx, config } = use();
      const id = await member();
      const a = await claim(id, { network: 'awin', advertiser: '1001', currency: 'GBP', amount: '48.00', note: 'Trainers, "size 9", paid by card' });
      const b = await claim(id, { network: 'awin', advertiser: '1001', currency: 'GBP', amount: '12.00' });
      expect(a).toMatchObject({ status: 'open', channel: 'file' });
      expect(a.reason).toContain('claims.export');
      const exported = await ctx.claims.export();
      const file = exported.files[0];
      expect(file).toMatchObject({ network: 'awin', claims: 2 });
      const csv = readFileSync(join(config.data_dir, 'exports', file.file), 'utf8').split('\r\n');
      expect(csv[0]).toBe('enquiry_id,merchant_id,type,click_ref,amount,commission,date,customer_reference,reference,description');
      expect(csv[1]).toBe(
        `${a.id},1001,untracked,${id},48.00,0.00,${a.purchased_at.slice(0, 10)} ${a.purchased_at.slice(11, 19)},${id},${a.order_ref},"Trainers, ""size 9"", paid by card"`,
      );
      expect(await get(a.id)).toMatchObject({ status: 'submitted', export_file: file.file, network_ref: String(a.id) });
      // A second export has nothing left to write.
      expect((await ctx.claims.export()).files).toEqual([]);
      const query = (n: number, c: Json, status: string, extra: Json = {}) => ({
        id: 555_000 + n,
        advertiserId: 1001,
        publisherId: Number(awin.publisherId),
        commissionStatus: status,
        commissionAmount: { amount: 2.4, currency: 'GBP' },
        saleAmount: { amount: Number(c.amount), currency: 'GBP' },
        clickRefs: { clickRef: String(id) },
        transactionDate: new Date(Date.now() - DAY).toISOString().slice(0, 19),
        type: 'Transaction Query',
        orderRef: c.order_ref,
        transactionQueryId: 880_000 + n,
        declineReason: null,
        ...extra,
      });
      // A tracked transaction with the claim's reference is no answer to the query.
      awin.transactions.push(query(0, a, 'approved', { transactionQueryId: 0, type: 'Commission group transaction' }));
      await poll();
      expect(await get(a.id)).toMatchObject({ status: 'submitted' });
      awin.transactions.push(query(1, a, 'approved'), query(2, b, 'declined', { declineReason: 'Order returned' }));
      expect(await poll()).toMatchObject({ approved: 1, declined: 1 });
      expect(await get(a.id)).toMatchObject({ status: 'approved', network_ref: '880001' });
      expect(await get(b.id)).toMatchObject({ status: 'declined', reason: 'Order returned', network_ref: '880002' });
    });

    it('warns of a claim nearing its deadline once, then expires it; a late order still matches it', async () => {
      const { ctx } = use();
      const id = await member();
      const open = await claim(id, { network: 'shopnet', advertiser: 'shop-1', currency: 'EUR' });
      expect(open.status).toBe('open');
      expect(new Date(open.deadline_at!).getTime() - new Date(open.created_at).getTime()).toBe(60 * DAY);
      // Other tests' claims have their own deadlines: this one is followed by its id.
      offset = 52 * DAY;
      await poll();
      expect(await get(open.id)).toMatchObject({ status: 'open', warned_at: null });
      offset = 55 * DAY;
      await poll();
      expect(await get(open.id)).toMatchObject({
        status: 'open',
        warned_at: expect.stringMatching(new RegExp(`^${new Date(Date.now() + offset).toISOString().slice(0, 10)}`)),
      });
      await poll();
      expect(events.filter(([h, e]) => h === HOOKS.claimDeadlineNear && e.claim.id === open.id)).toHaveLength(1);
      offset = 61 * DAY;
      expect((await poll()).expired).toBeGreaterThanOrEqual(1);
      const expired = await get(open.id);
      expect(expired.status).toBe('expired');
      expect(expired.reason).toContain('No answer by the deadline');
      await ctx.orders.record(
        {
          network: 'shopnet',
          transaction_id: 'late-1',
          advertiser: 'shop-1',
          merchant_ref: open.order_ref,
          sale_amount: '75.00',
          commission: '5.00',
          currency: 'EUR',
          status: 'pending',
          source: 'poll',
        },
        'poll',
      );
      await ctx.claims.idle();
      expect(await get(open.id)).toMatchObject({ status: 'matched' });
      offset = 0;
    });
  },
  {},
  { clock },
);
