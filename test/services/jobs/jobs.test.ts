import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import Joi from 'joi';
import { ManualClock } from '../../../src/clock.js';
import { JobRegistry } from '../../../src/jobs/registry.js';
import { jobTypes } from '../../../src/jobs/types/index.js';
import { JobService } from '../../../src/services/jobs/index.js';
import { describeEachDialect } from '../../helpers/context.js';
import { JobLab } from '../../helpers/jobs.js';

const clock = new ManualClock('2026-03-01T00:00:00Z');
const LEASE = 60_000;

describe('the job registry', () => {
  const run = async () => ({});
  const params = Joi.object({});

  it('refuses a type registered twice', () => {
    expect(
      () =>
        new JobRegistry([
          { type: 'a.b', description: 'x', params, run },
          { type: 'a.b', description: 'y', params, run },
        ]),
    ).toThrow(/a\.b is registered twice/);
  });

  it('refuses malformed types, missing descriptions and params that are not Joi object schemas', () => {
    expect(() => new JobRegistry([{ type: 'Sync', description: 'x', params, run }])).toThrow(/<noun>\.<verb>/);
    expect(() => new JobRegistry([{ type: 'a.b', description: ' ', params, run }])).toThrow(/description/);
    expect(() => new JobRegistry([{ type: 'a.b', description: 'x', params: Joi.string() as never, run }])).toThrow(/Joi object schema/);
  });

  it('registers the built-in types', () => {
    expect(new JobRegistry(jobTypes).types).toContain('maintenance.prune');
  });
});

describeEachDialect(
  'the job service',
  (use) => {
    let lab: JobLab;
    let jobs: JobService;
    beforeAll(() => {
      lab = new JobLab();
      jobs = new JobService({ db: use().ctx.db, clock, logger: use().ctx.logger, registry: lab.registry(), maxAttempts: 3 });
    });
    beforeEach(async () => {
      // Each test starts from an empty queue.
      await use().ctx.db.execute('DELETE FROM jobs');
    });

    it('queues a job with its validated params, defaults applied', async () => {
      const job = await jobs.enqueue('test.items', { count: '3' }, 'user:1');
      expect(job).toEqual({
        id: expect.any(Number),
        type: 'test.items',
        params: { count: 3, delay_ms: 0, ignore_stop: false },
        status: 'queued',
        progress: { total: null, done: 0, failed: 0 },
        result: null,
        error: null,
        attempts: 0,
        actor: 'user:1',
        created_at: clock.now().toISOString(),
        started_at: null,
        finished_at: null,
        updated_at: clock.now().toISOString(),
      });
      expect(await jobs.get(job.id)).toEqual(job);
    });

    it('refuses an unknown type (400 svc_unknown_job_type) and bad params (400 svc_invalid_job_params)', async () => {
      await expect(jobs.enqueue('nope.nothing', {}, 'cli')).rejects.toMatchObject({ code: 'svc_unknown_job_type', status: 400 });
      await expect(jobs.enqueue('test.items', { count: -1, extra: 1 }, 'cli')).rejects.toMatchObject({
        code: 'svc_invalid_job_params',
        status: 400,
        data: { params: { count: expect.stringContaining('count'), extra: expect.stringContaining('not allowed') } },
      });
      expect((await jobs.list({ page: 1, per_page: 10 })).total).toBe(0);
    });

    it('refuses a second unique job with the same params while the first is queued or running, and returns the first', async () => {
      const first = await jobs.enqueue('test.items', { count: 2 }, 'cli', { unique: true });
      await expect(jobs.enqueue('test.items', { count: 2 }, 'cli', { unique: true })).rejects.toMatchObject({
        code: 'svc_job_already_running',
        status: 409,
        data: { job: { id: first.id, status: 'queued' } },
      });
      // Params in another order, or spelled with their defaults, are the same params.
      await expect(jobs.enqueue('test.items', { delay_ms: 0, count: 2 }, 'cli', { unique: true })).rejects.toMatchObject({ code: 'svc_job_already_running' });
      // Other params, or a job queued without `unique`, are not refused.
      expect((await jobs.enqueue('test.items', { count: 3 }, 'cli', { unique: true })).status).toBe('queued');
      expect((await jobs.enqueue('test.items', { count: 2 }, 'cli')).status).toBe('queued');
      const claimed = (await jobs.claim('p1', ['test.items'], LEASE))!;
      expect(claimed.lease.id).toBe(first.id);
      await expect(jobs.enqueue('test.items', { count: 2 }, 'cli', { unique: true })).rejects.toMatchObject({
        data: { job: { id: expect.any(Number), status: expect.stringMatching(/queued|running/) } },
      });
      await jobs.finish(claimed.lease, {}, claimed.progress);
      await jobs.cancel((await jobs.list({ status: 'queued', type: 'test.items', page: 1, per_page: 10 })).items.find((j) => j.params.count === 2)!.id, 'cli');
      expect((await jobs.enqueue('test.items', { count: 2 }, 'cli', { unique: true })).status).toBe('queued');
    });

    it('lets only one of many simultaneous unique enqueues through', async () => {
      const results = await Promise.allSettled(Array.from({ length: 8 }, () => jobs.enqueue('test.count', { n: 1 }, 'cli', { unique: true })));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'svc_job_already_running' });
    });

    it("queues a job inside the caller's transaction, only if it commits", async () => {
      const { db } = use().ctx;
      const job = await db.transaction((t) => jobs.enqueue('test.count', { n: 1 }, 'cli', { unique: true, transaction: t }));
      expect((await jobs.get(job.id)).status).toBe('queued');
      const rollback = db.transaction(async (t) => {
        await jobs.enqueue('test.count', { n: 2 }, 'cli', { transaction: t });
        throw new Error('rolled back');
      });
      await expect(rollback).rejects.toThrow('rolled back');
      expect((await jobs.list({ type: 'test.count', page: 1, per_page: 10 })).items.map((j) => j.id)).toEqual([job.id]);
    });

    it('answers 404 svc_job_not_found for an unknown id', async () => {
      await expect(jobs.get(987654)).rejects.toMatchObject({ code: 'svc_job_not_found', status: 404 });
      await expect(jobs.cancel(987654, 'cli')).rejects.toMatchObject({ code: 'svc_job_not_found', status: 404 });
    });

    it('lists newest first, filtered by status and type, paged', async () => {
      const a = await jobs.enqueue('test.count', { n: 1 }, 'cli');
      const b = await jobs.enqueue('test.items', { count: 1 }, 'cli');
      const c = await jobs.enqueue('test.count', { n: 2 }, 'cli');
      await jobs.cancel(a.id, 'cli');
      expect((await jobs.list({ page: 1, per_page: 10 })).items.map((j) => j.id)).toEqual([c.id, b.id, a.id]);
      expect(await jobs.list({ type: 'test.count', page: 1, per_page: 10 })).toMatchObject({ total: 2, items: [{ id: c.id }, { id: a.id }] });
      expect(await jobs.list({ status: 'cancelled', page: 1, per_page: 10 })).toMatchObject({ total: 1, items: [{ id: a.id }] });
      expect(await jobs.list({ page: 2, per_page: 2 })).toMatchObject({ total: 3, items: [{ id: a.id }] });
    });

    it('claims the oldest queued job of the types it runs, and each job once', async () => {
      const a = await jobs.enqueue('test.count', { n: 1 }, 'cli');
      const b = await jobs.enqueue('test.items', { count: 1 }, 'cli');
      const c = await jobs.enqueue('test.count', { n: 2 }, 'cli');
      clock.advance(1000);
      const first = (await jobs.claim('p1', ['test.count', 'test.items'], LEASE))!;
      expect(first).toMatchObject({
        lease: { id: a.id, owner: 'p1', attempt: 1 },
        type: 'test.count',
        params: { n: 1, delay_ms: 5 },
        checkpoint: null,
        takeover: false,
      });
      expect((await jobs.claim('p2', ['test.count'], LEASE))!.lease.id).toBe(c.id);
      expect(await jobs.claim('p2', ['test.count'], LEASE)).toBeNull();
      expect(await jobs.claim('p2', [], LEASE)).toBeNull();
      expect((await jobs.claim('p2', ['test.items'], LEASE))!.lease.id).toBe(b.id);
      const row = await jobs.get(a.id);
      expect(row).toMatchObject({ status: 'running', attempts: 1, started_at: clock.now().toISOString() });
      const [lease] = await use().ctx.db.select<Record<string, unknown>>('SELECT lease_owner, lease_expires_at FROM jobs WHERE id = ?', [a.id]);
      expect(lease.lease_owner).toBe('p1');
    });

    it('never stores a total below done, from a progress write to the final one', async () => {
      await jobs.enqueue('test.count', { n: 7 }, 'cli');
      const claimed = (await jobs.claim('p-bound', ['test.count'], LEASE))!;
      expect(await jobs.saveProgress(claimed.lease, { total: 3, done: 5, failed: 1 })).toBe('ok');
      expect((await jobs.get(claimed.lease.id)).progress).toEqual({ total: 5, done: 5, failed: 1 });
      expect(await jobs.saveProgress(claimed.lease, { total: null, done: 6, failed: 1 })).toBe('ok');
      expect((await jobs.get(claimed.lease.id)).progress).toEqual({ total: null, done: 6, failed: 1 });
      expect(await jobs.finish(claimed.lease, {}, { total: 6, done: 7, failed: 1 })).toBe('ok');
      expect((await jobs.get(claimed.lease.id)).progress).toEqual({ total: 7, done: 7, failed: 1 });
    });

    it('tells progress listeners in this process of each write that went through, with the checkpoint when one was saved', async () => {
      await jobs.enqueue('test.count', { n: 7 }, 'cli');
      const claimed = (await jobs.claim('p-listen', ['test.count'], LEASE))!;
      const seen: unknown[] = [];
      const off = jobs.onProgress((u) => seen.push(u));
      const offBroken = jobs.onProgress(() => {
        throw new Error('a broken display');
      });
      expect(await jobs.saveProgress(claimed.lease, { total: null, done: 1, failed: 0 })).toBe('ok');
      expect(await jobs.saveProgress(claimed.lease, { total: 4, done: 2, failed: 1 }, false, { value: { next: 3 } })).toBe('ok');
      expect(await jobs.saveProgress({ ...claimed.lease, owner: 'someone-else' }, { total: 4, done: 3, failed: 1 })).toBe('lost');
      off();
      offBroken();
      await jobs.saveProgress(claimed.lease, { total: 4, done: 4, failed: 1 });
      expect(seen).toEqual([
        { id: claimed.lease.id, progress: { total: null, done: 1, failed: 0 } },
        { id: claimed.lease.id, progress: { total: 4, done: 2, failed: 1 }, checkpoint: { next: 3 } },
      ]);
      await jobs.finish(claimed.lease, {}, { total: 4, done: 4, failed: 1 });
    });

    it('takes over a running job only once its lease has expired, with the checkpoint and the progress saved with it', async () => {
      const job = await jobs.enqueue('test.items', { count: 5 }, 'cli');
      const dead = (await jobs.claim('dead', ['test.items'], LEASE))!;
      await jobs.saveProgress(dead.lease, { total: 5, done: 2, failed: 0 }, false, { value: { next: 2 } });
      // Counted after the checkpoint, then the process died: the resumed job recounts from the checkpoint.
      await jobs.saveProgress(dead.lease, { total: 5, done: 3, failed: 0 });
      expect(await jobs.claim('alive', ['test.items'], LEASE)).toBeNull();
      clock.advance(LEASE - 1);
      expect(await jobs.claim('alive', ['test.items'], LEASE)).toBeNull();
      clock.advance(2);
      const taken = (await jobs.claim('alive', ['test.items'], LEASE))!;
      expect(taken).toMatchObject({
        lease: { id: job.id, owner: 'alive', attempt: 2 },
        checkpoint: { next: 2 },
        progress: { total: 5, done: 2, failed: 0 },
        takeover: true,
      });
      expect((await jobs.get(job.id)).progress).toEqual({ total: 5, done: 2, failed: 0 });
      // The dead process's writes are refused from now on.
      expect(await jobs.heartbeat(dead.lease, LEASE)).toBe('lost');
      expect(await jobs.saveProgress(dead.lease, { total: 5, done: 5, failed: 0 })).toBe('lost');
      expect(await jobs.finish(dead.lease, {}, { total: 5, done: 5, failed: 0 })).toBe('lost');
      expect(await jobs.heartbeat(taken.lease, LEASE)).toBe('ok');
      expect(await jobs.finish(taken.lease, { items: 5 }, { total: 5, done: 5, failed: 0 })).toBe('ok');
      expect(await jobs.get(job.id)).toMatchObject({ status: 'done', result: { items: 5 }, attempts: 2, progress: { done: 5 } });
    });

    it('keeps a job whose heartbeat renews the lease', async () => {
      await jobs.enqueue('test.count', { n: 1 }, 'cli');
      const held = (await jobs.claim('p1', ['test.count'], LEASE))!;
      clock.advance(LEASE - 1000);
      expect(await jobs.heartbeat(held.lease, LEASE)).toBe('ok');
      clock.advance(LEASE - 1000);
      expect(await jobs.claim('p2', ['test.count'], LEASE)).toBeNull();
    });

    it('settles an expired cancelling job as cancelled, and fails a job whose process died max_attempts times', async () => {
      const cancelling = await jobs.enqueue('test.count', { n: 1 }, 'cli');
      const c = (await jobs.claim('p1', ['test.count'], LEASE))!;
      expect((await jobs.cancel(cancelling.id, 'cli')).status).toBe('cancelling');
      clock.advance(LEASE + 1);
      expect(await jobs.claim('p2', ['test.count'], LEASE)).toBeNull();
      expect(await jobs.get(c.lease.id)).toMatchObject({ status: 'cancelled', finished_at: clock.now().toISOString() });

      const poison = await jobs.enqueue('test.count', { n: 2 }, 'cli');
      for (let i = 1; i <= 3; i++) {
        expect((await jobs.claim(`p${i}`, ['test.count'], LEASE))!.lease).toMatchObject({ id: poison.id, attempt: i });
        clock.advance(LEASE + 1);
      }
      expect(await jobs.claim('p4', ['test.count'], LEASE)).toBeNull();
      expect(await jobs.get(poison.id)).toMatchObject({ status: 'failed', error: expect.stringContaining('started 3 times'), attempts: 3 });
    });

    it('cancels a queued job at once and a running one through cancelling; refuses a finished one (409 svc_job_finished)', async () => {
      const queued = await jobs.enqueue('test.count', { n: 1 }, 'cli');
      expect(await jobs.cancel(queued.id, 'user:1')).toMatchObject({ status: 'cancelled', finished_at: clock.now().toISOString() });
      expect(await jobs.claim('p1', ['test.count'], LEASE)).toBeNull();
      await expect(jobs.cancel(queued.id, 'user:1')).rejects.toMatchObject({ code: 'svc_job_finished', status: 409 });

      const running = await jobs.enqueue('test.count', { n: 2 }, 'cli');
      const held = (await jobs.claim('p1', ['test.count'], LEASE))!;
      const heard: number[] = [];
      const off = jobs.onCancelRequested((id) => heard.push(id));
      expect(await jobs.cancel(running.id, 'user:1')).toMatchObject({ status: 'cancelling', finished_at: null });
      expect(await jobs.cancel(running.id, 'user:1')).toMatchObject({ status: 'cancelling' });
      off();
      expect(heard).toEqual([running.id]);
      // The runner learns it on its next write, which still goes through.
      expect(await jobs.saveProgress(held.lease, { total: 1, done: 1, failed: 0 })).toBe('cancelling');
      expect(await jobs.heartbeat(held.lease, LEASE, true)).toBe('cancelling');
      expect(await jobs.markCancelled(held.lease, { total: 1, done: 1, failed: 0 })).toBe('ok');
      expect(await jobs.get(running.id)).toMatchObject({ status: 'cancelled', progress: { done: 1 } });
    });

    it('gives a job back to the queue on release, and resumes it from its checkpoint', async () => {
      const job = await jobs.enqueue('test.items', { count: 4 }, 'cli', { unique: true });
      const held = (await jobs.claim('p1', ['test.items'], LEASE))!;
      await jobs.saveProgress(held.lease, { total: 4, done: 1, failed: 0 }, false, { value: { next: 1 } });
      expect(await jobs.release(held.lease, { total: 4, done: 1, failed: 0 })).toBe('ok');
      expect(await jobs.get(job.id)).toMatchObject({ status: 'queued', attempts: 1 });
      // Still queued, so still unique.
      await expect(jobs.enqueue('test.items', { count: 4 }, 'cli', { unique: true })).rejects.toMatchObject({ code: 'svc_job_already_running' });
      expect(await jobs.claim('p2', ['test.items'], LEASE)).toMatchObject({ lease: { id: job.id, attempt: 2 }, checkpoint: { next: 1 }, takeover: false });
    });

    it('records a failure with its message', async () => {
      const job = await jobs.enqueue('test.count', { n: 1 }, 'cli');
      const held = (await jobs.claim('p1', ['test.count'], LEASE))!;
      expect(await jobs.fail(held.lease, 'the network answered 500', { total: null, done: 0, failed: 0 })).toBe('ok');
      expect(await jobs.get(job.id)).toMatchObject({
        status: 'failed',
        error: 'the network answered 500',
        result: null,
        finished_at: clock.now().toISOString(),
      });
    });

    it('prunes finished jobs past retention and keeps the rest', async () => {
      const old = await jobs.enqueue('test.count', { n: 1 }, 'cli');
      await jobs.cancel(old.id, 'cli');
      const waiting = await jobs.enqueue('test.count', { n: 2 }, 'cli');
      clock.advance(31 * 86_400_000);
      const recent = await jobs.enqueue('test.count', { n: 3 }, 'cli');
      await jobs.cancel(recent.id, 'cli');
      expect(await jobs.prune(30)).toBe(1);
      expect((await jobs.list({ page: 1, per_page: 10 })).items.map((j) => j.id)).toEqual([recent.id, waiting.id]);
    });
  },
  {},
  { clock },
);
