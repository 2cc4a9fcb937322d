// The outbound guard against fixture servers on 127.0.0.1: what it returns for an allowed
// destination (status, headers, body, redirects), and the bypass suite, every way of reaching an
// address inside that it must refuse. A request that gets through fails the suite.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceError } from '../../src/errors.js';
import { OutboundGuard, fetchBlocked } from '../../src/outbound/index.js';
import { fakeDns, refused, serve, type Fixture } from './fixtures.js';

let site: Fixture;

beforeAll(async () => {
  site = await serve((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/hello') return void res.writeHead(200, { 'content-type': 'text/plain', 'x-two': ['a', 'b'] }).end('hello');
    if (url.pathname === '/missing') return void res.writeHead(404, { 'content-type': 'text/plain' }).end('no such page');
    if (url.pathname === '/echo')
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: req.method, headers: req.headers }));
    if (url.pathname === '/to-hello') return void res.writeHead(302, { location: '/hello' }).end();
    res.writeHead(500).end();
  });
});

afterAll(async () => {
  await site.close();
});

describe('an allowed destination', () => {
  const guard = new OutboundGuard({ allow: ['127.0.0.1:*'], ports: [80, 443] });

  it('returns the status, lower-case joined headers and body of a fetch', async () => {
    const res = await guard.fetch(`${site.base}/hello`);
    expect(res).toMatchObject({ status: 200, url: `${site.base}/hello`, redirects: [] });
    expect(res.headers['content-type']).toBe('text/plain');
    expect(res.headers['x-two']).toBe('a, b');
    expect(res.body.toString()).toBe('hello');
  });

  it('returns a non-2xx answer instead of refusing it', async () => {
    const res = await guard.fetch(`${site.base}/missing`);
    expect(res.status).toBe(404);
    expect(res.body.toString()).toBe('no such page');
  });

  it('follows a redirect and reports it', async () => {
    const res = await guard.fetch(`${site.base}/to-hello`);
    expect(res).toMatchObject({ status: 200, url: `${site.base}/hello`, redirects: [`${site.base}/hello`] });
  });

  it('reaches an allowed IPv6 literal', async () => {
    const v6 = await serve((_req, res) => res.writeHead(200).end('over v6'), '::1').catch(() => null);
    if (!v6) return; // no IPv6 loopback on this machine
    try {
      const res = await new OutboundGuard({ allow: ['[::1]:*'], ports: [80, 443] }).fetch(`${v6.base}/`);
      expect(res.body.toString()).toBe('over v6');
      await refused(new OutboundGuard({ allow: ['127.0.0.1'], ports: [80, 443, v6.port] }), `${v6.base}/`, 'private_address');
      expect(v6.connections).toBe(1);
    } finally {
      await v6.close();
    }
  });

  it('answers a HEAD without a body, and sends the credentials of the URL as Basic authorization', async () => {
    const head = await guard.fetch(`${site.base}/hello`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    const withUser = site.base.replace('http://', 'http://feed%20user:p%zz@');
    const echoed = JSON.parse((await guard.fetch(`${withUser}/echo`)).body.toString());
    expect(Buffer.from(echoed.headers.authorization.replace('Basic ', ''), 'base64').toString()).toBe('feed user:p%zz');
  });

  it('throws a header with a line break back to the caller, sending nothing', async () => {
    const before = site.connections;
    await expect(guard.fetch(`${site.base}/echo`, { headers: { 'X-Key': 'a\r\nX-Injected: 1' } })).rejects.toMatchObject({ code: 'ERR_INVALID_CHAR' });
    expect(site.connections).toBe(before);
  });

  it('sends the method, headers and body the caller gives', async () => {
    const res = await guard.fetch(`${site.base}/echo`, {
      method: 'POST',
      headers: { Authorization: 'Bearer t0ken', 'Content-Type': 'text/plain' },
      body: 'ping',
    });
    const echoed = JSON.parse(res.body.toString());
    expect(echoed.method).toBe('POST');
    expect(echoed.headers).toMatchObject({ authorization: 'Bearer t0ken', 'content-type': 'text/plain', 'user-agent': 'cashtrack' });
    expect(site.requests.at(-1)?.body).toBe('ping');
  });
});

describe('the check of a URL before any fetch', () => {
  const guard = new OutboundGuard({ allow: [], ports: [80, 443] });

  it('returns the parsed URL of an acceptable address', () => {
    expect(guard.check('https://cdn.example.com/logo.png').href).toBe('https://cdn.example.com/logo.png');
  });

  it('refuses schemes other than http and https, other ports and private literals with their reasons', () => {
    const reasonOf = (url: string) => {
      try {
        guard.check(url);
      } catch (err) {
        return (err as ServiceError).data.reason;
      }
      return 'accepted';
    };
    expect(['ftp://example.com/', 'http://example.com:8080/', 'http://10.1.2.3/', 'not a url'].map(reasonOf)).toEqual([
      'scheme',
      'port',
      'private_address',
      'invalid_url',
    ]);
  });

  it('makes refusals 422 svc_fetch_blocked with the reason in data', () => {
    const err = fetchBlocked('not_an_image', 'The logo is not an image.', { type: 'text/html' });
    expect(err).toMatchObject({ code: 'svc_fetch_blocked', status: 422, data: { reason: 'not_an_image', type: 'text/html' } });
  });
});

describe('the bypass suite: addresses', () => {
  // The fixture's own port is allowed, so only the address check stands between these and a
  // server that would answer: a form that gets through shows up as a connection.
  let guard: OutboundGuard;
  beforeAll(() => {
    guard = new OutboundGuard({ allow: [], ports: [80, 443, site.port] });
  });

  const loopbackForms = [
    '127.0.0.1',
    '127.1',
    '0x7f000001',
    '2130706433',
    '0177.0.0.1',
    '0x7f.0.0.1',
    '127.000.000.001',
    '[::1]',
    '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]',
    '[::127.0.0.1]',
    '[0:0:0:0:0:ffff:127.0.0.1]',
    '[::ffff:0:127.0.0.1]',
    '[64:ff9b::127.0.0.1]',
    '[2002:7f00:1::]',
    'localhost',
    'localhost.',
    '127.0.0.1.',
    '0x7f.1',
    '[0::1]',
    '%31%32%37.0.0.1',
    '①②⑦.0.0.1',
    '127。0。0。1',
    '0',
  ];
  it.each(loopbackForms)('refuses the loopback form %s before any connection', async (host) => {
    const before = site.connections;
    await refused(guard, `http://${host}:${site.port}/hello`, 'private_address');
    expect(site.connections).toBe(before);
  });

  const insideAddresses = [
    '10.0.0.1',
    '10.255.255.255',
    '172.16.0.1',
    '172.31.255.254',
    '192.168.1.1', // RFC 1918
    '169.254.169.254',
    '169.254.0.1', // link-local, cloud metadata
    '100.64.0.1',
    '100.127.255.254', // CGNAT
    '0.0.0.0',
    '0.1.2.3', // this network
    '224.0.0.1',
    '239.255.255.250', // multicast
    '240.0.0.1',
    '255.255.255.255', // reserved, broadcast
    '192.0.0.8',
    '198.18.0.1',
    '192.0.2.1', // IETF, benchmarking, documentation
    '[::]',
    '[fc00::1]',
    '[fd12:3456:789a::1]',
    '[fe80::1]',
    '[fec0::1]',
    '[ff02::1]',
    '[ff0e::1]',
    '[::ffff:10.0.0.1]',
    '[::ffff:a9fe:a9fe]',
    '[::a9fe:a9fe]',
    '[::10.0.0.1]',
    '[::8.8.8.8]',
    '[::808:808]',
    '[64:ff9b::a9fe:a9fe]',
    '[64:ff9b:1::1]',
    '[2002:a9fe:a9fe::]',
    '[2001:0:4136:e378:8000:63bf:3fff:fdd2]',
    '[2001::1]',
    '[2001:db8::1]',
    '[100::1]',
  ];
  it.each(insideAddresses)('refuses %s', async (host) => {
    const err = await refused(guard, `http://${host}/`, 'private_address');
    expect(err.message).not.toContain(host.replace(/[[\]]/g, ''));
  });

  it('refuses the IPv4-mapped form of an address the allow list admits in its IPv4 form', async () => {
    const allowing = new OutboundGuard({ allow: ['127.0.0.1:*'], ports: [80, 443] });
    await expect(allowing.fetch(`${site.base}/hello`)).resolves.toMatchObject({ status: 200 });
    const before = site.connections;
    await refused(allowing, `http://[::ffff:127.0.0.1]:${site.port}/hello`, 'private_address');
    await refused(allowing, `http://127.0.0.2:${site.port}/hello`, 'private_address');
    expect(site.connections).toBe(before);
  });

  it('refuses an IPv6 address with a zone as not a URL', async () => {
    await refused(guard, 'http://[fe80::1%25eth0]/', 'invalid_url');
  });
});

describe('the bypass suite: names', () => {
  it('refuses a host name that resolves to a private address', async () => {
    const { lookup } = fakeDns({ 'inside.test': ['10.0.0.5'], 'meta.test': ['169.254.169.254'], 'v6.test': ['fd00::5'] });
    const guard = new OutboundGuard({ allow: [], ports: [80, 443], lookup });
    for (const host of ['inside.test', 'meta.test', 'v6.test']) await refused(guard, `http://${host}/`, 'private_address');
  });

  it('refuses a name whose answer mixes a public and a private address', async () => {
    const { lookup } = fakeDns({ 'mixed.test': [['93.184.215.14', '127.0.0.1']] });
    const guard = new OutboundGuard({ allow: [], ports: [80, 443], lookup });
    await refused(guard, 'http://mixed.test/', 'private_address');
  });

  it('refuses names resolving to IPv4-compatible and IPv4-mapped IPv6 forms of loopback', async () => {
    const { lookup } = fakeDns({ 'compat.test': ['::7f00:1'], 'mapped.test': ['::ffff:7f00:1'], 'nat64.test': ['64:ff9b::7f00:1'] });
    const guard = new OutboundGuard({ allow: [], ports: [80, 443, site.port], lookup });
    const before = site.connections;
    for (const host of ['compat.test', 'mapped.test', 'nat64.test']) await refused(guard, `http://${host}:${site.port}/hello`, 'private_address');
    expect(site.connections).toBe(before);
  });

  it('connects to the address it checked when the name rebinds to a private one afterwards', async () => {
    // The first answer is admitted (the allow list holds 127.0.0.1), every later one is 127.0.0.2,
    // where a second server listens: a guard that looked the name up again to connect reaches it.
    const second = await serve((_req, res) => res.writeHead(200).end('second'), '127.0.0.2', site.port).catch(() => null);
    const { lookup } = fakeDns({ 'rebind.test': ['127.0.0.1', '127.0.0.2'] });
    const guard = new OutboundGuard({ allow: ['127.0.0.1'], ports: [site.port], lookup });
    try {
      const res = await guard.fetch(`http://rebind.test:${site.port}/hello`);
      expect(res.body.toString()).toBe('hello');
      if (second) expect(second.connections).toBe(0);
      // And a fresh fetch sees the new answer, and refuses it.
      await refused(guard, `http://rebind.test:${site.port}/hello`, 'private_address');
      if (second) expect(second.connections).toBe(0);
    } finally {
      await second?.close();
    }
  });

  it('refuses a name that is not on the allow list on a port other than the configured ones', async () => {
    const { lookup, calls } = fakeDns({ 'fixture.test': ['127.0.0.1'] });
    const guard = new OutboundGuard({ allow: ['127.0.0.1:*'], ports: [80, 443], lookup });
    await refused(guard, `http://fixture.test:${site.port}/hello`, 'port');
    expect(calls['fixture.test']).toBeUndefined();
    const named = new OutboundGuard({ allow: [`fixture.test:${site.port}`], ports: [80, 443], lookup });
    await expect(named.fetch(`http://fixture.test:${site.port}/hello`)).resolves.toMatchObject({ status: 200 });
  });

  it('lets a name resolving into an allowed CIDR through on a configured port', async () => {
    const { lookup } = fakeDns({ 'intranet.test': ['127.0.0.1'] });
    const guard = new OutboundGuard({ allow: ['127.0.0.0/8', 'fd00::/8'], ports: [site.port], lookup });
    await expect(guard.fetch(`http://intranet.test:${site.port}/hello`)).resolves.toMatchObject({ status: 200 });
  });

  it('answers connection_failed for a name that does not resolve', async () => {
    const { lookup } = fakeDns({});
    const guard = new OutboundGuard({ allow: [], ports: [80, 443], lookup });
    const err = await refused(guard, 'http://nowhere.test/', 'connection_failed');
    expect(err.data.error).toBe('ENOTFOUND');
  });
});

describe('the bypass suite: schemes and ports', () => {
  const guard = new OutboundGuard({ allow: ['127.0.0.1:*'], ports: [80, 443] });

  it.each([
    'ftp://example.com/file',
    'file:///etc/passwd',
    'gopher://example.com:70/_stats',
    'data:text/plain,hello',
    'javascript:alert(1)',
    'ws://example.com/',
    'dict://example.com:11211/stat',
  ])('refuses the scheme of %s', async (url) => {
    await refused(guard, url, 'scheme');
  });

  it('refuses a port other than the configured ones', async () => {
    for (const url of ['http://example.com:8080/', 'https://example.com:22/', 'http://example.com:6379/']) await refused(guard, url, 'port');
  });

  it('refuses what is not a URL', async () => {
    for (const url of ['', 'example.com/logo.png', 'http://', 'http://exa mple.com/']) await refused(guard, url, 'invalid_url');
  });
});
