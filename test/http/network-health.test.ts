import { expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/context.js';
import { runCli } from '../helpers/cli.js';
import { adminClient, NS } from '../helpers/http.js';
import { seedPostbacks } from '../helpers/intake.js';
import { shopnetDefinition } from '../helpers/networks.js';

type Json = Record<string, any>;
const TOKEN = 'metrics-token-0123456789';
const MIN = 60_000;

describeEachDialect(
  'a network health route, command and gauge',
  (use) => {
    const client = adminClient(use);

    it('shows the baseline, the last hour counting postbacks and polled orders, and the state the watchdog stored', async () => {
      const { ctx } = use();
      await ctx.networks.saveCustom('healthy', shopnetDefinition({ name: 'Healthy' }), 'test');
      const now = Date.now();
      await seedPostbacks(ctx, 'healthy', [new Date(now - 20 * MIN), new Date(now - 10 * MIN)]);
      // An order the poll brought in counts as intake; one entered by hand does not.
      for (const [txn, source] of [
        ['P1', 'poll'],
        ['M1', 'manual'],
      ]) {
        const at = new Date(now - 5 * MIN);
        await ctx.db.execute(
          'INSERT INTO orders (network, transaction_id, sale_amount, commission, currency, cashback, status, source, status_changed_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
          ['healthy', txn, 1000, 100, 'EUR', 50, 'pending', source, at, at, at],
        );
      }
      const before = await client.get('/networks/healthy/health');
      expect(before.statusCode).toBe(200);
      const h = before.result as Json;
      expect(h).toMatchObject({ network: 'healthy', state: 'unknown', checked_at: null, enough_history: false, reasons: [], last_alarm: null });
      // Observed over the last 60 minutes: the two postbacks and the polled order. What the baseline
      // expects of it depends on the clock hour the test runs in (the fresh intake is history too).
      expect(h.last_hour.observed).toBe(3);
      expect(h.last_hour.expected).toBeGreaterThanOrEqual(0);
      // The history ends where the current clock hour starts: what was seeded before it is history.
      const hourStart = Math.floor(now / (60 * MIN)) * 60 * MIN;
      const history = [now - 20 * MIN, now - 10 * MIN, now - 5 * MIN].filter((t) => t < hourStart).length;
      expect(h.baseline).toMatchObject({ events: history, min_history_days: 14, min_history_events: 100 });

      await ctx.watchdog.check('test');
      const after = (await client.get('/networks/healthy/health')).result as Json;
      expect(after.state).toBe('unknown');
      expect(after.checked_at).not.toBeNull();
    });

    it('answers 404 for an unknown network, 400 for a malformed id, 401 without credentials', async () => {
      const missing = await client.get('/networks/nosuch/health');
      expect(missing.statusCode).toBe(404);
      expect((missing.result as Json).code).toBe('svc_network_not_found');
      const bad = await client.get('/networks/Bad%20Id/health');
      expect(bad.statusCode).toBe(400);
      expect((bad.result as Json).code).toBe('rest_invalid_param');
      expect((await client.server.inject(`${NS}/networks/healthy/health`)).statusCode).toBe(401);
    });

    it('shows a network refusing its credentials as stalled in the route, the overview, the gauge and the command', async () => {
      const { ctx, db } = use();
      await ctx.networks.saveCustom('locked', shopnetDefinition({ name: 'Locked' }), 'test');
      for (let i = 0; i < 3; i++) await ctx.networks.recordRun('locked', 'orders', { pages: 0 }, 'refused', 'svc_network_unauthorized');
      const result = await ctx.watchdog.check('test');
      expect(result.alarms).toContain('locked');
      expect(result.alarms).not.toContain('healthy');

      const h = (await client.get('/networks/locked/health')).result as Json;
      expect(h).toMatchObject({ state: 'stalled', reasons: [{ kind: 'auth_failing', run: 'orders', failures: 3 }] });
      expect(h.last_alarm.reasons).toEqual([{ kind: 'auth_failing', run: 'orders', failures: 3 }]);
      const overview = (await client.get('/overview')).result as Json;
      expect(overview.networks.stalled).toEqual([{ network: 'locked', stalled_since: h.stalled_since, reasons: h.reasons }]);

      const metrics = (await client.server.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).payload;
      expect(metrics).toMatch(/cashtrack_network_stalled\{network="locked"\} 1/);
      expect(metrics).toMatch(/cashtrack_network_stalled\{network="healthy"\} 0/);

      const one = await runCli(['networks', 'health', 'locked'], { db });
      expect(one.code).toBe(0);
      expect(one.stdout).toMatch(/^state\s+stalled$/m);
      expect(one.stdout).toMatch(/^reasons\s+orders: credentials refused 3 time\(s\) in a row$/m);
      const json = await runCli(['networks', 'health', 'locked', '--json'], { db });
      expect(json.json<Json>()).toMatchObject({ network: 'locked', state: 'stalled' });
      const all = await runCli(['networks', 'health'], { db });
      expect(all.stdout).toMatch(/^NETWORK\s+STATE\s+REASONS\s+THIS_HOUR\s+LAST_HOUR\s+LAST_ALARM\n/);
      expect(all.stdout).toMatch(/^locked\s+stalled\s+auth_failing\s+0\s+0\s+\d{4}-/m);
      expect(all.stdout).toMatch(/^healthy\s+unknown\s+0\s+3\s*$/m);
      const overviewCli = await runCli(['overview'], { db });
      expect(overviewCli.stdout).toContain(`stalled networks: locked (since ${h.stalled_since})`);

      const missing = await runCli(['networks', 'health', 'nosuch'], { db });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/^svc_network_not_found: /);
    });

    it('runs as the networks.watchdog job the networks_watchdog schedule queues', async () => {
      const { ctx, db } = use();
      const queued = await runCli(['schedules', 'run', 'networks_watchdog', '--json'], { db });
      expect(queued.code).toBe(0);
      const ran = await runCli(['jobs', 'run-pending'], { db });
      expect(ran.code).toBe(0);
      const [job] = await ctx.jobs.list({ type: 'networks.watchdog', page: 1, per_page: 10 }).then((p) => p.items);
      expect(job).toMatchObject({ status: 'done', result: { checked: 2, stalled: 1, unknown: 1, alarms: [], recoveries: [] } });
      expect((await ctx.watchdog.health('locked')).state).toBe('stalled');
    });
  },
  { 'metrics.enabled': true, 'metrics.token': TOKEN },
);
