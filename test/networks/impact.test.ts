import { afterEach, describe, expect, it } from 'vitest';
import { createImpactModule } from '../../src/networks/impact.js';
import { impactAction, startImpactFixture, type ImpactFixture, type ImpactFixtureOptions } from '../fixtures/networks/impact.js';
import { FAST, collect, expectNoSecrets, failure, testRuntime } from '../fixtures/networks/runtime.js';

const impact = createImpactModule(FAST);
let fixture: ImpactFixture;
afterEach(() => fixture?.close());

const NOW = new Date('2024-06-01T00:00:00Z');
async function start(options: ImpactFixtureOptions = {}) {
  fixture = await startImpactFixture({ now: () => NOW, rateLimits: { actions: null, default: null }, ...options });
  return { fixture, rt: testRuntime(fixture.settings, { now: NOW }) };
}
const RANGE = { from: new Date('2024-01-01T00:00:00Z'), to: new Date('2024-04-10T00:00:00Z') }; // 100 days

describe('impact.com: campaigns', () => {
  it('lists campaigns across pages with Basic auth and Accept: application/json', async () => {
    const { rt } = await start({ campaigns: 5, maxPageSize: 2 });
    const pages = await collect(impact.listAdvertisers(rt));
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    const calls = fixture.requests;
    expect(calls.map((c) => c.query.get('Page'))).toEqual(['1', '2', '3']);
    expect(calls[0].path).toBe('/Mediapartners/IRtest123/Campaigns');
    expect(calls[0].headers.accept).toBe('application/json');
    expect(calls[0].headers.authorization).toBe(`Basic ${Buffer.from(`IRtest123:${fixture.authToken}`).toString('base64')}`);
    expect(pages[0][0]).toMatchObject({
      id: '15745',
      name: 'Example Gear 15745',
      domain: 'gear-15745.test',
      logo_url: `${fixture.url}/Mediapartners/IRtest123/Campaigns/15745/Logo`,
      tracking_template: 'https://gear-15745.sjv.io/c/1234567/88200/15745',
      countries: ['US'],
      status: 'active',
    });
  });

  it('lists campaigns from a page number, each page with the number of the next', async () => {
    const { rt } = await start({ campaigns: 5, maxPageSize: 2 });
    const pages = await collect(impact.listAdvertisersFrom!(rt, '2'));
    expect(pages.map((p) => [p.items.length, p.next])).toEqual([
      [2, '3'],
      [1, null],
    ]);
    expect(fixture.requests.map((c) => c.query.get('Page'))).toEqual(['2', '3']);
    expect(await failure(collect(impact.listAdvertisersFrom!(rt, '0')))).toMatchObject({ message: expect.stringContaining('not a page') });
  });

  it('gets one campaign with its public terms as the commission range; an unknown one is null', async () => {
    const { rt } = await start();
    expect(await impact.getAdvertiser(rt, '15746')).toMatchObject({ id: '15746', commission: { type: 'percent', min: '3', max: '8', currency: null } });
    expect(await impact.getAdvertiser(rt, '1')).toBeNull();
  });

  it('the fixture answers XML unless asked for JSON; the module reads XML as a bad response', async () => {
    const { rt } = await start();
    const auth = `Basic ${Buffer.from(`IRtest123:${fixture.authToken}`).toString('base64')}`;
    const res = await fetch(`${fixture.url}/Mediapartners/IRtest123/Campaigns`, { headers: { Authorization: auth } });
    expect(res.headers.get('content-type')).toContain('xml');
    expect(await res.text()).toContain('<ImpactRadiusResponse page="1" numpages="1"');
    fixture.fault({ kind: 'xml' });
    expect(await failure(collect(impact.listAdvertisers(rt)))).toMatchObject({
      code: 'svc_network_bad_response',
      message: expect.stringContaining('XML instead of JSON'),
    });
  });
});

describe('impact.com: actions', () => {
  it('walks a 100-day range in windows of at most 45 days by event date', async () => {
    const { rt } = await start({ actions: 50 });
    const all = (await collect(impact.listTransactions(rt, RANGE))).flat();
    expect(new Set(all.map((t) => t.transaction_id)).size).toBe(50);
    const calls = fixture.requests.filter((r) => r.path.endsWith('/Actions'));
    expect(calls.map((c) => [c.query.get('ActionDateStart'), c.query.get('ActionDateEnd')])).toEqual([
      ['2024-01-01T00:00:00Z', '2024-02-14T23:59:59Z'],
      ['2024-02-15T00:00:00Z', '2024-03-30T23:59:59Z'],
      ['2024-03-31T00:00:00Z', '2024-04-09T23:59:59Z'],
    ]);
    expect(calls.every((c) => c.query.get('PageSize') === '20000')).toBe(true);
  });

  it('maps states, dotted ids, string amounts and offset dates', async () => {
    const { rt } = await start({ actions: 5 });
    fixture.actions[1].SubId2 = '42';
    const all = (await collect(impact.listTransactions(rt, RANGE))).flat();
    expect(all.map((t) => t.status)).toEqual(['pending', 'approved', 'declined', 'pending', 'approved']);
    // SubId2: the member fallback field beside a click id ('' is none).
    expect(all.map((t) => t.member_ref)).toEqual([null, '42', null, null, null]);
    const raw = fixture.actions[0];
    expect(all[0]).toMatchObject({
      transaction_id: '15745.4636.158000',
      advertiser_id: '15745',
      merchant_ref: 'EG-40000',
      sub_id: 'u-000000',
      currency: 'USD',
      sale_amount: raw.Amount,
      commission: raw.Payout,
      event_at: new Date('2024-01-01T00:00:00Z'),
      clicked_at: new Date('2023-12-31T23:39:00Z'),
    });
    expect(all[2].commission).toBe('0.00');
  });

  it('zeroes the negative amounts a reversal shows, and keeps LOCKED and CLEARED as approvals', async () => {
    const { rt } = await start();
    const at = new Date('2024-03-01T17:31:00Z');
    fixture.actions.push(
      impactAction({ Id: '1.1.1', State: 'REVERSED', Payout: '-6.00', Amount: '-120.00', DeltaPayout: '-6.00' }, at),
      impactAction({ Id: '1.1.2', State: 'LOCKED', Payout: '12.5', Amount: '250' }, at),
      impactAction({ Id: '1.1.3', State: 'CLEARED', Payout: '0.30000000000000004', Amount: '6' }, at),
      impactAction({ Id: '1.1.4', State: 'ON_HOLD' }, at),
    );
    const all = (await collect(impact.listTransactions(rt, RANGE))).flat();
    expect(all.map((t) => [t.transaction_id, t.status, t.sale_amount, t.commission])).toEqual([
      ['1.1.1', 'declined', '0.00', '0.00'],
      ['1.1.2', 'approved', '250.00', '12.50'],
      ['1.1.3', 'approved', '6.00', '0.30'],
    ]);
    expect(rt.logs.some((l) => l.level === 'error' && l.message.includes('"ON_HOLD"'))).toBe(true);
  });

  it('pages a window and halves a window that would need more than 10 pages', async () => {
    const { rt } = await start({ actions: 25, actionsFrom: new Date('2024-01-01T00:00:00Z'), actionsTo: new Date('2024-01-11T00:00:00Z'), maxPageSize: 2 });
    const all = (await collect(impact.listTransactions(rt, { from: new Date('2024-01-01T00:00:00Z'), to: new Date('2024-01-11T00:00:00Z') }))).flat();
    expect(new Set(all.map((t) => t.transaction_id)).size).toBe(25);
    const calls = fixture.requests.filter((r) => r.path.endsWith('/Actions'));
    expect(calls.every((c) => Number(c.query.get('Page')) <= 10)).toBe(true);
    expect(new Set(calls.map((c) => c.query.get('ActionDateStart'))).size).toBeGreaterThan(1);
  });

  it('starts no earlier than 3 years back, and says so', async () => {
    const { rt } = await start({ actions: 3 });
    await collect(impact.listTransactions(rt, { from: new Date('2020-01-01T00:00:00Z'), to: new Date('2021-07-01T00:00:00Z') }));
    const first = fixture.requests.find((r) => r.path.endsWith('/Actions'))!;
    expect(Date.parse(first.query.get('ActionDateStart')!)).toBeGreaterThanOrEqual(NOW.getTime() - 3 * 365 * 86_400_000);
    expect(rt.logs.some((l) => l.level === 'warning' && l.message.includes('3 years'))).toBe(true);
  });

  it('the fixture refuses windows over 45 days, starts over 3 years back, a start without an end, page 11', async () => {
    await start();
    const auth = { Authorization: `Basic ${Buffer.from(`IRtest123:${fixture.authToken}`).toString('base64')}`, Accept: 'application/json' };
    const get = async (q: string) => {
      const res = await fetch(`${fixture.url}/Mediapartners/IRtest123/Actions?${q}`, { headers: auth });
      return [res.status, ((await res.json()) as { Message?: string }).Message];
    };
    expect(await get('ActionDateStart=2024-01-01T00:00:00Z&ActionDateEnd=2024-02-16T00:00:00Z')).toEqual([400, 'The date range cannot exceed 45 days']);
    expect(await get('ActionDateStart=2021-01-01T00:00:00Z&ActionDateEnd=2021-02-01T00:00:00Z')).toEqual([
      400,
      'The start date cannot be more than 3 years ago',
    ]);
    expect((await get('StartDate=2024-01-01T00:00:00Z'))[0]).toBe(400);
    expect((await get('ActionDateStart=2024-01-01T00:00:00Z&ActionDateEnd=2024-01-02T00:00:00Z&Page=11'))[0]).toBe(400);
    expect((await get(''))[0]).toBe(200);
  });
});

describe('impact.com: failures and limits', () => {
  it('retries 429 and 500 then succeeds', async () => {
    const { rt } = await start({ campaigns: 2 });
    fixture.fault({ kind: 'status', status: 429, retryAfter: '0' });
    fixture.fault({ kind: 'status', status: 500 });
    expect((await collect(impact.listAdvertisers(rt))).flat()).toHaveLength(2);
    expect(fixture.count()).toBe(3);
  });

  it('gives up at once with the wait when the hourly quota is spent', async () => {
    const { rt } = await start({ actions: 3, rateLimits: { actions: { limit: 1, windowMs: 3_600_000 }, default: null } });
    const err = await failure(collect(impact.listTransactions(rt, RANGE)));
    expect(err).toMatchObject({ code: 'svc_network_rate_limited', upstreamStatus: 429 });
    expect(Number(err.retryAfterMs)).toBeGreaterThan(3_000_000);
    expect(fixture.count('/Actions')).toBe(2);
  });

  it('reads X-RateLimit-Remaining-hour so the client stops before the network refuses', async () => {
    const limited = createImpactModule({ ...FAST, rateLimits: { default: { limit: 1_000, perMs: 3_600_000 }, actions: null } });
    const { rt } = await start({ campaigns: 1, rateLimits: { default: { limit: 2, windowMs: 200 }, actions: null } });
    await limited.getAdvertiser(rt, '15745'); // two calls: the campaign and its terms; 0 left
    const started = Date.now();
    await limited.getAdvertiser(rt, '15745');
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    expect(rt.logs.filter((l) => l.level === 'warning')).toEqual([]);
  });

  it('answers HTML and truncated JSON with svc_network_bad_response', async () => {
    const { rt } = await start();
    fixture.fault({ kind: 'html' });
    expect(await failure(collect(impact.listAdvertisers(rt)))).toMatchObject({ code: 'svc_network_bad_response' });
    fixture.fault({ kind: 'truncated' });
    expect(await failure(collect(impact.listAdvertisers(rt)))).toMatchObject({ code: 'svc_network_bad_response' });
  });

  it('answers a wrong auth token with svc_network_unauthorized and never reveals it', async () => {
    const { fixture: f } = await start({ echoCredentials: true });
    const rt = testRuntime({ ...f.settings, auth_token: 'bad-token-abcdef' }, { now: NOW });
    const err = await failure(collect(impact.listAdvertisers(rt)));
    expect(err).toMatchObject({ code: 'svc_network_unauthorized', upstreamStatus: 401 });
    expectNoSecrets(['bad-token-abcdef', Buffer.from('IRtest123:bad-token-abcdef').toString('base64'), f.authToken], err, rt.logs);
  });
});

describe('impact.com: links, postbacks, coupons', () => {
  const template = 'https://example-gear.sjv.io/c/1234567/88200/15745';

  it("adds subId1 and the target as u to the campaign's tracking link", () => {
    expect(
      impact.trackingLink({}, { advertiser_id: '15745', sub_id: 'u-000123', url: 'https://www.example-gear.test/tents', tracking_template: template }),
    ).toBe(`${template}?subId1=u-000123&u=https%3A%2F%2Fwww.example-gear.test%2Ftents`);
    // Through a click: the click id in subId1, the member beside it in subId2.
    expect(impact.trackingLink({}, { advertiser_id: '15745', sub_id: 'c1kf0q9s2a7b3c4d5e6', member_ref: '42', url: null, tracking_template: template })).toBe(
      `${template}?subId1=c1kf0q9s2a7b3c4d5e6&subId2=42`,
    );
    expect(() => impact.trackingLink({}, { advertiser_id: '15745', sub_id: 'u', url: null, tracking_template: null })).toThrow(
      expect.objectContaining({ code: 'svc_tracking_link_unavailable' }),
    );
  });

  it('parses an event notification built from its template', () => {
    const values: Record<string, string> = {
      ActionId: '15745.4636.158133',
      Status: 'approved',
      Amount: '120.00',
      Payout: '6.00',
      Currency: 'USD',
      SubId1: 'u-000123',
      SubId2: '42',
      CampaignId: '15745',
      OID: 'EG-40112',
      EventDate: '2024-03-01T09:31:00-08:00',
    };
    const query = Object.fromEntries(new URLSearchParams(impact.postbackTemplate!.replace(/\{(\w+)\}/g, (_, m: string) => encodeURIComponent(values[m]))));
    expect(impact.parsePostback(query, undefined)).toEqual({
      transaction_id: '15745.4636.158133',
      status: 'APPROVED',
      sale_amount: '120.00',
      commission: '6.00',
      currency: 'USD',
      sub_id: 'u-000123',
      member_ref: '42',
      advertiser_id: '15745',
      merchant_ref: 'EG-40112',
      event_time: '2024-03-01T17:31:00.000Z',
    });
    expect(impact.statusMap.APPROVED).toBe('approved');
  });

  it('reads a templated JSON body, treats {Macros} left as-is as missing, refuses conflicting repeats', () => {
    expect(impact.parsePostback({}, '{"ActionId":"1.2.3","Payout":6,"SubId1":"{SubId1}"}')).toEqual({ transaction_id: '1.2.3', commission: '6' });
    expect(() => impact.parsePostback({ ActionId: ['1', '2'] }, undefined)).toThrow(expect.objectContaining({ code: 'svc_postback_repeated_param' }));
  });

  it('lists coupon ads across pages', async () => {
    const { rt } = await start({ ads: 3, maxPageSize: 2 });
    const coupons = (await collect(impact.coupons!(rt, { after: null, updatedSince: null }))).flatMap((p) => p.items);
    expect(coupons.map((c) => c.code)).toEqual(['SPRING0', null, 'SPRING2']);
    expect(coupons[1]).toMatchObject({ ends_at: null, url: 'https://www.gear-15746.test/sale', advertiser_id: '15746' });
    expect(fixture.requests.filter((r) => r.path.endsWith('/Ads')).every((r) => r.query.get('Type') === 'COUPON')).toBe(true);
  });
});
