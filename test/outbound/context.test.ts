// The guard as the context builds it: its allow list, ports and size cap from `outbound.*`
// (CASHTRACK_OUTBOUND_*), and its refusals in the plugin log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { AllowList, isAllowEntry, refusedRange } from '../../src/outbound/index.js';
import { describeEachDialect } from '../helpers/context.js';
import { tempDir } from '../helpers/temp.js';
import { serve, type Fixture } from './fixtures.js';

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

  it('accept host names, addresses and CIDRs as allow entries, and nothing else', () => {
    expect(['intranet.example', 'localhost', '10.0.0.0/8', '::1', '[::1]', 'fd00::/8', 'feeds.example.'].every(isAllowEntry)).toBe(true);
    expect(['', ' ', 'http://x', 'a_b.example', '-x.example', '10.0.0.0/40', 'x'.repeat(254), '*.example'].some(isAllowEntry)).toBe(false);
  });

  it('match addresses of their own family only', () => {
    const list = new AllowList(['10.0.0.0/8', '::1', 'Intranet.Example.', '192.168.1.5']);
    expect(list.empty).toBe(false);
    expect(['10.9.9.9', '::1', '[::1]', '192.168.1.5'].map((a) => list.allowsAddress(a))).toEqual([true, true, true, true]);
    expect(['::ffff:10.9.9.9', '::ffff:c0a8:105', '11.0.0.1', 'garbage'].map((a) => list.allowsAddress(a))).toEqual([false, false, false, false]);
    expect(['intranet.example', 'INTRANET.example.', 'other.example', '10.1.1.1'].map((h) => list.allowsHost(h))).toEqual([true, true, false, true]);
    expect(new AllowList([' ']).empty).toBe(true);
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
