import { beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock.js';
import { HOOKS } from '../../../src/hooks/index.js';
import { buildBaseline, expectedOver, hourKey, poissonCdf } from '../../../src/services/watchdog/baseline.js';
import { describeEachDialect } from '../../helpers/context.js';
import { every, seedPostbacks } from '../../helpers/intake.js';
import { shopnetDefinition } from '../../helpers/networks.js';

const MIN = 60_000;
// 2026-03-10 is a Tuesday.
const TUESDAY_14 = '2026-03-10T14:00:00.000Z';
const clock = new ManualClock(TUESDAY_14);

describe('the Poisson bound and the baseline', () => {
  it('gives the chance of k or fewer events', () => {
    expect(poissonCdf(0, 12)).toBeCloseTo(Math.exp(-12), 12);
    expect(poissonCdf(2, 12)).toBeCloseTo(Math.exp(-12) * (1 + 12 + 72), 12);
    expect(poissonCdf(5, 0)).toBe(1);
    expect(poissonCdf(-1, 3)).toBe(0);
    // A large mean underflows e^-mean as a double; the log-space sum still answers.
    expect(poissonCdf(1000, 1000)).toBeGreaterThan(0.5);
    expect(poissonCdf(1000, 1000)).toBeLessThan(0.52);
  });

  it('averages each hour of the week over the hours since the first intake only', () => {
    const from = new Date('2026-02-10T00:00:00Z');
    const to = new Date('2026-03-10T00:00:00Z');
    // Intake starts on 2026-02-24 (two weeks back): 6 per hour every hour.
    const counts = new Map(every('2026-02-24T00:00:00Z', to, 60).map((at) => [hourKey(at), 6] as const));
    const baseline = buildBaseline(counts, from, to);
    expect(baseline.first_at).toBe('2026-02-24T00:00:00.000Z');
    expect(baseline.span_days).toBe(14);
    expect(baseline.events).toBe(14 * 24 * 6);
    expect(new Set(baseline.hours)).toEqual(new Set([6]));
    expect(expectedOver(baseline, new Date('2026-03-10T13:30:00Z'), new Date('2026-03-10T14:15:00Z'))).toBeCloseTo(4.5, 9);
  });
});

describeEachDialect(
  'the intake watchdog',
  (use) => {
    const stalled: { network: string; at: string }[] = [];
    const recovered: { network: string; at: string }[] = [];

    beforeAll(async () => {
      const { ctx } = use();
      ctx.hooks.addAction(HOOKS.networkStalled, 'test', (health: { network: string }) =>
        stalled.push({ network: health.network, at: clock.now().toISOString() }),
      );
      ctx.hooks.addAction(HOOKS.networkRecovered, 'test', (health: { network: string }) =>
        recovered.push({ network: health.network, at: clock.now().toISOString() }),
      );
      await ctx.webhooks.create({ url: 'http://127.0.0.1:9/hook', events: ['network.stalled', 'network.recovered'] }, 'test');
      // Only the networks a test makes are checked (built-in ones start switched off; make sure).
      for (const n of await ctx.networks.list()) if (n.enabled) await ctx.networks.disable(n.id, 'test');
    });

    async function network(id: string): Promise<void> {
      const { ctx } = use();
      await ctx.networks.saveCustom(id, shopnetDefinition({ name: id }), 'test');
      await ctx.networks.enable(id, 'test');
    }

    /** Runs the check every 5 minutes over [from, to] and returns the times it ran. */
    async function checkEvery5(from: string, to: string): Promise<void> {
      for (let t = new Date(from).getTime(); t <= new Date(to).getTime(); t += 5 * MIN) {
        clock.set(new Date(t));
        await use().ctx.watchdog.check('test');
      }
    }

    const outbox = async (event: string, network: string) =>
      (await use().ctx.db.select<{ payload: string }>('SELECT payload FROM webhook_deliveries WHERE event = ?', [event])).filter(
        (r) => JSON.parse(String(r.payload)).data.health.network === network,
      ).length;

    it('alarms once, within the window, when a steady network goes silent at 14:00 on a Tuesday, and recovers when postbacks return', async () => {
      const { ctx } = use();
      await network('steady');
      // Four weeks of a postback every 5 minutes, up to 14:00 on Tuesday; then nothing.
      await seedPostbacks(ctx, 'steady', every('2026-02-10T14:00:00Z', TUESDAY_14, 5));
      clock.set(TUESDAY_14);
      await ctx.watchdog.check('test');
      const before = await ctx.watchdog.health('steady');
      expect(before).toMatchObject({ state: 'ok', enough_history: true, reasons: [] });
      expect(before.baseline.expected_this_hour).toBe(12);
      expect(before.baseline.span_days).toBe(28);

      await checkEvery5('2026-03-10T14:05:00Z', '2026-03-10T15:30:00Z');
      const alarms = stalled.filter((s) => s.network === 'steady');
      expect(alarms).toHaveLength(1);
      // window_minutes is 60: silence is certain by 15:00, and a half-empty window is not yet enough.
      expect(alarms[0].at > '2026-03-10T14:30:00.000Z').toBe(true);
      expect(alarms[0].at <= '2026-03-10T15:00:00.000Z').toBe(true);
      expect(await outbox('network.stalled', 'steady')).toBe(1);
      await ctx.logger.flush();
      const warnings = await ctx.db.select<{ context: string }>(
        "SELECT context FROM logs WHERE level = 'warning' AND source = 'watchdog' AND message = 'Network stalled'",
      );
      expect(warnings.filter((w) => String(w.context).includes('"steady"'))).toHaveLength(1);
      const during = await ctx.watchdog.health('steady');
      expect(during).toMatchObject({ state: 'stalled', stalled_since: alarms[0].at, last_alarm_at: alarms[0].at });
      expect(during.reasons).toEqual([expect.objectContaining({ kind: 'intake_low', observed: 0, expected: 12, window_minutes: 60 })]);
      expect(during.last_alarm?.reasons[0].kind).toBe('intake_low');
      expect((await ctx.overview.get()).networks.stalled).toEqual([expect.objectContaining({ network: 'steady', stalled_since: alarms[0].at })]);

      // Postbacks come back at 16:00.
      await seedPostbacks(ctx, 'steady', every('2026-03-10T16:00:00Z', '2026-03-10T16:30:00Z', 5));
      clock.set('2026-03-10T16:01:00Z');
      await ctx.watchdog.check('test');
      await checkEvery5('2026-03-10T16:05:00Z', '2026-03-10T16:25:00Z');
      const back = recovered.filter((s) => s.network === 'steady');
      expect(back).toHaveLength(1);
      expect(back[0].at <= '2026-03-10T16:15:00.000Z').toBe(true);
      expect(await outbox('network.recovered', 'steady')).toBe(1);
      expect(await outbox('network.stalled', 'steady')).toBe(1);
      expect(await ctx.watchdog.health('steady')).toMatchObject({ state: 'ok', stalled_since: null, recovered_at: back[0].at, last_alarm_at: alarms[0].at });
      expect((await ctx.overview.get()).networks.stalled).toEqual([]);
      await ctx.networks.disable('steady', 'test');
    });

    it('does not alarm in a night that is always quiet for the network', async () => {
      const { ctx } = use();
      await network('nightly');
      // Every 5 minutes except 01:00-05:00 UTC, every day for four weeks.
      const quiet = (at: Date) => at.getUTCHours() >= 1 && at.getUTCHours() < 5;
      await seedPostbacks(
        ctx,
        'nightly',
        every('2026-02-10T00:00:00Z', '2026-03-11T05:30:00Z', 5, (at) => !quiet(at)),
      );
      await checkEvery5('2026-03-11T00:30:00Z', '2026-03-11T05:30:00Z');
      expect(stalled.filter((s) => s.network === 'nightly')).toEqual([]);
      const at3 = await ctx.watchdog.health('nightly');
      expect(at3.state).toBe('ok');
      clock.set('2026-03-11T03:00:00Z');
      const night = await ctx.watchdog.health('nightly');
      expect(night.baseline.expected_this_hour).toBe(0);
      expect(night.window).toMatchObject({ observed: 0, below_normal: false });
      await ctx.networks.disable('nightly', 'test');
    });

    it('never alarms for a network with too little history', async () => {
      const { ctx } = use();
      await network('young');
      // Five busy days (far more than min_history_events), then silence: min_history_days is 14.
      await seedPostbacks(ctx, 'young', every('2026-03-05T14:00:00Z', TUESDAY_14, 1));
      await checkEvery5(TUESDAY_14, '2026-03-10T18:00:00Z');
      expect(stalled.filter((s) => s.network === 'young')).toEqual([]);
      const health = await ctx.watchdog.health('young');
      expect(health).toMatchObject({ state: 'unknown', enough_history: false, last_alarm: null });
      expect(health.baseline.events).toBeGreaterThan(health.baseline.min_history_events);
      await ctx.networks.disable('young', 'test');
    });

    it('alarms once when the network refuses the credentials three polls in a row, and recovers on a good poll', async () => {
      const { ctx } = use();
      await network('authnet');
      clock.set('2026-03-12T09:00:00Z');
      await ctx.networks.recordRun('authnet', 'orders', { pages: 0 }, 'Auth Net refused the credentials', 'svc_network_unauthorized');
      await ctx.networks.recordRun('authnet', 'orders', { pages: 0 }, 'Auth Net refused the credentials', 'svc_network_unauthorized');
      await ctx.watchdog.check('test');
      expect((await ctx.watchdog.health('authnet')).state).toBe('unknown');
      // A failure of another kind in between does not count toward refused logins.
      await ctx.networks.recordRun('authnet', 'orders', { pages: 0 }, 'timeout', 'svc_network_timeout');
      await ctx.networks.recordRun('authnet', 'orders', { pages: 0 }, 'refused', 'svc_network_unauthorized');
      await ctx.networks.recordRun('authnet', 'orders', { pages: 0 }, 'refused', 'svc_network_unauthorized');
      await ctx.watchdog.check('test');
      expect(stalled.filter((s) => s.network === 'authnet')).toEqual([]);
      await ctx.networks.recordRun('authnet', 'orders', { pages: 0 }, 'refused', 'svc_network_unauthorized');
      await checkEvery5('2026-03-12T09:05:00Z', '2026-03-12T09:20:00Z');
      expect(stalled.filter((s) => s.network === 'authnet')).toHaveLength(1);
      expect(await outbox('network.stalled', 'authnet')).toBe(1);
      expect((await ctx.watchdog.health('authnet')).reasons).toEqual([{ kind: 'auth_failing', run: 'orders', failures: 3 }]);
      await ctx.networks.recordRun('authnet', 'orders', { pages: 1 }, null);
      clock.set('2026-03-12T09:25:00Z');
      await ctx.watchdog.check('test');
      expect(recovered.filter((s) => s.network === 'authnet')).toHaveLength(1);
      expect((await ctx.watchdog.health('authnet')).state).toBe('unknown');
      await ctx.networks.disable('authnet', 'test');
    });

    it('alarms when a scheduled poll has not succeeded for three of its intervals', async () => {
      const { ctx } = use();
      await network('latenet');
      clock.set('2026-03-13T10:07:30Z');
      await ctx.networks.recordRun('latenet', 'orders', { pages: 1 }, null);
      // orders_poll runs hourly ("7 * * * *"): three hours are allowed.
      clock.set('2026-03-13T12:30:00Z');
      await ctx.networks.recordRun('latenet', 'orders', { pages: 0 }, 'HTTP 503', 'svc_network_unavailable');
      await ctx.watchdog.check('test');
      expect((await ctx.watchdog.health('latenet')).state).toBe('unknown');
      clock.set('2026-03-13T13:10:00Z');
      await ctx.watchdog.check('test');
      const health = await ctx.watchdog.health('latenet');
      expect(health.state).toBe('stalled');
      expect(health.reasons).toEqual([{ kind: 'run_overdue', run: 'orders', last_ok_at: '2026-03-13T10:07:30.000Z', allowed_minutes: 180 }]);
      expect(health.runs).toEqual([{ run: 'orders', ok_at: '2026-03-13T10:07:30.000Z', auth_failures: 0, allowed_minutes: 180 }]);
      expect(stalled.filter((s) => s.network === 'latenet')).toHaveLength(1);
      await ctx.networks.disable('latenet', 'test');
    });

    it('answers not found for a network that does not exist', async () => {
      await expect(use().ctx.watchdog.health('nosuchnet')).rejects.toMatchObject({ status: 404 });
    });
  },
  { 'schedules.orders_poll.enabled': true },
  { clock },
);
