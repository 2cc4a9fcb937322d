import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/context.js';
import { runCli } from '../helpers/cli.js';

type Json = Record<string, any>;

for (const dialect of dialects) {
  describe(`cashtrack schedules [${dialect}]`, () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase(dialect);
      expect((await runCli(['db', 'migrate'], { db })).code).toBe(0);
    });
    afterAll(() => db.drop());

    const on = {
      CASHTRACK_SCHEDULE_MAINTENANCE_PRUNE_ENABLED: 'true',
      CASHTRACK_SCHEDULE_MAINTENANCE_PRUNE_CRON: '0 */6 * * *',
      CASHTRACK_SCHEDULE_MAINTENANCE_PRUNE_TIMEZONE: 'Asia/Tokyo',
    };

    it('lists the schedules as a table and as JSON', async () => {
      const table = await runCli(['schedules', 'list'], { db, env: on });
      expect(table.code).toBe(0);
      expect(table.stdout).toMatch(/^NAME\s+CRON\s+TIMEZONE\s+ENABLED\s+NEXT_DUE\s+LAST_RUN\n/);
      expect(table.stdout).toMatch(/maintenance_prune\s+0 \*\/6 \* \* \*\s+Asia\/Tokyo\s+yes\s+\d{4}-\d\d-\d\dT\d\d:00:00\.000Z/);
      expect(table.stdout).toMatch(/coupons_refresh\s+41 \*\/12 \* \* \*\s+UTC\s+no\s*\n/);
      const json = (await runCli(['schedules', 'list', '--json'], { db, env: on })).json<Json[]>();
      expect(json.map((s) => [s.name, s.enabled])).toEqual([
        ['advertisers_sync', false],
        ['orders_poll', false],
        ['coupons_refresh', false],
        ['claims_poll', false],
        ['claims_export', false],
        ['networks_watchdog', false],
        ['payouts_batch_status', false],
        ['maintenance_prune', true],
        ['networks_payments', false],
      ]);
      // Every six hours in Tokyo (UTC+9): 03:00, 09:00, 15:00 or 21:00 UTC.
      expect(new Date(json[7].next_due).getUTCHours() % 6).toBe(3);
    });

    it('runs a schedule now, then skips it while its job is queued, and shows the last run', async () => {
      const first = await runCli(['schedules', 'run', 'maintenance_prune', '--json'], { db });
      expect(first.code).toBe(0);
      const [run] = first.json<Json[]>();
      expect(run).toMatchObject({ schedule: 'maintenance_prune', network: null, trigger: 'manual', status: 'queued', actor: 'cli' });
      const second = await runCli(['schedules', 'run', 'maintenance_prune'], { db });
      expect(second.stdout).toBe(`maintenance_prune: skipped, job ${run.job_id} (maintenance.prune) is still queued\n`);
      const table = await runCli(['schedules', 'list'], { db });
      expect(table.stdout).toMatch(new RegExp(`maintenance_prune .* skipped: job ${run.job_id} \\(maintenance\\.prune\\) is still queued`));
      expect((await runCli(['jobs', 'cancel', String(run.job_id)], { db })).code).toBe(0);
      const third = await runCli(['schedules', 'run', 'maintenance_prune'], { db });
      expect(third.stdout).toMatch(/^maintenance_prune: job \d+ queued \(a daemon runs it, or: cashtrack jobs run-pending\)\n$/);
      const listed = (await runCli(['schedules', 'list', '--json'], { db })).json<Json[]>();
      expect(listed.find((s) => s.name === 'maintenance_prune')?.last_run).toMatchObject({ status: 'queued', job_status: 'queued' });
      const none = await runCli(['schedules', 'run', 'orders_poll'], { db });
      expect(none.stdout).toBe('orders_poll: no network to run for (none is enabled and configured)\n');
    });

    it('lists and runs per-network schedules for each enabled, configured network', async () => {
      const configured = await runCli(
        [
          'networks',
          'configure',
          'admitad',
          '--set',
          'client_id=c1',
          '--set',
          'website_id=7',
          '--set',
          'base_url=https://api.admitad.test',
          '--secret-env',
          'client_secret=ADM_SECRET',
        ],
        { db, env: { ADM_SECRET: 'not-a-real-secret' } },
      );
      expect(configured.code, configured.stderr).toBe(0);
      expect((await runCli(['networks', 'enable', 'admitad'], { db })).code).toBe(0);
      const env = { CASHTRACK_SCHEDULE_ORDERS_POLL_ENABLED: 'true' };
      const table = await runCli(['schedules', 'list'], { db, env });
      expect(table.stdout).toMatch(/\n {2}admitad\s+7 \* \* \* \*\s+UTC\s+yes\s+\d{4}-\d\d-\d\dT\d\d:07:00\.000Z\n/);
      const run = await runCli(['schedules', 'run', 'orders_poll', '--network', 'admitad'], { db, env });
      expect(run.stdout).toMatch(/^orders_poll \(admitad\): job \d+ queued/);
      const again = await runCli(['schedules', 'run', 'orders_poll'], { db, env });
      expect(again.stdout).toMatch(/^orders_poll \(admitad\): skipped, job \d+ \(orders\.poll\) is still queued\n$/);
      const listed = (await runCli(['schedules', 'list', '--json'], { db, env })).json<Json[]>();
      expect(listed[1].networks).toEqual([
        expect.objectContaining({ network: 'admitad', enabled: true, last_run: expect.objectContaining({ status: 'skipped' }) }),
      ]);
      expect((await runCli(['networks', 'disable', 'admitad'], { db })).code).toBe(0);
    });

    it('refuses an unknown schedule, a network for a schedule that has none, and a bad expression, by code', async () => {
      const unknown = await runCli(['schedules', 'run', 'nightly'], { db });
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(
        /^svc_unknown_schedule: There is no schedule "nightly" \(schedules: advertisers_sync, orders_poll, coupons_refresh, claims_poll, claims_export, networks_watchdog, payouts_batch_status, maintenance_prune, networks_payments\)\./,
      );
      const json = await runCli(['schedules', 'run', 'maintenance_prune', '--network', 'awin', '--json'], { db });
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stderr)).toMatchObject({ code: 'svc_schedule_not_per_network' });
      const notFound = await runCli(['schedules', 'run', 'orders_poll', '--network', 'nowhere'], { db });
      expect(notFound.stderr).toMatch(/^svc_network_not_found: /);
      const bad = await runCli(['schedules', 'list'], { db, env: { CASHTRACK_SCHEDULE_ORDERS_POLL_CRON: '99 * * * *' } });
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(
        /^svc_invalid_config: Invalid configuration CASHTRACK_SCHEDULE_ORDERS_POLL_CRON \(schedules\.orders_poll\.cron\): "99 \* \* \* \*" is not a cron expression/,
      );
      const zone = await runCli(['schedules', 'list'], { db, env: { CASHTRACK_SCHEDULE_ADVERTISERS_SYNC_TIMEZONE: 'Moon/Base' } });
      expect(zone.stderr).toMatch(
        /^svc_invalid_config: Invalid configuration CASHTRACK_SCHEDULE_ADVERTISERS_SYNC_TIMEZONE \(schedules\.advertisers_sync\.timezone\): "Moon\/Base" is not a time zone/,
      );
    });
  });
}
