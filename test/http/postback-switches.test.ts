import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Server } from '@hapi/hapi';
import { ManualClock } from '../../src/clock.js';
import { buildContext } from '../../src/context.js';
import { describeEachDialect } from '../helpers/context.js';
import { testServer } from '../helpers/http.js';
import { fakeModule, getPostback, query, shopnetDefinition, signature } from '../helpers/networks.js';

type Json = Record<string, any>;
let n = 0;
// Shared by both dialect blocks; the tests only move it forwards and read times from it.
const clock = new ManualClock(new Date());
const sale = (extra: Record<string, string> = {}) => ({ txn: `SW-${++n}`, status: 'pending', amount: '10.00', payout: '1.00', ...extra });

describeEachDialect(
  'postbacks with the defaults',
  (use) => {
    let server: Server;
    beforeAll(async () => {
      server = await testServer(use().ctx);
    });
    afterAll(() => server.stop());

    it('refuse to switch on for a custom network without a postback mapping (409 svc_postback_no_mapping)', async () => {
      const { ctx } = use();
      const { postback: _, ...definition } = shopnetDefinition();
      await ctx.networks.saveCustom('mapless', definition, 'test');
      await ctx.networks.rotatePostbackSecret('mapless', 'test');
      await expect(ctx.networks.setPostbacks('mapless', true, 'test')).rejects.toMatchObject({ code: 'svc_postback_no_mapping', status: 409 });
      expect((await ctx.networks.get('mapless')).postbacks.enabled).toBe(false);
      // Switching off needs no mapping.
      await expect(ctx.networks.setPostbacks('mapless', false, 'test')).resolves.toMatchObject({ postbacks: { enabled: false } });
    });

    it('refuse a postback mode other than token or hmac (400 svc_invalid_postback_mode) and keep the secret', async () => {
      const { ctx } = use();
      await ctx.networks.saveCustom('modenet', shopnetDefinition(), 'test');
      const before = await ctx.networks.rotatePostbackSecret('modenet', 'test');
      await expect(ctx.networks.rotatePostbackSecret('modenet', 'test', { mode: 'plain' as never })).rejects.toMatchObject({
        code: 'svc_invalid_postback_mode',
        status: 400,
        data: { field: 'mode' },
      });
      expect((await ctx.networks.get('modenet')).postbacks).toMatchObject({ mode: 'token', secret_set_at: before.network.postbacks.secret_set_at });
    });

    it('are off globally and per network, answer 403 svc_postbacks_disabled and store nothing', async () => {
      const { ctx } = use();
      expect(ctx.config.postbacks).toMatchObject({ enabled: false, retention_days: 90, signature_tolerance_seconds: 300 });
      await ctx.networks.saveCustom('offnet', shopnetDefinition(), 'test');
      const token = (await ctx.networks.rotatePostbackSecret('offnet', 'test')).secret;
      expect((await ctx.networks.get('offnet')).postbacks.enabled).toBe(false);
      // Even the network's switch on does not open the endpoint while the global one is off.
      await ctx.networks.setPostbacks('offnet', true, 'test');
      for (const network of ['offnet', 'fakenet', 'nonet']) {
        const res = await getPostback(server, network, query({ token, ...sale() }));
        expect(res.status).toBe(403);
        expect(res.body).toEqual({ code: 'svc_postbacks_disabled', message: 'Postbacks are switched off.', data: { status: 403 } });
      }
      const [{ n: stored }] = await ctx.db.select<{ n: unknown }>('SELECT COUNT(*) AS n FROM postbacks');
      expect(Number(stored)).toBe(0);
      const [{ n: orders }] = await ctx.db.select<{ n: unknown }>('SELECT COUNT(*) AS n FROM orders');
      expect(Number(orders)).toBe(0);
    });
  },
  {},
  { networkModules: [fakeModule()] },
);

describeEachDialect(
  'postback switches and credentials',
  (use) => {
    let server: Server;
    beforeAll(async () => {
      server = await testServer(use().ctx);
    });
    afterAll(() => server.stop());
    const stored = async (id: string) =>
      Number((await use().ctx.db.select<{ n: unknown }>('SELECT COUNT(*) AS n FROM postbacks WHERE network = ?', [id]))[0].n);
    let networks = 0;
    /** A network of the test's own, without a secret and switched off: no test sees another's switches. */
    const ownNetwork = async () => {
      const id = `swnet${++networks}`;
      await use().ctx.networks.saveCustom(id, shopnetDefinition(), 'test');
      return id;
    };

    it("keep a network's postbacks off until its own switch is on, storing nothing while off", async () => {
      const id = await ownNetwork();
      const { ctx } = use();
      await expect(ctx.networks.setPostbacks(id, true, 'test')).rejects.toMatchObject({ code: 'svc_postback_secret_missing', status: 409 });
      const token = (await ctx.networks.rotatePostbackSecret(id, 'test')).secret;
      expect((await getPostback(server, id, query({ token, ...sale() }))).status).toBe(403);
      expect(await stored(id)).toBe(0);
      await ctx.networks.setPostbacks(id, true, 'test');
      expect((await getPostback(server, id, query({ token, ...sale() }))).status).toBe(200);
      await ctx.networks.setPostbacks(id, false, 'test');
      expect((await getPostback(server, id, query({ token, ...sale() }))).status).toBe(403);
      expect(await stored(id)).toBe(1);
      await ctx.networks.setPostbacks(id, true, 'test');
    });

    it('see a switch-off or a rotation made by another process on the next postback, though they keep their view of the network', async () => {
      const id = await ownNetwork();
      const { ctx, config } = use();
      const token = (await ctx.networks.rotatePostbackSecret(id, 'test')).secret;
      await ctx.networks.setPostbacks(id, true, 'test');
      expect((await getPostback(server, id, query({ token, ...sale() }))).status).toBe(200);
      // Another daemon (or the CLI) on the same database changes the network.
      const other = buildContext(config, { logStream: null, networkModules: [fakeModule()] });
      try {
        await other.networks.setPostbacks(id, false, 'cli');
        const before = await stored(id);
        expect((await getPostback(server, id, query({ token, ...sale() }))).status).toBe(403);
        expect(await stored(id)).toBe(before);
        await other.networks.setPostbacks(id, true, 'cli');
        const rotated = (await other.networks.rotatePostbackSecret(id, 'cli')).secret;
        expect((await getPostback(server, id, query({ token, ...sale() }))).status).toBe(401);
        expect((await getPostback(server, id, query({ token: rotated, ...sale() }))).status).toBe(200);
        // A burst on the old view is refused as a whole once the view is stale.
        await other.networks.setPostbacks(id, false, 'cli');
        const burst = await Promise.all(Array.from({ length: 10 }, () => getPostback(server, id, query({ token: rotated, ...sale() }))));
        expect(burst.map((r) => r.status)).toEqual(Array(10).fill(403));
        await other.networks.setPostbacks(id, true, 'cli');
      } finally {
        await other.close();
      }
    });

    it('check the IP allowlist against the socket address, ignoring X-Forwarded-For without trust_proxy', async () => {
      const id = await ownNetwork();
      const { ctx } = use();
      const token = (await ctx.networks.rotatePostbackSecret(id, 'test')).secret;
      await ctx.networks.setPostbacks(id, true, 'test', { ip_allowlist: ['203.0.113.0/24', '2001:db8::/32'] });
      expect((await ctx.networks.get(id)).postbacks.ip_allowlist).toEqual(['203.0.113.0/24', '2001:db8::/32']);
      expect((await getPostback(server, id, query({ token, ...sale() }), {}, '203.0.113.7')).status).toBe(200);
      expect((await getPostback(server, id, query({ token, ...sale() }), {}, '2001:db8::5')).status).toBe(200);
      const outside = await getPostback(server, id, query({ token, ...sale() }), { 'x-forwarded-for': '203.0.113.7' }, '198.51.100.1');
      expect(outside.status).toBe(401);
      const [rec] = (await ctx.postbacks.list({ network: id, page: 1, per_page: 1 })).items;
      expect(rec).toMatchObject({ outcome: 'rejected', ip: '198.51.100.1' });
      expect(rec.message).toContain('ip_not_allowed');
      await expect(ctx.networks.setPostbacks(id, true, 'test', { ip_allowlist: ['10.0.0.0/33'] })).rejects.toMatchObject({ code: 'svc_invalid_ip_allowlist' });
      await expect(ctx.networks.setPostbacks(id, true, 'test', { ip_allowlist: ['example.com'] })).rejects.toMatchObject({ code: 'svc_invalid_ip_allowlist' });
      await ctx.networks.setPostbacks(id, true, 'test', { ip_allowlist: null });
      expect((await getPostback(server, id, query({ token, ...sale() }), {}, '198.51.100.1')).status).toBe(200);
    });

    it('stop accepting an old secret at rotation, or when its grace period ends', async () => {
      const id = await ownNetwork();
      const { ctx } = use();
      const old = (await ctx.networks.rotatePostbackSecret(id, 'test')).secret;
      await ctx.networks.setPostbacks(id, true, 'test');
      const fresh = (await ctx.networks.rotatePostbackSecret(id, 'test')).secret;
      expect(fresh).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect((await getPostback(server, id, query({ token: old, ...sale() }))).status).toBe(401);
      expect((await getPostback(server, id, query({ token: fresh, ...sale() }))).status).toBe(200);
      const next = await ctx.networks.rotatePostbackSecret(id, 'test', { grace_hours: 2 });
      expect(next.network.postbacks.previous_secret_until).toEqual(expect.any(String));
      expect((await getPostback(server, id, query({ token: fresh, ...sale() }))).status).toBe(200);
      expect((await getPostback(server, id, query({ token: next.secret, ...sale() }))).status).toBe(200);
      clock.advance(2 * 3_600_000 + 1000);
      expect((await getPostback(server, id, query({ token: fresh, ...sale() }))).status).toBe(401);
      expect((await getPostback(server, id, query({ token: next.secret, ...sale() }))).status).toBe(200);
      await expect(ctx.networks.rotatePostbackSecret(id, 'test', { grace_hours: 1000 })).rejects.toMatchObject({ code: 'svc_invalid_grace' });
    });

    it('refuse a signature outside the tolerance by the daemon clock, both ways', async () => {
      const id = await ownNetwork();
      const { ctx } = use();
      const secret = (await ctx.networks.rotatePostbackSecret(id, 'test', { mode: 'hmac' })).secret;
      await ctx.networks.setPostbacks(id, true, 'test');
      const q = query(sale());
      const at = Math.floor(clock.now().getTime() / 1000);
      expect((await getPostback(server, id, q, { 'x-postback-signature': signature(secret, q, at - 299) })).status).toBe(200);
      const q2 = query(sale());
      expect((await getPostback(server, id, q2, { 'x-postback-signature': signature(secret, q2, at + 301) })).status).toBe(401);
      // A token is no use once the network signs.
      expect((await getPostback(server, id, query({ token: secret, ...sale() }))).status).toBe(401);
      const shown = (await ctx.networks.get(id)) as Json;
      expect(JSON.stringify(shown)).not.toContain(secret);
      expect(shown.postbacks).toMatchObject({ mode: 'hmac', secret_set: true });
    });
  },
  { 'postbacks.enabled': true },
  { clock },
);

describeEachDialect(
  'the postback IP allowlist behind a trusted proxy',
  (use) => {
    let server: Server;
    beforeAll(async () => {
      server = await testServer(use().ctx);
    });
    afterAll(() => server.stop());

    it("takes the client address from the proxy's X-Forwarded-For entry", async () => {
      const { ctx } = use();
      await ctx.networks.saveCustom('proxynet', shopnetDefinition(), 'test');
      const token = (await ctx.networks.rotatePostbackSecret('proxynet', 'test')).secret;
      await ctx.networks.setPostbacks('proxynet', true, 'test', { ip_allowlist: ['203.0.113.0/24'] });
      expect((await getPostback(server, 'proxynet', query({ token, ...sale() }), { 'x-forwarded-for': '198.51.100.1, 203.0.113.9' }, '127.0.0.1')).status).toBe(
        200,
      );
      // The rightmost entry is the one the proxy appended; what the client claims left of it does not count.
      expect((await getPostback(server, 'proxynet', query({ token, ...sale() }), { 'x-forwarded-for': '203.0.113.9, 198.51.100.1' }, '127.0.0.1')).status).toBe(
        401,
      );
      expect((await getPostback(server, 'proxynet', query({ token, ...sale() }), {}, '127.0.0.1')).status).toBe(401);
    });
  },
  { 'postbacks.enabled': true, 'server.trust_proxy': true },
);
