// What a running job sees of itself, declared here so a service that does a job's work (a bulk
// run, a logo fetch) depends on this shape and not on the runner in src/jobs/, which implements
// it (src/jobs/execution.ts).
import type { LogLevel } from '../logs/index.js';
import type { JobProgress } from './rows.js';

/** What a running job sees of itself. */
// biome-ignore lint/suspicious/noExplicitAny: a job's parameters are checked by its type's schema before it runs.
export interface JobHandle<P = Record<string, any>> {
  readonly id: number;
  readonly type: string;
  /** The parameters, validated by the type's schema (defaults applied). */
  readonly params: P;
  /**
   * The last value given to `saveCheckpoint` by an earlier attempt (null on a first run). A job
   * taken over after its process died starts here and must skip what it says is finished.
   */
  // biome-ignore lint/suspicious/noExplicitAny: each job type reads back the checkpoint it wrote.
  readonly checkpoint: any;
  /** 1 on the first run, 2 after a takeover or a restart, ... */
  readonly attempt: number;
  /**
   * Aborts when the job must stop: cancelled (the row went to `cancelling`), the daemon is shutting
   * down, or the lease was lost to another process. `signal.reason` is a JobStopped.
   */
  readonly signal: AbortSignal;
  /** True once a cancel was requested (seen on a heartbeat, a progress write or a checkpoint). */
  isCancelled(): boolean;
  /** Throws the JobStopped of `signal` when the job must stop; call it between items. */
  throwIfStopped(): void;
  /**
   * How many items there are in all (null: unknown), as soon as the job knows (after a network's
   * first page, say): clients and the CLI then show a percentage and an estimate. Never stored
   * below `done`. Written with the next progress write.
   */
  setTotal(total: number | null): void;
  /**
   * Counts items handled (`done`, failed ones included) and failed among them (increments), and
   * with `total` sets the total as `setTotal` does. Written at most every ~250 ms.
   */
  progress(delta: { done?: number; failed?: number; total?: number | null }): void;
  /** The counts so far (a resumed job's include those of its earlier attempts). */
  counts(): JobProgress;
  /** Writes pending progress now. */
  flush(): Promise<void>;
  /**
   * Records what is finished (any JSON value) together with the progress counts, in one write, so
   * a resumed job restarts from here with the counts it had here. Throws JobStopped when the job
   * must stop (after saving): the next checkpoint is where a cancelled job stops.
   */
  saveCheckpoint(value: unknown): Promise<void>;
  /** A plugin log entry from source `jobs`, with the job's id and type in its context. */
  log(level: LogLevel, message: string, context?: Record<string, unknown>): void;
}

export type JobStopReason = 'cancelled' | 'shutdown' | 'lease_lost';

/** Why a job was told to stop; the reason of its AbortSignal. */
export class JobStopped extends Error {
  constructor(readonly reason: JobStopReason) {
    super(
      reason === 'cancelled'
        ? 'The job was cancelled.'
        : reason === 'shutdown'
          ? 'The process running the job is shutting down.'
          : 'The job was taken over by another process.',
    );
    this.name = 'JobStopped';
  }
}
