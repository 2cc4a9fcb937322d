// node-cron firing for real: three schedulers (three "daemons", each with its own connections and
// claim owner) on one database, a schedule every second. Each slot starts one job at most, and
// every queued run's job exists once.
import { Writable } from 'node:stream';
import { afterAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { buildContext, type Context } from '../../src/context.js';
import { CronSlots } from '../../src/cron-slots.js';
import { Scheduler } from '../../src/jobs/scheduler.js';
import { describeEachDialect } from '../helpers/context.js';
import { waitFor } from '../helpers/jobs.js';

describeEachDialect('the scheduler in the daemon', (use) => {
  const contexts: Context[] = [];
  afterAll(async () => {
    for (const c of contexts) await c.close();
  });

  const daemon = (name: string, overrides: Record<string, unknown>): Context => {
    const t = use();
    const config = loadConfig({
      env: { CASHTRACK_ENV: 'test' },
      overrides: { 'database.url': t.db.url, data_dir: t.db.dataDir, secret: t.config.secret, 'log.stdout': false, ...overrides },
    });
    const ctx = buildContext(config, { logStream: null, owner: name });
    contexts.push(ctx);
    return ctx;
  };

  it('fires a schedule from three daemons and claims each slot once', async () => {
    const every = {
      'schedules.maintenance_prune.enabled': true,
      'schedules.maintenance_prune.cron': '* * * * * *',
      'schedules.maintenance_prune.catch_up': false,
    };
    const daemons = ['one', 'two', 'three'].map((n) => daemon(n, every));
    const schedulers = daemons.map((ctx) => new Scheduler({ schedules: ctx.schedules, logger: ctx.logger }));
    await Promise.all(schedulers.map((s) => s.start()));
    const { ctx } = use();
    // Each queued run's job is cancelled as soon as it shows, so the next slot can queue again.
    const settled = new Set<number>();
    try {
      await waitFor(
        async () => {
          const runs = await ctx.schedules.runs('maintenance_prune');
          for (const r of runs) {
            if (r.status === 'queued' && r.job_id && !settled.has(r.job_id)) {
              settled.add(r.job_id);
              await ctx.jobs.cancel(r.job_id, 'test').catch(() => {});
            }
          }
          return runs.filter((r) => r.trigger === 'cron').length >= 3 ? runs : null;
        },
        30_000,
        'three slots to fire',
      );
    } finally {
      await Promise.all(schedulers.map((s) => s.stop()));
    }
    const runs = await ctx.schedules.runs('maintenance_prune');
    // One row per slot (the claim), every one on a whole second, from the cron.
    expect(new Set(runs.map((r) => r.slot)).size).toBe(runs.length);
    for (const r of runs) expect(r).toMatchObject({ trigger: 'cron', slot: expect.stringMatching(/:\d\d\.000Z$/) });
    // No slot started two jobs: each job belongs to exactly one queued run.
    const jobs = Number((await ctx.db.select<{ n: unknown }>("SELECT COUNT(*) AS n FROM jobs WHERE type = 'maintenance.prune'"))[0].n);
    expect(jobs).toBe(runs.filter((r) => r.status === 'queued').length);
    expect(new Set(runs.filter((r) => r.status === 'queued').map((r) => r.job_id)).size).toBe(jobs);
    for (const r of runs) expect(['one', 'two', 'three']).toContain(r.claimed_by);
  });

  it('catches up a missed slot at start, once however many daemons start', async () => {
    const { ctx } = use();
    const daily = {
      'schedules.orders_poll.enabled': false,
      'schedules.maintenance_prune.enabled': true,
      'schedules.maintenance_prune.cron': '0 0 1 1 *',
      'schedules.maintenance_prune.catch_up': true,
    };
    // The last run was long before this year's 1 January slot (the runs of the test before are gone).
    await ctx.db.execute('DELETE FROM schedule_runs');
    await ctx.db.execute(
      "INSERT INTO schedule_runs (schedule, network, slot, trigger_kind, status, claimed_by, actor, created_at) VALUES ('maintenance_prune', '', ?, 'cron', 'queued', 'old', 'test', ?)",
      [new Date('2001-01-01T00:00:00Z'), new Date('2001-01-01T00:00:00Z')],
    );
    const schedulers = ['four', 'five', 'six'].map((n) => daemon(n, daily)).map((c) => new Scheduler({ schedules: c.schedules, logger: c.logger }));
    await Promise.all(schedulers.map((s) => s.start()));
    await Promise.all(schedulers.map((s) => s.stop()));
    const year = new Date().getUTCFullYear();
    const caught = (await ctx.schedules.runs('maintenance_prune')).filter((r) => r.trigger === 'catch_up');
    expect(caught).toEqual([expect.objectContaining({ slot: `${year}-01-01T00:00:00.000Z`, status: expect.stringMatching(/^(queued|skipped)$/) })]);
  });

  it('catches up a beat node-cron missed because the process was busy', async () => {
    const { ctx } = use();
    await ctx.db.execute('DELETE FROM schedule_runs');
    const every3s = '*/3 * * * * *';
    const c = daemon('busy', {
      'schedules.maintenance_prune.enabled': true,
      'schedules.maintenance_prune.cron': every3s,
      'schedules.maintenance_prune.catch_up': true,
    });
    const scheduler = new Scheduler({ schedules: c.schedules, logger: c.logger, missedToleranceMs: 200 });
    await scheduler.start();
    // The event loop is blocked until 1.5 s past the next slot: node-cron finds that beat a second
    // late (past its 200 ms tolerance) and drops it as missed; the scheduler claims it as a catch-up.
    const slot = new CronSlots(every3s, 'UTC').next(new Date())!;
    while (Date.now() < slot.getTime() + 1_500) {
      // busy
    }
    try {
      const caught = await waitFor(
        async () => (await ctx.schedules.runs('maintenance_prune')).find((r) => r.slot === slot.toISOString()),
        20_000,
        'the missed beat to be caught up',
      );
      expect(caught).toMatchObject({ trigger: 'catch_up', claimed_by: 'busy' });
    } finally {
      await scheduler.stop();
    }
  });

  it('logs a network override that names no network, and a firing whose claim fails', async () => {
    const lines: Record<string, any>[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const t = use();
    const config = loadConfig({
      env: { CASHTRACK_ENV: 'test' },
      overrides: {
        'database.url': t.db.url,
        data_dir: t.db.dataDir,
        secret: t.config.secret,
        'log.stdout': false,
        'schedules.advertisers_sync.networks': { ghostnet: { enabled: false } },
        'schedules.maintenance_prune.enabled': true,
        'schedules.maintenance_prune.cron': '* * * * * *',
        'schedules.maintenance_prune.catch_up': false,
      },
    });
    const c = buildContext(config, { logStream: stream, owner: 'broken' });
    const scheduler = new Scheduler({ schedules: c.schedules, logger: c.logger });
    await scheduler.start();
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'warning',
        source: 'schedules',
        message: 'schedules.advertisers_sync.networks.ghostnet names no network: it is ignored',
      }),
    );
    // The database goes away: the next firing fails, is logged, and the daemon goes on.
    await c.db.close();
    await waitFor(() => lines.find((l) => l.message === 'Scheduled maintenance_prune failed'), 30_000, 'a failed firing to be logged');
    await scheduler.stop();
    await scheduler.stop();
    expect(lines.find((l) => l.message === 'Scheduled maintenance_prune failed')).toMatchObject({
      level: 'error',
      context: { schedule: 'maintenance_prune', network: null, slot: expect.stringMatching(/\.000Z$/), error: expect.any(String) },
    });
    await c.close();
  });

  it('starts even when the database is away at start, logging what it could not do', async () => {
    const lines: Record<string, any>[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const t = use();
    const config = loadConfig({
      env: { CASHTRACK_ENV: 'test' },
      overrides: {
        'database.url': t.db.url,
        data_dir: t.db.dataDir,
        secret: t.config.secret,
        'log.stdout': false,
        'schedules.maintenance_prune.enabled': true,
      },
    });
    const c = buildContext(config, { logStream: stream, owner: 'early' });
    await c.db.close();
    const scheduler = new Scheduler({ schedules: c.schedules, logger: c.logger });
    await scheduler.start();
    await scheduler.stop();
    expect(lines.filter((l) => l.level === 'error').map((l) => l.message)).toEqual([
      'Could not check the networks named in schedule overrides',
      'Catching up missed schedules failed',
    ]);
    await c.close();
  });
});
