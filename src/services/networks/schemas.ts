// Input schemas of the network routes, shared with `cashtrack networks ...`: the networks, their
// custom definitions, the postbacks a network sent and test postbacks.
import Joi from 'joi';
import { customDefinitionPatchSchema } from '../../networks/custom-definition.js';
import { dateTime, flag, networkId, paging, type Paging } from '../../fields.js';
import { POSTBACK_OUTCOMES, type PostbackFilters, type TestInput } from '../postbacks/index.js';

const decimal = Joi.string().pattern(/^\d{1,15}(\.\d{1,6})?$/, 'decimal amount').max(40);

/** Input schemas, shared with `cashtrack networks ...`. */
export const networkSchemas = {
  list: Joi.object<Paging & { kind?: 'builtin' | 'custom' }, true>({ ...paging, kind: Joi.string().valid('builtin', 'custom').description('Only built-in or only custom networks.') }),
  networkId: Joi.object<{ id: string }, true>({ id: networkId().required() }),
  /** Every field optional: an update keeps what it does not send; a new network's required fields are checked by the service. */
  save: customDefinitionPatchSchema,
  postbacks: Joi.object<Omit<PostbackFilters, 'network'>, true>({
    ...paging,
    outcome: Joi.string().valid(...POSTBACK_OUTCOMES).description('Only postbacks with this outcome.'),
    test: flag().description('true: only test postbacks; false: only real ones.'),
    after: dateTime().description('Received after this time (ISO 8601).'),
    before: dateTime().description('Received before this time (ISO 8601).'),
  }),
  test: Joi.object<TestInput, true>({
    status: Joi.string().valid('pending', 'approved', 'declined').description('The status to report (default pending).'),
    amount: decimal.description('Sale amount in the network currency (default 100.00).'),
    commission: decimal.description('Commission (default 10.00).'),
    sub_id: Joi.string().max(191).pattern(/^[A-Za-z0-9._@+:~=/-]+$/, 'sub id').description('Sub id to report (a member id or login).'),
  }),
};
