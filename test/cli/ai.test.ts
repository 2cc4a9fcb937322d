import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildContext, type Context } from '../../src/context.js';
import { CLI_SECRET, runCli } from '../helpers/cli.js';
import { insertCoupon } from '../helpers/coupons.js';
import { createTestDatabase, dialects, testConfig, type TestDatabase } from '../helpers/context.js';
import { startOpenAiFixture, type OpenAiFixture } from '../fixtures/openai-server.js';

type Json = Record<string, any>;
const KEY = 'sk-cli-secret-key-31337';

for (const dialect of dialects) {
  describe(`cashtrack ai [${dialect}]`, () => {
    let db: TestDatabase;
    let fixture: OpenAiFixture;
    let ctx: Context;
    beforeAll(async () => {
      db = await createTestDatabase(dialect);
      expect((await runCli(['db', 'migrate'], { db })).code).toBe(0);
      fixture = await startOpenAiFixture();
      ctx = buildContext(testConfig(db, { secret: CLI_SECRET }), { logStream: null });
    });
    afterAll(async () => {
      await ctx?.close();
      await fixture?.close();
      await db?.drop();
    });
    beforeEach(() => fixture.reset());
    /** Each test sets the provider up itself (tests pass in any order). */
    const provider = () => ctx.ai.configure({ base_url: fixture.baseUrl, model: 'fixture-model', api_key: KEY, concurrency: 2 }, 'test');

    it('refuses without a provider, naming what to set', async () => {
      await ctx.ai.configure({ base_url: null, model: null, api_key: null }, 'test');
      const res = await runCli(['ai', 'coupon', String(await insertCoupon(ctx))], { db });
      expect(res.code).toBe(1);
      expect(res.stderr).toMatch(/^svc_ai_not_configured: .*CASHTRACK_AI_BASE_URL/);
    });

    it('configures the provider with the key from the environment or standard input, never printing it', async () => {
      const onLine = await runCli(['ai', 'configure', '--set', `api_key=${KEY}`], { db });
      expect(onLine.code).toBe(2);
      expect(onLine.stderr).toContain('--api-key-stdin');
      const set = await runCli(
        ['ai', 'configure', '--set', `base_url=${fixture.baseUrl}`, '--set', 'model=fixture-model', '--set', 'concurrency=2', '--api-key-env', 'AI_KEY'],
        { db, env: { AI_KEY: KEY } },
      );
      expect(set.code, set.stderr).toBe(0);
      expect(set.stdout).toContain('ready');
      const shown = await runCli(['ai', 'configure'], { db });
      expect(shown.stdout).toMatch(/api_key\s+set/);
      expect(shown.stdout).toMatch(/concurrency\s+2/);
      expect(shown.stdout).not.toContain(KEY);
      const viaStdin = await runCli(['ai', 'configure', '--api-key-stdin', '--json'], { db, stdin: `${KEY}\n` });
      expect(viaStdin.json<Json>()).toMatchObject({ api_key_set: true, configured: true });
      expect(viaStdin.stdout).not.toContain(KEY);
      const bad = await runCli(['ai', 'configure', '--set', 'temperature=hot', '--json'], { db });
      expect(bad.code).toBe(1);
      expect(JSON.parse(bad.stderr)).toMatchObject({ code: 'svc_invalid_setting' });
    });

    it("keeps a dry run's proposal with --keep (no second provider call), and pages revert restores a shop page the AI wrote", async () => {
      await provider();
      const id = await insertCoupon(ctx, { title: 'Cli title before' });
      const preview = await runCli(['ai', 'coupon', String(id), '--dry-run'], { db });
      expect(preview.code, preview.stderr).toBe(0);
      const [, proposalId] = /--keep ([0-9a-f]{32})/.exec(preview.stdout) ?? [];
      expect(proposalId).toBeTruthy();
      const kept = await runCli(['ai', 'coupon', String(id), '--keep', proposalId, '--json'], { db });
      expect(kept.code, kept.stderr).toBe(0);
      expect(kept.json<Json>()).toMatchObject({ saved: true, proposal_id: proposalId });
      expect(fixture.requests).toHaveLength(1);
      const both = await runCli(['ai', 'coupon', String(id), '--keep', proposalId, '--dry-run'], { db });
      expect(both.code).toBe(1);
      expect(both.stderr).toMatch(/^rest_invalid_param: .*"dry_run" and "proposal_id" cannot be given together/);
      const now = new Date();
      const { insertId } = await ctx.db.execute(
        "INSERT INTO advertisers (module, advertiser, name, status, description, last_seen_sync, created_at, updated_at) VALUES ('awin', 'cli-revert', 'Cli Revert Shop', 'active', 'By hand', 1, ?, ?)",
        [now, now],
      );
      const shop = await runCli(['ai', 'shop', String(insertId)], { db });
      expect(shop.code, shop.stderr).toBe(0);
      const [, pageId] = /cashtrack pages revert (\d+)/.exec(shop.stdout) ?? [];
      const reverted = await runCli(['pages', 'revert', pageId, '--json'], { db });
      expect(reverted.code, reverted.stderr).toBe(0);
      expect(reverted.json<Json>()).toMatchObject({ id: Number(pageId), original: null });
      expect((await ctx.advertisers.getById(insertId!)).description).toBe('By hand');
      const nothing = await runCli(['pages', 'revert', pageId], { db });
      expect(nothing.code).toBe(1);
      expect(nothing.stderr).toMatch(/^svc_nothing_to_revert: /);
    });

    it('previews and rewrites a coupon, then bulk-rewrites the rest of the network', async () => {
      await provider();
      const ids = [
        await insertCoupon(ctx, { network: 'clinet' }),
        await insertCoupon(ctx, { network: 'clinet' }),
        await insertCoupon(ctx, { network: 'clinet' }),
      ];
      const preview = await runCli(['ai', 'coupon', String(ids[0]), '--dry-run'], { db });
      expect(preview.code, preview.stderr).toBe(0);
      expect(preview.stdout).toContain('proposal (not saved)');
      expect(preview.stdout).toMatch(/fixture-model: 120 prompt \+ 80 completion = 200 tokens/);
      const saved = await runCli(['ai', 'coupon', String(ids[0]), '--json'], { db });
      expect(saved.json<Json>()).toMatchObject({ saved: true, coupon: { id: ids[0], ai_fields: ['title', 'description'] } });
      const run = await runCli(['ai', 'bulk', '--kind', 'coupons', '--network', 'clinet'], { db });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/job \d+ ai\.bulk started/);
      expect(run.stdout).toContain('2 saved, 1 skipped (AI-written), 0 failed; 2 call(s), 400 tokens (fixture-model)');
      const json = await runCli(['ai', 'bulk', '--kind', 'coupons', '--network', 'clinet', '--overwrite', '--json'], { db });
      expect(json.json<Json>()).toMatchObject({ type: 'ai.bulk', status: 'done', result: { saved: 3, skipped: 0 } });
      const overview = await runCli(['overview'], { db });
      expect(overview.stdout).toMatch(/AI generations in the last 30 days: \d+ \(\d+ saved, \d+ dry runs, \d+ failed\), \d+ tokens; provider fixture-model/);
      expect(overview.stdout).toMatch(/fixture-model\s+\d+\s+\d+/);
    });

    it("writes a shop's description and page, or previews them", async () => {
      await provider();
      const now = new Date();
      const { insertId } = await ctx.db.execute(
        "INSERT INTO advertisers (module, advertiser, name, status, last_seen_sync, created_at, updated_at) VALUES ('awin', 'cli-shop', 'Cli Shop', 'active', 1, ?, ?)",
        [now, now],
      );
      const preview = await runCli(['ai', 'shop', String(insertId), '--dry-run'], { db });
      expect(preview.code, preview.stderr).toBe(0);
      expect(preview.stdout).toContain(`proposal (not saved) for advertiser ${insertId}`);
      expect(preview.stdout).toContain('<h2>About Cli Shop</h2>');
      const saved = await runCli(['ai', 'shop', String(insertId)], { db });
      expect(saved.stdout).toMatch(new RegExp(`saved \\(page (\\d+); undo: cashtrack pages revert \\1\\) for advertiser ${insertId}`));
      const json = await runCli(['ai', 'shop', String(insertId), '--json'], { db });
      expect(json.json<Json>()).toMatchObject({ kind: 'shop', id: insertId, saved: true });
    });

    it('draws a progress line for a bulk run on a terminal and erases it', async () => {
      await provider();
      for (let i = 0; i < 3; i++) await insertCoupon(ctx, { network: 'clitty' });
      const res = await runCli(['ai', 'bulk', '--kind', 'coupons', '--network', 'clitty'], { db, tty: { columns: 80 } });
      expect(res.code, res.stderr).toBe(0);
      const parts = res.stderr.split('\r\x1b[K');
      expect(res.stderr.endsWith('\r\x1b[K')).toBe(true);
      expect(
        parts
          .slice(1)
          .filter(Boolean)
          .some((l) => /^ai\.bulk .*items/.test(l)),
      ).toBe(true);
      expect(res.stdout).toContain('3 saved');
      const quiet = await runCli(['ai', 'bulk', '--kind', 'coupons', '--network', 'clitty', '--no-progress'], { db, tty: { columns: 80 } });
      expect(quiet.stderr).toBe('');
    });

    it('lists per-item failures of a bulk run on stderr and refuses bad options', async () => {
      await provider();
      const id = await insertCoupon(ctx, { network: 'clifail' });
      fixture.script({ kind: 'refusal', text: 'No.' });
      const run = await runCli(['ai', 'bulk', '--kind', 'coupons', '--network', 'clifail'], { db });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain('0 saved, 0 skipped (AI-written), 1 failed');
      expect(run.stderr).toContain(`coupon ${id}: svc_ai_bad_output:`);
      expect((await runCli(['ai', 'bulk', '--kind', 'pages'], { db })).code).toBe(2);
      expect((await runCli(['ai', 'bulk', '--kind', 'shops', '--type', 'code'], { db })).code).not.toBe(0);
      expect((await runCli(['ai', 'coupon', 'x1'], { db })).code).not.toBe(0);
    });
  });
}
