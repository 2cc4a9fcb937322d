// Each network module's `coupons()` against its fixture server in the network's documented shape:
// paging and positions (a resumed walk asks only for the rest), incremental lists, rate limits
// (429 with Retry-After) and faults (500, HTML, broken JSON).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAdmitadModule } from '../../src/networks/admitad.js';
import { createAwinModule } from '../../src/networks/awin.js';
import { discountFromText, walkPosition } from '../../src/networks/coupon-values.js';
import { checkDefinition, type CustomDefinition } from '../../src/networks/custom-definition.js';
import { customModule } from '../../src/networks/custom.js';
import { createImpactModule } from '../../src/networks/impact.js';
import type { CouponWalk, ListPage, ModuleRuntime, NetworkCoupon, NetworkModule } from '../../src/networks/types.js';
import { startAdmitadFixture, type AdmitadFixture } from '../fixtures/networks/admitad.js';
import { startAwinFixture, type AwinFixture } from '../fixtures/networks/awin.js';
import { startImpactFixture, type ImpactFixture } from '../fixtures/networks/impact.js';
import { FAST, collect, failure, testRuntime } from '../fixtures/networks/runtime.js';

const FROM_START: CouponWalk = { after: null, updatedSince: null };
const walk = async (m: NetworkModule, rt: ModuleRuntime, from: CouponWalk = FROM_START): Promise<ListPage<NetworkCoupon>[]> => collect(m.coupons!(rt, from));
const items = (pages: ListPage<NetworkCoupon>[]) => pages.flatMap((p) => p.items);
const totals = (rt: ModuleRuntime) => {
  const seen: number[] = [];
  rt.setTotal = (n) => void seen.push(n);
  return seen;
};

describe('Awin promotions', () => {
  let fixture: AwinFixture;
  afterEach(() => fixture?.close());

  it('reads the upcoming then the active list page by page, with positions and the total', async () => {
    fixture = await startAwinFixture({ rateLimit: null, promotions: 450, upcomingEvery: 10 });
    const rt = testRuntime(fixture.settings);
    const told = totals(rt);
    const awin = createAwinModule(FAST);
    const pages = await walk(awin, rt);
    expect(pages.map((p) => p.next)).toEqual(['active:1', 'active:2', 'active:3', null]);
    expect(items(pages)).toHaveLength(450);
    expect(told).toEqual([450]);
    const voucher = items(pages).find((c) => c.id === '556000')!;
    expect(voucher).toMatchObject({
      advertiser_id: '1001',
      code: 'SAVE0',
      title: '10% off',
      description: 'Use the code at checkout',
      terms: 'Min spend £50',
      discount: { type: 'percent', value: '10' },
      url: 'https://www.shop-1001.test/sale',
      regions: ['GB'],
      exclusive: false,
      starts_at: new Date('2024-03-01T00:00:00.000Z'),
      ends_at: new Date('2024-03-31T23:59:59.000Z'),
    });
    expect(voucher.tracking_url).toContain('awin1.com/cread.php');
    expect(items(pages).find((c) => c.id === '556001')!.code).toBeNull();

    // Resuming at the second active page asks for nothing before it.
    const before = fixture.requests.length;
    const rest = await walk(awin, rt, { after: 'active:2', updatedSince: null });
    expect(items(rest)).toHaveLength(450 - 45 - 200);
    expect(fixture.requests.slice(before).map((r) => JSON.parse(r.body).pagination.page)).toEqual([2, 3]);
    await expect(walk(awin, rt, { after: 'expired:1', updatedSince: null })).rejects.toThrow('not a position');
  });

  it('asks only for promotions updated since a day when refreshing incrementally', async () => {
    fixture = await startAwinFixture({ rateLimit: null, promotions: 5 });
    const rt = testRuntime(fixture.settings);
    const awin = createAwinModule(FAST);
    expect(items(await walk(awin, rt, { after: null, updatedSince: new Date('2024-02-26T13:00:00Z') }))).toHaveLength(5);
    expect(items(await walk(awin, rt, { after: null, updatedSince: new Date('2024-03-01T00:00:00Z') }))).toHaveLength(0);
    const bodies = fixture.requests.map((r) => JSON.parse(r.body).filters);
    expect(bodies.every((f) => f.membership === 'joined' && f.type === 'all')).toBe(true);
    expect(bodies.map((f) => f.updatedSince)).toContain('2024-02-26');
    expect(awin.couponsSince).toBe(true);
  });

  it('waits out a 429 with Retry-After and a 500, and refuses HTML and broken JSON', async () => {
    fixture = await startAwinFixture({ rateLimit: null, promotions: 3 });
    const rt = testRuntime(fixture.settings);
    const awin = createAwinModule(FAST);
    fixture.fault({ kind: 'status', status: 429, retryAfter: '0', path: '/promotions' });
    fixture.fault({ kind: 'status', status: 500, path: '/promotions' });
    expect(items(await walk(awin, rt))).toHaveLength(3);
    fixture.fault({ kind: 'html', path: '/promotions' });
    expect(await failure(walk(awin, rt))).toMatchObject({ code: 'svc_network_bad_response' });
    fixture.fault({ kind: 'truncated', path: '/promotions' });
    expect(await failure(walk(awin, rt))).toMatchObject({ code: 'svc_network_bad_response' });
    fixture.fault({ kind: 'status', status: 200, body: '{"data": "nope"}', path: '/promotions' });
    expect(await failure(walk(awin, rt))).toMatchObject({ code: 'svc_network_bad_response' });
  });

  it('paces its calls to the rate limit so the network never has to answer 429', async () => {
    fixture = await startAwinFixture({ rateLimit: { limit: 2, windowMs: 300, retryAfterSeconds: 1 }, promotions: 450 });
    const rt = testRuntime(fixture.settings);
    const awin = createAwinModule({ ...FAST, retry: { ...FAST.retry!, attempts: 1 }, rateLimits: { default: { limit: 2, perMs: 400 } } });
    expect(items(await walk(awin, rt))).toHaveLength(450);
    // One request per page: none was refused and retried.
    expect(fixture.requests).toHaveLength(4);
  });
});

describe('Admitad coupons', () => {
  let fixture: AdmitadFixture;
  afterEach(() => fixture?.close());

  it('pages by offset (500 at most) with _meta.count, resumes at an offset, and reads zone-less dates as UTC', async () => {
    fixture = await startAdmitadFixture({ coupons: 1_100 });
    const rt = testRuntime(fixture.settings);
    const told = totals(rt);
    const admitad = createAdmitadModule(FAST);
    const pages = await walk(admitad, rt);
    expect(pages.map((p) => [p.items.length, p.next])).toEqual([
      [500, '500'],
      [500, '1000'],
      [100, null],
    ]);
    expect(told).toEqual([1_100]);
    const calls = fixture.requests.filter((r) => r.path.startsWith('/coupons/'));
    expect(calls.map((r) => [r.query.get('limit'), r.query.get('offset')])).toEqual([
      ['500', '0'],
      ['500', '500'],
      ['500', '1000'],
    ]);
    const [first, second] = items(pages);
    expect(first).toMatchObject({
      id: '551',
      advertiser_id: '6000',
      code: 'SAVE0',
      title: '10% off sitewide',
      discount: { type: 'percent', value: '10', text: '10%' },
      regions: ['US'],
      url: 'https://store-6000.test/sale',
      starts_at: new Date('2024-03-01T00:00:00Z'),
      ends_at: new Date('2024-03-31T23:59:59Z'),
    });
    expect(second.code).toBeNull();

    const rest = await walk(admitad, rt, { after: '1000', updatedSince: null });
    expect(items(rest).map((c) => c.id)).toHaveLength(100);
    await expect(walk(admitad, rt, { after: 'page:2', updatedSince: null })).rejects.toThrow('not a position');
    expect(admitad.couponsSince).toBeFalsy();
  });

  it('retries a 429 and a 500; HTML and truncated JSON are bad responses', async () => {
    fixture = await startAdmitadFixture({ coupons: 3 });
    const rt = testRuntime(fixture.settings);
    const admitad = createAdmitadModule(FAST);
    fixture.fault({ kind: 'status', status: 429, retryAfter: '0', path: '/coupons/' });
    fixture.fault({ kind: 'status', status: 500, path: '/coupons/' });
    expect(items(await walk(admitad, rt))).toHaveLength(3);
    fixture.fault({ kind: 'status', status: 500, times: 3, path: '/coupons/' });
    expect(await failure(walk(admitad, rt))).toMatchObject({ code: 'svc_network_unavailable' });
    fixture.fault({ kind: 'html', path: '/coupons/' });
    expect(await failure(walk(admitad, rt))).toMatchObject({ code: 'svc_network_bad_response' });
    fixture.fault({ kind: 'truncated', path: '/coupons/' });
    expect(await failure(walk(admitad, rt))).toMatchObject({ code: 'svc_network_bad_response' });
  });
});

describe('impact.com coupon ads and promo codes', () => {
  let fixture: ImpactFixture;
  afterEach(() => fixture?.close());

  it('reads coupon ads then the active promo codes no ad carries, by Page up to @numpages', async () => {
    fixture = await startImpactFixture({ ads: 3, promoCodes: 6, maxPageSize: 2 });
    const rt = testRuntime(fixture.settings);
    const told = totals(rt);
    const impact = createImpactModule(FAST);
    const pages = await walk(impact, rt);
    expect(pages.map((p) => p.next)).toEqual(['ads:2', 'codes:1', 'codes:2', 'codes:3', null]);
    const all = items(pages);
    // Codes 0 (repeats ad 0's SPRING0), 2 and 5 (inactive) are left out.
    expect(all.map((c) => c.id)).toEqual(['1477107', '1477108', '1477109', 'code:880001', 'code:880003', 'code:880004']);
    expect(told).toEqual([3 + 6]);
    expect(all[0]).toMatchObject({
      code: 'SPRING0',
      url: 'https://www.gear-15745.test/sale',
      discount: { type: 'percent', value: '10' },
      starts_at: new Date('2024-03-01T08:00:00Z'),
    });
    expect(all[1]).toMatchObject({ code: null, ends_at: null });
    expect(all[3]).toMatchObject({ code: 'CODE1', title: 'Deal 1', discount: { type: 'amount', value: '15.00', currency: 'USD' }, url: null, ends_at: null });
    expect(all[5]).toMatchObject({ code: 'CODE4', discount: { type: 'percent', value: '20' }, ends_at: new Date('2024-05-01T06:59:59Z') });
    const calls = fixture.requests.map((r) => [r.path.replace(/^\/Mediapartners\/[^/]+/, ''), r.query.get('Page')]);
    expect(calls).toEqual([
      ['/Ads', '1'],
      ['/Ads', '2'],
      ['/PromoCodes', '1'],
      ['/PromoCodes', '2'],
      ['/PromoCodes', '3'],
    ]);

    const before = fixture.requests.length;
    expect(items(await walk(impact, rt, { after: 'codes:3', updatedSince: null })).map((c) => c.id)).toEqual(['code:880004']);
    expect(fixture.requests.length - before).toBe(1);
  });

  it('retries a 429 with Retry-After; a 500 that lasts and broken JSON fail the walk', async () => {
    fixture = await startImpactFixture({ ads: 2, rateLimits: { default: null, actions: null } });
    const rt = testRuntime(fixture.settings);
    const impact = createImpactModule(FAST);
    fixture.fault({ kind: 'status', status: 429, retryAfter: '0', path: '/Ads' });
    expect(items(await walk(impact, rt))).toHaveLength(2);
    fixture.fault({ kind: 'status', status: 500, times: 3, path: '/PromoCodes' });
    expect(await failure(walk(impact, rt))).toMatchObject({ code: 'svc_network_unavailable' });
    fixture.fault({ kind: 'truncated', path: '/Ads' });
    expect(await failure(walk(impact, rt))).toMatchObject({ code: 'svc_network_bad_response' });
    fixture.fault({ kind: 'html', path: '/Ads' });
    expect(await failure(walk(impact, rt))).toMatchObject({ code: 'svc_network_bad_response' });
  });
});

describe('custom network coupon feeds', () => {
  let server: http.Server;
  let base = '';
  const rows = Array.from({ length: 1_203 }, (_, i) => ({
    cid: 7000 + i,
    prog: 501,
    voucher: i % 2 ? 'No Code Needed' : `TEA${i}`,
    name: `${i % 50}% off <b>tea</b>`,
    from: '2024-03-01',
    to: '2024-03-31',
    link: 'https://example-tea.test/sale',
    kind: i % 3 ? 'percentage' : 'flat',
    worth: String(i % 50),
    geo: 'DE,AT',
  }));
  const csv = [
    'coupon_id;program_id;code;title;description;start_date;end_date;url;discount',
    '7001;501;TEA10;10% off;All loose-leaf teas;2024-03-01;2024-03-31;https://example-tea.test/sale;10%',
    '7002;501;;Free delivery;"Orders over 20; EUR";2024-03-01;;https://example-tea.test/;free shipping',
  ].join('\n');
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/coupons.json')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ result: { coupons: rows } }));
      if (url.pathname === '/coupons.csv') return void res.writeHead(200, { 'content-type': 'text/csv' }).end(csv);
      if (url.pathname === '/html') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>maintenance</html>');
      if (url.pathname === '/truncated') return void res.writeHead(200).end(JSON.stringify({ result: { coupons: rows } }).slice(0, 60));
      if (url.pathname === '/limited') return void res.writeHead(429, { 'retry-after': '30' }).end('slow down');
      res.writeHead(500).end('boom');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const definition = (path: string, format: 'json' | 'csv'): CustomDefinition =>
    checkDefinition({
      name: 'Tea Net',
      currency: 'EUR',
      statuses: { pending: 'pending' },
      feeds: {
        coupons:
          format === 'json'
            ? {
                url: `${base}${path}`,
                format,
                items: 'result.coupons',
                fields: {
                  coupon_id: 'cid',
                  advertiser_id: 'prog',
                  code: 'voucher',
                  title: 'name',
                  starts_at: 'from',
                  ends_at: 'to',
                  url: 'link',
                  discount_type: 'kind',
                  discount_value: 'worth',
                  regions: 'geo',
                },
              }
            : {
                url: `${base}${path}`,
                format,
                delimiter: ';',
                fields: {
                  coupon_id: 'coupon_id',
                  advertiser_id: 'program_id',
                  code: 'code',
                  title: 'title',
                  description: 'description',
                  starts_at: 'start_date',
                  ends_at: 'end_date',
                  url: 'url',
                  discount: 'discount',
                },
              },
      },
    } as CustomDefinition);
  const rt = () => testRuntime({});

  it('reads a JSON feed through the field map in pages with positions, and resumes past what was stored', async () => {
    const m = customModule('teanet', definition('/coupons.json', 'json'));
    const runtime = rt();
    const told = totals(runtime);
    const pages = await walk(m, runtime);
    expect(pages.map((p) => p.next)).toEqual(['500', '1000', '1203', null]);
    // Read as it streams in, like a CSV feed: its size is known only at its end (the refresh counts it then).
    expect(told).toEqual([]);
    const all = items(pages);
    expect(all).toHaveLength(1_203);
    expect(all[0]).toMatchObject({
      id: '7000',
      advertiser_id: '501',
      code: 'TEA0',
      title: '0% off <b>tea</b>',
      discount: { type: 'amount', value: '0', currency: 'EUR' },
      regions: ['DE', 'AT'],
      starts_at: new Date('2024-03-01T00:00:00Z'),
    });
    expect(all[1]).toMatchObject({ code: 'No Code Needed', discount: { type: 'percent', value: '1' } });
    const rest = items(await walk(m, runtime, { after: '1000', updatedSince: null }));
    expect(rest.map((c) => c.id)).toEqual(rows.slice(1000).map((r) => String(r.cid)));
    await expect(walk(m, runtime, { after: 'x', updatedSince: null })).rejects.toThrow('not a position');
  });

  it('reads a CSV feed with a quoted delimiter, a discount in words and an open end', async () => {
    const all = items(await walk(customModule('teanet', definition('/coupons.csv', 'csv')), rt()));
    expect(all).toEqual([
      expect.objectContaining({
        id: '7001',
        code: 'TEA10',
        discount: { type: 'percent', value: '10', currency: null, text: '10%' },
        ends_at: new Date('2024-03-31T00:00:00Z'),
      }),
      expect.objectContaining({
        id: '7002',
        code: null,
        description: 'Orders over 20; EUR',
        discount: expect.objectContaining({ type: 'free_shipping' }),
        ends_at: null,
      }),
    ]);
  });

  it('refuses a feed that answers HTML, broken JSON, 429 or 500', async () => {
    for (const [path, code] of [
      ['/html', 'svc_network_bad_response'],
      ['/truncated', 'svc_network_bad_response'],
      ['/limited', 'svc_network_rate_limited'],
      ['/boom', 'svc_network_unavailable'],
    ] as const) {
      expect(await failure(walk(customModule('teanet', definition(path, 'json')), rt()))).toMatchObject({ code });
    }
  });

  it('lists nothing without a coupons feed, and requires the coupon id, advertiser and title in the map', async () => {
    const m = customModule('teanet', checkDefinition({ name: 'Tea Net', currency: 'EUR', statuses: { pending: 'pending' } } as CustomDefinition));
    expect(items(await walk(m, rt()))).toEqual([]);
    expect(() =>
      checkDefinition({
        name: 'x',
        currency: 'EUR',
        statuses: { a: 'pending' },
        feeds: { coupons: { url: `${base}/c.json`, format: 'json', fields: { coupon_id: 'id' } } },
      } as unknown as CustomDefinition),
    ).toThrow();
  });
});

describe('discounts and positions', () => {
  it('reads a discount from the words networks use', () => {
    expect(discountFromText('10%')).toMatchObject({ type: 'percent', value: '10' });
    expect(discountFromText('Up to 12,5 % off')).toMatchObject({ type: 'percent', value: '12.5' });
    expect(discountFromText('500 RUB')).toMatchObject({ type: 'amount', value: '500', currency: 'RUB' });
    expect(discountFromText('USD 20 off')).toMatchObject({ type: 'amount', value: '20', currency: 'USD' });
    expect(discountFromText('£10 off trainers')).toMatchObject({ type: 'amount', value: '10', currency: 'GBP' });
    expect(discountFromText('15€')).toMatchObject({ type: 'amount', value: '15', currency: 'EUR' });
    expect(discountFromText('Free delivery on everything')).toMatchObject({ type: 'free_shipping', value: null });
    expect(discountFromText('7', 'EUR')).toMatchObject({ type: 'amount', value: '7', currency: 'EUR' });
    expect(discountFromText('Gift with purchase')).toMatchObject({ type: 'other', text: 'Gift with purchase' });
    expect(discountFromText('')).toBeNull();
    expect(discountFromText(null)).toBeNull();
  });

  it('refuses positions of lists a walk does not have', () => {
    expect(walkPosition(null, ['a', 'b'], 'n')).toEqual({ list: 'a', position: null });
    expect(walkPosition('b:3', ['a', 'b'], 'n')).toEqual({ list: 'b', position: '3' });
    expect(() => walkPosition('b:0', ['a', 'b'], 'n')).toThrow('not a position');
    expect(() => walkPosition('c:1', ['a', 'b'], 'n')).toThrow('not a position');
  });
});
