// Admitad end to end, through the daemon: set up with the CLI (the client secret from the
// environment), campaigns synced by a job over OAuth2 client credentials and limit/offset paging,
// postbacks with the [[[macros]]] filled in over a real socket, then status changes picked up by
// polling `statistics/actions` by status update time, each counted once.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startAdmitadFixture, type AdmitadFixture } from '../fixtures/networks/admitad.js';
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

describeDaemon('Admitad end to end', (use) => {
  let fixture: AdmitadFixture;
  let token: string;
  let template: string;
  let members = 0;

  beforeAll(async () => {
    fixture = await startAdmitadFixture({ campaigns: 3 });
    token = await setUpNetwork(use(), 'admitad', {
      set: { client_id: fixture.clientId, website_id: fixture.websiteId, base_url: fixture.url },
      env: { client_secret: fixture.clientSecret },
    });
    template = (await use().api('GET', '/networks/admitad')).body.postbacks.template;
  });
  afterAll(() => fixture?.close());

  const member = async (d: Daemon) => {
    const login = `admitad-shopper-${++members}`;
    return d.ctx.users.create({ login, email: `${login}@example.com` });
  };

  /** One action as Admitad reports it to both channels: the postback's macro values and the statistics record. */
  const action = (id: number, subid: string, cart: string, payment: string, at = new Date(Date.now() - 3 * HOUR)) => ({
    macros: (status: string) => ({
      action_id: String(id),
      status,
      order_id: `A-${id}`,
      order_sum: cart,
      payment_sum: payment,
      currency: 'USD',
      subid,
      offer_id: '6000',
      time: localUtc(at, ' '),
    }),
    record: (status: string): Rec => ({
      id,
      action_id: id,
      order_id: `A-${id}`,
      advcampaign_id: 6000,
      advcampaign_name: 'Example Store 6000 WW',
      website_name: 'MyCashback',
      action: 'Paid order',
      action_type: 'sale',
      tariff_id: 7106,
      cart: Number(cart),
      payment: Number(payment),
      currency: 'USD',
      status,
      processed: status === 'pending' ? 0 : 1,
      paid: 0,
      subid,
      subid1: null,
      subid2: null,
      subid3: null,
      subid4: null,
      click_date: localUtc(new Date(at.getTime() - HOUR), ' '),
      action_date: localUtc(at, ' '),
      closing_date: '2026-12-31',
      // Changed on Admitad's side a minute ago: inside the poll's status_updated window.
      status_updated: localUtc(new Date(Date.now() - 60_000), ' '),
      positions: [],
      _website: fixture.websiteId,
    }),
  });

  /** The postback Admitad sends: the administrator's URL (token and template), macros filled in. */
  const send = (macros: Record<string, string>, key = token) =>
    use().postback('admitad', { query: `token=${encodeURIComponent(key)}&${fillMacros(template, macros)}` });

  it('syncs the connected campaigns through a job, with their mapped fields, and records the sync on the network', async () => {
    const d = use();
    expect(await syncAdvertisers(d, 'admitad')).toMatchObject({ seen: 3, created: 3, updated: 0, deactivated: 0, failed: 0 });
    expect(fixture.grants.client_credentials).toBe(1);
    const calls = fixture.requests.filter((r) => r.path.startsWith('/advcampaigns/website/'));
    expect(calls.at(-1)!.query.get('limit')).toBe('500');
    expect(calls.at(-1)!.query.get('connection_status')).toBe('active');
    const list = await advertisersOf(d, 'admitad');
    expect(list.map((a) => a.advertiser)).toEqual(['6000', '6001', '6002']);
    expect(list[0]).toMatchObject({
      module: 'admitad',
      name: 'Example Store 6000',
      domain: 'store-6000.test',
      site_url: 'https://store-6000.test/',
      logo_url: 'https://cdn.admitad.com/campaign/images/6000.png',
      tracking_template: 'https://ad.admitad.com/g/1770e8d1144942e2a0e4f5f16525dc3e8/',
      commission: { type: 'percent', min: '4', max: '4', currency: null },
      validation_days: 30,
      categories: ['Online Stores'],
      countries: ['US'],
      status: 'active',
    });
    const network = (await d.api('GET', '/networks')).body.find((n: Json) => n.id === 'admitad');
    expect(network).toMatchObject({
      last_sync_at: expect.any(String),
      last_error: null,
      last_sync_result: { advertisers: { seen: 3, created: 3, failed: 0 } },
      counts: { advertisers: 3 },
    });
    expect(JSON.stringify(network)).not.toContain(fixture.clientSecret);
  });

  it('sends itself a test postback over HTTP that records no order', async () => {
    const sent = await expectTestPostback(use(), 'admitad', { status: 'approved', sub_id: 'test-member' });
    expect(sent.request.url).toContain('status=approved');
    expect(sent.record).toMatchObject({ status: 'approved' });
  });

  it("hands a member a tracking link: the campaign's gotolink with their id as subid, which Admitad echoes back", async () => {
    const d = use();
    const shopper = await member(d);
    const link = await trackingLink(d, 'admitad', '6000', shopper.id, 'https://store-6000.test/sale');
    expect(`${link.parsed.origin}${link.parsed.pathname}`).toBe('https://ad.admitad.com/g/1770e8d1144942e2a0e4f5f16525dc3e8/');
    expect(link.parsed.searchParams.get('subid')).toBe(String(shopper.id));
    expect(link.parsed.searchParams.get('ulp')).toBe('https://store-6000.test/sale');
    const got = await send(action(807_100_900, link.parsed.searchParams.get('subid')!, '10.00', '1.00').macros('pending'));
    expect((await orderById(d, got.body.order_id)).member).toMatchObject({ id: shopper.id });
  });

  it('records postbacks as orders once each, keeps an unknown sub id unmatched and refuses a forged token', async () => {
    const d = use();
    const shopper = await member(d);
    const a = action(807_100_001, String(shopper.id), '120.50', '7.23');

    const got = await send(a.macros('pending'));
    expect(got, JSON.stringify(got.body)).toMatchObject({ status: 200, body: { ok: true, duplicate: false, status: 'pending', order_id: expect.any(Number) } });
    expect(await orderById(d, got.body.order_id)).toMatchObject({
      network: 'admitad',
      transaction_id: '807100001',
      merchant_ref: 'A-807100001',
      advertiser: '6000',
      member: { id: shopper.id },
      status: 'pending',
      source: 'postback',
      sale_amount: '120.50',
      commission: '7.23',
      currency: 'USD',
      cashback: '3.61',
      event_at: new Date(`${a.macros('pending').time.replace(' ', 'T')}Z`).toISOString(),
    });
    expect(await balanceOf(d, shopper.id, 'USD')).toEqual({ available: '0.00', pending: '3.61' });

    const orders = await count(d, 'orders');
    expect(await send(a.macros('pending'))).toMatchObject({ status: 200, body: { duplicate: true, order_id: got.body.order_id } });
    expect(await count(d, 'orders')).toBe(orders);
    expect(await balanceOf(d, shopper.id, 'USD')).toEqual({ available: '0.00', pending: '3.61' });

    const ghost = await send(action(807_100_002, 'no-such-member', '50.00', '3.00').macros('pending'));
    expect(ghost.status).toBe(200);
    expect(await orderById(d, ghost.body.order_id)).toMatchObject({ member: null, sub_id: 'no-such-member', status: 'pending' });

    const forged = await send(
      action(807_100_003, String(shopper.id), '10.00', '1.00').macros('approved'),
      `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`,
    );
    expect(forged).toMatchObject({ status: 401, body: { code: 'svc_postback_unauthorized' } });
    expect(await count(d, 'orders')).toBe(orders + 1);
    expect(await count(d, 'orders', "network = 'admitad' AND transaction_id = '807100003'")).toBe(0);
    const records = await postbacksOf(d, 'admitad');
    expect(records.slice(0, 4).map((r) => [r.outcome, r.transaction_id, r.order_id])).toEqual([
      ['rejected', null, null],
      ['accepted', '807100002', ghost.body.order_id],
      ['duplicate', '807100001', got.body.order_id],
      ['accepted', '807100001', got.body.order_id],
    ]);
    expect(JSON.stringify(records)).not.toContain(token);
    await expectLedgerClean(d);
  });

  it('applies the approval and the decline the poll reports, records what only the poll knows, and counts nothing twice', async () => {
    const d = use();
    const shopper = await member(d);
    const approved = action(807_200_001, String(shopper.id), '200.00', '12.00');
    const declined = action(807_200_002, String(shopper.id), '80.00', '4.80');
    const stalled = action(807_200_003, String(shopper.id), '30.00', '1.80');
    for (const a of [approved, declined]) expect((await send(a.macros('pending'))).status).toBe(200);
    expect(await balanceOf(d, shopper.id, 'USD')).toEqual({ available: '0.00', pending: '8.40' });

    // Later, statistics/actions reports the first approved, the second declined, and a third, never
    // posted back, approved by the advertiser but held by Admitad (it stays pending).
    fixture.actions.push(approved.record('approved'), declined.record('declined'), stalled.record('approved_but_stalled'));
    expect(await pollOrders(d, 'admitad')).toMatchObject({ seen: 3, created: 1, updated: 2, duplicate: 0, failed: 0 });
    const calls = fixture.requests.filter((r) => r.path === '/statistics/actions/');
    expect(calls.at(-1)!.query.get('status_updated_start')).toMatch(/^\d{2}\.\d{2}\.\d{4} \d{2}:\d{2}:\d{2}$/);
    expect(calls.at(-1)!.query.get('website')).toBe(fixture.websiteId);

    const a = await orderOf(d, 'admitad', '807200001');
    expect(a).toMatchObject({ status: 'approved', source: 'postback', cashback: '6.00', cashback_entry_id: expect.any(Number) });
    expect(await orderOf(d, 'admitad', '807200002')).toMatchObject({ status: 'declined', cashback_entry_id: null });
    expect(await orderOf(d, 'admitad', '807200003')).toMatchObject({ status: 'pending', source: 'poll', member: { id: shopper.id }, cashback: '0.90' });
    const credits = () => entriesOf(d, shopper.id).then((list) => list.map((e) => [e.type, e.amount, e.order_id]));
    expect(await credits()).toEqual([['cashback', '6.00', a.id]]);
    expect(await balanceOf(d, shopper.id, 'USD')).toEqual({ available: '6.00', pending: '0.90' });

    // Admitad's own approval postback arrives after the poll, and the poll runs again: nothing moves.
    expect(await send(approved.macros('approved'))).toMatchObject({ status: 200, body: { duplicate: true, order_id: a.id, status: 'approved' } });
    expect(await send(declined.macros('declined'))).toMatchObject({ status: 200, body: { duplicate: true, status: 'declined' } });
    expect(await pollOrders(d, 'admitad')).toMatchObject({ seen: 3, created: 0, updated: 0, duplicate: 3, failed: 0 });
    expect(await credits()).toEqual([['cashback', '6.00', a.id]]);
    expect(await balanceOf(d, shopper.id, 'USD')).toEqual({ available: '6.00', pending: '0.90' });
    // One token for the whole run: sync and both polls.
    expect(fixture.grants).toEqual({ client_credentials: 1, refresh_token: 0 });

    const network = (await d.api('GET', '/networks')).body.find((n: Json) => n.id === 'admitad');
    expect(network).toMatchObject({
      last_error: null,
      last_sync_result: { orders: { seen: 3, duplicate: 3 }, advertisers: { created: 3 } },
      counts: { orders: await count(d, 'orders', "network = 'admitad'") },
    });
    await expectLedgerClean(d);
  });
});
