// A custom network end to end, through the daemon: defined over REST (POST /networks/{id}) with
// JSON feeds for advertisers and transactions served on 127.0.0.1, its postback parameter mapping
// and status words; its feed key set with the CLI; advertisers synced by a job; postbacks (GET
// and a JSON POST) over a real socket; then status changes picked up by polling the transactions
// feed, each counted once, with the network's own cashback rule.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FixtureServer, json, localUtc, type Rec } from '../fixtures/networks/common.js';
import { count, describeDaemon, type Daemon, type Json } from '../helpers/daemon.js';
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
const FEED_KEY = 'feed-key-7c1f0e2b9a';

/** What the network's feeds serve; tests add transactions as the network reports them. */
interface Feeds {
  programs: Rec[];
  transactions: Rec[];
}

/** The feed server: programmes under the key in the path, transactions by day with the key in a header. */
async function startFeeds(feeds: Feeds): Promise<FixtureServer> {
  return FixtureServer.start((req) => {
    if (req.path === `/v2/${FEED_KEY}/programs.json`) return json(200, { data: { programs: feeds.programs }, total: feeds.programs.length });
    if (req.path === '/v2/transactions') {
      if (req.headers.authorization !== `Token ${FEED_KEY}`) return json(401, { error: 'bad key' });
      const from = req.query.get('from') ?? '';
      const to = req.query.get('to') ?? '';
      if (!/^\d{4}-\d{2}-\d{2}$/.test(from) || !/^\d{4}-\d{2}-\d{2}$/.test(to)) return json(400, { error: 'from and to are YYYY-MM-DD' });
      return json(200, { transactions: feeds.transactions.filter((t) => String(t.created).slice(0, 10) >= from && String(t.created).slice(0, 10) <= to) });
    }
    return json(404, { error: 'not found' });
  });
}

function definition(feedUrl: string): Json {
  return {
    name: 'Shop Net',
    currency: 'EUR',
    cashback: { type: 'percent_commission', value: '40' },
    tracking_link: 'https://go.shopnet.test/c/{advertiser_id}?aff=77&subid={sub_id}&url={url}',
    settings: [{ name: 'api_key', description: 'Feed key', secret: true, required: true }],
    statuses: { open: 'pending', confirmed: 'approved', cancelled: 'declined' },
    postback: {
      params: {
        transaction_id: 'tid',
        status: 'state',
        sale_amount: 'sale',
        commission: 'payout',
        currency: 'cur',
        sub_id: 'aff_sub',
        advertiser_id: 'program',
        merchant_ref: 'order',
        event_time: 'ts',
      },
    },
    feeds: {
      advertisers: {
        url: `${feedUrl}/v2/{settings.api_key}/programs.json`,
        format: 'json',
        items: 'data.programs',
        fields: {
          id: 'id',
          name: 'name',
          site_url: 'url',
          logo_url: 'logo',
          tracking_template: 'link',
          commission_type: 'pay.type',
          commission_min: 'pay.min',
          commission_max: 'pay.max',
          categories: 'cats',
          countries: 'geo',
          status: 'state',
          validation_days: 'hold',
        },
        active_values: ['joined'],
      },
      transactions: {
        url: `${feedUrl}/v2/transactions?from={from}&to={to}`,
        format: 'json',
        items: 'transactions',
        headers: { Authorization: 'Token {settings.api_key}' },
        fields: {
          transaction_id: 'tid',
          status: 'state',
          sale_amount: 'sale',
          commission: 'payout',
          currency: 'cur',
          sub_id: 'aff_sub',
          advertiser_id: 'program',
          merchant_ref: 'order',
          clicked_at: 'clicked',
          event_at: 'created',
        },
      },
    },
  };
}

const program = (id: number, name: string, state: string): Rec => ({
  id,
  name,
  url: `https://www.shop-${id}.test/`,
  logo: `https://cdn.shopnet.test/logos/${id}.png`,
  link: `https://go.shopnet.test/c/${id}?aff=77`,
  pay: { type: 'percent', min: '4', max: '6.5' },
  cats: ['Food & Drink', 'Tea'],
  geo: 'DE,AT',
  state,
  hold: 45,
});

describeDaemon('a custom network end to end', (use) => {
  const feeds: Feeds = {
    programs: [program(501, 'Example Tea', 'joined'), program(502, 'Example Coffee', 'joined'), program(503, 'Paused Shop', 'paused')],
    transactions: [],
  };
  let server: FixtureServer;
  let token: string;
  let members = 0;

  beforeAll(async () => {
    server = await startFeeds(feeds);
    const created = await use().api('POST', '/networks/shopnet', definition(server.url));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ id: 'shopnet', kind: 'custom', enabled: true, configured: false, settings: { api_key_set: false } });
    token = await setUpNetwork(use(), 'shopnet', { stdin: { key: 'api_key', value: FEED_KEY } }, 'custom');
  });
  afterAll(() => server?.close());

  const member = async (d: Daemon) => {
    const login = `shopnet-shopper-${++members}`;
    return d.ctx.users.create({ login, email: `${login}@example.com` });
  };

  /** One sale as the network reports it: postback parameters and feed record share the mapping's names. */
  const sale = (tid: string, subId: string, amount: string, payout: string, at = new Date(Date.now() - 2 * HOUR)) => ({
    params: (state: string): Record<string, string> => ({
      tid,
      state,
      sale: amount,
      payout,
      cur: 'EUR',
      aff_sub: subId,
      program: '501',
      order: `T-${tid}`,
      ts: String(Math.floor(at.getTime() / 1000)),
    }),
    record: (state: string): Rec => ({
      tid,
      state,
      sale: amount,
      payout,
      cur: 'EUR',
      aff_sub: subId,
      program: 501,
      order: `T-${tid}`,
      clicked: localUtc(new Date(at.getTime() - HOUR), ' '),
      created: localUtc(at, ' '),
    }),
  });

  const send = (params: Record<string, string>, key = token) => use().postback('shopnet', { query: new URLSearchParams({ token: key, ...params }).toString() });
  const sendJson = (params: Record<string, string>, key = token) =>
    use().postback('shopnet', { method: 'POST', headers: { 'x-postback-token': key }, contentType: 'application/json', body: JSON.stringify(params) });

  it('shows the definition with its cashback rule and the postback template, and never the feed key', async () => {
    const network = (await use().api('GET', '/networks/shopnet')).body as Json;
    expect(network).toMatchObject({
      kind: 'custom',
      enabled: true,
      configured: true,
      currency: 'EUR',
      settings: { api_key_set: true },
      cashback_rule: { type: 'percent_commission', value: '40', source: 'network' },
      definition: { name: 'Shop Net', statuses: { confirmed: 'approved' }, cashback: { type: 'percent_commission', value: '40' } },
      postbacks: {
        enabled: true,
        url: `${use().url}/postback/shopnet`,
        template:
          'tid={transaction_id}&state={status}&sale={sale_amount}&payout={commission}&cur={currency}&aff_sub={sub_id}&program={advertiser_id}&order={merchant_ref}&ts={event_time}',
      },
    });
    expect(JSON.stringify(network)).not.toContain(FEED_KEY);
  });

  it('syncs the advertisers feed through a job, through the field mapping, and records the sync on the network', async () => {
    const d = use();
    expect(await syncAdvertisers(d, 'shopnet')).toMatchObject({ seen: 3, created: 3, updated: 0, deactivated: 0, failed: 0 });
    const list = await advertisersOf(d, 'shopnet');
    expect(list.map((a) => [a.name, a.status])).toEqual([
      ['Example Coffee', 'active'],
      ['Example Tea', 'active'],
      ['Paused Shop', 'inactive'],
    ]);
    expect(list.find((a) => a.advertiser === '501')).toMatchObject({
      module: 'shopnet',
      domain: 'shop-501.test',
      site_url: 'https://www.shop-501.test/',
      logo_url: 'https://cdn.shopnet.test/logos/501.png',
      tracking_template: 'https://go.shopnet.test/c/501?aff=77',
      commission: { type: 'percent', min: '4', max: '6.5' },
      validation_days: 45,
      categories: ['Food & Drink', 'Tea'],
      countries: ['DE', 'AT'],
    });
    const network = (await d.api('GET', '/networks')).body.find((n: Json) => n.id === 'shopnet');
    expect(network).toMatchObject({
      last_sync_at: expect.any(String),
      last_error: null,
      last_sync_result: { advertisers: { seen: 3, created: 3, failed: 0 } },
      counts: { advertisers: 2 },
    });
  });

  it('sends itself a test postback over HTTP in its mapping that records no order', async () => {
    const sent = await expectTestPostback(use(), 'shopnet', { status: 'approved', sub_id: 'test-member' });
    expect(sent.request.url).toContain('state=confirmed');
    expect(sent.record).toMatchObject({ status: 'approved' });
  });

  it('hands a member a tracking link filled from the definition, whose sub id comes back in the postback', async () => {
    const d = use();
    const shopper = await member(d);
    const link = await trackingLink(d, 'shopnet', '501', shopper.id, 'https://www.shop-501.test/tea?x=1&y=2');
    expect(`${link.parsed.origin}${link.parsed.pathname}`).toBe('https://go.shopnet.test/c/501');
    expect(Object.fromEntries(link.parsed.searchParams)).toEqual({ aff: '77', subid: String(shopper.id), url: 'https://www.shop-501.test/tea?x=1&y=2' });
    const got = await send(sale('SN-1900', link.parsed.searchParams.get('subid')!, '10.00', '1.00').params('open'));
    expect((await orderById(d, got.body.order_id)).member).toMatchObject({ id: shopper.id });
  });

  it('records postbacks by the mapping once each, refuses an unknown status word, keeps an unknown sub id unmatched and refuses a forged token', async () => {
    const d = use();
    const shopper = await member(d);
    const a = sale('SN-1001', String(shopper.id), '50.00', '5.00');
    const b = sale('SN-1002', shopper.login, '30.00', '3.00');

    const got = await send(a.params('open'));
    expect(got, JSON.stringify(got.body)).toMatchObject({ status: 200, body: { ok: true, duplicate: false, status: 'pending', order_id: expect.any(Number) } });
    expect(await orderById(d, got.body.order_id)).toMatchObject({
      network: 'shopnet',
      transaction_id: 'SN-1001',
      merchant_ref: 'T-SN-1001',
      advertiser: '501',
      member: { id: shopper.id },
      status: 'pending',
      source: 'postback',
      sale_amount: '50.00',
      commission: '5.00',
      currency: 'EUR',
      cashback: '2.00',
      cashback_rule: { type: 'percent_commission', value: '40' },
      event_at: new Date(Number(a.params('open').ts) * 1000).toISOString(),
    });
    // Posted as JSON, the sub id a login.
    const posted = await sendJson(b.params('open'));
    expect(posted, JSON.stringify(posted.body)).toMatchObject({ status: 200, body: { duplicate: false, status: 'pending' } });
    expect(await orderById(d, posted.body.order_id)).toMatchObject({ member: { id: shopper.id }, cashback: '1.20' });
    expect(await balanceOf(d, shopper.id, 'EUR')).toEqual({ available: '0.00', pending: '3.20' });

    const orders = await count(d, 'orders');
    expect(await send(a.params('open'))).toMatchObject({ status: 200, body: { duplicate: true, order_id: got.body.order_id } });
    expect(await sendJson(b.params('open'))).toMatchObject({ status: 200, body: { duplicate: true, order_id: posted.body.order_id } });
    const unknown = await send(sale('SN-1003', String(shopper.id), '10.00', '1.00').params('shipped'));
    expect(unknown).toMatchObject({ status: 400, body: { code: 'svc_postback_unknown_status', data: { postback_id: expect.any(Number) } } });
    expect(await count(d, 'orders')).toBe(orders);
    expect(await balanceOf(d, shopper.id, 'EUR')).toEqual({ available: '0.00', pending: '3.20' });

    const ghost = await send(sale('SN-1004', 'who-is-this', '20.00', '2.00').params('open'));
    expect(ghost.status).toBe(200);
    expect(await orderById(d, ghost.body.order_id)).toMatchObject({ member: null, sub_id: 'who-is-this', status: 'pending' });

    for (const sent of [
      await send(sale('SN-1005', String(shopper.id), '10.00', '1.00').params('confirmed'), 'f'.repeat(43)),
      await sendJson(sale('SN-1006', String(shopper.id), '10.00', '1.00').params('confirmed'), 'f'.repeat(43)),
    ]) {
      expect(sent).toMatchObject({ status: 401, body: { code: 'svc_postback_unauthorized' } });
    }
    expect(await count(d, 'orders')).toBe(orders + 1);
    expect(await count(d, 'orders', "network = 'shopnet' AND transaction_id IN ('SN-1003', 'SN-1005', 'SN-1006')")).toBe(0);
    const records = await postbacksOf(d, 'shopnet');
    expect(records.slice(0, 8).map((r) => [r.method, r.outcome, r.code, r.transaction_id])).toEqual([
      ['POST', 'rejected', 'svc_postback_unauthorized', null],
      ['GET', 'rejected', 'svc_postback_unauthorized', null],
      ['GET', 'accepted', null, 'SN-1004'],
      ['GET', 'rejected', 'svc_postback_unknown_status', null],
      ['POST', 'duplicate', null, 'SN-1002'],
      ['GET', 'duplicate', null, 'SN-1001'],
      ['POST', 'accepted', null, 'SN-1002'],
      ['GET', 'accepted', null, 'SN-1001'],
    ]);
    expect(JSON.stringify(records)).not.toContain(token);
    await expectLedgerClean(d);
  });

  it('applies the approval and the decline the feed reports, records what only the feed knows, and counts nothing twice', async () => {
    const d = use();
    const shopper = await member(d);
    const approved = sale('SN-2001', String(shopper.id), '100.00', '10.00');
    const declined = sale('SN-2002', String(shopper.id), '60.00', '6.00');
    const unseen = sale('SN-2003', String(shopper.id), '25.00', '2.50');
    for (const s of [approved, declined]) expect((await send(s.params('open'))).status).toBe(200);
    expect(await balanceOf(d, shopper.id, 'EUR')).toEqual({ available: '0.00', pending: '6.40' });

    feeds.transactions.push(approved.record('Confirmed'), declined.record('cancelled'), unseen.record('open'));
    expect(await pollOrders(d, 'shopnet')).toMatchObject({ seen: 3, created: 1, updated: 2, duplicate: 0, failed: 0 });
    const call = server.requests.filter((r) => r.path === '/v2/transactions').at(-1)!;
    expect(call.headers.authorization).toBe(`Token ${FEED_KEY}`);
    expect(call.query.get('from')).toMatch(/^\d{4}-\d{2}-\d{2}$/);

    const a = await orderOf(d, 'shopnet', 'SN-2001');
    expect(a).toMatchObject({ status: 'approved', source: 'postback', cashback: '4.00', cashback_entry_id: expect.any(Number) });
    expect(await orderOf(d, 'shopnet', 'SN-2002')).toMatchObject({ status: 'declined', cashback_entry_id: null });
    expect(await orderOf(d, 'shopnet', 'SN-2003')).toMatchObject({ status: 'pending', source: 'poll', member: { id: shopper.id }, cashback: '1.00' });
    const credits = () => entriesOf(d, shopper.id).then((list) => list.map((e) => [e.type, e.amount, e.order_id]));
    expect(await credits()).toEqual([['cashback', '4.00', a.id]]);
    expect(await balanceOf(d, shopper.id, 'EUR')).toEqual({ available: '4.00', pending: '1.00' });

    // The network's approval postback arrives after the poll, and the poll runs again: nothing moves.
    expect(await send(approved.params('confirmed'))).toMatchObject({ status: 200, body: { duplicate: true, order_id: a.id, status: 'approved' } });
    expect(await pollOrders(d, 'shopnet')).toMatchObject({ seen: 3, created: 0, updated: 0, duplicate: 3, failed: 0 });
    expect(await credits()).toEqual([['cashback', '4.00', a.id]]);
    expect(await balanceOf(d, shopper.id, 'EUR')).toEqual({ available: '4.00', pending: '1.00' });

    const network = (await d.api('GET', '/networks')).body.find((n: Json) => n.id === 'shopnet');
    expect(network).toMatchObject({
      last_error: null,
      last_sync_result: { orders: { seen: 3, duplicate: 3 } },
      counts: { orders: await count(d, 'orders', "network = 'shopnet'") },
    });
    await expectLedgerClean(d);
  });
});
