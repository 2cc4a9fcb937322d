// Every outbound path goes through the outbound guard (docs/operations.md, "Outbound requests"):
// each is pointed at a loopback catch server (on 127.0.0.1 and ::1, on a port the configuration
// allows) with an empty allow list, and nothing may arrive there. The one request that does not go
// through the guard, a test postback to the daemon's own URL, is listed there with why.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, expect, it } from 'vitest';
import { insertCoupon } from '../helpers/coupons.js';
import { describeEachDialect } from '../helpers/context.js';
import { shopnetDefinition } from '../helpers/networks.js';
import { addAdvertiser } from '../helpers/web.js';

/** A server that answers like a willing service and counts every connection it is offered. */
async function startTrap(): Promise<{ port: number; connections: () => number; close(): Promise<void> }> {
  let connections = 0;
  const servers: http.Server[] = [];
  const listen = (host: string, port: number) =>
    new Promise<http.Server>((resolve, reject) => {
      const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[],"access_token":"x"}'));
      server.on('connection', () => connections++);
      server.once('error', reject);
      server.listen(port, host, () => resolve(server));
    });
  const first = await listen('127.0.0.1', 0);
  servers.push(first);
  const port = (first.address() as AddressInfo).port;
  // The same port on ::1, where a name resolving to IPv6 loopback would land (when the host has IPv6).
  const second = await listen('::1', port).catch(() => null);
  if (second) servers.push(second);
  return {
    port,
    connections: () => connections,
    close: async () => {
      for (const s of servers) {
        s.closeAllConnections();
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
    },
  };
}

const trap = await startTrap();
afterAll(() => trap.close());
const at = (host: string, path = '/') => `http://${host}:${trap.port}${path}`;

/** Runs a network's first request (its advertiser listing, after a token for Admitad). */
async function listAdvertisers(ctx: import('../../src/context.js').Context, id: string): Promise<unknown> {
  const { module, runtime } = await ctx.networks.runtime(id);
  try {
    for await (const _page of module.listAdvertisers(runtime)) break;
    return null;
  } catch (err) {
    return err;
  }
}

describeEachDialect(
  'every outbound path, with an empty allow list',
  (use) => {
    it.each([
      ['awin', { api_token: 'awin-token-123456', publisher_id: '1', base_url: at('127.0.0.1') }],
      ['admitad', { client_id: 'c', client_secret: 'admitad-secret-123456', website_id: '1', base_url: at('localhost') }],
      ['impact', { account_sid: 'IR1', auth_token: 'impact-token-123456', base_url: at('127.0.0.1') }],
    ])("a built-in network's API (%s) at loopback receives nothing", async (id, settings) => {
      const { ctx } = use();
      const before = trap.connections();
      await ctx.networks.configure(id, settings, 'test');
      expect(await listAdvertisers(ctx, id)).toMatchObject({ code: 'svc_fetch_blocked', data: { reason: 'private_address' } });
      expect(trap.connections()).toBe(before);
    });

    it("a custom network's feed at loopback receives nothing", async () => {
      const { ctx } = use();
      const before = trap.connections();
      await ctx.networks.saveCustom(
        'trapnet',
        shopnetDefinition({ feeds: { advertisers: { url: at('localhost', '/programs.json'), format: 'json', fields: { id: 'id', name: 'name' } } } }),
        'test',
      );
      expect(await listAdvertisers(ctx, 'trapnet')).toMatchObject({ code: 'svc_fetch_blocked', data: { reason: 'private_address' } });
      expect(trap.connections()).toBe(before);
    });

    it("an advertiser's logo URL and its site's icons at loopback receive nothing", async () => {
      const { ctx } = use();
      const before = trap.connections();
      await addAdvertiser(ctx, 'awin', 'trap-logo', { logo_url: at('127.0.0.1', '/logo.png') });
      await addAdvertiser(ctx, 'awin', 'trap-site', { site_url: at('localhost', '/'), domain: 'localhost' });
      for (const advertiser of ['trap-logo', 'trap-site']) {
        await expect(ctx.logos.fetch('awin', advertiser, { force: true, actor: 'test' })).rejects.toMatchObject({ code: 'svc_logo_not_found' });
      }
      expect(trap.connections()).toBe(before);
    });

    it('a webhook delivery to loopback receives nothing', async () => {
      const { ctx } = use();
      const before = trap.connections();
      // A name, so the subscription is accepted and the refusal happens when the delivery connects.
      const hook = await ctx.webhooks.create({ url: at('localhost', '/hook'), events: ['*'] }, 'test');
      const delivery = await ctx.webhooks.test(hook.id, 'test');
      expect(delivery).toMatchObject({ status: 'dead' });
      expect(delivery.last_error).toMatch(/private_address/);
      expect(trap.connections()).toBe(before);
    });

    it('the AI provider at loopback receives nothing, not even the key', async () => {
      const { ctx } = use();
      const before = trap.connections();
      for (const host of ['127.0.0.1', 'localhost', '[::1]']) {
        await ctx.ai.configure({ base_url: at(host, '/v1'), model: 'm', api_key: 'sk-trap-key-123456' }, 'test');
        await expect(ctx.ai.rewriteCoupon(await insertCoupon(ctx), { dry_run: true }, 'test')).rejects.toMatchObject({
          code: 'svc_fetch_blocked',
          data: { reason: 'private_address' },
        });
      }
      expect(trap.connections()).toBe(before);
    });
  },
  { 'outbound.allow': [], 'outbound.ports': [80, 443, trap.port] },
);
