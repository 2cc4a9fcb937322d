// Declarative job types: `{ type, description, params, run(ctx, job) }`, listed in one explicit
// array (src/jobs/types/index.ts) and validated when the registry is built (at boot). The job
// service and the runner take a registry, so tests can add job types of their own.
import Joi from 'joi';
import type { Context } from '../context.js';
import { ServiceError } from '../errors.js';
import { dict } from '../objects.js';
import type { JobProgress } from '../services/jobs/rows.js';
import type { LogLevel } from '../services/logs/index.js';

/** What a running job sees of itself. */
export interface JobHandle<P = Record<string, any>> {
  readonly id: number;
  readonly type: string;
  /** The parameters, validated by the type's schema (defaults applied). */
  readonly params: P;
  /**
   * The last value given to `saveCheckpoint` by an earlier attempt (null on a first run). A job
   * taken over after its process died starts here and must skip what it says is finished.
   */
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

/**
 * One kind of job. `run` returns the result (e.g. counts), stored as the job's `result`. Returning
 * means the work is complete; a job told to stop (see `JobHandle.signal`) throws instead, usually
 * by calling `throwIfStopped()` or through `saveCheckpoint`. Work must be safe to redo from the
 * last checkpoint: a process that dies between an item and its checkpoint redoes that item.
 */
export interface JobType<P = any> {
  /** `<noun>.<verb>`, e.g. `maintenance.prune`, `advertisers.sync`. */
  type: string;
  description: string;
  /** Validates `params` at enqueue (and again when the job starts). */
  params: Joi.ObjectSchema;
  run(ctx: Context, job: JobHandle<P>): Promise<Record<string, unknown>>;
}

export type JobStopReason = 'cancelled' | 'shutdown' | 'lease_lost';

/** Why a job was told to stop; the reason of its AbortSignal. */
export class JobStopped extends Error {
  constructor(readonly reason: JobStopReason) {
    super(reason === 'cancelled' ? 'The job was cancelled.' : reason === 'shutdown' ? 'The process running the job is shutting down.' : 'The job was taken over by another process.');
    this.name = 'JobStopped';
  }
}

const TYPE_NAME = /^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)+$/;

/** The job types one process knows. Construction fails on a malformed or repeated type. */
export class JobRegistry {
  private readonly byType = new Map<string, JobType>();

  constructor(types: readonly JobType[]) {
    for (const [i, t] of types.entries()) {
      const where = `job type #${i + 1}${t && typeof t.type === 'string' ? ` (${t.type})` : ''}`;
      if (!t || typeof t.type !== 'string' || !TYPE_NAME.test(t.type) || t.type.length > 64) throw new Error(`${where}: type must be <noun>.<verb> in lower case, at most 64 characters`);
      if (this.byType.has(t.type)) throw new Error(`${where}: the type ${t.type} is registered twice`);
      if (typeof t.description !== 'string' || !t.description.trim()) throw new Error(`${where}: description is required`);
      if (!Joi.isSchema(t.params) || t.params.type !== 'object') throw new Error(`${where}: params must be a Joi object schema`);
      if (typeof t.run !== 'function') throw new Error(`${where}: run must be a function`);
      this.byType.set(t.type, t);
    }
  }

  /** A registry with these types added (tests). */
  with(...extra: JobType[]): JobRegistry {
    return new JobRegistry([...this.byType.values(), ...extra]);
  }

  get types(): string[] {
    return [...this.byType.keys()];
  }

  list(): JobType[] {
    return [...this.byType.values()];
  }

  get(type: string): JobType | undefined {
    return this.byType.get(type);
  }

  /** The type, or 400 svc_unknown_job_type. */
  require(type: string): JobType {
    const t = this.byType.get(type);
    if (!t) throw new ServiceError('svc_unknown_job_type', `There is no job type "${String(type).slice(0, 64)}".`, 400, { types: this.types });
    return t;
  }

  /** Validated params with defaults applied, or 400 svc_invalid_job_params naming each bad field. */
  validateParams(type: string, params: unknown): Record<string, unknown> {
    const t = this.require(type);
    const { value, error } = t.params.validate(params ?? {}, { abortEarly: false, convert: true, errors: { wrap: { label: false } } });
    if (error) {
      const fields = dict<string>();
      for (const d of error.details) fields[d.path.join('.') || 'params'] ??= d.message;
      throw new ServiceError('svc_invalid_job_params', `Invalid parameters for ${type}: ${Object.entries(fields).map(([k, m]) => (m.startsWith(k) ? m : `${k}: ${m}`)).join('; ')}.`, 400, { params: fields });
    }
    return value as Record<string, unknown>;
  }
}
