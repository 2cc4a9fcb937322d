import { afterAll, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock.js';
import { loadConfig, type ScheduleConfig, type ScheduleName } from '../../../src/config/index.js';
import { buildContext, type Context } from '../../../src/context.js';
import { jobTypes } from '../../../src/jobs/types/index.js';
import type { JobType } from '../../../src/jobs/registry.js';
import { JobRunner } from '../../../src/jobs/runner.js';
import { scheduleDefinitions } from '../../../src/jobs/schedules.js';
import type { Network } from '../../../src/services/networks/index.js';
import { ScheduleService } from '../../../src/services/schedules/index.js';
import { describeEachDialect, type TestContext } from '../../helpers/context.js';

// A build without the coupon refresh job (the schedule wires itself only when the type is there).
const withoutCoupons: JobType[] = jobTypes.filter((t) => t.type !== 'coupons.refresh');

const network = (id: string, over: Partial<Network> = {}): Network =>
  ({ id, kind: 'builtin', name: id.toUpperCase(), enabled: true, configured: true, definition: null, ...over }) as Network;

const clock = new ManualClock('2026-05-01T09:00:00Z');

describeEachDialect(
  'the schedule service',
  (use) => {
    const extra: Context[] = [];
    afterAll(async () => {
      for (const c of extra) await c.close();
    });

    /** Another process on the same database: its own connections, clock and claim owner. */
    const otherProcess = (name: string, processClock = clock, overrides: Record<string, unknown> = {}, types: JobType[] = jobTypes): Context => {
      const t: TestContext = use();
      const config = loadConfig({
        env: { CASHTRACK_ENV: 'test' },
        overrides: { 'database.url': t.db.url, data_dir: t.db.dataDir, secret: t.config.secret, 'log.stdout': false, ...overrides },
      });
      const c = buildContext(config, { logStream: null, clock: processClock, owner: name, jobTypes: types });
      extra.push(c);
      return c;
    };

    /** A service on `ctx`'s database with these schedules and networks (no network modules needed). */
    const service = (
      ctx: Context,
      schedules: Partial<Record<ScheduleName, Partial<ScheduleConfig>>>,
      networks: Network[] = [],
      owner = 'test',
      serviceClock = clock,
    ) => {
      const base = ctx.config.schedules;
      const config = Object.fromEntries(Object.entries(base).map(([k, v]) => [k, { ...v, ...(schedules[k as ScheduleName] ?? {}) }])) as Record<
        ScheduleName,
        ScheduleConfig
      >;
      return new ScheduleService({
        db: ctx.db,
        clock: serviceClock,
        logger: ctx.logger,
        jobs: ctx.jobs,
        networks: { list: async () => networks },
        config,
        definitions: scheduleDefinitions,
        owner,
      });
    };

    const jobCount = async (ctx: Context, type: string) =>
      Number((await ctx.db.select<{ n: unknown }>('SELECT COUNT(*) AS n FROM jobs WHERE type = ?', [type]))[0].n);
    const cancelAll = async (ctx: Context) => {
      const { items } = await ctx.jobs.list({ status: 'queued', page: 1, per_page: 100 });
      for (const j of items) await ctx.jobs.cancel(j.id, 'test');
    };

    it('starts one job when three processes fire the same slot at once', async () => {
      const processes = ['daemon-a', 'daemon-b', 'daemon-c'].map((n) => otherProcess(n, clock, { 'schedules.maintenance_prune.enabled': true }));
      const slot = new Date('2026-05-01T03:17:00Z');
      const results = await Promise.all(processes.map((p) => p.schedules.fire({ schedule: 'maintenance_prune', network: null }, slot)));
      const won = results.flat();
      expect(won).toHaveLength(1);
      expect(won[0]).toMatchObject({
        schedule: 'maintenance_prune',
        network: null,
        slot: slot.toISOString(),
        trigger: 'cron',
        status: 'queued',
        job_status: 'queued',
        actor: 'schedule:maintenance_prune',
      });
      expect(['daemon-a', 'daemon-b', 'daemon-c']).toContain(won[0].claimed_by);
      expect(await jobCount(use().ctx, 'maintenance.prune')).toBe(1);
      // Firing it again later (a slow daemon) claims nothing.
      expect(await processes[0].schedules.fire({ schedule: 'maintenance_prune', network: null }, slot)).toEqual([]);
      expect(await jobCount(use().ctx, 'maintenance.prune')).toBe(1);
      await cancelAll(use().ctx);
    });

    it('never runs a slot again once its job has ended: a late firing, another process or a catch-up claims nothing', async () => {
      const { ctx } = use();
      const [a, b] = ['ended-a', 'ended-b'].map((n) => otherProcess(n, clock, { 'schedules.maintenance_prune.enabled': true }));
      const slot = new Date('2026-05-04T03:17:00Z');
      const [run] = await a.schedules.fire({ schedule: 'maintenance_prune', network: null }, slot);
      expect(run).toMatchObject({ slot: slot.toISOString(), status: 'queued', job_id: expect.any(Number) });
      // The job runs to its end, so the one-queued-job rule no longer stands in the way of a second claim.
      const outcomes = await new JobRunner({ ctx, jobs: ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 20 }).runPending();
      expect(outcomes).toEqual([{ id: run.job_id, type: 'maintenance.prune', status: 'done' }]);
      const jobs = await jobCount(ctx, 'maintenance.prune');
      expect(await a.schedules.fire({ schedule: 'maintenance_prune', network: null }, slot)).toEqual([]);
      expect(await b.schedules.fire({ schedule: 'maintenance_prune', network: null }, slot)).toEqual([]);
      expect(await jobCount(ctx, 'maintenance.prune')).toBe(jobs);
      const runs = await ctx.db.select<{ n: unknown }>("SELECT COUNT(*) AS n FROM schedule_runs WHERE schedule = 'maintenance_prune' AND slot = ?", [slot]);
      expect(Number(runs[0].n)).toBe(1);
      // The same after a cancelled job: ended is ended.
      const later = new Date('2026-05-05T03:17:00Z');
      const [second] = await b.schedules.fire({ schedule: 'maintenance_prune', network: null }, later);
      await ctx.jobs.cancel(second.job_id!, 'test');
      expect(await a.schedules.fire({ schedule: 'maintenance_prune', network: null }, later)).toEqual([]);
      expect(await jobCount(ctx, 'maintenance.prune')).toBe(jobs + 1);
    });

    it('computes the same slot on clocks a few seconds apart, so catch-up starts one job', async () => {
      const { ctx } = use();
      // The last run was yesterday's; today's 04:23 slot was missed. Three clocks read 04:23:00.2, :03 and :07.
      await ctx.db.execute(
        "INSERT INTO schedule_runs (schedule, network, slot, trigger_kind, status, claimed_by, actor, created_at) VALUES ('advertisers_sync', 'skew', ?, 'cron', 'queued', 'earlier', 'test', ?)",
        [new Date('2026-04-30T04:23:00Z'), new Date('2026-04-30T04:23:00Z')],
      );
      const clocks = ['2026-05-01T04:23:00.200Z', '2026-05-01T04:23:03Z', '2026-05-01T04:23:07Z'].map((t) => new ManualClock(t));
      const services = clocks.map((c, i) =>
        service(otherProcess(`skewed-${i}`, c), { advertisers_sync: { enabled: true } }, [network('skew')], `skewed-${i}`, c),
      );
      const runs = (await Promise.all(services.map((s) => s.catchUp()))).flat();
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({ schedule: 'advertisers_sync', network: 'skew', slot: '2026-05-01T04:23:00.000Z', trigger: 'catch_up', status: 'queued' });
      expect(await ctx.jobs.get(runs[0].job_id!)).toMatchObject({ type: 'advertisers.sync', params: { network: 'skew' } });
      await cancelAll(ctx);
    });

    it('catches up once after a long gap: the latest missed slot only, and only once', async () => {
      const { ctx } = use();
      const s = service(ctx, { orders_poll: { enabled: true, cron: '7 * * * *' } }, [network('gap')]);
      const first = await s.fire({ schedule: 'orders_poll', network: null }, new Date('2026-05-01T08:07:00Z'));
      expect(first).toHaveLength(1);
      await cancelAll(ctx);
      // Every daemon was down for three days: 72 hourly slots went by.
      const later = new ManualClock('2026-05-04T10:30:00Z');
      const restarted = service(ctx, { orders_poll: { enabled: true, cron: '7 * * * *' } }, [network('gap')], 'restarted', later);
      const caught = await restarted.catchUp();
      expect(caught).toEqual([
        expect.objectContaining({ schedule: 'orders_poll', network: 'gap', slot: '2026-05-04T10:07:00.000Z', trigger: 'catch_up', status: 'queued' }),
      ]);
      await cancelAll(ctx);
      // A second start (another daemon, or a restart) finds nothing missed.
      expect(await restarted.catchUp()).toEqual([]);
      expect((await restarted.runs('orders_poll')).filter((r) => r.network === 'gap').map((r) => r.slot)).toEqual([
        '2026-05-04T10:07:00.000Z',
        '2026-05-01T08:07:00.000Z',
      ]);
    });

    it('withdraws a catch-up claim that a newer run overtook meanwhile', async () => {
      const { ctx } = use();
      const at = new ManualClock('2026-05-05T10:30:00Z');
      // Between the catch-up's read of the last run and its claim, a newer run is claimed (a manual
      // run, or the daemons that were up firing the next slot).
      let overtaken = false;
      const db = new Proxy(ctx.db, {
        get(target, prop) {
          if (prop === 'select') {
            return async (sql: string, params?: unknown[], t?: never) => {
              const rows = await target.select(sql, params, t);
              if (!overtaken && sql.includes('ORDER BY r.slot DESC')) {
                overtaken = true;
                await target.execute(
                  "INSERT INTO schedule_runs (schedule, network, slot, trigger_kind, status, claimed_by, actor, created_at) VALUES ('orders_poll', 'race', ?, 'manual', 'queued', 'other', 'test', ?)",
                  [at.now(), at.now()],
                );
              }
              return rows as never;
            };
          }
          const value = Reflect.get(target, prop, target) as unknown;
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      const s = new ScheduleService({
        db,
        clock: at,
        logger: ctx.logger,
        jobs: ctx.jobs,
        networks: { list: async () => [network('race')] },
        config: { ...ctx.config.schedules, orders_poll: { ...ctx.config.schedules.orders_poll, enabled: true } },
        definitions: scheduleDefinitions,
        owner: 'racer',
      });
      expect(await s.catchUp()).toEqual([]);
      expect(overtaken).toBe(true);
      expect((await s.runs('orders_poll')).filter((r) => r.network === 'race').map((r) => [r.slot, r.trigger])).toEqual([
        ['2026-05-05T10:30:00.000Z', 'manual'],
      ]);
    });

    it('catches up a schedule that never ran, and none with catch_up off', async () => {
      const { ctx } = use();
      const at = new ManualClock('2026-05-02T12:00:00Z');
      const off = service(ctx, { orders_poll: { enabled: true, catch_up: false } }, [network('fresh')], 'off', at);
      expect(await off.catchUp()).toEqual([]);
      const on = service(ctx, { orders_poll: { enabled: true } }, [network('fresh')], 'on', at);
      expect(await on.catchUp()).toEqual([expect.objectContaining({ network: 'fresh', slot: '2026-05-02T11:07:00.000Z', trigger: 'catch_up' })]);
      await cancelAll(ctx);
    });

    it('never fires a disabled schedule or network, nor catches it up', async () => {
      const { ctx } = use();
      const at = new ManualClock('2026-05-02T12:00:00Z');
      const s = service(
        ctx,
        { orders_poll: { enabled: false, networks: { solo: { enabled: true } } }, maintenance_prune: { enabled: false }, coupons_refresh: { enabled: false } },
        [network('quiet'), network('solo')],
        'disabled',
        at,
      );
      expect(s.cronTasks().map((t) => t.schedule)).not.toContain('maintenance_prune');
      expect(await s.fire({ schedule: 'maintenance_prune', network: null }, new Date('2026-05-02T03:17:00Z'))).toEqual([]);
      // The schedule is off but one network is switched on alone: only that one runs.
      const runs = await s.fire({ schedule: 'orders_poll', network: null }, new Date('2026-05-02T11:07:00Z'));
      expect(runs.map((r) => r.network)).toEqual(['solo']);
      const caught = await s.catchUp();
      expect(caught.map((r) => r.network)).toEqual([]);
      expect((await s.runs('orders_poll')).some((r) => r.network === 'quiet')).toBe(false);
      await cancelAll(ctx);
    });

    it('fires a network with its own expression on its own slots and not on the schedule’s', async () => {
      const { ctx } = use();
      const s = service(
        ctx,
        { advertisers_sync: { enabled: true, cron: '0 4 * * *', networks: { fast: { cron: '*/30 * * * *' }, off: { enabled: false } } } },
        [
          network('fast'),
          network('slow'),
          network('off'),
          network('nofeed', { kind: 'custom', definition: { feeds: { advertisers: null } } as Network['definition'] }),
          network('unset', { configured: false }),
        ],
      );
      const tasks = s.cronTasks().filter((t) => t.schedule === 'advertisers_sync');
      expect(tasks).toEqual([
        { schedule: 'advertisers_sync', network: null, cron: '0 4 * * *', timezone: 'UTC' },
        { schedule: 'advertisers_sync', network: 'fast', cron: '*/30 * * * *', timezone: 'UTC' },
      ]);
      const daily = await s.fire({ schedule: 'advertisers_sync', network: null }, new Date('2026-05-03T04:00:00Z'));
      expect(daily.map((r) => r.network)).toEqual(['slow']);
      const fast = await s.fire({ schedule: 'advertisers_sync', network: 'fast' }, new Date('2026-05-03T04:30:00Z'));
      expect(fast.map((r) => [r.network, r.slot])).toEqual([['fast', '2026-05-03T04:30:00.000Z']]);
      // A date that is not a slot of the expression fires nothing.
      expect(await s.fire({ schedule: 'advertisers_sync', network: null }, new Date('2026-05-03T04:30:00Z'))).toEqual([]);
      const listed = (await s.list()).find((x) => x.name === 'advertisers_sync')!;
      expect(listed.networks!.map((n) => [n.network, n.cron, n.enabled])).toEqual([
        ['fast', '*/30 * * * *', true],
        ['slow', '0 4 * * *', true],
        ['off', '0 4 * * *', false],
      ]);
      expect(listed.networks!.find((n) => n.network === 'off')!.next_due).toBeNull();
      await cancelAll(ctx);
    });

    it('skips a run whose previous job is still queued, says why, and logs "queued" with the job id', async () => {
      const { ctx } = use();
      const s = service(ctx, { maintenance_prune: { enabled: true } }, [], 'overlap');
      const [queued] = await s.fire({ schedule: 'maintenance_prune', network: null }, new Date('2026-06-01T03:17:00Z'));
      expect(queued).toMatchObject({ status: 'queued', job_id: expect.any(Number), reason: null });
      const [skipped] = await s.fire({ schedule: 'maintenance_prune', network: null }, new Date('2026-06-02T03:17:00Z'));
      expect(skipped).toMatchObject({ status: 'skipped', job_id: queued.job_id, reason: `job ${queued.job_id} (maintenance.prune) is still queued` });
      await ctx.logger.flush();
      const { items } = await ctx.logger.list({ source: 'schedules', page: 1, per_page: 20 });
      const messages = items.map((e) => e.message);
      expect(messages).toContain(`Scheduled maintenance_prune queued job ${queued.job_id}`);
      expect(messages).toContain(`Scheduled maintenance_prune skipped: job ${queued.job_id} is still queued`);
      expect(items.find((e) => e.message.includes('skipped'))).toMatchObject({
        level: 'warning',
        context: expect.objectContaining({ reason: 'overlap', job_id: queued.job_id }),
      });
      // Once the job is over, the next slot queues again.
      await ctx.jobs.cancel(queued.job_id!, 'test');
      const [again] = await s.fire({ schedule: 'maintenance_prune', network: null }, new Date('2026-06-03T03:17:00Z'));
      expect(again).toMatchObject({ status: 'queued' });
      expect(again.job_id).not.toBe(queued.job_id);
      await cancelAll(ctx);
    });

    it('lists the coupon schedule as unavailable until the job type is registered, then fires it', async () => {
      const { ctx } = use();
      const without = otherProcess('without-coupons', clock, { 'schedules.coupons_refresh.enabled': true }, withoutCoupons).schedules;
      const listed = (await without.list()).find((x) => x.name === 'coupons_refresh')!;
      expect(listed).toMatchObject({ available: false, job_type: 'coupons.refresh', next_due: null, enabled: true });
      expect(without.cronTasks().map((t) => t.schedule)).not.toContain('coupons_refresh');
      expect(await without.fire({ schedule: 'coupons_refresh', network: null }, new Date('2026-05-01T00:41:00Z'))).toEqual([]);
      await expect(without.run('coupons_refresh', {}, 'test')).rejects.toMatchObject({ code: 'svc_schedule_unavailable', status: 409 });

      const other = otherProcess('with-coupons', clock, { 'schedules.coupons_refresh.enabled': true });
      expect(other.schedules.cronTasks()).toContainEqual({ schedule: 'coupons_refresh', network: null, cron: '41 */12 * * *', timezone: 'UTC' });
      const [run] = await other.schedules.fire({ schedule: 'coupons_refresh', network: null }, new Date('2026-05-01T12:41:00Z'));
      expect(await other.jobs.get(run.job_id!)).toMatchObject({ type: 'coupons.refresh', params: {} });
      expect((await other.schedules.list()).find((x) => x.name === 'coupons_refresh')).toMatchObject({
        available: true,
        next_due: '2026-05-01T12:41:00.000Z',
        last_run: { job_id: run.job_id },
      });
      await cancelAll(ctx);
    });

    it('runs a schedule now for each network or one, and refuses what it cannot run', async () => {
      const { ctx } = use();
      const s = service(ctx, {}, [
        network('one'),
        network('two'),
        network('sleepy', { enabled: false }),
        network('bare', { configured: false }),
        network('feedless', { kind: 'custom', definition: { feeds: null } as Network['definition'] }),
      ]);
      const runs = await s.run('orders_poll', {}, 'user:1');
      expect(runs.map((r) => [r.network, r.trigger, r.status, r.actor])).toEqual([
        ['one', 'manual', 'queued', 'user:1'],
        ['two', 'manual', 'queued', 'user:1'],
      ]);
      const [only] = await s.run('advertisers_sync', { network: 'two' }, 'cli');
      expect(await ctx.jobs.get(only.job_id!)).toMatchObject({ type: 'advertisers.sync', params: { network: 'two' }, actor: 'cli' });
      // Asked twice in the same millisecond (one clock): both runs are recorded, a millisecond apart.
      const [a] = await s.run('maintenance_prune', {}, 'cli');
      const [b] = await s.run('maintenance_prune', {}, 'cli');
      expect(new Date(b.slot).getTime() - new Date(a.slot).getTime()).toBe(1);
      expect(b).toMatchObject({ status: 'skipped', job_id: a.job_id });
      await expect(s.run('nightly', {}, 'cli')).rejects.toMatchObject({
        code: 'svc_unknown_schedule',
        status: 404,
        data: {
          schedules: [
            'advertisers_sync',
            'orders_poll',
            'coupons_refresh',
            'claims_poll',
            'claims_export',
            'networks_watchdog',
            'payouts_batch_status',
            'maintenance_prune',
            'networks_payments',
          ],
        },
      });
      await expect(s.run('maintenance_prune', { network: 'one' }, 'cli')).rejects.toMatchObject({ code: 'svc_schedule_not_per_network', status: 400 });
      await expect(s.run('orders_poll', { network: 'ghost' }, 'cli')).rejects.toMatchObject({ code: 'svc_network_not_found', status: 404 });
      await expect(s.run('orders_poll', { network: 'sleepy' }, 'cli')).rejects.toMatchObject({
        code: 'svc_schedule_network_unavailable',
        status: 409,
        data: { network: 'sleepy', reason: 'disabled' },
      });
      await expect(s.run('orders_poll', { network: 'bare' }, 'cli')).rejects.toMatchObject({
        code: 'svc_schedule_network_unavailable',
        data: { reason: 'not_configured' },
      });
      await expect(s.run('orders_poll', { network: 'feedless' }, 'cli')).rejects.toMatchObject({
        code: 'svc_schedule_network_unavailable',
        data: { reason: 'unsupported' },
      });
      await expect(s.runs('nightly')).rejects.toMatchObject({ code: 'svc_unknown_schedule' });
      await cancelAll(ctx);
    });

    it('names the key of a bad expression or time zone', async () => {
      const { ctx } = use();
      expect(() => service(ctx, { orders_poll: { cron: '* * * *  61' } })).toThrow(
        expect.objectContaining({ code: 'svc_invalid_config', data: { key: 'schedules.orders_poll' } }),
      );
      expect(() => service(ctx, { maintenance_prune: { timezone: 'Nowhere/Town' } })).toThrow(
        expect.objectContaining({ code: 'svc_invalid_config', message: expect.stringContaining('"Nowhere/Town" is not a time zone') }),
      );
      expect(() => service(ctx, { advertisers_sync: { networks: { awin: { cron: 'hourly' } } } })).toThrow(
        expect.objectContaining({ code: 'svc_invalid_config', data: { key: 'schedules.advertisers_sync.networks.awin' } }),
      );
      // Networks named in overrides that do not exist are reported (the daemon logs them).
      expect(await service(ctx, { advertisers_sync: { networks: { ghost: { enabled: false } } } }, [network('real')]).unknownOverrides()).toEqual([
        'schedules.advertisers_sync.networks.ghost',
      ]);
    });
  },
  {},
  { clock, jobTypes },
);
