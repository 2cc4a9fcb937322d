// Test-only job types and helpers to run them: a JobService and JobRunner per simulated process,
// built on a context's database with a registry that knows the test types.
import Joi from 'joi';
import type { Context } from '../../src/context.js';
import { Database } from '../../src/db/database.js';
import { JobRegistry, type JobType } from '../../src/jobs/registry.js';
import { JobRunner, type JobRunnerOptions } from '../../src/jobs/runner.js';
import { jobTypes } from '../../src/jobs/types/index.js';
import { JobService, type Job, type JobStatus } from '../../src/services/jobs/index.js';
import type { Clock } from '../../src/clock.js';

/** What the test job types did, shared by every "process" of one test block. */
export class JobLab {
  /** Items finished, per job id, in order (an item finished twice appears twice). */
  readonly items = new Map<number, number[]>();
  /** How many times `run` was entered, per job id. */
  readonly runs = new Map<number, number>();
  /** `test.count` jobs running now, and the most at once. */
  concurrent = 0;
  maxConcurrent = 0;
  /** Gates a `test.items` job waits on before the item at `block_at`. */
  private readonly gates = new Map<string, { promise: Promise<void>; open: () => void }>();
  /** Resolved when a job reaches its gate. */
  private readonly arrivals = new Map<string, { promise: Promise<void>; arrive: () => void }>();

  private entry<T>(map: Map<string, T>, name: string, make: () => T): T {
    if (!map.has(name)) map.set(name, make());
    return map.get(name)!;
  }

  gate(name: string) {
    return this.entry(this.gates, name, () => {
      let open!: () => void;
      const promise = new Promise<void>((r) => (open = r));
      return { promise, open };
    });
  }

  arrival(name: string) {
    return this.entry(this.arrivals, name, () => {
      let arrive!: () => void;
      const promise = new Promise<void>((r) => (arrive = r));
      return { promise, arrive };
    });
  }

  /** Waits until a job stands at gate `name`. */
  reached(name: string): Promise<void> {
    return this.arrival(name).promise;
  }

  open(name: string): void {
    this.gate(name).open();
  }

  types(): JobType[] {
    return [
      {
        type: 'test.items',
        description: 'Finishes `count` items, one checkpoint each.',
        params: Joi.object({
          count: Joi.number().integer().min(0).max(1000).required(),
          delay_ms: Joi.number().integer().min(0).default(0),
          block_at: Joi.number().integer().min(0),
          gate: Joi.string(),
          fail_at: Joi.number().integer().min(0),
          ignore_stop: Joi.boolean().default(false),
        }),
        run: async (_ctx, job) => {
          this.runs.set(job.id, (this.runs.get(job.id) ?? 0) + 1);
          const done = this.items.get(job.id) ?? [];
          this.items.set(job.id, done);
          const p = job.params as { count: number; delay_ms: number; block_at?: number; gate?: string; fail_at?: number; ignore_stop: boolean };
          job.setTotal(p.count);
          for (let i = (job.checkpoint as { next?: number } | null)?.next ?? 0; i < p.count; i++) {
            // Only the first attempt waits: a resumed run goes straight on.
            if (i === p.block_at && p.gate && job.attempt === 1) {
              this.arrival(p.gate).arrive();
              await this.gate(p.gate).promise;
            }
            if (!p.ignore_stop) job.throwIfStopped();
            if (i === p.fail_at) throw new Error(`item ${i} was refused by the network`);
            if (p.delay_ms) await new Promise((r) => setTimeout(r, p.delay_ms));
            done.push(i);
            job.progress({ done: 1 });
            if (p.ignore_stop) continue;
            await job.saveCheckpoint({ next: i + 1 });
          }
          return { items: p.count };
        },
      },
      {
        type: 'test.count',
        description: 'Counts its runs and takes a little time.',
        params: Joi.object({ n: Joi.number().integer().required(), delay_ms: Joi.number().integer().min(0).default(5) }),
        run: async (_ctx, job) => {
          this.runs.set(job.id, (this.runs.get(job.id) ?? 0) + 1);
          this.maxConcurrent = Math.max(this.maxConcurrent, ++this.concurrent);
          try {
            await new Promise((r) => setTimeout(r, (job.params as { delay_ms: number }).delay_ms));
          } finally {
            this.concurrent--;
          }
          return { n: job.params.n };
        },
      },
      {
        type: 'test.progress',
        description: 'Counts many items quickly, then waits at a gate.',
        params: Joi.object({ count: Joi.number().integer().required(), gate: Joi.string().required(), pause_ms: Joi.number().integer().min(0).default(0) }),
        run: async (_ctx, job) => {
          job.setTotal(job.params.count);
          for (let i = 0; i < job.params.count; i++) {
            job.progress({ done: 1, failed: i % 10 === 0 ? 1 : 0 });
            if (job.params.pause_ms) await new Promise((r) => setTimeout(r, job.params.pause_ms));
          }
          this.arrival(job.params.gate).arrive();
          await this.gate(job.params.gate).promise;
          return {};
        },
      },
      {
        type: 'test.sql-error',
        description: 'Fails the way a broken query does.',
        params: Joi.object({}),
        run: async () => {
          throw Object.assign(new Error('SQLITE_ERROR: no such column: secret_column'), {
            name: 'SequelizeDatabaseError',
            sql: 'SELECT secret_column FROM users',
          });
        },
      },
    ];
  }

  registry(): JobRegistry {
    return new JobRegistry([...jobTypes, ...this.types()]);
  }
}

/** One simulated process: its own Database (own pool / own SQLite connections), service and runner. */
export interface JobProcess {
  db: Database;
  jobs: JobService;
  runner: JobRunner;
  close(): Promise<void>;
}

export function jobProcess(ctx: Context, lab: JobLab, options: Partial<JobRunnerOptions> & { clock?: Clock; ownDatabase?: boolean } = {}): JobProcess {
  const db =
    options.ownDatabase === false ? ctx.db : new Database({ url: ctx.config.database.url, busyTimeoutMs: ctx.config.database.busy_timeout_ms, poolMax: 4 });
  const jobs = new JobService({
    db,
    clock: options.clock ?? ctx.clock,
    logger: ctx.logger,
    registry: lab.registry(),
    maxAttempts: ctx.config.jobs.max_attempts,
  });
  const runner = new JobRunner({ ctx, jobs, concurrency: 2, leaseMs: 60_000, pollIntervalMs: 20, progressIntervalMs: 50, shutdownGraceMs: 2_000, ...options });
  return {
    db,
    jobs,
    runner,
    async close() {
      await runner.stop();
      if (db !== ctx.db) await db.close();
    },
  };
}

/** Polls `fn` until it returns something truthy. */
export async function waitFor<T>(
  fn: () => Promise<T | null | undefined | false> | T | null | undefined | false,
  timeoutMs = 15_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export function waitForStatus(jobs: JobService, id: number, statuses: JobStatus[], timeoutMs = 15_000): Promise<Job> {
  return waitFor(
    async () => {
      const job = await jobs.get(id);
      return statuses.includes(job.status) ? job : null;
    },
    timeoutMs,
    `job ${id} to be ${statuses.join(' or ')}`,
  );
}
