// The postback endpoint and the test-postback route when something is wrong on our side: a
// module that cannot read a postback, a secret the daemon can no longer decrypt, a daemon that
// does not know or cannot reach its own URL, a module without a postback template.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Server } from '@hapi/hapi';
import { buildContext, type Context } from '../../src/context.js';
import type { NetworkModule } from '../../src/networks/types.js';
import { describeEachDialect, testConfig } from '../helpers/context.js';
import { createActor, NS, testServer, type Actor } from '../helpers/http.js';
import { fakeModule, getPostback, query, shopnetDefinition, signature } from '../helpers/networks.js';

type Json = Record<string, any>;

/** A built-in module double whose parser fails on anything (a bug in a module, not bad input). */
const brokenModule: NetworkModule = {
  ...fakeModule('brokennet'),
  parsePostback() {
    throw new TypeError('Cannot read properties of undefined');
  },
};
/** A built-in module double that gives no postback template. */
const bareModule: NetworkModule = { ...fakeModule('barenet'), postbackTemplate: undefined };
/** A built-in module double whose postbacks carry no status. */
const statuslessModule: NetworkModule = { ...fakeModule('flatnet'), postbackTemplate: 'tid={tid}&comm={comm}&cur={cur}&clickref={clickref}' };
const OVERRIDES = { 'postbacks.enabled': true, 'postbacks.rejections.aggregate_after': 10_000, 'postbacks.rejections.max_per_address': 10_000 };
const MODULES = { networkModules: [brokenModule, bareModule, statuslessModule] };

describeEachDialect(
  'postback faults',
  (use) => {
    let server: Server;
    let admin: Actor;
    let tokens: Record<string, string>;

    beforeAll(async () => {
      const { ctx } = use();
      server = await testServer(ctx);
      admin = await createActor(ctx, 'administrator');
      tokens = {};
      for (const id of ['brokennet', 'barenet', 'flatnet']) {
        tokens[id] = (await ctx.networks.rotatePostbackSecret(id, 'test')).secret;
        await ctx.networks.setPostbacks(id, true, 'test');
      }
    });
    afterAll(async () => {
      await server.stop();
    });

    const sendTest = (id: string, payload: Json = {}) =>
      server.inject({ method: 'POST', url: `${NS}/networks/${id}/postback/test`, payload, headers: { authorization: admin.authorization } });
    const lastRecord = async (network: string) => (await use().ctx.postbacks.list({ network, page: 1, per_page: 1 })).items[0] as Json;

    it('answers 400 svc_postback_unreadable when a module cannot read an authenticated postback, and stores the refusal', async () => {
      const res = await getPostback(server, 'brokennet', query({ token: tokens.brokennet, tid: 'B-1' }));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ code: 'svc_postback_unreadable', message: expect.any(String), data: { status: 400, postback_id: expect.any(Number) } });
      expect(await lastRecord('brokennet')).toMatchObject({
        id: res.body.data.postback_id,
        outcome: 'rejected',
        code: 'svc_postback_unreadable',
        order_id: null,
      });
    });

    it('answers 503 svc_postback_url_unknown for a test while the daemon neither listens nor has a public URL', async () => {
      await use().ctx.networks.saveCustom('nourl', shopnetDefinition(), 'test');
      await use().ctx.networks.rotatePostbackSecret('nourl', 'test');
      await use().ctx.networks.setPostbacks('nourl', true, 'test');
      // Not listening, whatever another test of this file told the service.
      use().ctx.selfUrl.setListening(null);
      expect(use().ctx.postbacks.selfUrl).toBeNull();
      const res = await sendTest('nourl');
      expect(res.statusCode).toBe(503);
      expect(res.result).toEqual({ code: 'svc_postback_url_unknown', message: expect.any(String), data: { status: 503 } });
    });

    it('answers 409 svc_postback_test_unsupported for a module without a template, and for a status its postbacks cannot carry', async () => {
      use().ctx.selfUrl.setListening('http://127.0.0.1:9');
      const bare = await sendTest('barenet');
      expect(bare.statusCode).toBe(409);
      expect(bare.result).toEqual({ code: 'svc_postback_test_unsupported', message: expect.any(String), data: { status: 409 } });
      const approved = await sendTest('flatnet', { status: 'approved' });
      expect(approved.statusCode).toBe(409);
      expect(approved.result).toMatchObject({ code: 'svc_postback_test_unsupported' });
    });

    it('answers 502 svc_postback_test_failed with the URL when the daemon cannot reach its own endpoint', async () => {
      // Port 9 (discard) on loopback: nothing listens there in a test run, so the connection is refused.
      use().ctx.selfUrl.setListening('http://127.0.0.1:9/');
      const res = await sendTest('flatnet');
      expect(res.statusCode).toBe(502);
      expect(res.result).toEqual({
        code: 'svc_postback_test_failed',
        message: expect.any(String),
        data: { status: 502, url: 'http://127.0.0.1:9/postback/flatnet' },
      });
      expect(await use().ctx.db.select('SELECT id FROM orders')).toEqual([]);
    });

    it('stores a signed postback as an error with svc_secret_unreadable when the configured secret changed', async () => {
      const { ctx, db } = use();
      await ctx.networks.saveCustom('lostnet', shopnetDefinition(), 'test');
      const secret = (await ctx.networks.rotatePostbackSecret('lostnet', 'test', { mode: 'hmac' })).secret;
      await ctx.networks.setPostbacks('lostnet', true, 'test');
      // Another daemon on the same database, started with a different CASHTRACK_SECRET.
      let other: Context | undefined;
      let otherServer: Server | undefined;
      try {
        other = buildContext(testConfig(db, { ...OVERRIDES, secret: 'another-secret-0123456789abcdef0123456789' }), { logStream: null, ...MODULES });
        otherServer = await testServer(other);
        const q = query({ txn: 'LOST-1', status: 'pending', amount: '10.00', payout: '1.00', cur: 'EUR', subid: '1' });
        const res = await getPostback(otherServer, 'lostnet', q, { 'x-postback-signature': signature(secret, q) });
        expect(res.status).toBe(500);
        expect(res.body).toMatchObject({ code: 'svc_secret_unreadable', data: { status: 500 } });
        expect(await lastRecord('lostnet')).toMatchObject({ outcome: 'error', code: 'svc_secret_unreadable', order_id: null });
        const [{ postback_secret: sealed }] = await ctx.db.select<{ postback_secret: string }>('SELECT postback_secret FROM networks WHERE id = ?', [
          'lostnet',
        ]);
        expect(() => other!.networks.openPostbackSecret('lostnet', sealed)).toThrow(expect.objectContaining({ code: 'svc_secret_unreadable', status: 500 }));
        // The daemon with the original secret still reads it.
        expect(ctx.networks.openPostbackSecret('lostnet', sealed)).toBe(secret);
      } finally {
        await otherServer?.stop();
        await other?.close();
      }
    });
  },
  OVERRIDES,
  MODULES,
);
