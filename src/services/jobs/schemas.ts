// Input schemas of the job routes, shared with `cashtrack jobs ...`.
import Joi from 'joi';
import { id, paging } from '../../fields.js';
import { JOB_STATUSES, type JobFilters } from './rows.js';

export { JOB_STATUSES };

/** Input schemas, shared with `cashtrack jobs ...`. */
export const jobSchemas = {
  list: Joi.object<JobFilters, true>({
    ...paging,
    status: Joi.string().valid(...JOB_STATUSES),
    type: Joi.string()
      .max(64)
      .pattern(/^[a-z0-9_.-]+$/)
      .description('Only jobs of this type, e.g. maintenance.prune.'),
  }),
  jobId: Joi.object<{ id: number }, true>({ id: id().required() }),
  /** `cashtrack jobs enqueue`: the type's own schema validates `params`. */
  enqueue: Joi.object<{ type: string; params: Record<string, unknown>; unique: boolean }, true>({
    type: Joi.string().max(64).required(),
    params: Joi.object().unknown(true).default({}),
    unique: Joi.boolean().default(false),
  }),
};
