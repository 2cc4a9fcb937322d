import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { describeEachDialect } from '../helpers/context.js';
import { JobLab, jobProcess, waitFor, waitForStatus, type JobProcess } from '../helpers/jobs.js';

const clock = new ManualClock('2026-04-01T00:00:00Z');
const LEASE = 60_000;

describeEachDialect(
  'the job runner',
  (use) => {
    let lab: JobLab;
    let processes: JobProcess[];
    /** A simulated process: its own database handle, job service and runner. */
    const spawn = (options: Parameters<typeof jobProcess>[2] = {}) => {
      const p = jobProcess(use().ctx, lab, { clock, leaseMs: LEASE, ...options });
      processes.push(p);
      return p;
    };
    beforeEach(async () => {
      lab = new JobLab();
      processes = [];
      await use().ctx.db.execute('DELETE FROM jobs');
    });
    afterEach(async () => {
      for (const p of processes) await p.close();
    });

    it('runs a queued job to done with its result, progress and timestamps', async () => {
      const p = spawn();
      const job = await p.jobs.enqueue('test.items', { count: 3 }, 'user:1');
      p.runner.start();
      const done = await waitForStatus(p.jobs, job.id, ['done']);
      expect(done).toMatchObject({
        status: 'done',
        result: { items: 3 },
        error: null,
        attempts: 1,
        progress: { total: 3, done: 3, failed: 0 },
        started_at: clock.now().toISOString(),
        finished_at: clock.now().toISOString(),
      });
      expect(lab.items.get(job.id)).toEqual([0, 1, 2]);
    });

    it('never runs one job in two processes: 20 jobs, 2 runners, each job run exactly once', async () => {
      const a = spawn({ concurrency: 2, pollIntervalMs: 5 });
      const b = spawn({ concurrency: 2, pollIntervalMs: 5 });
      const ids: number[] = [];
      // Each job lasts long enough (20 × 50 ms over 2 slots) that one runner cannot drain the queue
      // before the other's first poll, even on a loaded machine: both must take part.
      for (let n = 0; n < 20; n++) ids.push((await a.jobs.enqueue('test.count', { n, delay_ms: 50 }, 'cli')).id);
      a.runner.start();
      b.runner.start();
      await waitFor(async () => (await a.jobs.list({ status: 'done', page: 1, per_page: 100 })).total === 20, 30_000, '20 jobs done');
      for (const id of ids) expect(lab.runs.get(id), `job ${id}`).toBe(1);
      const rows = await use().ctx.db.select<{ attempts: unknown; lease_owner: string }>('SELECT attempts, lease_owner FROM jobs');
      expect(rows.every((r) => Number(r.attempts) === 1)).toBe(true);
      expect(new Set(rows.map((r) => r.lease_owner))).toEqual(new Set([a.runner.owner, b.runner.owner]));
    });

    it('runs at most `concurrency` jobs at once', async () => {
      const p = spawn({ concurrency: 2, pollIntervalMs: 5 });
      for (let n = 0; n < 6; n++) await p.jobs.enqueue('test.count', { n, delay_ms: 30 }, 'cli');
      p.runner.start();
      await waitFor(async () => (await p.jobs.list({ status: 'done', page: 1, per_page: 10 })).total === 6, 15_000, 'six jobs done');
      expect(lab.maxConcurrent).toBe(2);
    });

    it('starts a job enqueued in the same process at once instead of at the next poll', async () => {
      const p = spawn({ pollIntervalMs: 600_000 });
      p.runner.start();
      await new Promise((r) => setTimeout(r, 50));
      const job = await p.jobs.enqueue('test.count', { n: 1 }, 'cli');
      await waitForStatus(p.jobs, job.id, ['done'], 3_000);
    });

    it('takes over a job whose process died and resumes it from its checkpoint without repeating finished items', async () => {
      const dead = spawn();
      const job = await dead.jobs.enqueue('test.items', { count: 6, block_at: 3, gate: 'freeze' }, 'cli');
      dead.runner.start();
      await lab.reached('freeze');
      // The process freezes at item 3 and stops heartbeating: its lease runs out.
      await dead.runner.stop(0);
      expect(await dead.jobs.get(job.id)).toMatchObject({ status: 'running', attempts: 1, progress: { total: 6, done: 3 } });
      const alive = spawn();
      alive.runner.start();
      await new Promise((r) => setTimeout(r, 100));
      expect(await alive.jobs.get(job.id)).toMatchObject({ status: 'running', attempts: 1 });
      clock.advance(LEASE + 1);
      alive.runner.wake();
      const done = await waitForStatus(alive.jobs, job.id, ['done']);
      expect(done).toMatchObject({ attempts: 2, result: { items: 6 }, progress: { total: 6, done: 6, failed: 0 } });
      expect(lab.items.get(job.id)).toEqual([0, 1, 2, 3, 4, 5]);
      expect(lab.runs.get(job.id)).toBe(2);
      // The frozen process wakes up: it has lost the job, and its writes are refused.
      lab.open('freeze');
      await new Promise((r) => setTimeout(r, 100));
      expect(await alive.jobs.get(job.id)).toEqual(done);
      expect(lab.items.get(job.id)).toEqual([0, 1, 2, 3, 4, 5]);
    });

    it('gives a running job back to the queue on shutdown, and the next runner resumes it from its checkpoint', async () => {
      const first = spawn();
      const job = await first.jobs.enqueue('test.items', { count: 5, block_at: 2, gate: 'deploy' }, 'cli');
      first.runner.start();
      await lab.reached('deploy');
      const stopping = first.runner.stop();
      lab.open('deploy');
      await stopping;
      expect(await first.jobs.get(job.id)).toMatchObject({ status: 'queued', attempts: 1, progress: { done: 2 }, finished_at: null });
      const second = spawn();
      second.runner.start();
      expect(await waitForStatus(second.jobs, job.id, ['done'])).toMatchObject({ attempts: 2, progress: { total: 5, done: 5 } });
      expect(lab.items.get(job.id)).toEqual([0, 1, 2, 3, 4]);
    });

    it('leaves a job that does not stop within the grace period to expire its lease', async () => {
      const p = spawn();
      const job = await p.jobs.enqueue('test.items', { count: 3, block_at: 1, gate: 'stuck', ignore_stop: true }, 'cli');
      p.runner.start();
      await lab.reached('stuck');
      await p.runner.stop(50);
      const [row] = await use().ctx.db.select<Record<string, unknown>>('SELECT status, lease_owner FROM jobs WHERE id = ?', [job.id]);
      expect(row).toEqual({ status: 'running', lease_owner: p.runner.owner });
      lab.open('stuck');
      await new Promise((r) => setTimeout(r, 50));
      expect((await p.jobs.get(job.id)).status).toBe('running');
    });

    it('cancels a running job from another process at its next checkpoint', async () => {
      const p = spawn();
      const job = await p.jobs.enqueue('test.items', { count: 200, delay_ms: 10 }, 'cli');
      p.runner.start();
      await waitFor(async () => (lab.items.get(job.id)?.length ?? 0) >= 3, 10_000, 'three items');
      // ctx.jobs is another JobService: the runner learns of the cancel from the database.
      expect((await use().ctx.jobs.cancel(job.id, 'user:1')).status).toBe('cancelling');
      const atCancel = lab.items.get(job.id)!.length;
      const cancelled = await waitForStatus(p.jobs, job.id, ['cancelled'], 5_000);
      const finished = lab.items.get(job.id)!.length;
      expect(finished - atCancel).toBeLessThanOrEqual(1);
      expect(finished).toBeLessThan(200);
      expect(cancelled).toMatchObject({ status: 'cancelled', error: null, progress: { total: 200, done: finished } });
      expect(cancelled.finished_at).not.toBeNull();
    });

    it('stops a running job at once when it is cancelled in the same process', async () => {
      const p = spawn();
      const job = await p.jobs.enqueue('test.items', { count: 5, block_at: 1, gate: 'hold' }, 'cli');
      p.runner.start();
      await lab.reached('hold');
      await p.jobs.cancel(job.id, 'user:1');
      lab.open('hold');
      expect(await waitForStatus(p.jobs, job.id, ['cancelled'], 3_000)).toMatchObject({ progress: { done: 1 } });
      expect(lab.items.get(job.id)).toEqual([0]);
    });

    it('marks a failing job failed with its message, and keeps the stack in the log only', async () => {
      const p = spawn();
      const job = await p.jobs.enqueue('test.items', { count: 5, fail_at: 2 }, 'cli');
      const broken = await p.jobs.enqueue('test.sql-error', {}, 'cli');
      p.runner.start();
      expect(await waitForStatus(p.jobs, job.id, ['failed'])).toMatchObject({
        error: 'item 2 was refused by the network',
        result: null,
        progress: { total: 5, done: 2, failed: 0 },
      });
      const sql = await waitForStatus(p.jobs, broken.id, ['failed']);
      expect(sql.error).toBe('The job stopped on an internal error; the log has the details.');
      expect(JSON.stringify(sql)).not.toMatch(/secret_column|SELECT/);
      // The runner logs after it has marked the job failed: wait for the line, not just the status.
      const entry = await waitFor(
        async () => {
          await use().ctx.logger.flush();
          const { items } = await use().ctx.logger.list({ source: 'jobs', level: 'error', page: 1, per_page: 10 });
          return items.find((e) => e.message.startsWith(`Job ${job.id} `));
        },
        15_000,
        'the failure logged',
      );
      expect(entry.message).toBe(`Job ${job.id} (test.items) failed: item 2 was refused by the network`);
      expect(String(entry.context?.error)).toMatch(/at .*jobs\.ts/);
    });

    it('batches progress writes: many counts in a burst make one write', async () => {
      const p = spawn({ progressIntervalMs: 250 });
      const execute = vi.spyOn(p.db, 'execute');
      const writes = () => execute.mock.calls.filter(([sql]) => /^UPDATE jobs SET progress_total/.test(sql)).length;
      const job = await p.jobs.enqueue('test.progress', { count: 1000, gate: 'burst' }, 'cli');
      p.runner.start();
      await lab.reached('burst');
      await waitFor(async () => (await p.jobs.get(job.id)).progress.done === 1000, 5_000, 'progress written');
      expect((await p.jobs.get(job.id)).progress).toEqual({ total: 1000, done: 1000, failed: 100 });
      await new Promise((r) => setTimeout(r, 300));
      expect(writes()).toBe(1);
      lab.open('burst');
      await waitForStatus(p.jobs, job.id, ['done']);
    });

    it('batches progress writes: steady counts write at most every 250 ms', async () => {
      const p = spawn({ progressIntervalMs: 250 });
      const execute = vi.spyOn(p.db, 'execute');
      const writes = () => execute.mock.calls.filter(([sql]) => /^UPDATE jobs SET progress_total/.test(sql)).length;
      const job = await p.jobs.enqueue('test.progress', { count: 60, gate: 'steady', pause_ms: 10 }, 'cli');
      const started = Date.now();
      p.runner.start();
      await lab.reached('steady');
      await waitFor(async () => (await p.jobs.get(job.id)).progress.done === 60, 5_000, 'the last count written');
      const elapsed = Date.now() - started;
      expect(writes()).toBeGreaterThanOrEqual(2);
      expect(writes()).toBeLessThanOrEqual(Math.ceil(elapsed / 250) + 1);
      lab.open('steady');
      await waitForStatus(p.jobs, job.id, ['done']);
    });

    it('runs pending jobs until none is left, including ones queued meanwhile', async () => {
      const p = spawn({ concurrency: 3 });
      for (let n = 0; n < 5; n++) await p.jobs.enqueue('test.count', { n }, 'cli');
      const failing = await p.jobs.enqueue('test.items', { count: 2, fail_at: 0 }, 'cli');
      const outcomes = await p.runner.runPending();
      expect(outcomes).toHaveLength(6);
      expect(outcomes.find((o) => o.id === failing.id)).toEqual({
        id: failing.id,
        type: 'test.items',
        status: 'failed',
        error: 'item 0 was refused by the network',
      });
      expect(outcomes.filter((o) => o.status === 'done')).toHaveLength(5);
      expect(await p.runner.runPending()).toEqual([]);
    });
  },
  { 'jobs.max_attempts': 5 },
  { clock },
);
