// Input schemas of the postbacks a network sent (the filters of their list) and of a test
// postback, shared by the network routes and `cashtrack networks ...`, with the postback
// vocabulary those inputs use.
import Joi from 'joi';
import { anyOf, dateRange, flag, paging, sorting, type ListQuery, lazySchemas } from '../../fields.js';
import { POSTBACK_ORDERBY, POSTBACK_OUTCOMES, type PostbackCountFilters, type PostbackFilters, type PostbackOrderby } from './records.js';
import type { TestInput } from './test.js';

export { POSTBACK_ORDERBY, POSTBACK_OUTCOMES };

const decimal = Joi.string()
  .pattern(/^\d{1,15}(\.\d{1,6})?$/, 'decimal amount')
  .max(40);

/** The list's filters other than the outcome ones: the counts per outcome take the same. */
const listFilters = {
  test: flag().description('true: only test postbacks; false: only real ones.'),
  ...dateRange('postbacks received (received_at)'),
};

export const postbackSchemas = lazySchemas(() => ({
  list: Joi.object<ListQuery<Omit<PostbackFilters, 'network'>>, true>({
    ...paging,
    ...sorting(Object.keys(POSTBACK_ORDERBY) as PostbackOrderby[], 'id', 'desc'),
    outcome: anyOf(POSTBACK_OUTCOMES).description('Only postbacks with one of these outcomes (comma-separated or an array).'),
    outcome_exclude: anyOf(POSTBACK_OUTCOMES).description('Only postbacks with none of these outcomes.'),
    ...listFilters,
  }),
  counts: Joi.object<Omit<PostbackCountFilters, 'network'>, true>(listFilters),
  test: Joi.object<TestInput, true>({
    status: Joi.string().valid('pending', 'approved', 'declined').description('The status to report (default pending).'),
    amount: decimal.description('Sale amount in the network currency (default 100.00).'),
    commission: decimal.description('Commission (default 10.00).'),
    sub_id: Joi.string()
      .max(191)
      .pattern(/^[A-Za-z0-9._@+:~=/-]+$/, 'sub id')
      .description('Sub id to report (a member id or login).'),
  }),
}));
