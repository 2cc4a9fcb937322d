// Networks: every network with its state, one network, custom network definitions, the postbacks
// a network received, and test postbacks.
import Joi from 'joi';
import { customDefinitionPatchSchema } from '../../networks/custom-definition.js';
import { dateTime, flag, networkId, none, paging, type Paging } from '../../fields.js';
import type { PostbackFilters } from '../../services/postbacks/records.js';
import type { TestInput } from '../../services/postbacks/test.js';
import { POSTBACK_OUTCOMES } from '../../services/postbacks/index.js';
import { created, PagedResult, route, type RouteDef } from '../rest/types.js';

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

export const networksRoutes: RouteDef[] = [
  route({
    id: 'networks.list',
    method: 'GET',
    path: '/networks',
    auth: 'manage_options',
    description: 'The networks, built-in then custom, by id, and their state. Secrets are never returned.',
    validate: { query: networkSchemas.list },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.networks.listPage(query);
      return new PagedResult(items, total, query.page, query.per_page);
    },
  }),
  route({
    id: 'networks.get',
    method: 'GET',
    path: '/networks/{id}',
    auth: 'manage_options',
    description: 'One network and its state.',
    validate: { params: networkSchemas.networkId, query: none() },
    handler: ({ params }, ctx) => ctx.networks.get(params.id),
  }),
  route({
    id: 'networks.save',
    method: 'POST',
    path: '/networks/{id}',
    auth: 'manage_options',
    description: 'Create (201) or update (200) a custom network: an update keeps every field it does not send (null clears one); a built-in network is 409 svc_network_not_custom.',
    validate: { params: networkSchemas.networkId, payload: networkSchemas.save },
    async handler({ params, payload, actor }, ctx) {
      const { network, created: isNew } = await ctx.networks.saveCustom(params.id, payload, actor);
      return isNew ? created(network) : network;
    },
  }),
  route({
    id: 'networks.postbacks',
    method: 'GET',
    path: '/networks/{id}/postbacks',
    auth: 'manage_options',
    description: 'Postbacks the network sent, newest first, with their outcome; secrets redacted.',
    validate: { params: networkSchemas.networkId, query: networkSchemas.postbacks },
    async handler({ params, query }, ctx) {
      const { items, total } = await ctx.postbacks.list({ ...query, network: params.id });
      return new PagedResult(items, total, query.page, query.per_page);
    },
  }),
  route({
    id: 'networks.postback-test',
    method: 'POST',
    path: '/networks/{id}/postback/test',
    auth: 'manage_options',
    description: "Send an authenticated test postback over HTTP to this daemon's own postback URL; it never records an order.",
    validate: { params: networkSchemas.networkId, payload: networkSchemas.test },
    handler: ({ params, payload, actor }, ctx) => ctx.postbacks.sendTest(params.id, payload, actor),
  }),
];
