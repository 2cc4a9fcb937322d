// Input schemas of the postbacks a network sent (the filters of their list) and of a test
// postback, shared by the network routes and `cashtrack networks ...`, with the postback
// vocabulary those inputs use.
import Joi from 'joi';
import { dateTime, flag, paging } from '../../fields.js';
import { POSTBACK_OUTCOMES, type PostbackFilters } from './records.js';
import type { TestInput } from './test.js';

export { POSTBACK_OUTCOMES };

const decimal = Joi.string()
  .pattern(/^\d{1,15}(\.\d{1,6})?$/, 'decimal amount')
  .max(40);

export const postbackSchemas = {
  list: Joi.object<Omit<PostbackFilters, 'network'>, true>({
    ...paging,
    outcome: Joi.string()
      .valid(...POSTBACK_OUTCOMES)
      .description('Only postbacks with this outcome.'),
    test: flag().description('true: only test postbacks; false: only real ones.'),
    after: dateTime().description('Received after this time (ISO 8601).'),
    before: dateTime().description('Received before this time (ISO 8601).'),
  }),
  test: Joi.object<TestInput, true>({
    status: Joi.string().valid('pending', 'approved', 'declined').description('The status to report (default pending).'),
    amount: decimal.description('Sale amount in the network currency (default 100.00).'),
    commission: decimal.description('Commission (default 10.00).'),
    sub_id: Joi.string()
      .max(191)
      .pattern(/^[A-Za-z0-9._@+:~=/-]+$/, 'sub id')
      .description('Sub id to report (a member id or login).'),
  }),
};
