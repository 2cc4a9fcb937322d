import { afterEach, describe, expect, it } from 'vitest';
import { createAdmitadModule } from '../../src/networks/admitad.js';
import { startAdmitadFixture, type AdmitadFixture, type AdmitadFixtureOptions } from '../fixtures/networks/admitad.js';
import { FAST, collect, expectNoSecrets, failure, testRuntime } from '../fixtures/networks/runtime.js';

let fixture: AdmitadFixture;
afterEach(() => fixture?.close());

async function start(options: AdmitadFixtureOptions = {}) {
  fixture = await startAdmitadFixture(options);
  // A fresh module per test: the token cache lives in the module instance.
  return { fixture, rt: testRuntime(fixture.settings), admitad: createAdmitadModule(FAST) };
}
const RANGE = { from: new Date('2024-01-01T00:00:00Z'), to: new Date('2024-04-10T00:00:00Z') };

describe('Admitad: authentication', () => {
  it('gets a token with a form-encoded client_credentials call and Basic auth, then reuses it', async () => {
    const { rt, admitad } = await start();
    await collect(admitad.listAdvertisers(rt));
    await admitad.getAdvertiser(rt, '6001');
    const tokenCalls = fixture.requests.filter((r) => r.path === '/token/');
    expect(tokenCalls).toHaveLength(1);
    const call = tokenCalls[0];
    expect(call.method).toBe('POST');
    expect(call.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(call.headers.authorization).toBe(`Basic ${Buffer.from(`${fixture.clientId}:${fixture.clientSecret}`).toString('base64')}`);
    const form = new URLSearchParams(call.body);
    expect(form.get('grant_type')).toBe('client_credentials');
    expect(form.get('client_id')).toBe(fixture.clientId);
    expect(form.get('scope')).toContain('advcampaigns_for_website');
    expect(form.get('client_secret')).toBeNull();
    const api = fixture.requests.filter((r) => r.path !== '/token/');
    expect(api.every((r) => /^Bearer [0-9a-f]{32}$/.test(String(r.headers.authorization)))).toBe(true);
  });

  it('renews a token that expires mid-sync (the network answers 401) and finishes the sync', async () => {
    const { rt, admitad } = await start({ campaigns: 1_200 });
    const ids: string[] = [];
    let pages = 0;
    for await (const page of admitad.listAdvertisers(rt)) {
      ids.push(...page.map((a) => a.id));
      if (++pages === 1) fixture.expireTokens();
    }
    expect(ids).toHaveLength(1_200);
    expect(new Set(ids).size).toBe(1_200);
    expect(fixture.grants).toEqual({ client_credentials: 1, refresh_token: 1 });
    expect(fixture.count('/advcampaigns/')).toBe(4); // 3 pages + the one refused call
  });

  it('renews a token the clock says has expired before using it, with the refresh_token grant', async () => {
    const { rt, admitad } = await start({ campaigns: 1_200, tokenTtlSeconds: 3_600 });
    let pages = 0;
    for await (const page of admitad.listAdvertisers(rt)) {
      void page;
      if (++pages === 1) rt.advance(3_600_000);
    }
    expect(pages).toBe(3);
    expect(fixture.grants).toEqual({ client_credentials: 1, refresh_token: 1 });
    const refresh = new URLSearchParams(fixture.requests.filter((r) => r.path === '/token/')[1].body);
    expect(refresh.get('grant_type')).toBe('refresh_token');
    expect(fixture.count('/advcampaigns/')).toBe(3); // no call was refused
  });

  it('falls back to client credentials when the refresh token is refused', async () => {
    const { rt, admitad } = await start({ campaigns: 600 });
    let pages = 0;
    for await (const page of admitad.listAdvertisers(rt)) {
      void page;
      if (++pages === 1) fixture.expireTokens({ refreshTokens: true });
    }
    expect(pages).toBe(2);
    expect(fixture.grants).toEqual({ client_credentials: 2, refresh_token: 0 });
  });

  it('answers wrong client credentials with svc_network_unauthorized and never reveals them', async () => {
    const { fixture: f } = await start({ echoCredentials: true });
    const rt = testRuntime({ ...f.settings, client_secret: 'not-the-secret-0000' });
    const err = await failure(collect(createAdmitadModule(FAST).listAdvertisers(rt)));
    expect(err).toMatchObject({ code: 'svc_network_unauthorized', upstreamStatus: 401 });
    const basic = Buffer.from(`${f.clientId}:not-the-secret-0000`).toString('base64');
    expectNoSecrets(['not-the-secret-0000', basic, f.clientSecret], err, rt.logs);
  });

  it('keeps every token and secret out of errors and logs through retries and renewals', async () => {
    const { rt, admitad } = await start({ campaigns: 1_200, echoCredentials: true });
    fixture.fault({ kind: 'status', status: 500, path: '/advcampaigns/', body: 'boom' });
    let pages = 0;
    for await (const page of admitad.listAdvertisers(rt)) {
      void page;
      if (++pages === 1) fixture.expireTokens();
    }
    fixture.expireTokens();
    fixture.fault({
      kind: 'status',
      status: 401,
      path: '/advcampaigns/',
      times: 2,
      body: `{"error":"invalid_token","token":"${fixture.issuedTokens.at(-2)}"}`,
    });
    const err = await failure(admitad.getAdvertiser(rt, '6001'));
    expect(err).toMatchObject({ code: 'svc_network_unauthorized' });
    expectNoSecrets([fixture.clientSecret, ...fixture.issuedTokens], err, rt.logs);
    expect(rt.logs.length).toBeGreaterThan(0);
  });
});

describe('Admitad: programmes', () => {
  it('pages with limit=500 and offset until _meta.count', async () => {
    const { rt, admitad } = await start({ campaigns: 1_234 });
    const pages = await collect(admitad.listAdvertisers(rt));
    expect(pages.map((p) => p.length)).toEqual([500, 500, 234]);
    const calls = fixture.requests.filter((r) => r.path.startsWith('/advcampaigns/website/'));
    expect(calls.map((c) => [c.path, c.query.get('limit'), c.query.get('offset'), c.query.get('connection_status'), c.query.get('language')])).toEqual([
      ['/advcampaigns/website/77001/', '500', '0', 'active', 'en'],
      ['/advcampaigns/website/77001/', '500', '500', 'active', 'en'],
      ['/advcampaigns/website/77001/', '500', '1000', 'active', 'en'],
    ]);
  });

  it('lists from a list position, each page with the offset of the next, when the network serves smaller pages too', async () => {
    const { rt, admitad } = await start({ campaigns: 1_234, maxPageSize: 400 });
    const pages = await collect(admitad.listAdvertisersFrom!(rt, '500'));
    expect(pages.map((p) => [p.items.length, p.items[0].id, p.next])).toEqual([
      [400, '6500', '900'],
      [334, '6900', null],
    ]);
    expect(fixture.requests.filter((r) => r.path.startsWith('/advcampaigns/website/')).map((r) => r.query.get('offset'))).toEqual(['500', '900']);
    expect((await collect(admitad.listAdvertisersFrom!(rt, null)))[0].next).toBe('400');
    expect(await failure(collect(admitad.listAdvertisersFrom!(rt, '-1')))).toMatchObject({ message: expect.stringContaining('not a position') });
  });

  it('maps a programme: region suffix, protocol-relative image, regions, commission, hold days', async () => {
    const { rt, admitad } = await start();
    const [first] = (await collect(admitad.listAdvertisers(rt))).flat();
    expect(first).toMatchObject({
      id: '6000',
      name: 'Example Store 6000',
      domain: 'store-6000.test',
      site_url: 'https://store-6000.test/',
      logo_url: 'https://cdn.admitad.com/campaign/images/6000.png',
      tracking_template: 'https://ad.admitad.com/g/1770e8d1144942e2a0e4f5f16525dc3e8/',
      commission: { type: 'percent', min: '4', max: '4', currency: null },
      categories: ['Online Stores'],
      countries: ['US'],
      status: 'active',
      validation_days: 30,
    });
  });

  it('gets one programme; an unknown one is null', async () => {
    const { rt, admitad } = await start();
    expect(await admitad.getAdvertiser(rt, '6002')).toMatchObject({ id: '6002', countries: ['US'] });
    expect(await admitad.getAdvertiser(rt, '99')).toBeNull();
  });

  it('serves 100,000 generated programmes without building them up front', async () => {
    const { rt, admitad } = await start({ advertisers: 100_000 });
    expect(fixture.campaigns.length).toBe(100_000);
    // Read a few pages from the end rather than all of them: the benchmark does the full walk.
    const res = await fetch(`${fixture.url}/advcampaigns/website/77001/?limit=500&offset=99800`, {
      headers: { Authorization: `Bearer ${await tokenFor(admitad, rt)}` },
    });
    const body = (await res.json()) as { results: { id: number }[]; _meta: { count: number } };
    expect(body._meta.count).toBe(100_000);
    expect(body.results).toHaveLength(200);
    expect(body.results.at(-1)?.id).toBe(6000 + 99_999);
  });
});

async function tokenFor(admitad: ReturnType<typeof createAdmitadModule>, rt: ReturnType<typeof testRuntime>): Promise<string> {
  await admitad.getAdvertiser(rt, '6000');
  return String(fixture.requests.at(-1)!.headers.authorization).slice('Bearer '.length);
}

describe('Admitad: actions', () => {
  it('walks windows by status_updated in dd.mm.YYYY HH:MM:SS and pages each one', async () => {
    const { rt, admitad } = await start({ actions: 1_100 });
    const all = (await collect(admitad.listTransactions(rt, RANGE))).flat();
    expect(new Set(all.map((t) => t.transaction_id)).size).toBe(1_100);
    const calls = fixture.requests.filter((r) => r.path === '/statistics/actions/');
    expect(calls[0].query.get('status_updated_start')).toBe('01.01.2024 00:00:00');
    expect(calls[0].query.get('status_updated_end')).toBe('30.03.2024 23:59:59');
    expect(calls.at(-1)!.query.get('status_updated_end')).toBe('09.04.2024 23:59:59');
    expect(calls.every((c) => c.query.get('website') === '77001' && c.query.get('limit') === '500')).toBe(true);
    // 990 actions in the first 90-day window (two pages), 110 in the last 10 days (one page).
    expect(calls.map((c) => [c.query.get('status_updated_start')!.slice(0, 10), c.query.get('offset')])).toEqual([
      ['01.01.2024', '0'],
      ['01.01.2024', '500'],
      ['31.03.2024', '0'],
    ]);
  });

  it('maps statuses (approved_but_stalled stays pending), amounts, sub id and dates', async () => {
    const { rt, admitad } = await start({ actions: 4 });
    fixture.actions[1].subid1 = '42';
    const all = (await collect(admitad.listTransactions(rt, RANGE))).flat();
    expect(all.map((t) => t.status)).toEqual(['pending', 'approved', 'declined', 'pending']);
    // subid1: the member fallback field beside a click id.
    expect(all.map((t) => t.member_ref)).toEqual([null, '42', null, null]);
    const raw = fixture.actions[0];
    expect(all[0]).toMatchObject({
      transaction_id: '807000000',
      advertiser_id: '6000',
      merchant_ref: 'A-10000',
      sub_id: 'u-000000',
      currency: 'USD',
      sale_amount: (raw.cart as number).toFixed(2),
      commission: (raw.payment as number).toFixed(2),
      event_at: new Date('2024-01-01T00:00:00Z'),
    });
  });

  it('converts amounts exactly, including a lead without a cart', async () => {
    const { rt, admitad } = await start();
    const base = { status: 'approved', currency: 'USD', _website: '77001', status_updated: '2024-03-01 09:45:22', action_date: '2024-03-01 09:45:22' };
    fixture.actions.push(
      { ...base, id: 1, cart: '12.5', payment: 12.5 },
      { ...base, id: 2, cart: 0.1 + 0.2, payment: 0.7 + 0.1 },
      { ...base, id: 3, cart: null, payment: 5, action_type: 'lead' },
      { ...base, id: 4, cart: 1500, payment: 75, currency: 'JPY' },
    );
    const all = (await collect(admitad.listTransactions(rt, RANGE))).flat();
    expect(all.map((t) => [t.sale_amount, t.commission, t.currency])).toEqual([
      ['12.50', '12.50', 'USD'],
      ['0.30', '0.80', 'USD'],
      ['0.00', '5.00', 'USD'],
      ['1500', '75', 'JPY'],
    ]);
  });

  it('the fixture accepts both documented date formats and refuses others', async () => {
    const { rt, admitad } = await start({ actions: 10 });
    const token = await tokenFor(admitad, rt);
    const get = (q: string) => fetch(`${fixture.url}/statistics/actions/?${q}`, { headers: { Authorization: `Bearer ${token}` } });
    for (const q of ['date_start=01.01.2024&date_end=31.01.2024', 'date_start=2024-01-01&date_end=2024-01-31', 'date_start=2024.01.01&date_end=2024.01.31']) {
      const body = (await (await get(q)).json()) as { _meta: { count: number } };
      expect(body._meta.count).toBe(4);
    }
    expect((await get('date_start=01/01/2024')).status).toBe(400);
  });
});

describe('Admitad: failures', () => {
  it('retries a 429 and a 500 and then succeeds', async () => {
    const { rt, admitad } = await start({ campaigns: 10 });
    fixture.fault({ kind: 'status', status: 429, retryAfter: '0', path: '/advcampaigns/' });
    fixture.fault({ kind: 'status', status: 500, path: '/advcampaigns/' });
    expect((await collect(admitad.listAdvertisers(rt))).flat()).toHaveLength(10);
  });

  it('gives up after the configured attempts; HTML and truncated JSON are bad responses', async () => {
    const { rt, admitad } = await start({ campaigns: 10 });
    fixture.fault({ kind: 'status', status: 500, times: 3, path: '/advcampaigns/' });
    expect(await failure(collect(admitad.listAdvertisers(rt)))).toMatchObject({ code: 'svc_network_unavailable', attempts: 3 });
    fixture.fault({ kind: 'html', path: '/advcampaigns/' });
    expect(await failure(collect(admitad.listAdvertisers(rt)))).toMatchObject({ code: 'svc_network_bad_response' });
    fixture.fault({ kind: 'truncated', path: '/advcampaigns/' });
    expect(await failure(collect(admitad.listAdvertisers(rt)))).toMatchObject({ code: 'svc_network_bad_response' });
    fixture.fault({ kind: 'html', path: '/token/' });
    expect(await failure(collect(createAdmitadModule(FAST).listAdvertisers(rt)))).toMatchObject({ code: 'svc_network_bad_response' });
  });
});

describe('Admitad: links, postbacks, coupons', () => {
  const admitad = createAdmitadModule(FAST);
  const template = 'https://ad.admitad.com/g/1e8d1144942e2a0e4f5f16525dc3e8/';

  it("adds subid and ulp to the programme's gotolink", () => {
    expect(
      admitad.trackingLink({}, { advertiser_id: '6115', sub_id: 'u-000123', url: 'https://example-store.test/shoes?a=1', tracking_template: template }),
    ).toBe(`${template}?subid=u-000123&ulp=https%3A%2F%2Fexample-store.test%2Fshoes%3Fa%3D1`);
    expect(admitad.trackingLink({}, { advertiser_id: '6115', sub_id: 'u-1', url: null, tracking_template: template })).toBe(`${template}?subid=u-1`);
    // Through a click: the click id in subid, the member beside it in subid1.
    expect(admitad.trackingLink({}, { advertiser_id: '6115', sub_id: 'c1kf0q9s2a7b3c4d5e6', member_ref: '42', url: null, tracking_template: template })).toBe(
      `${template}?subid=c1kf0q9s2a7b3c4d5e6&subid1=42`,
    );
    expect(() => admitad.trackingLink({}, { advertiser_id: '6115', sub_id: 'u-1', url: null })).toThrow(
      expect.objectContaining({ code: 'svc_tracking_link_unavailable', status: 409 }),
    );
    expect(() => admitad.trackingLink({}, { advertiser_id: '6115', sub_id: 'x'.repeat(51), url: null, tracking_template: template })).toThrow(
      expect.objectContaining({ code: 'svc_invalid_sub_id' }),
    );
  });

  it('parses a postback built from its template', () => {
    const values: Record<string, string> = {
      action_id: '807084960',
      status: 'Approved',
      order_id: 'A-10023',
      order_sum: '120.5',
      payment_sum: '7.23',
      currency: 'USD',
      subid: 'u-000123',
      offer_id: '6115',
      time: '2024-03-01 09:45:22',
    };
    const query = Object.fromEntries(
      new URLSearchParams(admitad.postbackTemplate!.replace(/\[\[\[(\w+)\]\]\]/g, (_, m: string) => encodeURIComponent(values[m]))),
    );
    expect(admitad.parsePostback(query, undefined)).toEqual({
      transaction_id: '807084960',
      status: 'approved',
      merchant_ref: 'A-10023',
      sale_amount: '120.5',
      commission: '7.23',
      currency: 'USD',
      sub_id: 'u-000123',
      advertiser_id: '6115',
      event_time: '2024-03-01T09:45:22.000Z',
    });
    expect(admitad.statusMap[admitad.parsePostback({ status: 'approved_but_stalled' }, undefined).status!]).toBe('pending');
    // subid1 (the member fallback) when the publisher adds it to the postback URL: no documented macro, so not in the template.
    expect(admitad.postbackTemplate).not.toContain('subid1');
    expect(admitad.parsePostback({ action_id: '1', subid: 'c1kf0q9s2a7b3c4d5e6', subid1: '42' }, undefined)).toMatchObject({
      sub_id: 'c1kf0q9s2a7b3c4d5e6',
      member_ref: '42',
    });
  });

  it('reads POST bodies, drops unreplaced macros, refuses conflicting repeats', () => {
    expect(admitad.parsePostback({}, { action_id: '1', subid: '[[[subid]]]', payment_sum: '2' })).toEqual({ transaction_id: '1', commission: '2' });
    expect(admitad.parsePostback({ action_id: '1' }, 'action_id=1')).toEqual({ transaction_id: '1' });
    expect(() => admitad.parsePostback({ action_id: '1' }, 'action_id=2')).toThrow(expect.objectContaining({ code: 'svc_postback_repeated_param' }));
  });

  it('lists coupons with "NOT REQUIRED" as no code and the landing page from ulp', async () => {
    const { rt, admitad: fresh } = await start({ coupons: 3 });
    const coupons = (await collect(fresh.coupons!(rt, { after: null, updatedSince: null }))).flatMap((p) => p.items);
    expect(coupons.map((c) => c.code)).toEqual(['SAVE0', null, 'SAVE2']);
    expect(coupons[0]).toMatchObject({ id: '551', advertiser_id: '6000', url: 'https://store-6000.test/sale', starts_at: new Date('2024-03-01T00:00:00Z') });
  });
});
