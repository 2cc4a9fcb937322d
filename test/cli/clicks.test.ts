// `cashtrack clicks list|show`, `orders candidates` and `orders assign --click`: the click schemas and service,
// in-process, on clicks made through the service as /go/ makes them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildContext, type Context } from '../../src/context.js';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase, dialects, testConfig, type TestDatabase } from '../helpers/context.js';
import { shopnetDefinition } from '../helpers/networks.js';

type Json = Record<string, any>;

for (const dialect of dialects) {
  describe(`cashtrack clicks [${dialect}]`, () => {
    let db: TestDatabase;
    let ctx: Context;
    let clickId = '';
    let orderId = 0;
    const cli = (args: string[]) => runCli(args, { db });
    beforeAll(async () => {
      db = await createTestDatabase(dialect);
      expect((await cli(['db', 'migrate'])).code).toBe(0);
      expect((await cli(['users', 'create', 'gia', '--email', 'gia@example.com'])).code).toBe(0);
      ctx = buildContext(testConfig(db), { logStream: null });
      await ctx.networks.saveCustom('clinet', shopnetDefinition(), 'test');
      const now = new Date();
      await ctx.db.execute(
        "INSERT INTO advertisers (module, advertiser, name, categories, countries, status, last_seen_sync, created_at, updated_at) VALUES ('clinet', 'mugs', 'Mug Shop', '[]', '[]', 'active', 1, ?, ?)",
        [now, now],
      );
      const link = await ctx.advertisers.trackingLink('clinet', 'mugs', { member: 'gia', url: 'https://mugs.example/red' });
      clickId = new URL(await ctx.clicks.go(link.go_token!, { ip: '198.51.100.23', userAgent: 'cli test' })).searchParams.get('subid')!;
      orderId = (
        await ctx.orders.record(
          { network: 'clinet', transaction_id: 'CLI-C1', advertiser: 'mugs', source: 'postback', sale_amount: '10.00', commission: '1.00', currency: 'EUR' },
          'postback',
        )
      ).id;
    });
    afterAll(async () => {
      await ctx?.close();
      await db?.drop();
    });

    it('lists and shows clicks, with what was kept of the client', async () => {
      const list = await cli(['clicks', 'list', '--member', 'gia', '--json']);
      expect(list.code).toBe(0);
      expect(list.json<Json[]>().map((c) => c.id)).toEqual([clickId]);
      const table = await cli(['clicks', 'list']);
      expect(table.stdout).toContain(clickId);
      expect(table.stdout).toContain('clinet/mugs');
      const show = await cli(['clicks', 'show', clickId]);
      expect(show.code).toBe(0);
      expect(show.stdout).toContain('198.51.100.0/24');
      expect(show.stdout).toContain('https://mugs.example/red');
      expect(show.stdout).not.toContain('198.51.100.23');
      const missing = await cli(['clicks', 'show', 'c0000000000aaaaaaaa']);
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toContain('svc_click_not_found');
      expect((await cli(['clicks', 'show', 'nope'])).code).not.toBe(0);
    });

    it('answers the candidates of an unmatched order as GET /orders/{id}/candidates does', async () => {
      const res = await cli(['orders', 'candidates', String(orderId), '--json']);
      expect(res.code, res.stderr).toBe(0);
      const answer = res.json<Json>();
      expect(answer).toEqual(JSON.parse(JSON.stringify(await ctx.clicks.candidates(await ctx.orders.get(orderId)))));
      expect(answer).toMatchObject({ order_id: orderId, window_days: 30, items: [{ member: { login: 'gia' }, click: { id: clickId }, clicks: 1 }] });
      const table = await cli(['orders', 'candidates', String(orderId)]);
      expect(table.code).toBe(0);
      expect(table.stdout).toMatch(new RegExp(`^1\\s+gia \\(id \\d+\\)\\s+${clickId}\\s`, 'm'));
      expect(table.stdout).toContain('last click');
      expect(table.stdout).toContain(`cashtrack orders assign ${orderId} --click <click>`);
      const missing = await cli(['orders', 'candidates', '999999']);
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toContain('svc_order_not_found');
      const word = await cli(['orders', 'candidates', 'x']);
      expect([word.code, word.stderr]).toEqual([1, expect.stringContaining('rest_invalid_param')]);
    });

    it('assigns an unmatched order with --click and no member: the click is recorded', async () => {
      const res = await cli(['orders', 'assign', String(orderId), '--click', clickId, '--json']);
      expect(res.code).toBe(0);
      expect(res.json<Json>()).toMatchObject({ member: { login: 'gia' }, click_id: clickId });
      expect((await cli(['clicks', 'show', clickId, '--json'])).json<Json>().order_ids).toEqual([orderId]);
    });
  });
}
