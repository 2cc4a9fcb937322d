// impact.com end to end, through the daemon: set up with the CLI (the auth token from standard
// input), campaigns synced by a job (Basic auth, JSON asked for, `@`-paged), Event Notifications
// sent as GET with the {Macros} filled in over a real socket, then state changes (APPROVED,
// REVERSED with zeroed amounts) picked up by polling /Actions, each counted once.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { withOffset } from '../fixtures/networks/common.js';
import { impactAction, startImpactFixture, type ImpactFixture } from '../fixtures/networks/impact.js';
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

describeDaemon('impact.com end to end', (use) => {
  let fixture: ImpactFixture;
  let token: string;
  let template: string;
  let members = 0;

  beforeAll(async () => {
    fixture = await startImpactFixture({ campaigns: 3 });
    token = await setUpNetwork(use(), 'impact', {
      set: { account_sid: fixture.accountSid, base_url: fixture.url },
      stdin: { key: 'auth_token', value: fixture.authToken },
    });
    template = (await use().api('GET', '/networks/impact')).body.postbacks.template;
  });
  afterAll(() => fixture?.close());

  const member = async (d: Daemon) => {
    const login = `impact-shopper-${++members}`;
    return d.ctx.users.create({ login, email: `${login}@example.com` });
  };

  /** One action as impact.com reports it: the notification's macro values and the /Actions record. */
  const action = (seq: number, subId: string, amount: string, payout: string, at = new Date(Date.now() - 4 * HOUR)) => {
    const id = `15745.4636.${seq}`;
    return {
      id,
      macros: (state: string, over: Record<string, string> = {}) => ({
        ActionId: id,
        Status: state,
        Amount: amount,
        Payout: payout,
        Currency: 'USD',
        SubId1: subId,
        CampaignId: '15745',
        OID: `EG-${seq}`,
        EventDate: withOffset(at, -480),
        ...over,
      }),
      record: (state: string, over: Record<string, unknown> = {}) =>
        impactAction(
          { Id: id, State: state, Amount: amount, Payout: payout, IntendedAmount: amount, IntendedPayout: payout, SubId1: subId, Oid: `EG-${seq}`, ...over },
          at,
          fixture.accountSid,
        ),
    };
  };

  /** GET, as impact.com recommends: the administrator's URL (token and template), macros filled in. */
  const send = (macros: Record<string, string>, key = token) =>
    use().postback('impact', { query: `token=${encodeURIComponent(key)}&${fillMacros(template, macros)}` });

  it('syncs the active campaigns through a job, with their mapped fields, and records the sync on the network', async () => {
    const d = use();
    expect(await syncAdvertisers(d, 'impact')).toMatchObject({ seen: 3, created: 3, updated: 0, deactivated: 0, failed: 0 });
    const call = fixture.requests.filter((r) => r.path.endsWith('/Campaigns')).at(-1)!;
    expect(call.path).toBe(`/Mediapartners/${fixture.accountSid}/Campaigns`);
    expect(call.headers.accept).toContain('application/json');
    expect(call.headers.authorization).toBe(`Basic ${Buffer.from(`${fixture.accountSid}:${fixture.authToken}`).toString('base64')}`);
    const list = await advertisersOf(d, 'impact');
    expect(list.map((a) => a.advertiser)).toEqual(['15745', '15746', '15747']);
    expect(list[0]).toMatchObject({
      module: 'impact',
      name: 'Example Gear 15745',
      domain: 'gear-15745.test',
      site_url: 'https://www.gear-15745.test/',
      logo_url: `${fixture.url}/Mediapartners/${fixture.accountSid}/Campaigns/15745/Logo`,
      tracking_template: 'https://gear-15745.sjv.io/c/1234567/88200/15745',
      countries: ['US'],
      status: 'active',
    });
    const network = (await d.api('GET', '/networks')).body.find((n: Json) => n.id === 'impact');
    expect(network).toMatchObject({
      last_sync_at: expect.any(String),
      last_error: null,
      last_sync_result: { advertisers: { seen: 3, created: 3, failed: 0 } },
      counts: { advertisers: 3 },
    });
    expect(JSON.stringify(network)).not.toContain(fixture.authToken);
  });

  it('sends itself a test notification over HTTP that records no order', async () => {
    const sent = await expectTestPostback(use(), 'impact', { status: 'declined', sub_id: 'test-member' });
    expect(sent.request.url).toContain('Status=REVERSED');
    expect(sent.record).toMatchObject({ status: 'declined' });
  });

  it("hands a member a tracking link: the campaign's link with their id as subId1, which impact.com echoes back", async () => {
    const d = use();
    const shopper = await member(d);
    const link = await trackingLink(d, 'impact', '15745', shopper.id, 'https://www.gear-15745.test/tents');
    expect(`${link.parsed.origin}${link.parsed.pathname}`).toBe('https://gear-15745.sjv.io/c/1234567/88200/15745');
    expect(link.parsed.searchParams.get('subId1')).toBe(String(shopper.id));
    expect(link.parsed.searchParams.get('u')).toBe('https://www.gear-15745.test/tents');
    const got = await send(action(910_900, link.parsed.searchParams.get('subId1')!, '10.00', '1.00').macros('PENDING'));
    expect((await orderById(d, got.body.order_id)).member).toMatchObject({ id: shopper.id });
  });

  it('records event notifications as orders once each, keeps an unknown sub id unmatched and refuses a forged token', async () => {
    const d = use();
    const shopper = await member(d);
    const a = action(910_001, String(shopper.id), '120.00', '6.00');

    const got = await send(a.macros('PENDING'));
    expect(got, JSON.stringify(got.body)).toMatchObject({ status: 200, body: { ok: true, duplicate: false, status: 'pending', order_id: expect.any(Number) } });
    expect(await orderById(d, got.body.order_id)).toMatchObject({
      network: 'impact',
      transaction_id: a.id,
      merchant_ref: 'EG-910001',
      advertiser: '15745',
      member: { id: shopper.id },
      status: 'pending',
      source: 'postback',
      sale_amount: '120.00',
      commission: '6.00',
      currency: 'USD',
      cashback: '3.00',
      event_at: new Date(Date.parse(a.macros('PENDING').EventDate)).toISOString(),
    });
    expect(await balanceOf(d, shopper.id, 'USD')).toEqual({ available: '0.00', pending: '3.00' });

    const orders = await count(d, 'orders');
    expect(await send(a.macros('PENDING'))).toMatchObject({ status: 200, body: { duplicate: true, order_id: got.body.order_id } });
    expect(await count(d, 'orders')).toBe(orders);
    expect(await balanceOf(d, shopper.id, 'USD')).toEqual({ available: '0.00', pending: '3.00' });

    const ghost = await send(action(910_002, 'visitor-42', '20.00', '1.00').macros('PENDING'));
    expect(ghost.status).toBe(200);
    expect(await orderById(d, ghost.body.order_id)).toMatchObject({ member: null, sub_id: 'visitor-42', status: 'pending' });

    // A token from another network is as forged as a made-up one.
    const awinToken = (await d.cli(['networks', 'postback-secret', 'awin', '--rotate', '--json'])).json<{ secret: string }>().secret;
    for (const key of [awinToken, 'x'.repeat(43)]) {
      expect(await send(action(910_003, String(shopper.id), '10.00', '1.00').macros('APPROVED'), key)).toMatchObject({
        status: 401,
        body: { code: 'svc_postback_unauthorized' },
      });
    }
    expect(await count(d, 'orders')).toBe(orders + 1);
    expect(await count(d, 'orders', "network = 'impact' AND transaction_id = ?", [action(910_003, '', '', '').id])).toBe(0);
    const records = await postbacksOf(d, 'impact');
    expect(records.slice(0, 5).map((r) => [r.outcome, r.transaction_id])).toEqual([
      ['rejected', null],
      ['rejected', null],
      ['accepted', action(910_002, '', '', '').id],
      ['duplicate', a.id],
      ['accepted', a.id],
    ]);
    expect(JSON.stringify(records)).not.toContain(token);
    expect(JSON.stringify(records)).not.toContain(awinToken);
    await expectLedgerClean(d);
  });

  it('applies the approval and the reversal the poll reports, records what only the poll knows, and counts nothing twice', async () => {
    const d = use();
    const shopper = await member(d);
    const approved = action(920_001, String(shopper.id), '250.00', '12.50');
    const reversed = action(920_002, String(shopper.id), '90.00', '4.50');
    const unseen = action(920_003, String(shopper.id), '40.00', '2.00');
    for (const a of [approved, reversed]) expect((await send(a.macros('PENDING'))).status).toBe(200);
    expect(await balanceOf(d, shopper.id, 'USD')).toEqual({ available: '0.00', pending: '8.50' });

    // Later, /Actions shows the first locked (APPROVED), the second REVERSED with its amounts
    // zeroed (as impact.com reports a reversal), and a third never notified.
    fixture.actions.push(
      approved.record('APPROVED'),
      reversed.record('REVERSED', { Amount: '0.00', Payout: '0.00', DeltaAmount: '-90.00', DeltaPayout: '-4.50' }),
      unseen.record('PENDING'),
    );
    expect(await pollOrders(d, 'impact')).toMatchObject({ seen: 3, created: 1, updated: 2, duplicate: 0, failed: 0 });
    const call = fixture.requests.filter((r) => r.path.endsWith('/Actions')).at(-1)!;
    expect(Date.parse(call.query.get('ActionDateEnd')!) - Date.parse(call.query.get('ActionDateStart')!)).toBeLessThanOrEqual(45 * 86_400_000);

    const a = await orderOf(d, 'impact', approved.id);
    expect(a).toMatchObject({ status: 'approved', source: 'postback', cashback: '6.25', cashback_entry_id: expect.any(Number) });
    // The reversal's zeroed amounts never overwrite the order's.
    expect(await orderOf(d, 'impact', reversed.id)).toMatchObject({ status: 'declined', sale_amount: '90.00', commission: '4.50', cashback_entry_id: null });
    expect(await orderOf(d, 'impact', unseen.id)).toMatchObject({
      status: 'pending',
      source: 'poll',
      member: { id: shopper.id },
      merchant_ref: 'EG-920003',
      cashback: '1.00',
    });
    const credits = () => entriesOf(d, shopper.id).then((list) => list.map((e) => [e.type, e.amount, e.order_id]));
    expect(await credits()).toEqual([['cashback', '6.25', a.id]]);
    expect(await balanceOf(d, shopper.id, 'USD')).toEqual({ available: '6.25', pending: '1.00' });

    // impact.com's own lifecycle notifications arrive after the poll, and the poll runs again: nothing moves.
    expect(await send(approved.macros('APPROVED'))).toMatchObject({ status: 200, body: { duplicate: true, order_id: a.id, status: 'approved' } });
    expect(await send(reversed.macros('REVERSED', { Amount: '0.00', Payout: '0.00' }))).toMatchObject({
      status: 200,
      body: { duplicate: true, status: 'declined' },
    });
    expect(await pollOrders(d, 'impact')).toMatchObject({ seen: 3, created: 0, updated: 0, duplicate: 3, failed: 0 });
    expect(await credits()).toEqual([['cashback', '6.25', a.id]]);
    expect(await balanceOf(d, shopper.id, 'USD')).toEqual({ available: '6.25', pending: '1.00' });

    const network = (await d.api('GET', '/networks')).body.find((n: Json) => n.id === 'impact');
    expect(network).toMatchObject({
      last_error: null,
      last_sync_result: { orders: { seen: 3, duplicate: 3 } },
      counts: { orders: await count(d, 'orders', "network = 'impact'") },
    });
    await expectLedgerClean(d);
  });
});
