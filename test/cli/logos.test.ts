import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildContext, type Context } from '../../src/context.js';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase, dialects, testConfig, type TestDatabase } from '../helpers/context.js';
import { image } from '../helpers/images.js';
import { shopnetDefinition } from '../helpers/networks.js';
import { addAdvertiser, site, type Site } from '../helpers/web.js';

type Json = Record<string, any>;

for (const dialect of dialects) {
  describe(`cashtrack logos [${dialect}]`, () => {
    let db: TestDatabase;
    let ctx: Context;
    let web: Site;
    beforeAll(async () => {
      db = await createTestDatabase(dialect);
      expect((await runCli(['db', 'migrate'], { db })).code).toBe(0);
      web = await site({ '/logo.png': { body: await image('png', 64, 64), type: 'image/png' }, '/bad': { body: 'nope', type: 'image/png' } });
      ctx = buildContext(testConfig(db), { logStream: null });
      await addAdvertiser(ctx, 'clinet', 'c0', { logo_url: `${web.origin}/logo.png` });
      await addAdvertiser(ctx, 'clinet', 'broken', { logo_url: `${web.origin}/bad` });
      for (const network of ['clibulk', 'cliforce']) {
        await ctx.networks.saveCustom(network, shopnetDefinition(), 'test');
        for (let i = 0; i < 5; i++) await addAdvertiser(ctx, network, `b${i}`, { logo_url: `${web.origin}/logo.png` });
        await addAdvertiser(ctx, network, 'broken', { logo_url: `${web.origin}/bad` });
      }
    });
    afterAll(async () => {
      await ctx?.close();
      await web?.close();
      await db?.drop();
    });

    it('fetches one logo, keeps it without --force and fetches it again with --force', async () => {
      const first = await runCli(['logos', 'fetch', 'clinet', 'c0'], { db });
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toMatch(
        /^logo of clinet\/c0 fetched from network \(http:\/\/127\.0\.0\.1:\d+\/logo\.png\): image\/png 64x64, \d+ bytes\n\/media\/[0-9a-f]{64}\.png\n$/,
      );
      const kept = await runCli(['logos', 'fetch', 'clinet', 'c0', '--json'], { db });
      expect(kept.json<Json>()).toMatchObject({ fetched: false, source: null });
      expect((await runCli(['logos', 'fetch', 'clinet', 'c0'], { db })).stdout).toContain('on file (--force fetches it again)');
      expect((await runCli(['logos', 'fetch', 'clinet', 'c0', '--force', '--json'], { db })).json<Json>()).toMatchObject({ fetched: true, source: 'network' });
    });

    it('prints svc_logo_not_found and svc_advertiser_not_found as code: message, JSON with --json, exit 1', async () => {
      const bad = await runCli(['logos', 'fetch', 'clinet', 'broken'], { db });
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/^svc_logo_not_found: No logo found for clinet\/broken: network not_an_image\.\n$/);
      const json = await runCli(['logos', 'fetch', 'clinet', 'broken', '--json'], { db });
      expect(JSON.parse(json.stderr)).toMatchObject({ code: 'svc_logo_not_found', data: { tried: [{ source: 'network', reason: 'not_an_image' }] } });
      expect((await runCli(['logos', 'fetch', 'clinet', 'nobody'], { db })).stderr).toMatch(/^svc_advertiser_not_found: /);
    });

    it('runs a bulk fetch with a progress line on a terminal, then shows the state', async () => {
      const run = await runCli(['logos', 'bulk', '--network', 'clibulk'], { db, tty: { columns: 100 } });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/job \d+ logos\.bulk started\n5 logo\(s\) fetched, 0 unchanged, 1 failed\n/);
      expect(run.stdout).toMatch(/clibulk\s+broken\s+svc_logo_not_found/);
      expect(run.stderr).toMatch(/6\/6/);
      expect(run.stderr).toMatch(/100%/);
      const status = await runCli(['logos', 'status'], { db });
      expect(status.stdout).toMatch(
        /active advertisers\s+\d+ \(\d+ with a logo, \d+ without\)\nmedia\s+\d+ file\(s\), \d+ bytes\nlast run\s+job \d+ done, \d+\/\d+ done, \d+ failed\n/,
      );
      const state = (await runCli(['logos', 'status', '--json'], { db })).json<Json>();
      expect(state.advertisers.total).toBe(state.advertisers.with_logo + state.advertisers.without_logo);
      expect(state.advertisers.with_logo).toBeGreaterThanOrEqual(5);
    });

    it('prints the finished job with --json and refuses a bad status', async () => {
      const run = await runCli(['logos', 'bulk', '--network', 'cliforce', '--force', '--json'], { db });
      expect(run.code, run.stderr).toBe(0);
      expect(run.json<Json>()).toMatchObject({
        type: 'logos.bulk',
        status: 'done',
        params: { network: 'cliforce', force: true },
        result: { fetched: 5, failed: 1 },
      });
      expect(run.stderr).toBe('');
      const bad = await runCli(['logos', 'bulk', '--status', 'asleep'], { db });
      expect(bad.code).toBe(2);
    });
  });
}
