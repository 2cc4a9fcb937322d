// Postback authentication at its documented edges, with signatures computed from docs/api.md by
// node:crypto (never by the code under test) and the daemon's clock held still.
import { createHmac, hkdfSync } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import type { Server } from '@hapi/hapi';
import { ManualClock } from '../../src/clock.js';
import { describeEachDialect } from '../helpers/context.js';
import { testServer } from '../helpers/http.js';
import { getPostback, postPostback, query, shopnetDefinition, signature } from '../helpers/networks.js';

type Json = Record<string, any>;

const NOW = Date.parse('2026-11-24T12:00:00Z') / 1000;
const clock = new ManualClock(new Date(NOW * 1000));
const TOLERANCE = 300; // postbacks.signature_tolerance_seconds, as docs/api.md states it

/**
 * The key a daemon signs its own test postbacks with in token mode: derived from the configured
 * secret (HKDF-SHA256, salt "cashtrack", info "postback"), then bound to the network.
 */
function testKey(secret: string, network: string): Buffer {
  const postbackKey = Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.from('cashtrack'), 'postback', 32));
  return createHmac('sha256', postbackKey).update(`postback-test\0${network}`).digest();
}

describeEachDialect(
  'postback signatures at the documented limits',
  (use) => {
    let server: Server;
    let hmacSecret: string;
    let memberId: number;
    let n = 0;

    beforeAll(async () => {
      const { ctx } = use();
      server = await testServer(ctx);
      memberId = (await ctx.users.create({ login: 'sig-member', email: 'sig-member@example.com' })).id;
      await ctx.networks.saveCustom('signnet', shopnetDefinition({ name: 'Sign Net' }), 'test');
      hmacSecret = (await ctx.networks.rotatePostbackSecret('signnet', 'test', { mode: 'hmac' })).secret;
      await ctx.networks.setPostbacks('signnet', true, 'test');
      await ctx.networks.saveCustom('toknet', shopnetDefinition({ name: 'Token Net' }), 'test');
      await ctx.networks.rotatePostbackSecret('toknet', 'test');
      await ctx.networks.setPostbacks('toknet', true, 'test');
    });
    afterAll(async () => {
      await server.stop();
    });
    beforeEach(() => {
      clock.set(new Date(NOW * 1000));
    });

    const sale = (over: Record<string, string> = {}) => ({
      txn: `SIG-${++n}`,
      status: 'pending',
      amount: '120.00',
      payout: '12.00',
      cur: 'EUR',
      subid: String(memberId),
      ...over,
    });
    const lastRecord = async (network: string) => (await use().ctx.postbacks.list({ network, page: 1, per_page: 1 })).items[0] as Json;
    const signed = (q: string, t: number, secret = hmacSecret) => getPostback(server, 'signnet', q, { 'x-postback-signature': signature(secret, q, t) });

    it('documents the wire format this file signs with', () => {
      // docs/api.md: HMAC-SHA256 keyed with the secret, of "<t>.<payload>", in hex.
      const expected = createHmac('sha256', 'k').update('1700000000.a=1').digest('hex');
      expect(signature('k', 'a=1', 1_700_000_000)).toBe(`t=1700000000,v1=${expected}`);
    });

    it.each([
      ['exactly the tolerance in the past', -TOLERANCE],
      ['exactly the tolerance in the future', TOLERANCE],
      ['one second inside the tolerance', -(TOLERANCE - 1)],
    ])('accepts a signature %s', async (_name, offset) => {
      const q = query(sale());
      const res = await signed(q, NOW + offset);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ ok: true, duplicate: false, test: false });
    });

    it.each([
      ['one second past the tolerance in the past', -(TOLERANCE + 1)],
      ['one second past the tolerance in the future', TOLERANCE + 1],
    ])('refuses a signature %s as stale, with no order', async (_name, offset) => {
      const p = sale();
      const res = await signed(query(p), NOW + offset);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ code: 'svc_postback_unauthorized', message: expect.any(String), data: { status: 401 } });
      expect(await lastRecord('signnet')).toMatchObject({ outcome: 'rejected', code: 'svc_postback_unauthorized', transaction_id: null, order_id: null });
      expect((await lastRecord('signnet')).message).toContain('stale_signature');
      expect(await use().ctx.db.select('SELECT id FROM orders WHERE transaction_id = ?', [p.txn])).toEqual([]);
    });

    it('judges the time window by the daemon clock, not the wall clock', async () => {
      clock.advance(3600_000);
      const q = query(sale());
      expect((await signed(q, NOW)).status).toBe(401);
      expect((await signed(q, NOW + 3600)).status).toBe(200);
    });

    it('signs the raw body of a POST and accepts any one of several v1 values', async () => {
      const body = JSON.stringify(sale());
      const good = signature(hmacSecret, body, NOW).split(',')[1];
      const wrong = `v1=${'0'.repeat(64)}`;
      const res = await postPostback(server, 'signnet', body, 'application/json', { 'x-postback-signature': `t=${NOW},${wrong},${good}` });
      expect(res.status).toBe(200);
    });

    it('refuses a signature made with a key other than the secret as ASCII', async () => {
      const q = query(sale());
      const hexKey = Buffer.from(hmacSecret, 'ascii').toString('hex');
      expect((await signed(q, NOW, hexKey)).status).toBe(401);
      expect((await lastRecord('signnet')).message).toContain('bad_signature');
    });

    it('takes a test postback signed with the daemon test key within the window, and stores it as a test', async () => {
      const q = query({ ...sale(), test: '1' });
      const sig = `t=${NOW - TOLERANCE},test=${createHmac('sha256', testKey(use().config.secret!, 'toknet'))
        .update(`${NOW - TOLERANCE}.${q}`)
        .digest('hex')}`;
      const res = await getPostback(server, 'toknet', q, { 'x-postback-signature': sig });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ ok: true, test: true, order_id: null });
      expect(await lastRecord('toknet')).toMatchObject({ outcome: 'accepted', test: true, order_id: null });
    });

    it('refuses a stale test postback, one second past the window', async () => {
      const t = NOW - TOLERANCE - 1;
      const q = query({ ...sale(), test: '1' });
      const sig = `t=${t},test=${createHmac('sha256', testKey(use().config.secret!, 'toknet')).update(`${t}.${q}`).digest('hex')}`;
      const res = await getPostback(server, 'toknet', q, { 'x-postback-signature': sig });
      expect(res.status).toBe(401);
      const rec = await lastRecord('toknet');
      expect(rec).toMatchObject({ outcome: 'rejected', code: 'svc_postback_unauthorized', test: true });
      expect(rec.message).toContain('stale_signature');
    });

    it('refuses the test key on a postback that is not marked as a test', async () => {
      const p = sale();
      const q = query(p);
      const sig = `t=${NOW},test=${createHmac('sha256', testKey(use().config.secret!, 'toknet')).update(`${NOW}.${q}`).digest('hex')}`;
      const res = await getPostback(server, 'toknet', q, { 'x-postback-signature': sig });
      expect(res.status).toBe(401);
      expect(await use().ctx.db.select('SELECT id FROM orders WHERE transaction_id = ?', [p.txn])).toEqual([]);
    });

    it("refuses one network's test key on another network", async () => {
      const q = query({ ...sale(), test: '1' });
      const sig = `t=${NOW},test=${createHmac('sha256', testKey(use().config.secret!, 'signnet')).update(`${NOW}.${q}`).digest('hex')}`;
      expect((await getPostback(server, 'toknet', q, { 'x-postback-signature': sig })).status).toBe(401);
      expect((await lastRecord('toknet')).message).toContain('bad_signature');
    });
  },
  {
    'postbacks.enabled': true,
    'postbacks.signature_tolerance_seconds': TOLERANCE,
    'postbacks.rejections.aggregate_after': 10_000,
    'postbacks.rejections.max_per_address': 10_000,
  },
  { clock },
);
