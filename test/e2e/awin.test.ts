// Awin end to end, through the daemon: set up with the CLI, programmes synced by a job, Transaction
// Notifications (GET with the !!!macros!!! filled in, and the POST form field AwinTransactionPush)
// over a real socket, then approvals and declines picked up by polling, each counted once.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startAwinFixture, type AwinFixture } from '../fixtures/networks/awin.js';
import { localUtc, type Rec } from '../fixtures/networks/common.js';
import { count, describeDaemon, fillMacros, type Daemon, type Json } from '../helpers/daemon.js';
import {
  advertisersOf,
  balanceOf,
  entriesOf,
  expectLedgerClean,
  expectTestPostback,
  orderById,
  orderOf,
  pollOrders,
  postbacksOf,
  setUpNetwork,
  syncAdvertisers,
  trackingLink,
} from '../helpers/e2e.js';

const HOUR = 3_600_000;

describeDaemon('Awin end to end', (use) => {
  let fixture: AwinFixture;
  let token: string;
  let template: string;
  let members = 0;

  beforeAll(async () => {
    fixture = await startAwinFixture({ programmes: 3 });
    token = await setUpNetwork(use(), 'awin', {
      set: { publisher_id: fixture.publisherId, base_url: fixture.url },
      stdin: { key: 'api_token', value: fixture.token },
    });
    template = (await use().api('GET', '/networks/awin')).body.postbacks.template;
  });
  afterAll(() => fixture?.close());

  const member = async (d: Daemon) => {
    const login = `awin-shopper-${++members}`;
    return d.ctx.users.create({ login, email: `${login}@example.com` });
  };

  /** A sale as Awin reports it to both channels: the notification's values and the API record. */
  const sale = (id: number, clickRef: string, amount: string, commission: string, at = new Date(Date.now() - 2 * HOUR)) => ({
    notification: {
      transactionId: String(id),
      transactionDate: localUtc(at, ' '),
      transactionAmount: amount,
      transactionCurrency: 'GBP',
      commission,
      merchantId: '1001',
      clickRef,
    },
    record: (commissionStatus: string): Rec => ({
      id,
      advertiserId: 1001,
      publisherId: Number(fixture.publisherId),
      commissionStatus,
      commissionAmount: { amount: Number(commission), currency: 'GBP' },
      saleAmount: { amount: Number(amount), currency: 'GBP' },
      clickRefs: { clickRef },
      clickDate: localUtc(new Date(at.getTime() - HOUR)),
      transactionDate: localUtc(at),
      validationDate: commissionStatus === 'pending' ? null : localUtc(new Date()),
      declineReason: commissionStatus === 'declined' ? 'Order returned' : null,
      orderRef: `ORD-${id}`,
      type: 'Commission group transaction',
    }),
  });

  /** The GET notification: the URL the administrator pasted (token and template), macros filled in by Awin. */
  const notify = (values: Record<string, string>, key = token) =>
    use().postback('awin', { query: `token=${encodeURIComponent(key)}&${fillMacros(template, values)}` });

  /** The POST notification: one form field holding a JSON object whose values are strings. */
  const push = (values: Record<string, string>, key = token) => {
    const json = {
      ...values,
      affiliateId: fixture.publisherId,
      groupId: '147',
      bannerId: '0',
      clickThroughTime: values.transactionDate,
      ip: '203.0.113.0',
      url: 'https://mycashback.test/shops/example',
      phrase: '',
      searchEngine: '',
      commissionGroups: [{ id: '147', name: 'Default', code: 'DEFAULT', commission: values.commission }],
      products: Array.from({ length: 12 }, (_, i) => ({
        productId: `SKU-${1000 + i}`,
        productName: `Trail running shoe, size ${38 + i}, colour "storm grey"`,
        unitPrice: '4.00',
        quantity: '1',
        skuCode: `TRS-${i}`,
        commissionGroupCode: 'DEFAULT',
        category: 'Footwear > Running',
      })),
    };
    return use().postback('awin', {
      method: 'POST',
      query: `token=${encodeURIComponent(key)}`,
      body: `AwinTransactionPush=${encodeURIComponent(JSON.stringify(json))}`,
    });
  };

  it('shows the notification URL and template to give Awin, and never a secret', async () => {
    const network = (await use().api('GET', '/networks/awin')).body as Json;
    expect(network).toMatchObject({
      settings: { publisher_id: fixture.publisherId, base_url: fixture.url, api_token_set: true },
      postbacks: { url: `${use().url}/postback/awin` },
    });
    expect(template).toContain('transactionId=!!!transactionId!!!');
    expect(template).toContain('clickRef=!!!clickRef!!!');
  });

  it('sends itself a test notification over HTTP that records no order', async () => {
    const sent = await expectTestPostback(use(), 'awin', { sub_id: 'test-member', amount: '25.00', commission: '1.25' });
    expect(sent.request.url).toContain('transactionAmount=25.00');
    expect(sent.record).toMatchObject({ status: 'pending' });
  });

  it('syncs the joined programmes through a job, with their mapped fields, and records the sync on the network', async () => {
    const d = use();
    const counts = await syncAdvertisers(d, 'awin');
    expect(counts).toMatchObject({ seen: 3, created: 3, updated: 0, deactivated: 0, failed: 0 });
    expect(fixture.requests.filter((r) => r.path.endsWith('/programmes')).at(-1)!.headers.authorization).toBe(`Bearer ${fixture.token}`);
    const list = await advertisersOf(d, 'awin');
    expect(list.map((a) => a.advertiser)).toEqual(['1001', '1002', '1003']);
    expect(list[0]).toMatchObject({
      module: 'awin',
      name: 'Example Shop 1001',
      domain: 'shop-1001.test',
      site_url: 'https://www.shop-1001.test/',
      logo_url: 'https://ui.awin.com/logos/1001/logo.gif',
      tracking_template: 'https://www.awin1.com/awclick.php?mid=1001&id=45628',
      categories: ['Retail'],
      countries: ['GB'],
      status: 'active',
    });

    // Awin stops listing one: the next sync marks it inactive and keeps it.
    fixture.programmes[2]._relationship = 'notjoined';
    try {
      expect(await syncAdvertisers(d, 'awin')).toMatchObject({ seen: 2, created: 0, updated: 0, unchanged: 2, deactivated: 1 });
      expect((await advertisersOf(d, 'awin')).map((a) => [a.advertiser, a.status])).toEqual([
        ['1001', 'active'],
        ['1002', 'active'],
        ['1003', 'inactive'],
      ]);
    } finally {
      fixture.programmes[2]._relationship = 'joined';
    }
    const network = (await d.api('GET', '/networks')).body.find((n: Json) => n.id === 'awin');
    expect(network).toMatchObject({
      last_sync_at: expect.any(String),
      last_error: null,
      last_sync_result: { advertisers: { seen: 2, deactivated: 1, failed: 0 } },
      counts: { advertisers: 2 },
    });
  });

  it('hands a member a tracking link that carries their id as the lower-case clickref Awin echoes back', async () => {
    const d = use();
    const shopper = await member(d);
    const link = await trackingLink(d, 'awin', '1001', shopper.id, 'https://www.shop-1001.test/trainers?size=42');
    expect(`${link.parsed.origin}${link.parsed.pathname}`).toBe('https://www.awin1.com/cread.php');
    expect(Object.fromEntries(link.parsed.searchParams)).toEqual({
      awinmid: '1001',
      awinaffid: fixture.publisherId,
      clickref: String(shopper.id),
      ued: 'https://www.shop-1001.test/trainers?size=42',
    });
    const plain = await trackingLink(d, 'awin', '1001', shopper.id);
    expect(plain.parsed.searchParams.get('clickref')).toBe(String(shopper.id));
    const got = await notify(sale(710_000_900, link.parsed.searchParams.get('clickref')!, '10.00', '1.00').notification);
    expect((await orderById(d, got.body.order_id)).member).toMatchObject({ id: shopper.id });
    expect((await d.api('GET', `/advertisers/awin/1001/link?member=${shopper.id}&url=${encodeURIComponent('https://evil.test/')}`)).body).toMatchObject({
      code: 'svc_invalid_url',
    });
  });

  it('records notifications (GET and POST) as pending orders once each, keeps an unknown sub id unmatched and refuses a forged token', async () => {
    const d = use();
    const shopper = await member(d);
    const a = sale(710_000_001, String(shopper.id), '48.00', '2.40');
    const b = sale(710_000_002, String(shopper.id), '120.00', '6.00');

    const got = await notify(a.notification);
    expect(got, JSON.stringify(got.body)).toMatchObject({
      status: 200,
      body: { ok: true, duplicate: false, test: false, status: 'pending', order_id: expect.any(Number) },
    });
    expect(await orderById(d, got.body.order_id)).toMatchObject({
      network: 'awin',
      transaction_id: '710000001',
      member: { id: shopper.id },
      advertiser: '1001',
      status: 'pending',
      source: 'postback',
      sale_amount: '48.00',
      commission: '2.40',
      currency: 'GBP',
      cashback: '1.20',
      event_at: new Date(`${a.notification.transactionDate.replace(' ', 'T')}Z`).toISOString(),
    });
    const pushed = await push(b.notification);
    expect(pushed, JSON.stringify(pushed.body)).toMatchObject({ status: 200, body: { ok: true, duplicate: false, status: 'pending' } });
    expect(await orderById(d, pushed.body.order_id)).toMatchObject({
      transaction_id: '710000002',
      member: { id: shopper.id },
      sale_amount: '120.00',
      commission: '6.00',
      cashback: '3.00',
      source: 'postback',
    });
    expect(await balanceOf(d, shopper.id, 'GBP')).toEqual({ available: '0.00', pending: '4.20' });

    // Awin sends again: nothing changes.
    const orders = await count(d, 'orders');
    expect(await notify(a.notification)).toMatchObject({ status: 200, body: { duplicate: true, order_id: got.body.order_id } });
    expect(await push(b.notification)).toMatchObject({ status: 200, body: { duplicate: true, order_id: pushed.body.order_id } });
    expect(await count(d, 'orders')).toBe(orders);
    expect(await balanceOf(d, shopper.id, 'GBP')).toEqual({ available: '0.00', pending: '4.20' });

    const ghost = await notify(sale(710_000_003, 'nobody-here', '30.00', '1.50').notification);
    expect(ghost.status).toBe(200);
    expect(await orderById(d, ghost.body.order_id)).toMatchObject({ member: null, sub_id: 'nobody-here', status: 'pending' });
    expect(((await d.api('GET', '/orders?network=awin&unmatched=true')).body as Json[]).map((o) => o.id)).toContain(ghost.body.order_id);

    const forged = 'A'.repeat(43);
    for (const sent of [
      await notify(sale(710_000_004, String(shopper.id), '10.00', '1.00').notification, forged),
      await push(sale(710_000_005, String(shopper.id), '10.00', '1.00').notification, forged),
    ]) {
      expect(sent).toMatchObject({ status: 401, body: { code: 'svc_postback_unauthorized' } });
    }
    expect(await count(d, 'orders')).toBe(orders + 1);
    expect(await count(d, 'orders', "network = 'awin' AND transaction_id IN ('710000004', '710000005')")).toBe(0);

    const records = await postbacksOf(d, 'awin');
    expect(records.slice(0, 7).map((r) => [r.method, r.outcome, r.transaction_id])).toEqual([
      ['POST', 'rejected', null],
      ['GET', 'rejected', null],
      ['GET', 'accepted', '710000003'],
      ['POST', 'duplicate', '710000002'],
      ['GET', 'duplicate', '710000001'],
      ['POST', 'accepted', '710000002'],
      ['GET', 'accepted', '710000001'],
    ]);
    expect(records[0]).toMatchObject({ code: 'svc_postback_unauthorized', order_id: null, ip: '127.0.0.1' });
    const stored = JSON.stringify(records);
    expect(stored).not.toContain(token);
    expect(stored).not.toContain(forged);
    await expectLedgerClean(d);
  });

  it('applies the approval and the decline the poll reports, records what only the poll knows, and counts nothing twice', async () => {
    const d = use();
    const shopper = await member(d);
    const approved = sale(720_000_001, String(shopper.id), '60.00', '3.00');
    const declined = sale(720_000_002, String(shopper.id), '40.00', '2.00');
    const unseen = sale(720_000_003, String(shopper.id), '80.00', '4.00');
    expect((await notify(approved.notification)).status).toBe(200);
    expect((await push(declined.notification)).status).toBe(200);
    expect(await balanceOf(d, shopper.id, 'GBP')).toEqual({ available: '0.00', pending: '2.50' });

    // Later, the API reports the first validated, the second declined, and a third never notified.
    fixture.transactions.push(approved.record('approved'), declined.record('declined'), unseen.record('pending'));
    expect(await pollOrders(d, 'awin')).toMatchObject({ seen: 3, created: 1, updated: 2, duplicate: 0, failed: 0 });
    const calls = fixture.requests.filter((r) => r.path.includes('/transactions'));
    expect(calls.at(-1)!.query.get('timezone')).toBe('UTC');

    const a = await orderOf(d, 'awin', '720000001');
    expect(a).toMatchObject({ status: 'approved', source: 'postback', cashback: '1.50', cashback_entry_id: expect.any(Number) });
    expect(await orderOf(d, 'awin', '720000002')).toMatchObject({ status: 'declined', cashback_entry_id: null });
    expect(await orderOf(d, 'awin', '720000003')).toMatchObject({
      status: 'pending',
      source: 'poll',
      member: { id: shopper.id },
      merchant_ref: 'ORD-720000003',
      cashback: '2.00',
    });
    const credits = () => entriesOf(d, shopper.id).then((list) => list.map((e) => [e.type, e.amount, e.order_id]));
    expect(await credits()).toEqual([['cashback', '1.50', a.id]]);
    expect(await balanceOf(d, shopper.id, 'GBP')).toEqual({ available: '1.50', pending: '2.00' });

    // The notification arrives again after the approval, and the poll runs again: nothing moves.
    expect(await notify(approved.notification)).toMatchObject({ status: 200, body: { duplicate: true, order_id: a.id, status: 'approved' } });
    expect(await pollOrders(d, 'awin')).toMatchObject({ seen: 3, created: 0, updated: 0, duplicate: 3, failed: 0 });
    expect(await credits()).toEqual([['cashback', '1.50', a.id]]);
    expect(await balanceOf(d, shopper.id, 'GBP')).toEqual({ available: '1.50', pending: '2.00' });

    const network = (await d.api('GET', '/networks')).body.find((n: Json) => n.id === 'awin');
    expect(network).toMatchObject({
      last_error: null,
      last_sync_result: { orders: { seen: 3, duplicate: 3 } },
      counts: { orders: await count(d, 'orders', "network = 'awin'") },
    });
    await expectLedgerClean(d);
  });
});
