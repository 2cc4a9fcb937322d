// Input schemas of the job routes, shared with `cashtrack jobs ...`.
import Joi from 'joi';
import { anyOf, anyOfPattern, dateRange, id, paging, sorting, type ListQuery, lazySchemas } from '../../fields.js';
import { JOB_ORDERBY, JOB_STATUSES, type JobCountFilters, type JobFilters, type JobOrderby } from './rows.js';

export { JOB_ORDERBY, JOB_STATUSES };

/** The list's filters other than the status ones: the counts per status take the same. */
const listFilters = {
  type: anyOfPattern(
    Joi.string()
      .max(64)
      .pattern(/^[a-z0-9_.-]+$/),
  ).description('Only jobs of these types, e.g. maintenance.prune (comma-separated or an array).'),
  ...dateRange('jobs created (created_at)'),
};

/** Input schemas, shared with `cashtrack jobs ...`. */
export const jobSchemas = lazySchemas(() => ({
  list: Joi.object<ListQuery<JobFilters>, true>({
    ...paging,
    ...sorting(Object.keys(JOB_ORDERBY) as JobOrderby[], 'id', 'desc'),
    status: anyOf(JOB_STATUSES).description('Only jobs in one of these statuses (comma-separated or an array).'),
    status_exclude: anyOf(JOB_STATUSES).description('Only jobs in none of these statuses.'),
    ...listFilters,
  }),
  counts: Joi.object<ListQuery<JobCountFilters>, true>(listFilters),
  jobId: Joi.object<{ id: number }, true>({ id: id().required() }),
  /** `cashtrack jobs enqueue`: the type's own schema validates `params`. */
  enqueue: Joi.object<{ type: string; params: Record<string, unknown>; unique: boolean }, true>({
    type: Joi.string().max(64).required(),
    params: Joi.object().unknown(true).default({}),
    unique: Joi.boolean().default(false),
  }),
}));
