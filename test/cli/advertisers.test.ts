import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdmitadFixture, type AdmitadFixture } from '../fixtures/networks/admitad.js';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/context.js';

type Json = Record<string, any>;
const DAY = 86_400_000;

for (const dialect of dialects) {
  describe(`cashtrack advertisers and orders poll [${dialect}]`, () => {
    let db: TestDatabase;
    let fixture: AdmitadFixture;
    beforeAll(async () => {
      db = await createTestDatabase(dialect);
      expect((await runCli(['db', 'migrate'], { db })).code).toBe(0);
      fixture = await startAdmitadFixture({ advertisers: 5, actions: 6, actionsFrom: new Date(Date.now() - 5 * DAY), actionsTo: new Date(Date.now() - DAY) });
      const s = fixture.settings;
      const configured = await runCli(
        ['networks', 'configure', 'admitad', '--set', `client_id=${s.client_id}`, '--set', `website_id=${s.website_id}`, '--set', `base_url=${s.base_url}`, '--secret-env', 'client_secret=ADM_SECRET'],
        { db, env: { ADM_SECRET: String(s.client_secret) } },
      );
      expect(configured.code, configured.stderr).toBe(0);
    });
    afterAll(async () => {
      await fixture?.close();
      await db?.drop();
    });

    it('syncs, lists, shows advertisers and sets a cashback override', async () => {
      const sync = await runCli(['advertisers', 'sync', '--network', 'admitad'], { db });
      expect(sync.code, sync.stderr).toBe(0);
      expect(sync.stdout).toMatch(/job \d+ advertisers\.sync started/);
      expect(sync.stdout).toMatch(/admitad\s+1\s+5\s+5\s+0\s+0\s+0/);
      const list = await runCli(['advertisers', 'list', '--network', 'admitad', '--json'], { db });
      expect(list.json<Json[]>()).toHaveLength(5);
      const table = await runCli(['advertisers', 'list', '--per-page', '2'], { db });
      expect(table.stdout).toContain('5 advertiser(s), page 1');
      const show = await runCli(['advertisers', 'show', 'admitad', '6000'], { db });
      expect(show.stdout).toMatch(/advertiser\s+6000/);
      const set = await runCli(['advertisers', 'set-cashback', 'admitad', '6000', '--type', 'percent_commission', '--value', '75', '--json'], { db });
      expect(set.code, set.stderr).toBe(0);
      expect(set.json<Json>().cashback_rule).toMatchObject({ type: 'percent_commission', value: '75' });
      const missing = await runCli(['advertisers', 'show', 'admitad', 'nope'], { db });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/^svc_advertiser_not_found: /);
    });

    it('polls orders and prints the counts; a second poll finds only duplicates', async () => {
      const first = await runCli(['orders', 'poll', '--network', 'admitad', '--json'], { db });
      expect(first.code, first.stderr).toBe(0);
      expect(first.json<Json>()).toMatchObject({ type: 'orders.poll', status: 'done', result: { networks: { admitad: { seen: 6, created: 6, failed: 0 } } } });
      const second = await runCli(['orders', 'poll', '--network', 'admitad', '--since', new Date(Date.now() - 7 * DAY).toISOString()], { db });
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout).toMatch(/admitad\s+\S+\s+\S+\s+1\s+6\s+0\s+0\s+6\s+0/);
      const orders = await runCli(['orders', 'list', '--network', 'admitad', '--json'], { db });
      expect(orders.json<Json[]>()).toHaveLength(6);
      const bad = await runCli(['orders', 'poll', '--since', 'yesterday'], { db });
      expect(bad.code).toBe(2);
    });
  });
}
