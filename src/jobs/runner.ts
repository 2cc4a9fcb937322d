// The job runner: claims jobs from the database and runs at most `concurrency` at once, renewing
// each job's lease by heartbeat. It polls every `pollIntervalMs`, and at once when a job is
// enqueued in this process or a slot frees up. On shutdown it tells its jobs to stop and gives
// each one that stopped back to the queue (`queued`, no lease), so the next runner resumes it from
// its checkpoint without waiting for a lease to expire; a job that does not stop within the grace
// period keeps its lease, which then expires, and is taken over the same way.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Context } from '../context.js';
import type { ClaimedJob, JobService } from '../services/jobs/index.js';
import { Execution, failureMessage, type RunOutcome } from './execution.js';
import type { JobRegistry } from './registry.js';

export interface JobRunnerOptions {
  ctx: Context;
  jobs: JobService<JobRegistry>;
  /** The types this runner runs (default: the service's registry). */
  registry?: JobRegistry;
  /** Jobs run at once (`jobs.concurrency`). */
  concurrency: number;
  /** Lease length (`jobs.lease_seconds`); a heartbeat renews it every third of it. */
  leaseMs: number;
  /** How often to look for work when nothing signals (`jobs.poll_interval_ms`). */
  pollIntervalMs: number;
  /** Least time between two progress writes of one job. */
  progressIntervalMs?: number;
  /** How long `stop()` waits for running jobs to stop. */
  shutdownGraceMs?: number;
  /** Lease owner name (default: host:pid:random). */
  owner?: string;
}

/** Runs jobs from the database in this process. */
export class JobRunner {
  readonly owner: string;
  private readonly opts: Required<Omit<JobRunnerOptions, 'owner' | 'registry'>> & { registry: JobRegistry };
  private readonly active = new Map<number, Execution>();
  private running = false;
  private stopping = false;
  private loop: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  private woken = false;
  private unsubscribe: (() => void)[] = [];
  private claimErrorLoggedAt = 0;
  /** Receives each job's outcome while `runPending` collects them. */
  private onOutcome: ((outcome: RunOutcome) => void) | null = null;

  constructor(options: JobRunnerOptions) {
    this.owner = (options.owner ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`).slice(0, 128);
    this.opts = { progressIntervalMs: 250, shutdownGraceMs: 10_000, ...options, registry: options.registry ?? options.jobs.registry };
    if (!(this.opts.concurrency >= 0)) throw new Error('concurrency must be 0 or more');
  }

  /** Jobs running now. */
  get activeCount(): number {
    return this.active.size;
  }

  /** Starts polling (the daemon). A concurrency of 0 runs nothing. */
  start(): void {
    if (this.running || this.opts.concurrency === 0) return;
    this.running = true;
    this.stopping = false;
    this.unsubscribe = [this.opts.jobs.onEnqueued(() => this.wake()), this.opts.jobs.onCancelRequested((id) => this.active.get(id)?.stop('cancelled'))];
    this.loop = this.pollLoop();
  }

  /** Looks for work now instead of at the next poll. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  private async pollLoop(): Promise<void> {
    while (!this.stopping) {
      await this.fill();
      if (this.stopping) break;
      if (!this.woken) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.opts.pollIntervalMs);
          this.wakeUp = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      this.wakeUp = null;
      this.woken = false;
    }
  }

  /** Claims jobs while there are free slots and work; returns how many it started. */
  private async fill(throwOnError = false): Promise<number> {
    let started = 0;
    while (!this.stopping && this.active.size < this.opts.concurrency) {
      let claimed: ClaimedJob | null;
      try {
        claimed = await this.opts.jobs.claim(this.owner, this.opts.registry.types, this.opts.leaseMs);
      } catch (err) {
        if (throwOnError) throw err;
        // The database is away: keep polling, and say so once a minute rather than every poll.
        if (Date.now() - this.claimErrorLoggedAt > 60_000) {
          this.claimErrorLoggedAt = Date.now();
          this.opts.ctx.logger.error('jobs', 'Could not claim a job', { error: failureMessage(err) });
        }
        return started;
      }
      if (!claimed) return started;
      if (this.stopping) {
        // Claimed while stopping: hand it straight back.
        await this.opts.jobs.release(claimed.lease, claimed.progress).catch(() => {});
        return started;
      }
      const exec = new Execution(claimed, this.opts);
      this.active.set(claimed.lease.id, exec);
      void exec.done.then((outcome) => {
        this.active.delete(claimed.lease.id);
        this.onOutcome?.(outcome);
        this.wake();
      });
      started++;
    }
    return started;
  }

  /**
   * Runs jobs until none is left to claim, then returns how each ended (`cashtrack jobs
   * run-pending`). Jobs enqueued meanwhile are run too.
   */
  async runPending(): Promise<RunOutcome[]> {
    if (this.running) throw new Error('the runner is already polling');
    const outcomes: RunOutcome[] = [];
    this.running = true;
    this.stopping = false;
    this.onOutcome = (o) => outcomes.push(o);
    try {
      for (;;) {
        // A failing claim ends the run (with the running jobs settled first).
        await this.fill(true).catch(async (err) => {
          await Promise.allSettled([...this.active.values()].map((e) => e.done));
          throw err;
        });
        if (this.active.size === 0) break;
        await Promise.race([...this.active.values()].map((e) => e.done));
        // Let the then() in fill() take the finished execution out before looking again.
        await new Promise((r) => setImmediate(r));
      }
    } finally {
      this.running = false;
      this.onOutcome = null;
    }
    return outcomes;
  }

  /**
   * Stops claiming, tells running jobs to stop, and waits up to the grace period for them: each
   * one that stopped is given back to the queue. Idempotent.
   */
  async stop(graceMs = this.opts.shutdownGraceMs): Promise<void> {
    if (this.stopping && !this.running) return;
    this.stopping = true;
    for (const u of this.unsubscribe) u();
    this.unsubscribe = [];
    // Tell the jobs first: a claim in flight is handed straight back once the loop sees `stopping`.
    for (const exec of this.active.values()) exec.stop('shutdown');
    this.wake();
    await this.loop;
    this.loop = null;
    const pending = [...this.active.values()];
    for (const exec of pending) exec.stop('shutdown');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled(pending.map((e) => e.done)), new Promise<void>((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
    // Jobs that ignored the signal keep running here but stop renewing their lease: once it
    // expires another runner takes them over, and their own writes are refused from then on.
    for (const exec of this.active.values()) exec.abandon();
    this.running = false;
  }
}
