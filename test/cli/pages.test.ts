import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildContext, type Context } from '../../src/context.js';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase, dialects, testConfig, type TestDatabase } from '../helpers/context.js';
import { addShop, addShops } from '../helpers/pages.js';

type Json = Record<string, any>;

for (const dialect of dialects) {
  describe(`cashtrack pages [${dialect}]`, () => {
    let db: TestDatabase;
    let ctx: Context;
    beforeAll(async () => {
      db = await createTestDatabase(dialect);
      expect((await runCli(['db', 'migrate'], { db })).code).toBe(0);
      ctx = buildContext(testConfig(db), { logStream: null });
      await addShop(ctx, 'awin', '1', { name: 'Cli Shop' });
      await addShop(ctx, 'awin', '2', { name: 'Cli Other' });
    });
    afterAll(async () => {
      await ctx?.close();
      await db?.drop();
    });

    it('creates, shows, lists and updates a page, with --json everywhere', async () => {
      const created = await runCli(['pages', 'create', 'awin', '1', '--status', 'publish', '--json'], { db });
      expect(created.code, created.stderr).toBe(0);
      const page = created.json<Json>();
      expect(page).toMatchObject({ title: 'Cli Shop Cashback', slug: 'cli-shop', status: 'publish', author: 'cli' });
      const text = await runCli(['pages', 'create', 'awin', '2'], { db });
      expect(text.stdout).toMatch(/^page \d+ created for awin\/2\n/);
      expect(text.stdout).toMatch(/slug\s+cli-other/);
      const again = await runCli(['pages', 'create', 'awin', '1'], { db });
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/^svc_page_exists: awin\/1 has a page already/);
      const show = await runCli(['pages', 'show', String(page.id)], { db });
      expect(show.stdout).toMatch(/title\s+Cli Shop Cashback/);
      expect(show.stdout).toContain('<h2>Cli Shop cashback</h2>');
      expect((await runCli(['pages', 'show', String(page.id), '--json'], { db })).json<Json>()).toEqual(page);
      const list = await runCli(['pages', 'list', '--search', 'cli', '--orderby', 'title', '--order', 'asc', '--json'], { db });
      expect(list.json<Json[]>().map((p) => p.slug)).toEqual(['cli-other', 'cli-shop']);
      expect((await runCli(['pages', 'list', '--status', 'publish'], { db })).stdout).toContain('1 page(s)');
      const body = await runCli(['pages', 'update', String(page.id), '--title', 'Renamed <b>Shop</b>', '--body-file', '-', '--json'], {
        db,
        stdin: '<p onclick="x()">From stdin</p><script>1</script>',
      });
      expect(body.code, body.stderr).toBe(0);
      expect(body.json<Json>()).toMatchObject({ title: 'Renamed Shop', body: '<p>From stdin</p>' });
      const slug = await runCli(['pages', 'update', String(page.id), '--slug', 'Cli Other'], { db });
      expect(slug.stdout).toMatch(/slug\s+cli-other-2/);
    });

    it('refuses bad input with the REST codes and usage errors', async () => {
      await addShop(ctx, 'awin', '6', { name: 'Bad Input' });
      const id = String((await runCli(['pages', 'create', 'awin', '6', '--json'], { db })).json<Json>().id);
      const long = await runCli(['pages', 'update', id, '--title', 'x'.repeat(10_000), '--json'], { db });
      expect(long.code).toBe(1);
      expect(JSON.parse(long.stderr)).toMatchObject({ code: 'rest_invalid_param' });
      expect((await runCli(['pages', 'update', id], { db })).stderr).toMatch(/^svc_usage: nothing to change/);
      expect((await runCli(['pages', 'update', id, '--body', 'a', '--body-file', 'b'], { db })).code).toBe(2);
      expect((await runCli(['pages', 'update', id, '--body-file', '/nonexistent/file'], { db })).stderr).toMatch(/^svc_usage: cannot read --body-file/);
      expect((await runCli(['pages', 'show', '0'], { db })).stderr).toMatch(/^rest_invalid_param/);
      expect((await runCli(['pages', 'show', '999999'], { db })).stderr).toMatch(/^svc_page_not_found/);
      expect((await runCli(['pages', 'create', 'awin', 'nope'], { db })).stderr).toMatch(/^svc_advertiser_not_found/);
      expect((await runCli(['pages', 'list', '--status', 'trash'], { db })).code).toBe(2);
    });

    it('deletes only with --yes when not on a terminal', async () => {
      await addShop(ctx, 'awin', '5', { name: 'Delete Me' });
      const id = (await runCli(['pages', 'create', 'awin', '5', '--json'], { db })).json<Json>().id;
      const refused = await runCli(['pages', 'delete', String(id)], { db });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/^svc_usage: refusing to delete without --yes/);
      expect((await runCli(['pages', 'show', String(id)], { db })).code).toBe(0);
      const deleted = await runCli(['pages', 'delete', String(id), '--yes', '--json'], { db });
      expect(deleted.json<Json>()).toMatchObject({ deleted: true, previous: { id } });
      expect((await runCli(['pages', 'delete', String(id), '--yes'], { db })).stderr).toMatch(/^svc_page_not_found/);
    });

    it('asks before deleting on a terminal, and deletes only on yes', async () => {
      const { remove } = await import('../../src/cli/commands/pages.js');
      const { PassThrough, Writable } = await import('node:stream');
      await addShop(ctx, 'awin', '9', { name: 'Ask First' });
      const id = (await runCli(['pages', 'create', 'awin', '9', '--json'], { db })).json<Json>().id;
      const ask = async (answer: string) => {
        let out = '';
        let err = '';
        const stdin = Object.assign(new PassThrough(), { isTTY: true });
        const sink = (write: (s: string) => void) =>
          Object.assign(new Writable({ write: (chunk, _e, done) => (write(String(chunk)), done()) }), { isTTY: true, columns: 80 });
        const io = {
          stdin,
          stdout: sink((s) => (out += s)),
          stderr: sink((s) => (err += s)),
          env: {
            CASHTRACK_ENV: 'test',
            CASHTRACK_DATABASE_URL: db.url,
            CASHTRACK_DATA_DIR: db.dataDir,
            CASHTRACK_SECRET: 'cli-test-secret-0123456789abcdef0123456789',
          },
        };
        setTimeout(() => stdin.write(answer), 50);
        const result = await remove(io, String(id), {}).then(
          () => 'ok',
          (e: unknown) => e,
        );
        return { result, out, err };
      };
      const no = await ask('n\n');
      expect(no.err).toContain(`Delete page ${id} "Ask First Cashback" (ask-first)? [y/N]`);
      expect(no.err).toContain('not deleted');
      expect(no.result).toMatchObject({ silent: true });
      const yes = await ask('yes\n');
      expect(yes.result).toBe('ok');
      expect(yes.out).toBe(`page ${id} deleted\n`);
    });

    it('runs the bulk job here with a progress bar on a terminal, shows its state, and cancels a queued one', async () => {
      await addShops(ctx, 'clibulk', 30);
      const none = await runCli(['pages', 'bulk-cancel'], { db });
      expect(none.code).toBe(1);
      expect(none.stderr).toMatch(/^svc_job_not_running: /);
      const bulk = await runCli(['pages', 'bulk', '--network', 'clibulk'], { db, tty: { columns: 120 } });
      expect(bulk.code, bulk.stderr).toBe(0);
      expect(bulk.stdout).toMatch(/job \d+ pages\.bulk started/);
      expect(bulk.stdout).toContain('30 page(s) created, 0 skipped (made meanwhile), 0 failed');
      expect(bulk.stderr).toMatch(/pages\.bulk.*\d+\/30 advertisers/);
      const state = await runCli(['pages', 'bulk-status', '--json'], { db });
      expect(state.json<Json>()).toMatchObject({ job: { type: 'pages.bulk', status: 'done', progress: { total: 30, done: 30, failed: 0 } } });
      expect((await runCli(['pages', 'bulk-status'], { db })).stdout).toMatch(
        /active advertiser\(s\): \d+ with a page, \d+ without\njob \d+ done: 30\/30 done/,
      );
      await addShops(ctx, 'clibulk', 3, (i) => `Late ${i}`, 100);
      const queued = await runCli(['pages', 'bulk', '--no-wait', '--json'], { db });
      expect(queued.json<Json>()).toMatchObject({ type: 'pages.bulk', status: 'queued' });
      const busy = await runCli(['pages', 'bulk', '--network', 'clibulk', '--json'], { db });
      expect(JSON.parse(busy.stderr)).toMatchObject({ code: 'svc_job_already_running' });
      const cancelled = await runCli(['pages', 'bulk-cancel'], { db });
      expect(cancelled.stdout).toMatch(/^job \d+ cancelled/);
      const text = await runCli(['pages', 'bulk', '--no-wait', '--network', 'clibulk'], { db });
      expect(text.stdout).toMatch(/^job \d+ pages\.bulk queued \(a daemon runs it/);
      expect((await runCli(['pages', 'bulk-cancel', '--json'], { db })).json<Json>()).toMatchObject({ status: 'cancelled' });
      const json = await runCli(['pages', 'bulk', '--network', 'clibulk', '--status', 'publish', '--json'], { db });
      expect(json.json<Json>()).toMatchObject({ status: 'done', result: { created: 3, failed: 0 } });
    });
  });
}
