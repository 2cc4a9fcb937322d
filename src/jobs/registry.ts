// Declarative job types: `{ type, description, params, run(ctx, job) }`, listed in one explicit
// array (src/jobs/types/index.ts) and validated when the registry is built (at boot). The job
// service and the runner take a registry, so tests can add job types of their own.
import Joi from 'joi';
import type { Context } from '../context.js';
import { ServiceError } from '../errors.js';
import { dict } from '../objects.js';
import type { JobCatalog, JobHandle, JobTypeInfo } from '../services/jobs/index.js';

/**
 * One kind of job. `run` returns the result (e.g. counts), stored as the job's `result`. Returning
 * means the work is complete; a job told to stop (see `JobHandle.signal`) throws instead, usually
 * by calling `throwIfStopped()` or through `saveCheckpoint`. Work must be safe to redo from the
 * last checkpoint: a process that dies between an item and its checkpoint redoes that item.
 */
// biome-ignore lint/suspicious/noExplicitAny: a list of job types mixes parameter types (each is checked by its own schema).
export interface JobType<P = any> extends JobTypeInfo {
  run(ctx: Context, job: JobHandle<P>): Promise<Record<string, unknown>>;
}

const TYPE_NAME = /^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)+$/;

/** The job types one process knows (the job service's catalog). Construction fails on a malformed or repeated type. */
export class JobRegistry implements JobCatalog<JobType> {
  private readonly byType = new Map<string, JobType>();

  constructor(types: readonly JobType[]) {
    for (const [i, t] of types.entries()) {
      const where = `job type #${i + 1}${t && typeof t.type === 'string' ? ` (${t.type})` : ''}`;
      if (!t || typeof t.type !== 'string' || !TYPE_NAME.test(t.type) || t.type.length > 64)
        throw new Error(`${where}: type must be <noun>.<verb> in lower case, at most 64 characters`);
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
      throw new ServiceError(
        'svc_invalid_job_params',
        `Invalid parameters for ${type}: ${Object.entries(fields)
          .map(([k, m]) => (m.startsWith(k) ? m : `${k}: ${m}`))
          .join('; ')}.`,
        400,
        { params: fields },
      );
    }
    return value as Record<string, unknown>;
  }
}
