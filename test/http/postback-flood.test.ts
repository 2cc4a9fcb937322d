// The security review's flood, replayed: thousands of forged postbacks from one address to a
// network whose postbacks are on. Refusals are counted per (network, client) in the database;
// past `max_per_address` unauthenticated refusals the client is answered 429 at once, storing and
// logging nothing, and past `aggregate_after` refusals in a window, refusals of one kind are
// counted on one record. The network's real traffic from elsewhere is never touched.
import type { Server } from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { buildContext } from '../../src/context.js';
import { clientKey } from '../../src/services/postbacks/throttle.js';
import { describeEachDialect } from '../helpers/context.js';
import { createActor, NS, testServer, type Actor } from '../helpers/http.js';
import { getPostback, query, shopnetDefinition, type Sent } from '../helpers/networks.js';

type Json = Record<string, any>;

const MAX = 20;
const AGGREGATE_AFTER = 5;
const WINDOW_S = 300;

describe('the client a refusal is counted on', () => {
  it('is the IPv4 address, and the /64 of an IPv6 address whatever its notation', () => {
    expect(clientKey('203.0.113.9')).toBe('203.0.113.9');
    expect(clientKey('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(clientKey('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:0db8:0001:0002:ffff:1:2:3')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(clientKey(null)).toBe('unknown');
    expect(clientKey('not an address')).toBe('unknown');
  });
});

const clock = new ManualClock(new Date());

describeEachDialect(
  'a flood of refused postbacks',
  (use) => {
    let server: Server;
    let admin: Actor;
    let n = 0;

    beforeAll(async () => {
      const { ctx } = use();
      server = await testServer(ctx);
      admin = await createActor(ctx, 'administrator');
    });

    /**
     * A network of the test's own with postbacks on; its token. Refusals are counted and throttled
     * per (network, client), so no test sees another's flood.
     */
    async function floodnet(id: string): Promise<string> {
      const { ctx } = use();
      await ctx.networks.saveCustom(id, shopnetDefinition({ name: `Flood ${id}` }), 'test');
      const { secret } = await ctx.networks.rotatePostbackSecret(id, 'test');
      await ctx.networks.setPostbacks(id, true, 'test');
      return secret;
    }
    afterAll(async () => {
      await server.stop();
    });

    const sale = (over: Record<string, string> = {}) => ({ txn: `FL-${++n}`, status: 'pending', amount: '10.00', payout: '1.00', cur: 'EUR', ...over });
    const forged = (network: string, ip: string, server_ = server) =>
      getPostback(server_, network, query({ token: 'forged-'.padEnd(43, 'x'), ...sale() }), {}, ip);
    const genuine = (network: string, token: string, ip: string, over: Record<string, string> = {}) =>
      getPostback(server, network, query({ token, ...sale(over) }), {}, ip);
    const rows = async (table: string, where = '1 = 1', params: unknown[] = []) =>
      Number((await use().ctx.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`, params))[0].n);
    const recordsOf = async (network: string, ip: string) =>
      use().ctx.db.select<Json>('SELECT id, code, repeat_count, message FROM postbacks WHERE network = ? AND ip = ? ORDER BY id', [network, ip]);
    /** Sends `count` requests, `parallel` at a time (a flood is concurrent). */
    async function flood(count: number, send: () => Promise<Sent>, parallel = 50): Promise<Sent[]> {
      const out: Sent[] = [];
      for (let i = 0; i < count; i += parallel) out.push(...(await Promise.all(Array.from({ length: Math.min(parallel, count - i) }, send))));
      return out;
    }

    it('stores a bounded number of records and log rows for 2,000 forged postbacks from one address, and answers the rest 429 at once', async () => {
      const { ctx } = use();
      await floodnet('flood-many');
      await ctx.logger.flush();
      const before = { postbacks: await rows('postbacks'), logs: await rows('logs'), orders: await rows('orders') };
      const answers = await flood(2000, () => forged('flood-many', '203.0.113.9'));
      await ctx.logger.flush();

      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s === 401)).toHaveLength(MAX);
      expect(statuses.filter((s) => s === 429)).toHaveLength(2000 - MAX);
      const throttled = answers.find((a) => a.status === 429)!;
      expect(throttled.body).toEqual({ code: 'svc_postback_throttled', message: expect.any(String), data: { status: 429, retry_after: expect.any(Number) } });
      expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(throttled.headers['retry-after'])).toBeLessThanOrEqual(WINDOW_S);

      // The first refusals one by one, then one record counting the rest of their kind.
      const records = await recordsOf('flood-many', '203.0.113.9');
      expect(records).toHaveLength(AGGREGATE_AFTER + 1);
      expect(records.map((r) => Number(r.repeat_count))).toEqual([...Array(AGGREGATE_AFTER).fill(1), MAX - AGGREGATE_AFTER]);
      expect(records.every((r) => r.code === 'svc_postback_unauthorized')).toBe(true);
      expect(await rows('postbacks')).toBe(before.postbacks + AGGREGATE_AFTER + 1);
      // A log line per stored record and one saying the address is throttled; none per throttled request.
      expect(await rows('logs')).toBeLessThanOrEqual(before.logs + AGGREGATE_AFTER + 2);
      expect(await rows('logs', "message LIKE 'Postbacks throttled%' AND context LIKE ?", ['%"flood-many"%'])).toBe(1);
      expect(await rows('orders')).toBe(before.orders);
      expect(await rows('postback_rejections', 'network = ? AND client = ?', ['flood-many', '203.0.113.9'])).toBe(1);
    });

    it("still accepts the network's real postbacks from another address", async () => {
      const token = await floodnet('flood-real');
      await flood(MAX + 1, () => forged('flood-real', '203.0.113.9'));
      const res = await genuine('flood-real', token, '198.51.100.7');
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ ok: true, duplicate: false, order_id: expect.any(Number) });
      // The throttled address is answered before any work, whatever it sends, until its window ends.
      expect((await genuine('flood-real', token, '203.0.113.9')).status).toBe(429);
    });

    it('shows the aggregated record in GET /networks/{id}/postbacks with how many it stands for and when the last came', async () => {
      const token = await floodnet('flood-shown');
      await flood(MAX + 1, () => forged('flood-shown', '203.0.113.9'));
      const res = await server.inject({
        url: `${NS}/networks/flood-shown/postbacks?outcome=rejected&per_page=100`,
        headers: { authorization: admin.authorization },
      });
      expect(res.statusCode).toBe(200);
      const mine = (res.result as Json[]).filter((r) => r.ip === '203.0.113.9');
      expect(mine[0]).toMatchObject({
        outcome: 'rejected',
        code: 'svc_postback_unauthorized',
        repeat_count: MAX - AGGREGATE_AFTER,
        last_seen_at: expect.any(String),
        received_at: expect.any(String),
      });
      expect(new Date(mine[0].last_seen_at).getTime()).toBeGreaterThanOrEqual(new Date(mine[0].received_at).getTime());
      expect(mine.slice(1).every((r) => r.repeat_count === 1 && r.last_seen_at === r.received_at)).toBe(true);
      expect(JSON.stringify(res.result)).not.toContain(token);
    });

    it('counts the addresses of one IPv6 /64 as one client, and another /64 apart', async () => {
      await floodnet('flood-v6');
      const answers = await flood(MAX + 5, () => forged('flood-v6', `2001:db8:1:2::${(n % 0xffff).toString(16)}`), 5);
      expect(answers.filter((a) => a.status === 401)).toHaveLength(MAX);
      expect((await forged('flood-v6', '2001:db8:1:2:ffff:ffff:ffff:ffff')).status).toBe(429);
      expect((await forged('flood-v6', '2001:db8:1:3::1')).status).toBe(401);
    });

    it('never throttles refusals of authenticated postbacks, but counts their repeats on one record', async () => {
      const token = await floodnet('flood-auth');
      const ip = '192.0.2.44';
      const answers = await flood(60, () => genuine('flood-auth', token, ip, { payout: 'twelve' }), 10);
      expect(answers.every((a) => a.status === 400 && a.body.code === 'svc_postback_invalid_amount')).toBe(true);
      const records = await recordsOf('flood-auth', ip);
      expect(records.map((r) => Number(r.repeat_count))).toEqual([...Array(AGGREGATE_AFTER).fill(1), 60 - AGGREGATE_AFTER]);
      // Every answer names the record that holds it.
      expect(new Set(answers.map((a) => a.body.data.postback_id))).toEqual(new Set(records.map((r) => Number(r.id))));
      expect((await genuine('flood-auth', token, ip)).status).toBe(200);
    });

    it('answers the flooding address 429 from a second daemon on the same database after one refusal, storing nothing', async () => {
      const { config } = use();
      await floodnet('flood-two');
      await flood(MAX + 1, () => forged('flood-two', '203.0.113.9'));
      const other = buildContext(config, { logStream: null, clock });
      const otherServer = await testServer(other);
      try {
        const before = await rows('postbacks');
        const answers = await flood(30, () => forged('flood-two', '203.0.113.9', otherServer), 10);
        expect(answers.every((a) => a.status === 429)).toBe(true);
        expect(await rows('postbacks')).toBe(before);
      } finally {
        await otherServer.stop();
        await other.close();
      }
    });

    it('counts a client afresh once its window is over, and logs how many it throttled', async () => {
      const { ctx } = use();
      await floodnet('flood-fresh');
      // MAX refusals, then 10 answered 429 by the throttle.
      await flood(MAX + 10, () => forged('flood-fresh', '203.0.113.9'));
      clock.advance((WINDOW_S + 1) * 1000);
      const res = await forged('flood-fresh', '203.0.113.9');
      expect(res.status).toBe(401);
      await ctx.logger.flush();
      const [summary] = await ctx.db.select<Json>(
        "SELECT message, context FROM logs WHERE message LIKE '%postback(s) throttled' AND context LIKE ? ORDER BY id DESC LIMIT 1",
        ['%"flood-fresh"%'],
      );
      expect(JSON.parse(summary.context)).toMatchObject({ network: 'flood-fresh', client: '203.0.113.9', throttled: 10 });
      expect(await rows('postback_rejections', 'network = ? AND client = ? AND refusals = 1', ['flood-fresh', '203.0.113.9'])).toBe(1);
      // Counts of windows that are over are pruned with the records.
      clock.advance((WINDOW_S + 1) * 1000);
      await ctx.postbacks.prune();
      expect(await rows('postback_rejections')).toBe(0);
    });
  },
  {
    'postbacks.enabled': true,
    'postbacks.rejections.max_per_address': MAX,
    'postbacks.rejections.aggregate_after': AGGREGATE_AFTER,
    'postbacks.rejections.window_seconds': WINDOW_S,
  },
  { clock },
);
