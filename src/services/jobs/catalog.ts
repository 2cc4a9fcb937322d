// The job types a process knows, as the job service sees them: their names, descriptions and
// parameter schemas. The registry in src/jobs/ (src/jobs/registry.ts) implements it with the
// types' `run`; the service takes it as a dependency, so services never import the job runtime.
import type Joi from 'joi';

/** A job type as the service sees it (its `run` belongs to the runtime). */
export interface JobTypeInfo {
  /** `<noun>.<verb>`, e.g. `maintenance.prune`, `advertisers.sync`. */
  type: string;
  description: string;
  /** Validates `params` at enqueue (and again when the job starts). */
  params: Joi.ObjectSchema;
}

/** What the job service and its callers use of the job types: `T` is the runtime's own type shape. */
export interface JobCatalog<T extends JobTypeInfo = JobTypeInfo> {
  readonly types: string[];
  list(): T[];
  get(type: string): T | undefined;
  /** The type, or 400 svc_unknown_job_type. */
  require(type: string): T;
  /** Validated params with defaults applied, or 400 svc_invalid_job_params naming each bad field. */
  validateParams(type: string, params: unknown): Record<string, unknown>;
}
