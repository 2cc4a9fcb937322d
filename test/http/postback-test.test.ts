// The test postback goes over a real socket to the daemon's own endpoint: that round trip is the point.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Server } from '@hapi/hapi';
import { createServer } from '../../src/server.js';
import { describeEachDialect } from '../helpers/context.js';
import { createActor, NS, type Actor } from '../helpers/http.js';
import { fakeModule, getPostback, query, shopnetDefinition } from '../helpers/networks.js';

type Json = Record<string, any>;

describeEachDialect(
  'test postbacks',
  (use) => {
    let server: Server;
    let admin: Actor;
    let memberId: number;

    beforeAll(async () => {
      const { ctx } = use();
      server = await createServer(ctx, { port: 0, host: '127.0.0.1' });
      await server.start();
      admin = await createActor(ctx, 'administrator');
      memberId = (await ctx.users.create({ login: 'tp-member', email: 'tp@example.com' })).id;
      await ctx.networks.saveCustom('tnet', shopnetDefinition(), 'test');
      await ctx.networks.saveCustom('hnet', shopnetDefinition({ name: 'HMAC Net' }), 'test');
      await ctx.networks.rotatePostbackSecret('hnet', 'test', { mode: 'hmac' });
      await ctx.networks.setPostbacks('hnet', true, 'test');
    });
    afterAll(async () => {
      await server.stop();
    });

    const sendTest = (id: string, payload: Json = {}) =>
      server.inject({ method: 'POST', url: `${NS}/networks/${id}/postback/test`, payload, headers: { authorization: admin.authorization } });
    const totals = async () => {
      const [{ n: orders }] = await use().ctx.db.select<{ n: unknown }>('SELECT COUNT(*) AS n FROM orders');
      const [{ n: entries }] = await use().ctx.db.select<{ n: unknown }>('SELECT COUNT(*) AS n FROM ledger_entries');
      return { orders: Number(orders), entries: Number(entries) };
    };

    it('answers 409 svc_postbacks_disabled naming each switch that is off', async () => {
      const { ctx } = use();
      await ctx.networks.rotatePostbackSecret('tnet', 'test');
      await ctx.networks.setPostbacks('tnet', false, 'test');
      const off = await sendTest('tnet');
      expect(off.statusCode).toBe(409);
      expect(off.result).toMatchObject({ code: 'svc_postbacks_disabled', data: { switches: { global: true, network: false } } });
      expect((off.result as Json).message).toContain('cashtrack networks postbacks tnet on');
      ctx.config.postbacks.enabled = false;
      try {
        await ctx.networks.setPostbacks('tnet', true, 'test');
        const global = await sendTest('tnet');
        expect(global.statusCode).toBe(409);
        expect((global.result as Json).message).toContain('CASHTRACK_POSTBACKS_ENABLED=true');
        expect((global.result as Json).message).not.toContain('cashtrack networks postbacks');
      } finally {
        ctx.config.postbacks.enabled = true;
      }
    });

    it('sends an authenticated test postback over HTTP that is stored as a test and records no order or entry', async () => {
      const before = await totals();
      const res = await sendTest('tnet', { status: 'approved', amount: '80.00', commission: '8.00', sub_id: String(memberId) });
      expect(res.statusCode).toBe(200);
      const body = res.result as Json;
      expect(body.request).toMatchObject({ method: 'GET', headers: { 'X-Postback-Signature': '[redacted]' } });
      expect(body.request.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/postback\/tnet\?/);
      expect(body.request.url).toContain('test=1');
      expect(body.request.url).toContain('status=approved');
      expect(body.response).toMatchObject({ status: 200, body: { ok: true, test: true, order_id: null, status: 'approved', duplicate: false } });
      expect(body.record).toMatchObject({
        network: 'tnet',
        test: true,
        outcome: 'accepted',
        status: 'approved',
        order_id: null,
        code: 'svc_postback_test',
        ip: '127.0.0.1',
      });
      expect(body.record.id).toBe(body.response.body.postback_id);
      expect(await totals()).toEqual(before);
      const listed = await server.inject({ url: `${NS}/networks/tnet/postbacks?test=true`, headers: { authorization: admin.authorization } });
      expect((listed.result as Json[])[0]).toMatchObject({ id: body.record.id, test: true });
    });

    it('signs with the real secret in HMAC mode, and reads a built-in module through its template', async () => {
      const { ctx } = use();
      const before = await totals();
      const hmac = await sendTest('hnet', { status: 'declined' });
      expect(hmac.result).toMatchObject({ response: { status: 200, body: { test: true, status: 'declined' } }, record: { outcome: 'accepted', test: true } });
      await ctx.networks.rotatePostbackSecret('fakenet', 'test');
      await ctx.networks.setPostbacks('fakenet', true, 'test');
      const builtin = await sendTest('fakenet', { status: 'approved', sub_id: 'tp-member' });
      expect(builtin.statusCode).toBe(200);
      expect((builtin.result as Json).request.url).toMatch(/tid=test-[0-9a-f]{12}&state=OK&sale=100\.00&comm=10\.00&cur=USD&clickref=tp-member&test=1$/);
      expect((builtin.result as Json).record).toMatchObject({ outcome: 'accepted', test: true, status: 'approved' });
      expect(await totals()).toEqual(before);
    });

    it('shows what the endpoint answered when the test is refused, e.g. by the IP allowlist', async () => {
      const { ctx } = use();
      // Its own secret: this test must not depend on another one having rotated it.
      await ctx.networks.rotatePostbackSecret('tnet', 'test');
      await ctx.networks.setPostbacks('tnet', true, 'test', { ip_allowlist: ['192.0.2.0/24'] });
      const res = await sendTest('tnet');
      expect(res.statusCode).toBe(200);
      expect(res.result).toMatchObject({ response: { status: 401, body: { code: 'svc_postback_unauthorized' } }, record: { outcome: 'rejected', test: true } });
      await ctx.networks.setPostbacks('tnet', true, 'test', { ip_allowlist: null });
    });

    it('never records an order for test=1, even with the real token', async () => {
      const { ctx } = use();
      const token = (await ctx.networks.rotatePostbackSecret('tnet', 'test')).secret;
      // Switched on here too: this test must not depend on another one having done it.
      await ctx.networks.setPostbacks('tnet', true, 'test');
      const before = await totals();
      const res = await getPostback(
        server,
        'tnet',
        query({ token, test: '1', txn: 'REAL-LOOKING-1', status: 'approved', payout: '9.00', subid: String(memberId) }),
      );
      expect(res.body).toMatchObject({ ok: true, test: true, order_id: null });
      expect(await totals()).toEqual(before);
      const bad = await getPostback(server, 'tnet', query({ token, test: '1', txn: 'X', payout: 'abc' }));
      expect(bad.body.code).toBe('svc_postback_invalid_amount');
    });

    it('refuses a test without a secret, and for an unknown network', async () => {
      await use().ctx.networks.saveCustom('nosecret', shopnetDefinition(), 'test');
      const res = await sendTest('nosecret');
      expect(res.statusCode).toBe(409);
      expect((res.result as Json).code).toMatch(/svc_postbacks_disabled|svc_postback_secret_missing/);
      expect((await sendTest('nonet')).statusCode).toBe(404);
      expect((await sendTest('tnet', { amount: '1,00' })).statusCode).toBe(400);
    });
  },
  { 'postbacks.enabled': true },
  { networkModules: [fakeModule()] },
);
