import { afterEach, describe, expect, it } from 'vitest';
import { createAwinModule } from '../../src/networks/awin.js';
import { startAwinFixture, type AwinFixture, type AwinFixtureOptions } from '../fixtures/networks/awin.js';
import { FAST, collect, expectNoSecrets, failure, testRuntime } from '../fixtures/networks/runtime.js';

const awin = createAwinModule(FAST);
let fixture: AwinFixture;
afterEach(() => fixture?.close());

async function start(options: AwinFixtureOptions = {}) {
  fixture = await startAwinFixture({ rateLimit: null, ...options });
  return { fixture, rt: testRuntime(fixture.settings) };
}
const RANGE = { from: new Date('2024-01-01T00:00:00Z'), to: new Date('2024-04-10T00:00:00Z') }; // 100 days

describe('Awin: programmes', () => {
  it('lists joined programmes from one bare array, with the bearer token and relationship=joined', async () => {
    const { rt } = await start({ programmes: 12 });
    const pages = await collect(awin.listAdvertisers(rt));
    const all = pages.flat();
    expect(all).toHaveLength(12);
    expect(fixture.count('/programmes')).toBe(1);
    const req = fixture.requests[0];
    expect(req.headers.authorization).toBe(`Bearer ${fixture.token}`);
    expect(req.query.get('relationship')).toBe('joined');
    expect(req.query.get('accessToken')).toBeNull();
    expect(all[0]).toMatchObject({
      id: '1001',
      name: 'Example Shop 1001',
      domain: 'shop-1001.test',
      site_url: 'https://www.shop-1001.test/',
      logo_url: 'https://ui.awin.com/logos/1001/logo.gif',
      tracking_template: 'https://www.awin1.com/awclick.php?mid=1001&id=45628',
      countries: ['GB'],
      categories: ['Retail'],
      status: 'active',
      commission: null,
    });
  });

  it('gets one programme with its commission range and validation days; an unknown one is null', async () => {
    const { rt } = await start();
    const adv = await awin.getAdvertiser(rt, '1002');
    expect(adv).toMatchObject({ id: '1002', commission: { type: 'percent', min: '2', max: '8.5', currency: null }, validation_days: 30, status: 'active' });
    expect(await awin.getAdvertiser(rt, '999999')).toBeNull();
    expect(await awin.getAdvertiser(rt, 'not-a-number')).toBeNull();
  });
});

describe('Awin: transactions', () => {
  it('walks a 100-day range in 4 windows of at most 31 days and returns each transaction once', async () => {
    const { rt } = await start({ transactions: 60 });
    const all = (await collect(awin.listTransactions(rt, RANGE))).flat();
    const calls = fixture.requests.filter((r) => r.path.includes('/transactions'));
    expect(calls).toHaveLength(4);
    for (const c of calls) {
      expect(c.query.get('timezone')).toBe('UTC');
      const span = Date.parse(`${c.query.get('endDate')}Z`) - Date.parse(`${c.query.get('startDate')}Z`);
      expect(span).toBeLessThanOrEqual(31 * 86_400_000);
    }
    expect(calls[0].query.get('startDate')).toBe('2024-01-01T00:00:00');
    expect(calls[1].query.get('startDate')).toBe('2024-02-01T00:00:00');
    expect(calls[0].query.get('endDate')).toBe('2024-01-31T23:59:59');
    expect(new Set(all.map((t) => t.transaction_id)).size).toBe(60);
  });

  it('maps statuses (deleted is a decline), amounts, sub id and dates', async () => {
    const { rt } = await start({ transactions: 6 });
    const all = (await collect(awin.listTransactions(rt, RANGE))).flat();
    expect(all.map((t) => t.status)).toEqual(['pending', 'approved', 'declined', 'pending', 'approved', 'declined']);
    const raw = fixture.transactions[0];
    expect(all[0]).toMatchObject({
      transaction_id: '900000000',
      advertiser_id: '1001',
      merchant_ref: 'ORD-5000',
      sub_id: 'u-000000',
      currency: 'GBP',
      sale_amount: (raw.saleAmount as { amount: number }).amount.toFixed(2),
      event_at: new Date(`${raw.transactionDate as string}Z`),
    });
  });

  it('converts amounts exactly: "12.5", 12.5, float noise, whole numbers', async () => {
    const { rt } = await start();
    const base = { advertiserId: 1001, commissionStatus: 'approved', clickRefs: {}, transactionDate: '2024-03-01T10:40:00', clickDate: null };
    fixture.transactions.push(
      { ...base, id: 1, saleAmount: { amount: '12.5', currency: 'GBP' }, commissionAmount: { amount: 12.5, currency: 'GBP' } },
      { ...base, id: 2, saleAmount: { amount: 0.1 + 0.2, currency: 'EUR' }, commissionAmount: { amount: 0.1 * 3, currency: 'EUR' } },
      { ...base, id: 3, saleAmount: { amount: 48.0, currency: 'GBP' }, commissionAmount: { amount: 2.4, currency: 'GBP' } },
    );
    const all = (await collect(awin.listTransactions(rt, RANGE))).flat();
    expect(all.map((t) => [t.sale_amount, t.commission, t.currency])).toEqual([
      ['12.50', '12.50', 'GBP'],
      ['0.30', '0.30', 'EUR'],
      ['48.00', '2.40', 'GBP'],
    ]);
  });

  it('skips a transaction with an unknown status and logs it as an error', async () => {
    const { rt } = await start();
    fixture.transactions.push({
      id: 5,
      commissionStatus: 'mystery',
      transactionDate: '2024-03-01T10:40:00',
      saleAmount: { amount: 1 },
      commissionAmount: { amount: 1 },
    });
    expect((await collect(awin.listTransactions(rt, RANGE))).flat()).toEqual([]);
    expect(rt.logs.find((l) => l.level === 'error')?.message).toContain('unknown status "mystery"');
  });

  it('the fixture refuses a window wider than 31 days and accepts the token as accessToken', async () => {
    await start();
    const url = `${fixture.url}/publishers/${fixture.publisherId}/transactions/?startDate=2024-01-01T00:00:00&endDate=2024-02-02T00:00:00&timezone=UTC&accessToken=${fixture.token}`;
    const res = await fetch(url);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'Bad Request', description: 'The date range between startDate and endDate must not exceed 31 days' });
    const ok = await fetch(url.replace('2024-02-02', '2024-02-01'));
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual([]);
  });
});

describe('Awin: failures', () => {
  it('retries a 500 and a 429 and then succeeds', async () => {
    const { rt } = await start({ transactions: 3 });
    fixture.fault({ kind: 'status', status: 500, path: '/transactions' });
    fixture.fault({ kind: 'status', status: 429, retryAfter: '0', path: '/transactions' });
    const all = (await collect(awin.listTransactions(rt, { from: new Date('2024-01-01T00:00:00Z'), to: new Date('2024-01-31T00:00:00Z') }))).flat();
    expect(all.length).toBeGreaterThan(0);
    expect(fixture.count('/transactions')).toBe(3);
  });

  it("waits out the fixture's 20-a-minute limit through Retry-After", async () => {
    const { rt } = await start({ rateLimit: { limit: 2, windowMs: 1_000 } });
    await awin.getAdvertiser(rt, '1001');
    await awin.getAdvertiser(rt, '1002');
    const started = Date.now();
    expect(await awin.getAdvertiser(rt, '1003')).toMatchObject({ id: '1003' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    expect(rt.logs.some((l) => l.level === 'warning' && l.message.includes('rate-limited'))).toBe(true);
  });

  it('paces itself with the client-side limiter so the fixture never has to refuse', async () => {
    // A little slack over the fixture's window: request latencies differ by a few milliseconds.
    const paced = createAwinModule({ ...FAST, rateLimits: { default: { limit: 2, perMs: 450 } } });
    const { rt } = await start({ rateLimit: { limit: 2, windowMs: 400 } });
    const started = Date.now();
    await collect(paced.listTransactions(rt, RANGE));
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    expect(rt.logs.filter((l) => l.level === 'warning')).toEqual([]);
  });

  it('gives up after the configured attempts with a typed error', async () => {
    const { rt } = await start();
    fixture.fault({ kind: 'status', status: 502, times: Infinity });
    expect(await failure(collect(awin.listAdvertisers(rt)))).toMatchObject({ code: 'svc_network_unavailable', attempts: 3, upstreamStatus: 502 });
    expect(fixture.count()).toBe(3);
  });

  it('answers HTML and truncated JSON with svc_network_bad_response', async () => {
    const { rt } = await start({ programmes: 5 });
    fixture.fault({ kind: 'html' });
    expect(await failure(collect(awin.listAdvertisers(rt)))).toMatchObject({ code: 'svc_network_bad_response' });
    fixture.fault({ kind: 'truncated' });
    expect(await failure(collect(awin.listAdvertisers(rt)))).toMatchObject({ code: 'svc_network_bad_response' });
  });

  it('answers a bad token with svc_network_unauthorized and never reveals the token', async () => {
    const { fixture: f } = await start({ echoCredentials: true });
    const rt = testRuntime({ ...f.settings, api_token: 'wrong-token-value-123' });
    fixture.fault({ kind: 'status', status: 500 });
    const err = await failure(collect(awin.listAdvertisers(rt)));
    expect(err).toMatchObject({ code: 'svc_network_unauthorized', upstreamStatus: 401 });
    expectNoSecrets(['wrong-token-value-123', f.token], err, rt.logs);
  });

  it('refuses to run unconfigured, naming the missing settings but no values', async () => {
    const err = await failure(collect(awin.listAdvertisers(testRuntime({ api_token: 'abc-secret' }))));
    expect(err).toMatchObject({ code: 'svc_network_not_configured', status: 409 });
    expect(err.message).toContain('publisher_id');
    expect(err.message).not.toContain('abc-secret');
    expect(awin.isConfigured({ api_token: 'x', publisher_id: '1' })).toBe(true);
    expect(awin.isConfigured({ api_token: ' ', publisher_id: '1' })).toBe(false);
  });
});

describe('Awin: links, postbacks, offers', () => {
  it('builds deep links with a lower-case clickref and ued last, and plain links without a target', () => {
    const settings = { publisher_id: '45628', api_token: 'x' };
    expect(awin.trackingLink(settings, { advertiser_id: '1001', sub_id: 'u-000123', url: 'https://www.example-shoes.test/trainers?size=9' })).toBe(
      'https://www.awin1.com/cread.php?awinmid=1001&awinaffid=45628&clickref=u-000123&ued=https%3A%2F%2Fwww.example-shoes.test%2Ftrainers%3Fsize%3D9',
    );
    expect(awin.trackingLink(settings, { advertiser_id: '1001', sub_id: 'u 1', url: null })).toBe(
      'https://www.awin1.com/awclick.php?mid=1001&id=45628&clickref=u%201',
    );
    expect(() => awin.trackingLink(settings, { advertiser_id: '1001', sub_id: '', url: null })).toThrow(
      expect.objectContaining({ code: 'svc_invalid_sub_id' }),
    );
    expect(() => awin.trackingLink(settings, { advertiser_id: '1001', sub_id: 'u', url: 'javascript:alert(1)' })).toThrow(
      expect.objectContaining({ code: 'svc_invalid_url' }),
    );
  });

  it('parses a GET notification built from the documented macros', () => {
    const query = Object.fromEntries(
      new URLSearchParams(
        awin.postbackTemplate!.replace(
          /!!!(\w+)!!!/g,
          (_, m: string) =>
            ({
              transactionId: '987654321',
              transactionDate: '2024-03-01 10:40:00',
              transactionAmount: '48.00',
              transactionCurrency: 'GBP',
              commission: '2.40',
              merchantId: '1001',
              clickRef: 'u-000123',
              clickRef2: '42',
            })[m] ?? '',
        ),
      ),
    );
    expect(awin.parsePostback(query, undefined)).toEqual({
      transaction_id: '987654321',
      status: 'pending',
      sale_amount: '48.00',
      commission: '2.40',
      currency: 'GBP',
      sub_id: 'u-000123',
      member_ref: '42',
      advertiser_id: '1001',
      event_time: '2024-03-01T10:40:00.000Z',
    });
  });

  it('parses a POST notification from the AwinTransactionPush form field', () => {
    const push = JSON.stringify({
      transactionId: '555',
      transactionDate: '2024-03-01 10:40:00',
      transactionAmount: '12.5',
      transactionCurrency: 'GBP',
      commission: '0.63',
      merchantId: '1001',
      clickRef: 'u-9',
      commissionGroups: [{ id: 1 }],
    });
    expect(awin.parsePostback({ token: 'x' }, { AwinTransactionPush: push })).toMatchObject({
      transaction_id: '555',
      sale_amount: '12.5',
      commission: '0.63',
      sub_id: 'u-9',
      status: 'pending',
    });
    expect(awin.parsePostback({}, `AwinTransactionPush=${encodeURIComponent(push)}`)).toMatchObject({ transaction_id: '555' });
    expect(() => awin.parsePostback({}, { AwinTransactionPush: '{oops' })).toThrow(expect.objectContaining({ code: 'svc_postback_invalid_body' }));
  });

  it('reads a push carrying product data longer than one parameter may be, and still bounds each value', () => {
    const products = Array.from({ length: 40 }, (_, i) => ({
      productId: `SKU-${i}`,
      productName: `Trail running shoe, size ${i}`,
      unitPrice: '4.00',
      quantity: '1',
      category: 'Footwear > Running',
    }));
    const push = JSON.stringify({
      transactionId: '556',
      transactionAmount: '160.00',
      transactionCurrency: 'GBP',
      commission: '8.00',
      clickRef: 'u-9',
      products,
    });
    expect(push.length).toBeGreaterThan(4096);
    expect(awin.parsePostback({}, `AwinTransactionPush=${encodeURIComponent(push)}`)).toMatchObject({
      transaction_id: '556',
      sale_amount: '160.00',
      commission: '8.00',
      sub_id: 'u-9',
    });
    const long = JSON.stringify({ transactionId: '557', commission: '1.00', clickRef: 'u'.repeat(3000) });
    expect(() => awin.parsePostback({}, { AwinTransactionPush: long })).toThrow(
      expect.objectContaining({ code: 'svc_postback_invalid_param', data: { param: 'clickRef' } }),
    );
    expect(() => awin.parsePostback({ transactionId: '558', commission: '1.00', phrase: 'x'.repeat(3000) }, undefined)).toThrow(
      expect.objectContaining({ code: 'svc_postback_invalid_param' }),
    );
  });

  it('leaves missing fields out, treats unreplaced macros as missing, and refuses conflicting repeats', () => {
    expect(awin.parsePostback({ transactionId: '1', clickRef: '!!!clickRef!!!' }, undefined)).toEqual({ transaction_id: '1', status: 'pending' });
    expect(awin.parsePostback({ transactionId: ['1', '1'] }, undefined)).toMatchObject({ transaction_id: '1' });
    expect(() => awin.parsePostback({ transactionId: '1', commission: ['1.00', '9.00'] }, undefined)).toThrow(
      expect.objectContaining({ code: 'svc_postback_repeated_param' }),
    );
  });

  it('lists offers page by page through POST + JSON', async () => {
    const { rt } = await start({ promotions: 250 });
    const coupons = (await collect(awin.coupons!(rt, { after: null, updatedSince: null }))).flatMap((p) => p.items);
    expect(coupons).toHaveLength(250);
    const posts = fixture.requests.filter((r) => r.path.endsWith('/promotions'));
    expect(posts.map((r) => [r.method, r.path, JSON.parse(r.body).filters.status, JSON.parse(r.body).pagination.page])).toEqual([
      ['POST', '/publisher/45628/promotions', 'upcoming', 1],
      ['POST', '/publisher/45628/promotions', 'active', 1],
      ['POST', '/publisher/45628/promotions', 'active', 2],
    ]);
    expect(JSON.parse(posts[0].body).filters).toMatchObject({ membership: 'joined' });
    expect(coupons[0]).toMatchObject({
      id: '556000',
      advertiser_id: '1001',
      code: 'SAVE0',
      url: 'https://www.shop-1001.test/sale',
      ends_at: new Date('2024-03-31T23:59:59.000Z'),
    });
    expect(coupons[1].code).toBeNull();
  });
});
