// A custom network's module against a feed server on 127.0.0.1: JSON and CSV feeds read through
// the definition's field mapping, settings filled into the URL, and broken feeds refused.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDefinition, fillTemplate, isLoopbackHost, type CustomDefinition } from '../../src/networks/custom-definition.js';
import { atPath } from '../../src/networks/custom-feeds.js';
import { customModule } from '../../src/networks/custom.js';
import type { ModuleRuntime, ModuleSettings } from '../../src/networks/types.js';
import { OutboundGuard } from '../../src/outbound/index.js';

const PROGRAMS = {
  data: {
    programs: [
      {
        id: 501,
        name: 'Example Tea',
        url: 'https://www.example-tea.test/shop',
        logo: '//cdn.network.test/501.png',
        pay: { min: 4, max: 6 },
        cats: ['Food & Drink'],
        geo: 'DE,AT,XX1',
        state: 'joined',
      },
      { id: 502, name: 'Paused Shop', url: 'https://paused.test', state: 'paused' },
      { name: 'No id' },
    ],
  },
};

const CSV = [
  'transaction_id;program_id;order_id;sale_amount;commission;currency;status;subid;click_date;transaction_date',
  '90001;501;T-1009;42.00;2.10;EUR;pending;u-000123;2024-03-01 09:00:00;2024-03-01 09:20:00',
  '90002;501;T-1010;18.50;0.93;EUR;rejected;u-000456;2024-02-20 12:00:00;2024-02-20 12:05:00',
  '90003;501;"T;1011";10.00;1.005;;Validated;;;2024-02-21 12:05:00',
  '90004;501;T-1012;5;0.5;EUR;weird;;;2023-01-01 00:00:00',
].join('\n');

let server: http.Server;
let base = '';
const seen: { url: string; headers: http.IncomingHttpHeaders }[] = [];
// Another origin (another port) a feed may try to send us to: it must never be asked anything.
let other: http.Server;
let otherBase = '';
const otherSeen: { url: string; headers: http.IncomingHttpHeaders }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/apikey/k%201/programs.json') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(PROGRAMS));
    if (url.pathname === '/tx.csv') return void res.writeHead(200, { 'content-type': 'text/csv' }).end(CSV);
    if (url.pathname === '/html') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>maintenance</html>');
    if (url.pathname === '/truncated') return void res.writeHead(200).end(JSON.stringify(PROGRAMS).slice(0, 40));
    if (url.pathname === '/limited') return void res.writeHead(429, { 'retry-after': '30' }).end('slow down');
    if (url.pathname.startsWith('/hop/')) return void res.writeHead(302, { location: '/apikey/k%201/programs.json' }).end();
    if (url.pathname.startsWith('/away/')) return void res.writeHead(307, { location: `${otherBase}/collect${url.search}` }).end();
    if (url.pathname.startsWith('/loop/')) return void res.writeHead(301, { location: url.pathname }).end();
    if (url.pathname.startsWith('/hang/')) return;
    res.writeHead(500).end('boom secret-key-1');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  other = http.createServer((req, res) => {
    otherSeen.push({ url: req.url ?? '', headers: req.headers });
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(PROGRAMS));
  });
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  otherBase = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  await new Promise<void>((r) => other.close(() => r()));
});

// The fixture servers listen on 127.0.0.1, which this guard allows (as config/test.json does).
const outbound = new OutboundGuard({ allow: ['127.0.0.1:*'], ports: [80, 443] });

function runtime(settings: ModuleSettings): ModuleRuntime {
  return { settings, outbound, now: () => new Date('2024-03-05T00:00:00Z'), log: () => {} };
}

async function all<T>(it: AsyncIterable<T[]>): Promise<T[]> {
  const out: T[] = [];
  for await (const page of it) out.push(...page);
  return out;
}

function definition(feeds: Record<string, unknown>) {
  return checkDefinition({
    name: 'Feed Net',
    currency: 'EUR',
    settings: [{ name: 'api_key', secret: true, required: true }, { name: 'region' }],
    statuses: { pending: 'pending', validated: 'approved', rejected: 'declined' },
    feeds,
  });
}

describe('a custom network from its definition', () => {
  const advertisers = (path = '/apikey/{settings.api_key}/programs.json', items = 'data.programs') => ({
    url: `${base}${path}`,
    format: 'json',
    items,
    headers: { 'X-Region': '{settings.region}' },
    fields: {
      id: 'id',
      name: 'name',
      site_url: 'url',
      logo_url: 'logo',
      commission_min: 'pay.min',
      commission_max: 'pay.max',
      categories: 'cats',
      countries: 'geo',
      status: 'state',
    },
    active_values: ['joined'],
  });

  it('reads advertisers from a JSON feed through the field mapping, with settings filled in', async () => {
    const m = customModule('feednet', definition({ advertisers: advertisers() }));
    expect(m.isConfigured({})).toBe(false);
    expect(m.isConfigured({ api_key: 'k 1' })).toBe(true);
    const list = await all(m.listAdvertisers(runtime({ api_key: 'k 1', region: 'eu' })));
    expect(list).toHaveLength(2);
    expect(list[0]).toMatchObject({
      id: '501',
      name: 'Example Tea',
      domain: 'example-tea.test',
      site_url: 'https://www.example-tea.test/shop',
      logo_url: 'https://cdn.network.test/501.png',
      commission: { type: 'percent', min: '4', max: '6' },
      categories: ['Food & Drink'],
      countries: ['DE', 'AT'],
      status: 'active',
    });
    expect(list[1]).toMatchObject({ id: '502', status: 'inactive' });
    expect(seen.at(-1)!.headers['x-region']).toBe('eu');
    expect(await m.getAdvertiser(runtime({ api_key: 'k 1' }), '502')).toMatchObject({ name: 'Paused Shop' });
  });

  it('reads transactions from a CSV feed inside the window, mapping status words without regard to case', async () => {
    const m = customModule(
      'feednet',
      definition({
        transactions: {
          url: `${base}/tx.csv?from={from}&to={to}`,
          format: 'csv',
          delimiter: ';',
          fields: {
            transaction_id: 'transaction_id',
            advertiser_id: 'program_id',
            merchant_ref: 'order_id',
            sale_amount: 'sale_amount',
            commission: 'commission',
            currency: 'currency',
            status: 'status',
            sub_id: 'subid',
            clicked_at: 'click_date',
            event_at: 'transaction_date',
          },
        },
      }),
    );
    const list = await all(m.listTransactions(runtime({ api_key: 'x' }), { from: new Date('2024-02-01T00:00:00Z'), to: new Date('2024-03-05T00:00:00Z') }));
    expect(seen.at(-1)!.url).toBe('/tx.csv?from=2024-02-01&to=2024-03-05');
    expect(list.map((t) => [t.transaction_id, t.status])).toEqual([
      ['90001', 'pending'],
      ['90002', 'declined'],
      ['90003', 'approved'],
    ]);
    expect(list[0]).toMatchObject({
      advertiser_id: '501',
      merchant_ref: 'T-1009',
      sale_amount: '42.00',
      commission: '2.10',
      currency: 'EUR',
      sub_id: 'u-000123',
      event_at: new Date('2024-03-01T09:20:00Z'),
    });
    expect(list[2]).toMatchObject({ merchant_ref: 'T;1011', commission: '1.01', currency: 'EUR', sub_id: null });
  });

  it.each([
    ['HTML instead of JSON', '/html', 'svc_network_bad_response'],
    ['truncated JSON', '/truncated', 'svc_network_bad_response'],
    ['a 500', '/fails', 'svc_network_unavailable'],
    ['a 429', '/limited', 'svc_network_rate_limited'],
  ])('refuses a feed that answers %s with %s, without leaking settings', async (_name, path, code) => {
    const m = customModule('feednet', definition({ advertisers: advertisers(path) }));
    const err = await all(m.listAdvertisers(runtime({ api_key: 'secret-key-1' }))).catch((e) => e);
    expect(err).toMatchObject({ code });
    expect(JSON.stringify({ ...err, message: err.message })).not.toContain('secret-key-1');
  });

  it("follows a redirect within the feed's origin, keeping its headers", async () => {
    const m = customModule('feednet', definition({ advertisers: advertisers('/hop/{settings.api_key}') }));
    const list = await all(m.listAdvertisers(runtime({ api_key: 'k 1', region: 'eu' })));
    expect(list.map((a) => a.id)).toEqual(['501', '502']);
    expect(seen.at(-1)).toMatchObject({ url: '/apikey/k%201/programs.json', headers: { 'x-region': 'eu' } });
  });

  it('refuses a redirect to another origin without sending it the secret header or URL (svc_network_redirect_refused)', async () => {
    const feed = {
      ...advertisers('/away/{settings.api_key}?k={settings.api_key}'),
      headers: { Authorization: 'Token {settings.api_key}', 'X-Api-Key': '{settings.api_key}' },
    };
    const m = customModule('feednet', definition({ advertisers: feed }));
    const err = await all(m.listAdvertisers(runtime({ api_key: 'secret-key-1' }))).catch((e) => e);
    expect(err).toMatchObject({ code: 'svc_network_redirect_refused', status: 502, data: { upstream_status: 307 } });
    expect(err.message).toContain(otherBase);
    expect(seen.at(-1)!.headers['x-api-key']).toBe('secret-key-1');
    expect(otherSeen).toEqual([]);
    expect(JSON.stringify({ ...err, message: err.message })).not.toContain('secret-key-1');
  });

  it('gives up on a feed that keeps redirecting', async () => {
    const m = customModule('feednet', definition({ advertisers: advertisers('/loop/{settings.api_key}') }));
    const before = seen.length;
    await expect(all(m.listAdvertisers(runtime({ api_key: 'k 1' })))).rejects.toMatchObject({
      code: 'svc_network_bad_response',
      message: expect.stringContaining('more than 5 times'),
    });
    expect(seen.length - before).toBe(6);
  });

  it('times out a feed that does not answer, naming it without its secret', async () => {
    const m = customModule('feednet', definition({ advertisers: advertisers('/hang/{settings.api_key}?k={settings.api_key}') }), { timeoutMs: 200 });
    const err = await all(m.listAdvertisers(runtime({ api_key: 'secret-key-1' }))).catch((e) => e);
    expect(err).toMatchObject({ code: 'svc_network_timeout', message: expect.stringContaining('/hang/{settings.api_key}?k={settings.api_key}') });
    expect(JSON.stringify({ ...err, message: err.message })).not.toContain('secret-key-1');
  });

  it('refuses to send a secret setting over plain http to a host that is not loopback, before any request (svc_network_insecure_feed)', async () => {
    // A definition stored before the rule (checkDefinition refuses it now): refused at fetch time.
    const stored = (url: string, headers?: Record<string, string>): CustomDefinition => ({
      name: 'Old Net',
      currency: 'EUR',
      settings: [{ name: 'api_key', secret: true }],
      statuses: { ok: 'approved' },
      feeds: { advertisers: { url, format: 'json', headers, fields: { id: 'id', name: 'name' } } },
    });
    for (const def of [
      stored('http://feeds.example.invalid/{settings.api_key}/a.json'),
      stored('http://203.0.113.7/a.json', { 'X-Key': '{settings.api_key}' }),
    ]) {
      const err = await all(customModule('oldnet', def).listAdvertisers(runtime({ api_key: 'secret-key-1' }))).catch((e) => e);
      expect(err).toMatchObject({ code: 'svc_network_insecure_feed', status: 409 });
      expect(err.message).not.toContain('secret-key-1');
    }
    expect(() => checkDefinition(stored('http://feeds.example.invalid/{settings.api_key}/a.json'))).toThrow(
      expect.objectContaining({ code: 'svc_invalid_network', data: { params: { 'feeds[advertisers][url]': expect.stringMatching(/https/) } } }),
    );
    for (const ok of [
      'https://feeds.example.test/{settings.api_key}/a.json',
      'http://127.0.0.1:8080/{settings.api_key}',
      'http://localhost/{settings.api_key}',
      'http://[::1]/{settings.api_key}',
      'http://feeds.example.test/public.json',
    ]) {
      expect(checkDefinition(stored(ok)).feeds?.advertisers?.url).toBe(ok);
    }
    expect(['127.0.0.1', '127.9.8.7', 'localhost', '[::1]'].map(isLoopbackHost)).toEqual([true, true, true, true]);
    expect(['10.0.0.1', '128.0.0.1', 'localhost.example.test', '[::2]', '127.0.0.1.nip.io'].map(isLoopbackHost)).toEqual([false, false, false, false, false]);
  });

  it('refuses a JSON feed whose items path holds no array', async () => {
    const m = customModule('feednet', definition({ advertisers: advertisers(undefined, 'data.nothing') }));
    await expect(all(m.listAdvertisers(runtime({ api_key: 'k 1' })))).rejects.toMatchObject({ code: 'svc_network_bad_response' });
  });

  it('yields nothing when the definition has no feeds, and parses postbacks by its mapping', async () => {
    const m = customModule(
      'plain',
      checkDefinition({
        name: 'Plain',
        currency: 'USD',
        statuses: { ok: 'approved' },
        postback: { params: { transaction_id: 'tx', commission: 'c', status: 's' } },
      }),
    );
    expect(await all(m.listAdvertisers(runtime({})))).toEqual([]);
    expect(await all(m.listTransactions(runtime({}), { from: new Date(0), to: new Date() }))).toEqual([]);
    expect(m.parsePostback({ TX: 'A-1', c: '1.00', s: 'OK', other: 'x' }, undefined)).toEqual({ transaction_id: 'A-1', commission: '1.00', status: 'OK' });
    expect(m.parsePostback({}, { tx: 'B-2', c: 2 })).toEqual({ transaction_id: 'B-2', commission: '2' });
    expect(m.postbackTemplate).toBe('tx={transaction_id}&c={commission}&s={status}');
  });

  it('builds tracking links from its template and refuses what it cannot build', () => {
    const base = { name: 'Link Net', currency: 'EUR', statuses: { ok: 'approved' } };
    const m = customModule('linknet', checkDefinition({ ...base, tracking_link: 'https://go.link.test/{advertiser_id}?s={sub_id}&u={url}' }));
    expect(m.trackingLink({}, { advertiser_id: 'a b', sub_id: '42', url: 'https://shop.test/p?x=1&y=2' })).toBe(
      'https://go.link.test/a%20b?s=42&u=https%3A%2F%2Fshop.test%2Fp%3Fx%3D1%26y%3D2',
    );
    expect(() => m.trackingLink({}, { advertiser_id: '1', sub_id: ' ', url: null })).toThrow(
      expect.objectContaining({ code: 'svc_invalid_sub_id', status: 400 }),
    );
    expect(() => m.trackingLink({}, { advertiser_id: '1', sub_id: '42', url: 'javascript:alert(1)' })).toThrow(
      expect.objectContaining({ code: 'svc_invalid_url', status: 400 }),
    );
    const none = customModule('nolinks', checkDefinition(base));
    expect(() => none.trackingLink({}, { advertiser_id: '1', sub_id: '42', url: null })).toThrow(
      expect.objectContaining({ code: 'svc_tracking_link_unavailable', status: 409 }),
    );
    const home = customModule('home', checkDefinition({ ...base, tracking_link: 'https://go.home.test/{advertiser_id}?s={sub_id}' }));
    expect(home.trackingLink({}, { advertiser_id: '1', sub_id: '42', url: null })).toBe('https://go.home.test/1?s=42');
    expect(() => home.trackingLink({}, { advertiser_id: '1', sub_id: '42', url: 'https://shop.test/' })).toThrow(
      expect.objectContaining({ code: 'svc_deeplink_unsupported', status: 409 }),
    );
  });
});

describe('paths and placeholders a definition names', () => {
  it('reads only own keys of a record along a path, never a prototype', () => {
    const record = JSON.parse('{"a": {"b": "1"}, "list": []}');
    expect(atPath(record, 'a.b')).toBe('1');
    expect(atPath(record, 'constructor')).toBeUndefined();
    expect(atPath(record, 'a.constructor.name')).toBeUndefined();
    expect(atPath(record, 'list.constructor.prototype')).toBeUndefined();
    expect(atPath(record, '__proto__.toString')).toBeUndefined();
  });

  it('fills only placeholders with a value of their own', () => {
    expect(fillTemplate('https://x.test/?a={constructor}&b={toString}&c={sub_id}', { sub_id: '7' })).toBe('https://x.test/?a={constructor}&b={toString}&c=7');
  });
});
