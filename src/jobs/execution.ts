// One job being run by a JobRunner: the handle the job sees, its heartbeat, its batched progress
// writes (at most every `progressIntervalMs`, or on demand) and how it ends (done, failed,
// cancelled, given back to the queue, or lost to another runner).
import type { Context } from '../context.js';
import { translateDbError } from '../db/errors.js';
import { isServiceError } from '../errors.js';
import {
  boundedProgress,
  JobStopped,
  type ClaimedJob,
  type JobHandle,
  type JobProgress,
  type JobService,
  type JobStopReason,
  type LeaseState,
} from '../services/jobs/index.js';
import type { LogLevel } from '../services/logs/index.js';
import type { JobRegistry } from './registry.js';

/** How a job this runner ran ended. */
export interface RunOutcome {
  id: number;
  type: string;
  status: 'done' | 'failed' | 'cancelled' | 'released' | 'lost';
  error?: string;
}

/** The message stored on a failed job: a service error's own, never a stack or SQL. */
export function failureMessage(err: unknown): string {
  if (isServiceError(err)) return err.message;
  const db = translateDbError(err);
  if (db) return db.message;
  const e = err as { name?: string; sql?: unknown; original?: unknown; parent?: unknown; message?: unknown };
  if (e && (e.sql !== undefined || e.original !== undefined || e.parent !== undefined || (typeof e.name === 'string' && e.name.startsWith('Sequelize')))) {
    return 'The job stopped on an internal error; the log has the details.';
  }
  const message = typeof e?.message === 'string' && e.message.trim() ? e.message : String(err);
  return message.slice(0, 2000);
}

/** What an execution needs from its runner. */
export interface ExecutionOptions {
  ctx: Context;
  jobs: JobService;
  registry: JobRegistry;
  leaseMs: number;
  progressIntervalMs: number;
}

/** One job being run: its handle, heartbeat and batched progress writes. */
export class Execution {
  readonly done: Promise<RunOutcome>;
  private readonly controller = new AbortController();
  private readonly progress: JobProgress;
  private cancelled = false;
  private lost = false;
  private heartbeat: NodeJS.Timeout | null = null;
  private progressTimer: NodeJS.Timeout | null = null;
  private lastWrite = 0;
  private dirty = false;
  /** Writes of this job, one at a time. */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly claimed: ClaimedJob,
    private readonly opts: ExecutionOptions,
  ) {
    this.progress = { ...claimed.progress };
    const started = performance.now();
    this.done = this.run()
      .catch((err): RunOutcome => ({ id: claimed.lease.id, type: claimed.type, status: 'lost', error: failureMessage(err) }))
      .then((outcome) => {
        opts.ctx.metrics?.jobRun(outcome.type, outcome.status, (performance.now() - started) / 1000);
        return outcome;
      });
  }

  private get lease() {
    return this.claimed.lease;
  }

  /** Aborts the job's signal (first reason wins). */
  stop(reason: JobStopReason): void {
    if (reason === 'cancelled') this.cancelled = true;
    if (reason === 'lease_lost') this.lost = true;
    if (!this.controller.signal.aborted) this.controller.abort(new JobStopped(reason));
  }

  /** Stops renewing the lease and writing (the process is leaving the job to another runner). */
  abandon(): void {
    this.lost = true;
    this.stop('shutdown');
    this.clearTimers();
  }

  private clearTimers(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.progressTimer) clearTimeout(this.progressTimer);
    this.heartbeat = this.progressTimer = null;
  }

  private noteLeaseState(state: LeaseState): void {
    if (state === 'lost') this.stop('lease_lost');
    else if (state === 'cancelling') this.stop('cancelled');
  }

  /** Queues a write after the previous one; a failed write is logged and retried by the next. */
  private write(fn: () => Promise<LeaseState>): Promise<void> {
    const next = this.chain.then(async () => {
      if (this.lost) return;
      try {
        this.noteLeaseState(await fn());
      } catch (err) {
        this.log('warning', 'Could not write job progress', { error: failureMessage(err) });
        throw err;
      }
    });
    this.chain = next.catch(() => {});
    return next;
  }

  private flushProgress(): Promise<void> {
    if (this.progressTimer) clearTimeout(this.progressTimer);
    this.progressTimer = null;
    if (!this.dirty) return this.chain.then(() => {});
    this.dirty = false;
    this.lastWrite = Date.now();
    const snapshot = { ...this.progress };
    return this.write(() => this.opts.jobs.saveProgress(this.lease, snapshot, this.cancelled)).catch(() => {
      this.dirty = true;
    });
  }

  private scheduleProgress(): void {
    this.dirty = true;
    if (this.progressTimer) return;
    const wait = Math.max(0, this.lastWrite + this.opts.progressIntervalMs - Date.now());
    this.progressTimer = setTimeout(() => {
      this.progressTimer = null;
      void this.flushProgress();
    }, wait);
    this.progressTimer.unref();
  }

  private count({ done = 0, failed = 0, total }: { done?: number; failed?: number; total?: number | null }): void {
    const p = this.progress;
    p.done += Math.max(0, Math.floor(done));
    p.failed += Math.max(0, Math.floor(failed));
    if (total !== undefined) p.total = total === null || !Number.isFinite(total) ? null : Math.max(0, Math.floor(total));
    Object.assign(p, boundedProgress(p));
    this.scheduleProgress();
  }

  private log(level: LogLevel, message: string, context: Record<string, unknown> = {}): void {
    this.opts.ctx.logger.write(level, 'jobs', message, { job_id: this.lease.id, type: this.claimed.type, ...context });
  }

  private handle(params: Record<string, unknown>): JobHandle {
    const signal = this.controller.signal;
    return {
      id: this.lease.id,
      type: this.claimed.type,
      params,
      checkpoint: this.claimed.checkpoint,
      attempt: this.lease.attempt,
      signal,
      isCancelled: () => this.cancelled,
      throwIfStopped: () => {
        if (signal.aborted) throw signal.reason;
      },
      setTotal: (total) => this.count({ total }),
      progress: (delta) => this.count(delta),
      counts: () => ({ ...this.progress }),
      flush: () => this.flushProgress(),
      saveCheckpoint: async (value) => {
        if (this.progressTimer) clearTimeout(this.progressTimer);
        this.progressTimer = null;
        this.dirty = false;
        this.lastWrite = Date.now();
        const snapshot = { ...this.progress };
        await this.write(() => this.opts.jobs.saveProgress(this.lease, snapshot, this.cancelled, { value }));
        if (signal.aborted) throw signal.reason;
      },
      log: (level, message, context) => this.log(level, message, context),
    };
  }

  private async run(): Promise<RunOutcome> {
    const { ctx, jobs, registry, leaseMs } = this.opts;
    const { id } = this.lease;
    const type = this.claimed.type;
    const outcome = (status: RunOutcome['status'], error?: string): RunOutcome => ({ id, type, status, ...(error ? { error } : {}) });
    this.heartbeat = setInterval(
      () => {
        void this.write(() => jobs.heartbeat(this.lease, leaseMs, this.cancelled)).catch(() => {});
      },
      Math.max(10, Math.floor(leaseMs / 3)),
    );
    this.heartbeat.unref();
    this.log('info', this.claimed.takeover ? `Job ${id} (${type}) resumed after its process died` : `Job ${id} (${type}) started`, {
      attempt: this.lease.attempt,
    });
    let result: Record<string, unknown> | undefined;
    let failure: unknown;
    let failed = false;
    try {
      const params = registry.validateParams(type, this.claimed.params);
      result = (await registry.require(type).run(ctx, this.handle(params))) ?? {};
    } catch (err) {
      failed = true;
      failure = err;
    }
    this.clearTimers();
    await this.chain;
    if (this.lost) {
      this.log('warning', `Job ${id} (${type}) left to another runner`, {});
      return outcome('lost');
    }
    const stopped = this.controller.signal.aborted ? (this.controller.signal.reason as JobStopped).reason : null;
    try {
      if (!failed) {
        if ((await jobs.finish(this.lease, result!, this.progress)) === 'lost') return outcome('lost');
        const final = this.cancelled ? 'cancelled' : (await jobs.get(id)).status;
        this.log('info', `Job ${id} (${type}) ${final}`, { result, progress: this.progress });
        return outcome(final === 'cancelled' ? 'cancelled' : 'done');
      }
      if (stopped === 'cancelled' || this.cancelled) {
        if ((await jobs.markCancelled(this.lease, this.progress)) === 'lost') return outcome('lost');
        this.log('info', `Job ${id} (${type}) cancelled`, { progress: this.progress });
        return outcome('cancelled');
      }
      if (stopped === 'shutdown') {
        if ((await jobs.release(this.lease, this.progress)) === 'lost') return outcome('lost');
        this.log('info', `Job ${id} (${type}) given back to the queue: the process is stopping`, { progress: this.progress });
        return outcome('released');
      }
      // What the job's runner reports and stores carries no secret the job's network opened.
      const message = ctx.secrets.scrub(failureMessage(failure));
      if ((await jobs.fail(this.lease, message, this.progress)) === 'lost') return outcome('lost');
      // The stack stays in the log, for the operator; clients see the message.
      this.log('error', `Job ${id} (${type}) failed: ${message}`, { error: String((failure as Error)?.stack ?? failure) });
      return outcome('failed', message);
    } catch (err) {
      // The database is away: the lease expires and another runner (or this one) takes the job over.
      this.log('error', `Job ${id} (${type}) could not be settled`, { error: failureMessage(err) });
      return outcome('lost');
    }
  }
}
