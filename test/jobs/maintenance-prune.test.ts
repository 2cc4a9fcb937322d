import { expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { JobRunner } from '../../src/jobs/runner.js';
import { describeEachDialect } from '../helpers/context.js';

const clock = new ManualClock('2026-05-01T00:00:00Z');
const DAY = 86_400_000;

describeEachDialect(
  'the maintenance.prune job',
  (use) => {
    const runPending = () => {
      const { ctx } = use();
      return new JobRunner({ ctx, jobs: ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 20 }).runPending();
    };
    const count = async (table: string) => Number((await use().ctx.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ${table}`))[0].n);

    it('deletes old log entries, expired sessions, expired idempotency keys, old finished jobs, old postback records, expired throttle counters, old schedule runs and old webhook deliveries, and keeps the rest', async () => {
      const { ctx } = use();
      const user = await ctx.users.create({ login: 'pruner', email: 'pruner@example.com', role: 'administrator' });
      // Forty days ago: one of each.
      ctx.logger.info('test', 'old entry');
      await ctx.logger.flush();
      await ctx.sessions.create(user, '127.0.0.1', 'test');
      await ctx.idempotency.run(
        { scope: 'test.scope', owner: 'user:1', key: 'old-key', hash: 'h' },
        async () => 'ran',
        (result) => ({ status: 200, body: result }),
      );
      await ctx.authThrottle.claimAddress('192.0.2.1');
      const postback = (at: Date) =>
        ctx.db.execute("INSERT INTO postbacks (received_at, network, method, outcome, test) VALUES (?, 'shop', 'GET', 'rejected', ?)", [at, false]);
      await postback(new Date(ctx.clock.now().getTime() - 60 * DAY)); // 100 days old once the clock moves: past the 90-day retention
      const hook = await ctx.webhooks.create({ url: 'http://127.0.0.1:9/hook', events: ['*'], enabled: false }, 'test');
      const delivery = (at: Date, status: string) =>
        ctx.db.execute(
          'INSERT INTO webhook_deliveries (id, webhook_id, event, payload, status, attempts, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?)',
          [`msg_${status.toUpperCase().padEnd(26, '0')}`, hook.id, 'ping', '{}', status, at, at],
        );
      await delivery(ctx.clock.now(), 'dead'); // 40 days old once the clock moves: past the 30-day retention
      const oldJob = await ctx.jobs.enqueue('maintenance.prune', { log_retention_days: 1 }, 'test');
      await ctx.jobs.cancel(oldJob.id, 'test');
      // Two runs of a schedule (their jobs cancelled): the older run goes, the latest stays.
      const [oldRun] = await ctx.schedules.run('maintenance_prune', {}, 'test');
      await ctx.jobs.cancel(oldRun.job_id!, 'test');
      clock.advance(1000);
      const [latestRun] = await ctx.schedules.run('maintenance_prune', {}, 'test');
      await ctx.jobs.cancel(latestRun.job_id!, 'test');
      clock.advance(40 * DAY);
      // Today: one of each again.
      ctx.logger.info('test', 'new entry');
      await ctx.logger.flush();
      await ctx.sessions.create(user, '127.0.0.1', 'test');
      await ctx.idempotency.run(
        { scope: 'test.scope', owner: 'user:1', key: 'new-key', hash: 'h' },
        async () => 'ran',
        (result) => ({ status: 200, body: result }),
      );
      await ctx.authThrottle.claimAddress('192.0.2.2');
      await postback(ctx.clock.now());
      await delivery(ctx.clock.now(), 'delivered');
      const before = {
        logs: await count('logs'),
        sessions: await count('sessions'),
        idempotency_keys: await count('idempotency_keys'),
        jobs: await count('jobs'),
      };

      const job = await ctx.jobs.enqueue('maintenance.prune', {}, 'test');
      expect(await runPending()).toEqual([{ id: job.id, type: 'maintenance.prune', status: 'done' }]);
      const done = await ctx.jobs.get(job.id);
      expect(done).toMatchObject({
        status: 'done',
        progress: { total: 10, done: 10, failed: 0 },
        result: {
          deleted: {
            logs: expect.any(Number),
            sessions: 1,
            idempotency_keys: 1,
            jobs: 3,
            postbacks: 1,
            auth_throttle: 1,
            schedule_runs: 1,
            webhook_deliveries: 1,
            clicks: 0,
            exports: 0,
          },
        },
      });
      expect((await ctx.schedules.runs('maintenance_prune')).map((r) => r.id)).toEqual([latestRun.id]);
      expect(oldRun.id).not.toBe(latestRun.id);
      expect(await count('webhook_deliveries')).toBe(1);
      expect(await count('postbacks')).toBe(1);
      expect(done.result!.deleted).toMatchObject({ logs: expect.toSatisfy((n: number) => n >= 1) });
      expect(await count('sessions')).toBe(before.sessions - 1);
      expect(await count('idempotency_keys')).toBe(before.idempotency_keys - 1);
      expect(await count('auth_throttle')).toBe(1);
      // Three old jobs went (one cancelled by hand, two queued by the schedule runs), the prune's own came.
      expect(await count('jobs')).toBe(before.jobs - 2);
      const { items } = await ctx.logger.list({ source: 'test', page: 1, per_page: 10 });
      expect(items.map((e) => e.message)).toEqual(['new entry']);
      await expect(ctx.jobs.get(oldJob.id)).rejects.toMatchObject({ code: 'svc_job_not_found' });
    });

    it('keeps the log for log_retention_days when given', async () => {
      const { ctx } = use();
      ctx.logger.info('test', 'three days old');
      await ctx.logger.flush();
      clock.advance(3 * DAY);
      const keep = await ctx.jobs.enqueue('maintenance.prune', { log_retention_days: 5 }, 'test');
      await runPending();
      expect((await ctx.jobs.get(keep.id)).result).toMatchObject({ deleted: { logs: 0 } });
      const drop = await ctx.jobs.enqueue('maintenance.prune', { log_retention_days: 2 }, 'test');
      await runPending();
      expect((await ctx.jobs.get(drop.id)).result).toMatchObject({ deleted: { logs: expect.toSatisfy((n: number) => n >= 1) } });
      expect((await ctx.logger.list({ search: 'three days old', page: 1, per_page: 10 })).total).toBe(0);
    });
  },
  { 'jobs.retention_days': 30 },
  { clock },
);
