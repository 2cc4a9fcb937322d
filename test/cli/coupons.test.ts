import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdmitadFixture, type AdmitadFixture } from '../fixtures/networks/admitad.js';
import { buildContext } from '../../src/context.js';
import { CLI_SECRET, configureAdmitadCli, runCli } from '../helpers/cli.js';
import { createTestDatabase, dialects, testConfig, type TestDatabase } from '../helpers/context.js';

type Json = Record<string, any>;

for (const dialect of dialects) {
  describe(`cashtrack coupons [${dialect}]`, () => {
    let db: TestDatabase;
    let fixture: AdmitadFixture;
    beforeAll(async () => {
      db = await createTestDatabase(dialect);
      expect((await runCli(['db', 'migrate'], { db })).code).toBe(0);
      fixture = await startAdmitadFixture({ coupons: 4, couponDates: { start: '2024-03-01T00:00:00', end: null } });
      const configured = await configureAdmitadCli(db, fixture);
      expect(configured.code, configured.stderr).toBe(0);
    });
    afterAll(async () => {
      await fixture?.close();
      await db?.drop();
    });

    it('refreshes, lists and shows coupons', async () => {
      const refresh = await runCli(['coupons', 'refresh', '--network', 'admitad'], { db });
      expect(refresh.code, refresh.stderr).toBe(0);
      expect(refresh.stdout).toMatch(/job \d+ coupons\.refresh started/);
      expect(refresh.stdout).toMatch(/admitad\s+false\s+4\s+4\s+0\s+0\s+0/);
      expect(refresh.stderr).toBe('');
      const list = await runCli(['coupons', 'list', '--network', 'admitad', '--type', 'deal', '--json'], { db });
      expect(list.json<Json[]>().map((c) => c.coupon_id)).toEqual(['554', '552']);
      const table = await runCli(['coupons', 'list', '--per-page', '2', '--orderby', 'id', '--order', 'asc'], { db });
      expect(table.stdout).toContain('4 coupon(s), page 1');
      expect(table.stdout).toContain('SAVE0');
      const id = list.json<Json[]>()[0].id;
      const show = await runCli(['coupons', 'show', String(id)], { db });
      expect(show.stdout).toMatch(/type\s+deal/);
      expect(show.stdout).toMatch(/network\s+admitad \(advertiser 6000\)/);
      const missing = await runCli(['coupons', 'show', '999999'], { db });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/^svc_coupon_not_found: /);
    });

    it('prints a value under every column of the refresh table: no SKIPPED header without one', async () => {
      const refresh = await runCli(['coupons', 'refresh', '--network', 'admitad'], { db });
      expect(refresh.code, refresh.stderr).toBe(0);
      const lines = refresh.stdout.split('\n');
      const header = lines.find((l) => l.startsWith('NETWORK'))!;
      const row = lines.find((l) => l.startsWith('admitad'))!;
      expect(header).not.toContain('SKIPPED');
      expect(row.trim().split(/\s+/)).toHaveLength(header.trim().split(/\s+/).length);
    });

    it('edits a coupon, keeps the edit across a refresh and resets it', async () => {
      const [c] = (await runCli(['coupons', 'list', '--search', 'SAVE2', '--json'], { db })).json<Json[]>();
      const edited = await runCli(
        ['coupons', 'update', String(c.id), '--title', 'Our title', '--ends-at', '2031-01-01T00:00:00Z', '--regions', 'de,at', '--no-exclusive', '--json'],
        { db },
      );
      expect(edited.code, edited.stderr).toBe(0);
      expect(edited.json<Json>()).toMatchObject({
        title: 'Our title',
        ends_at: '2031-01-01T00:00:00.000Z',
        regions: ['DE', 'AT'],
        edited_fields: ['title', 'ends_at', 'regions'],
      });
      fixture.setCouponRevision(() => 1);
      expect((await runCli(['coupons', 'refresh', '--network', 'admitad', '--json'], { db })).code).toBe(0);
      const kept = (await runCli(['coupons', 'show', String(c.id), '--json'], { db })).json<Json>();
      expect(kept).toMatchObject({ title: 'Our title', status: 'active', network_values: { title: '12% off sitewide (v1)' } });
      const reset = await runCli(['coupons', 'update', String(c.id), '--reset', 'title', '--reset', 'ends_at', '--ends-at', 'none'], { db });
      expect(reset.code).toBe(1);
      expect(reset.stderr).toMatch(/^svc_invalid_coupon: /);
      const ok = await runCli(['coupons', 'update', String(c.id), '--reset', 'title', '--reset', 'ends_at'], { db });
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout).toMatch(/title\s+12% off sitewide \(v1\)/);
      const bad = await runCli(['coupons', 'update', String(c.id), '--ends-at', 'tomorrow'], { db });
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/^rest_invalid_param: /);
    });

    it('reverts only after an AI rewrite: `cashtrack coupons revert 42` answers svc_nothing_to_revert otherwise', async () => {
      const [c] = (await runCli(['coupons', 'list', '--json'], { db })).json<Json[]>();
      const none = await runCli(['coupons', 'revert', String(c.id)], { db });
      expect(none.code).toBe(1);
      expect(none.stderr).toMatch(/^svc_nothing_to_revert: /);
      const json = await runCli(['coupons', 'revert', String(c.id), '--json'], { db });
      expect(JSON.parse(json.stderr)).toMatchObject({ code: 'svc_nothing_to_revert' });
    });

    it('refuses a refresh of an unknown network and prints a member link', async () => {
      const unknown = await runCli(['coupons', 'refresh', '--network', 'nosuch'], { db });
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/^svc_network_not_found: /);
      const [c] = (await runCli(['coupons', 'list', '--json'], { db })).json<Json[]>();
      const link = await runCli(['coupons', 'link', String(c.id), '--member', 'nobody'], { db });
      expect(link.code).toBe(1);
      expect(link.stderr).toMatch(/^svc_coupon_unavailable: |^svc_advertiser_not_found: |^svc_member_not_found: /);
    });

    it('reverts an AI rewrite and prints a member link landing on the coupon page', async () => {
      const [c] = (await runCli(['coupons', 'list', '--type', 'code', '--orderby', 'id', '--order', 'asc', '--json'], { db })).json<Json[]>();
      const ctx = buildContext(testConfig(db, { secret: CLI_SECRET }), { logStream: null });
      try {
        await ctx.coupons.applyRewrite(c.id, { title: 'An AI title' }, { actor: 'ai' });
      } finally {
        await ctx.close();
      }
      const reverted = await runCli(['coupons', 'revert', String(c.id)], { db });
      expect(reverted.code, reverted.stderr).toBe(0);
      expect(reverted.stdout).toContain(`coupon ${c.id} reverted`);
      expect(reverted.stdout).toMatch(new RegExp(`title\\s+${c.title.replace(/[()%]/g, '.')}`));

      expect((await runCli(['networks', 'enable', 'admitad'], { db })).code).toBe(0);
      expect((await runCli(['advertisers', 'sync', '--network', 'admitad'], { db })).code).toBe(0);
      const member = (await runCli(['users', 'create', 'cpnmember', '--email', 'cpn@example.com', '--json'], { db })).json<Json>();
      const link = await runCli(['coupons', 'link', String(c.id), '--member', 'cpnmember'], { db });
      expect(link.code, link.stderr).toBe(0);
      expect(link.stdout.trim()).toMatch(/^https:\/\/ad\.admitad\.com\/g\//);
      expect(new URL(link.stdout.trim()).searchParams.get('subid')).toBe(String(member.id));
      const json = (await runCli(['coupons', 'link', String(c.id), '--member', 'cpnmember', '--json'], { db })).json<Json>();
      expect(json).toMatchObject({ coupon: c.id, deeplink: true, sub_id: String(member.id) });
    });

    it('refreshes every enabled network, and says so when there is none', async () => {
      const all = await runCli(['coupons', 'refresh'], { db });
      expect(all.code, all.stderr).toBe(0);
      expect(all.stdout).toMatch(/admitad\s+false\s+4\s+0\s+0\s+4/);
      // On a terminal, a progress line counting coupons is drawn on stderr (and erased).
      const drawn = await runCli(['coupons', 'refresh', '--network', 'admitad'], { db, tty: { columns: 120 } });
      expect(drawn.code, drawn.stderr).toBe(0);
      expect(drawn.stderr).toMatch(/coupons\.refresh admitad .*4 coupons/);
      expect((await runCli(['networks', 'disable', 'admitad'], { db })).code).toBe(0);
      const none = await runCli(['coupons', 'refresh', '--no-progress'], { db });
      expect(none.code, none.stderr).toBe(0);
      expect(none.stdout).toContain('no enabled, configured network with coupons to refresh');
    });
  });
}
