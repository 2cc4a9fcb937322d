import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAdmitadFixture, type AdmitadFixture } from '../fixtures/networks/admitad.js';
import { configureAdmitadCli, runCli } from '../helpers/cli.js';
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
      const configured = await configureAdmitadCli(db, fixture);
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
      // Not a terminal: no progress line.
      expect(sync.stderr).toBe('');
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
      expect(first.stderr).toBe('');
      const second = await runCli(['orders', 'poll', '--network', 'admitad', '--since', new Date(Date.now() - 7 * DAY).toISOString()], { db });
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout).toMatch(/admitad\s+\S+\s+\S+\s+1\s+6\s+0\s+0\s+6\s+0/);
      const orders = await runCli(['orders', 'list', '--network', 'admitad', '--json'], { db });
      expect(orders.json<Json[]>()).toHaveLength(6);
      const bad = await runCli(['orders', 'poll', '--since', 'yesterday'], { db });
      expect(bad.code).toBe(2);
    });

    it('refuses a poll or a sync while the same one is queued (409 svc_job_already_running), as the routes do, and an unknown network', async () => {
      const queued: number[] = [];
      try {
        for (const [type, argv] of [
          ['orders.poll', ['orders', 'poll', '--network', 'admitad']],
          ['advertisers.sync', ['advertisers', 'sync', '--network', 'admitad']],
        ] as const) {
          const job = await runCli(['jobs', 'enqueue', type, '--params', '{"network":"admitad"}', '--json'], { db });
          expect(job.code, job.stderr).toBe(0);
          queued.push(job.json<Json>().id);
          const refused = await runCli([...argv], { db });
          expect(refused.code).toBe(1);
          expect(refused.stderr).toMatch(
            new RegExp(`^svc_job_already_running: A ${type.replace('.', '\\.')} job with these parameters is already queued \\(job ${queued.at(-1)}\\)`),
          );
          expect(refused.stdout).toBe('');
          const unknown = await runCli([...argv.slice(0, 2), '--network', 'nosuch'], { db });
          expect(unknown.code).toBe(1);
          expect(unknown.stderr).toMatch(/^svc_network_not_found: /);
        }
        const shown = await runCli(['jobs', 'show', String(queued[0]), '--json'], { db });
        expect(shown.json<Json>()).toMatchObject({ id: queued[0], status: 'queued' });
      } finally {
        for (const id of queued) await runCli(['jobs', 'cancel', String(id)], { db });
      }
    });
  });
}

const ERASE = '\r\x1b[K';

/** The lines a progress display drew, and whether it erased the last one. */
function drawn(stderr: string): { lines: string[]; erased: boolean } {
  const parts = stderr.split(ERASE);
  return { lines: parts.slice(1).filter(Boolean), erased: stderr.endsWith(ERASE) && parts[0] === '' };
}

for (const dialect of dialects) {
  describe(`cashtrack advertisers link, and progress lines on a terminal [${dialect}]`, () => {
    let db: TestDatabase;
    let fixture: AdmitadFixture;
    let annId: number;
    let gotolink: string;
    beforeAll(async () => {
      db = await createTestDatabase(dialect);
      expect((await runCli(['db', 'migrate'], { db })).code).toBe(0);
      fixture = await startAdmitadFixture({ advertisers: 3, actions: 4, actionsFrom: new Date(Date.now() - 5 * DAY), actionsTo: new Date(Date.now() - DAY) });
      const configured = await configureAdmitadCli(db, fixture);
      expect(configured.code, configured.stderr).toBe(0);
      expect((await runCli(['advertisers', 'sync', '--network', 'admitad'], { db })).code).toBe(0);
      const ann = await runCli(['users', 'create', 'ann', '--email', 'ann@example.com', '--json'], { db });
      annId = ann.json<Json>().id;
      gotolink = (await runCli(['advertisers', 'show', 'admitad', '6000', '--json'], { db })).json<Json>().tracking_template;
      expect(gotolink).toMatch(/^https:\/\/ad\.admitad\.com\/g\//);
    });
    afterAll(async () => {
      await fixture?.close();
      await db?.drop();
    });

    it('prints an Admitad tracking link crediting the member, and refuses while the network is disabled', async () => {
      expect((await runCli(['networks', 'disable', 'admitad'], { db })).code).toBe(0);
      const off = await runCli(['advertisers', 'link', 'admitad', '6000', '--member', 'ann'], { db });
      expect(off.code).toBe(1);
      expect(off.stderr).toMatch(/^svc_network_disabled: /);
      expect((await runCli(['networks', 'enable', 'admitad'], { db })).code).toBe(0);

      const plain = await runCli(['advertisers', 'link', 'admitad', '6000', '--member', 'ann'], { db });
      expect(plain.code, plain.stderr).toBe(0);
      expect(plain.stdout).toBe(`${gotolink}?subid=${annId}\n`);
      const target = 'https://store-6000.test/shoes?size=9';
      const deep = await runCli(['advertisers', 'link', 'admitad', '6000', '--member', String(annId), '--url', target, '--json'], { db });
      expect(deep.code, deep.stderr).toBe(0);
      expect(deep.json<Json>()).toEqual({
        url: `${gotolink}?subid=${annId}&ulp=${encodeURIComponent(target)}`,
        module: 'admitad',
        advertiser: '6000',
        member: { id: annId, login: 'ann' },
        sub_id: String(annId),
        deeplink: true,
        target,
        go_token: expect.stringMatching(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/),
        go_url: null,
        go_expires_at: expect.any(String),
      });
    });

    it('reports refusals as code: message with exit 1, and a missing --member as a usage error', async () => {
      await runCli(['networks', 'enable', 'admitad'], { db });
      const cases: [string[], RegExp][] = [
        [['advertisers', 'link', 'admitad', 'nope', '--member', 'ann'], /^svc_advertiser_not_found: /],
        [['advertisers', 'link', 'admitad', '6000', '--member', 'nobody'], /^svc_member_not_found: /],
        [['advertisers', 'link', 'admitad', '6000', '--member', 'ann', '--url', 'https://elsewhere.test/'], /^svc_invalid_url: .*store-6000\.test/],
        [['advertisers', 'link', 'admitad', '6000', '--member', 'ann', '--url', 'javascript:alert(1)'], /^svc_invalid_url: /],
      ];
      for (const [argv, message] of cases) {
        const res = await runCli(argv, { db });
        expect(res.code, argv.join(' ')).toBe(1);
        expect(res.stderr).toMatch(message);
        expect(res.stdout).toBe('');
      }
      const missing = await runCli(['advertisers', 'link', 'admitad', '6000'], { db });
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('--member');
    });

    it('draws a progress line while syncing on a terminal, erases it, and prints the same result', async () => {
      const res = await runCli(['advertisers', 'sync', '--network', 'admitad'], { db, tty: { columns: 80 } });
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).toMatch(/job \d+ advertisers\.sync started/);
      // pages, seen, created, updated, unchanged (listed again as stored), deactivated, failed
      expect(res.stdout).toMatch(/admitad\s+1\s+3\s+0\s+0\s+3\s+0\s+0/);
      expect(res.stdout).not.toContain('\r');
      const { lines, erased } = drawn(res.stderr);
      expect(erased).toBe(true);
      expect(lines[0]).toMatch(/^advertisers\.sync admitad {2}. 0 advertisers {2}\d+s$/);
      // The network told the list's size: a bar, the count against it and the percentage.
      expect(lines.some((l) => /^advertisers\.sync admitad {2}\[#{20}\] 3\/3 advertisers {2}100%/.test(l))).toBe(true);
      for (const l of lines) expect(l.length).toBeLessThanOrEqual(79);
    });

    it('draws one for orders poll too, and none with --json or --no-progress', async () => {
      const res = await runCli(['orders', 'poll', '--network', 'admitad'], { db, tty: { columns: 120 } });
      expect(res.code, res.stderr).toBe(0);
      const { lines, erased } = drawn(res.stderr);
      expect(erased).toBe(true);
      expect(lines.some((l) => /^orders\.poll admitad {2}. \d+ transactions?/.test(l))).toBe(true);
      for (const argv of [
        ['advertisers', 'sync', '--network', 'admitad', '--json'],
        ['orders', 'poll', '--network', 'admitad', '--no-progress'],
      ]) {
        const quiet = await runCli(argv, { db, tty: { columns: 80 } });
        expect(quiet.code, quiet.stderr).toBe(0);
        expect(quiet.stderr).toBe('');
      }
    });
  });
}
