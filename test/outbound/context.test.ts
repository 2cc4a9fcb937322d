// The guard as the context builds it: its allow list, ports and size cap from `outbound.*`
// (CASHTRACK_OUTBOUND_*), and its refusals in the plugin log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { AllowList, isAllowEntry, OutboundGuard, refusedRange } from '../../src/outbound/index.js';
import { describeEachDialect } from '../helpers/context.js';
import { tempDir } from '../helpers/temp.js';
import { fakeDns, serve, type Fixture } from './fixtures.js';

const dataDir = () => tempDir('cashtrack-outbound-');

describe('the outbound configuration', () => {
  it('defaults to no allowed destination, ports 80 and 443 and a 2 MB cap', () => {
    const c = loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir(), CASHTRACK_ENV: 'development' }, persistSecret: false });
    expect(c.outbound).toEqual({ allow: [], ports: [80, 443], max_bytes: 2097152 });
  });

  it('reads comma-separated hosts, addresses and CIDRs, ports and the cap from the environment', () => {
    const c = loadConfig({
      env: {
        CASHTRACK_DATA_DIR: dataDir(),
        CASHTRACK_OUTBOUND_ALLOW: 'feeds.intranet.example, 10.20.0.0/16,::1,[fd00::1]',
        CASHTRACK_OUTBOUND_PORTS: '80,443,8443',
        CASHTRACK_OUTBOUND_MAX_BYTES: '4194304',
      },
      persistSecret: false,
    });
    expect(c.outbound).toEqual({ allow: ['feeds.intranet.example', '10.20.0.0/16', '::1', '[fd00::1]'], ports: [80, 443, 8443], max_bytes: 4194304 });
  });

  it.each([
    ['CASHTRACK_OUTBOUND_ALLOW', 'http://intranet.example/'],
    ['CASHTRACK_OUTBOUND_ALLOW', '10.0.0.0/33'],
    ['CASHTRACK_OUTBOUND_ALLOW', '*.example.com'],
    ['CASHTRACK_OUTBOUND_PORTS', '80,http'],
    ['CASHTRACK_OUTBOUND_PORTS', '70000'],
    ['CASHTRACK_OUTBOUND_MAX_BYTES', '12'],
  ])('refuses %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir(), [name]: value }, persistSecret: false })).toThrow(
      expect.objectContaining({ code: 'svc_invalid_config', message: expect.stringContaining(name) }),
    );
  });
});

describe('the address rules', () => {
  it('name the range of a refused address and pass a public one', () => {
    expect(['127.0.0.1', '10.1.2.3', '::7f00:1', '::ffff:7f00:1', '64:ff9b::1', 'not-an-address'].map(refusedRange)).toEqual([
      'loopback',
      'private',
      'ipv4Compatible',
      'ipv4Mapped',
      'rfc6052',
      'invalid',
    ]);
    expect(['8.8.8.8', '2606:4700:4700::1111', '[2a00:1450::1]'].map(refusedRange)).toEqual([null, null, null]);
  });

  it('accept host names, addresses and CIDRs as allow entries, with or without a port, and nothing else', () => {
    expect(
      [
        'intranet.example',
        'localhost',
        '10.0.0.0/8',
        '::1',
        '[::1]',
        'fd00::/8',
        'feeds.example.',
        'intranet.example:8080',
        'intranet.example:*',
        '10.0.0.5:8443',
        '10.0.0.0/8:8080',
        '[fd00::1]:8443',
        '[fd00::/8]:*',
      ].every(isAllowEntry),
    ).toBe(true);
    expect(
      [
        '',
        ' ',
        'http://x',
        'a_b.example',
        '-x.example',
        '10.0.0.0/40',
        'x'.repeat(254),
        '*.example',
        'host:0',
        'host:65536',
        'host:http',
        'host:',
        '[::1]:x',
      ].some(isAllowEntry),
    ).toBe(false);
  });

  it('match addresses of their own family only', () => {
    const list = new AllowList(['10.0.0.0/8', '::1', 'Intranet.Example.', '192.168.1.5'], [80, 443]);
    expect(list.empty).toBe(false);
    expect(['10.9.9.9', '::1', '[::1]', '192.168.1.5'].map((a) => list.allowsAddress(a, 80))).toEqual([true, true, true, true]);
    expect(['::ffff:10.9.9.9', '::ffff:c0a8:105', '11.0.0.1', 'garbage'].map((a) => list.allowsAddress(a, 80))).toEqual([false, false, false, false]);
    expect(['intranet.example', 'INTRANET.example.', 'other.example', '10.1.1.1'].map((h) => list.allowsHost(h, 443))).toEqual([true, true, false, true]);
    expect(new AllowList([' ']).empty).toBe(true);
  });

  it('open the port an entry names, every port for :*, and only outbound.ports for an entry without one', () => {
    const list = new AllowList(['intranet.example', 'feeds.example:8080', 'any.example:*', '10.0.0.0/8:5000', '[fd00::1]:8443', '192.168.1.5'], [80, 443]);
    // A port-less entry: the configured ports, not the host's database or admin ports.
    expect([80, 443, 22, 3306, 8080].map((p) => list.allowsHost('intranet.example', p))).toEqual([true, true, false, false, false]);
    expect([8080, 80, 8081].map((p) => list.allowsHost('feeds.example', p))).toEqual([true, false, false]);
    expect([1, 22, 65535].map((p) => list.allowsHost('any.example', p))).toEqual([true, true, true]);
    expect([5000, 80].map((p) => list.allowsAddress('10.2.3.4', p))).toEqual([true, false]);
    expect([8443, 443].map((p) => list.allowsHost('[fd00::1]', p))).toEqual([true, false]);
    expect([443, 6379].map((p) => list.allowsAddress('192.168.1.5', p))).toEqual([true, false]);
  });
});

describe('a refusal of a loopback or private address', () => {
  it('says how to allow it with CASHTRACK_OUTBOUND_ALLOW and which port to name', async () => {
    const { lookup } = fakeDns({ 'inside.test': ['10.1.2.3'] });
    const guard = new OutboundGuard({ allow: [], ports: [80, 443, 8080], lookup });
    const loopback = await guard.fetch('http://127.0.0.1:8080/feed').catch((e: Error) => e);
    expect(loopback).toMatchObject({ code: 'svc_fetch_blocked', data: { reason: 'private_address' } });
    expect((loopback as Error).message).toBe(
      'The URL points at a loopback address. To allow it, add the host to CASHTRACK_OUTBOUND_ALLOW (outbound.allow), as HOST:8080 or as HOST alone for the ports of outbound.ports.',
    );
    const v6 = (await guard.fetch('http://[::1]/').catch((e: Error) => e)) as Error;
    expect(v6.message).toContain('CASHTRACK_OUTBOUND_ALLOW (outbound.allow), as HOST:80 ');
    const named = (await guard.fetch('https://inside.test/x').catch((e: Error) => e)) as Error;
    expect(named.message).toBe(
      'The host resolves to a private address. To allow it, add the host to CASHTRACK_OUTBOUND_ALLOW (outbound.allow), as HOST:443 or as HOST alone for the ports of outbound.ports.',
    );
    // A metadata service is not worth an invitation.
    const metadata = (await guard.fetch('http://169.254.169.254/').catch((e: Error) => e)) as Error;
    expect(metadata.message).toBe('The URL points at a reserved (linkLocal) address.');
  });

  it('names CASHTRACK_OUTBOUND_PORTS and a host:port entry for a refused port', async () => {
    const err = (await new OutboundGuard({ allow: [], ports: [80, 443] }).fetch('http://feeds.example:8080/').catch((e: Error) => e)) as Error;
    expect(err.message).toContain('CASHTRACK_OUTBOUND_PORTS');
    expect(err.message).toContain('feeds.example:8080 in CASHTRACK_OUTBOUND_ALLOW');
  });
});

describe('an allow entry with a port, through the guard', () => {
  let inside: Fixture;
  beforeAll(async () => {
    inside = await serve((_req, res) => res.writeHead(200).end('inside'));
  });
  afterAll(async () => {
    await inside.close();
  });

  it('refuses every other port of an allowed host, and reaches the port the entry names', async () => {
    const { lookup } = fakeDns({ 'intranet.test': ['127.0.0.1'] });
    // Allowed by name and address without a port: only 80 and 443, so the fixture's port is refused.
    const portless = new OutboundGuard({ allow: ['intranet.test', '127.0.0.1'], ports: [80, 443], lookup });
    const before = inside.connections;
    await expect(portless.fetch(`http://intranet.test:${inside.port}/`)).rejects.toMatchObject({ code: 'svc_fetch_blocked', data: { reason: 'port' } });
    // The literal is refused for what it is, with the hint to name its port.
    const literal = portless.fetch(`${inside.base}/`);
    await expect(literal).rejects.toMatchObject({ code: 'svc_fetch_blocked', data: { reason: 'private_address' } });
    await expect(literal).rejects.toThrow(`as HOST:${inside.port} or`);
    // Another port named: still refused.
    const other = new OutboundGuard({ allow: [`intranet.test:${inside.port + 1}`], ports: [80, 443], lookup });
    await expect(other.fetch(`http://intranet.test:${inside.port}/`)).rejects.toMatchObject({ data: { reason: 'port' } });
    expect(inside.connections).toBe(before);
    const named = new OutboundGuard({ allow: [`intranet.test:${inside.port}`, `127.0.0.1:${inside.port}`], ports: [80, 443], lookup });
    for (const url of [`http://intranet.test:${inside.port}/`, `${inside.base}/`]) expect((await named.fetch(url)).body.toString()).toBe('inside');
  });
});

let site: Fixture;
beforeAll(async () => {
  site = await serve((_req, res) => res.writeHead(200).end('fixture'));
});
afterAll(async () => {
  await site.close();
});

describeEachDialect('ctx.outbound', (use) => {
  it('reaches a fixture on 127.0.0.1, which the test configuration allows', async () => {
    const { ctx } = use();
    const res = await ctx.outbound.fetch(`${site.base}/logo.png`);
    expect(res.body.toString()).toBe('fixture');
    expect(ctx.outbound.allows(site.base)).toBe(true);
    expect(ctx.outbound.allows('http://10.0.0.1/')).toBe(false);
    expect(ctx.outbound.allows('not a url')).toBe(false);
  });

  it('logs a refusal as a warning of the outbound source', async () => {
    const { ctx } = use();
    await expect(ctx.outbound.fetch('http://169.254.169.254/latest/meta-data/?token=abc123')).rejects.toMatchObject({
      code: 'svc_fetch_blocked',
      data: { reason: 'private_address' },
    });
    await ctx.logger.flush();
    const { items } = await ctx.logger.list({ source: 'outbound', page: 1, per_page: 10 });
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ level: 'warning', context: { reason: 'private_address', host: '169.254.169.254' } });
    expect(JSON.stringify(items)).not.toContain('abc123');
  });
});
