// Outgoing webhooks: /webhooks (list, create), /webhooks/{id} (get, update, delete), a test ping,
// a subscription's delivery log, one delivery and its redelivery.
import { none } from '../../fields.js';
import { webhookSchemas } from '../../services/webhooks/schemas.js';
import { created, PagedResult, route, type RouteDef } from '../rest/types.js';

export const webhooksRoutes: RouteDef[] = [
  route({
    id: 'webhooks.list',
    method: 'GET',
    path: '/webhooks',
    auth: 'manage_options',
    description: 'Webhook subscriptions, newest first (never their secrets).',
    validate: { query: webhookSchemas.list },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.webhooks.list(query);
      return new PagedResult(items, total, query.page, query.per_page);
    },
  }),
  route({
    id: 'webhooks.create',
    location: (webhook) => `/webhooks/${webhook.id}`,
    method: 'POST',
    path: '/webhooks',
    auth: 'manage_options',
    idempotent: true,
    description: 'Subscribe a URL to events; the answer holds the signing secret, shown this once.',
    validate: { payload: webhookSchemas.create },
    async handler({ payload, actor, idempotency }, ctx) {
      return created(await ctx.webhooks.create(payload, actor, idempotency?.once(201)));
    },
  }),
  route({
    id: 'webhooks.get',
    method: 'GET',
    path: '/webhooks/{id}',
    auth: 'manage_options',
    description: 'One webhook subscription.',
    validate: { params: webhookSchemas.webhookId, query: none() },
    handler: ({ params }, ctx) => ctx.webhooks.get(params.id),
  }),
  route({
    id: 'webhooks.update',
    method: 'POST',
    path: '/webhooks/{id}',
    auth: 'manage_options',
    description: 'Change a subscription: what is not sent is kept; enabling resumes its waiting deliveries.',
    validate: { params: webhookSchemas.webhookId, payload: webhookSchemas.update },
    handler: ({ params, payload, actor }, ctx) => ctx.webhooks.update(params.id, payload, actor),
  }),
  route({
    id: 'webhooks.delete',
    method: 'DELETE',
    path: '/webhooks/{id}',
    auth: 'manage_options',
    description: 'Delete a subscription and its delivery log.',
    validate: { params: webhookSchemas.webhookId, payload: none() },
    handler: ({ params, actor }, ctx) => ctx.webhooks.remove(params.id, actor),
  }),
  route({
    id: 'webhooks.test',
    method: 'POST',
    path: '/webhooks/{id}/test',
    auth: 'manage_options',
    description: 'Send a ping event now and answer its delivery (one attempt, never retried).',
    validate: { params: webhookSchemas.webhookId, payload: none() },
    handler: ({ params, actor }, ctx) => ctx.webhooks.test(params.id, actor),
  }),
  route({
    id: 'webhooks.deliveries',
    method: 'GET',
    path: '/webhooks/{id}/deliveries',
    auth: 'manage_options',
    description: "A subscription's delivery log, newest first.",
    validate: { params: webhookSchemas.webhookId, query: webhookSchemas.deliveries },
    async handler({ params, query }, ctx) {
      const { items, total } = await ctx.webhooks.deliveries(params.id, query);
      return new PagedResult(items, total, query.page, query.per_page);
    },
  }),
  route({
    id: 'webhooks.deliveries.counts',
    method: 'GET',
    path: '/webhooks/{id}/deliveries/counts',
    auth: 'manage_options',
    description: "The subscription's deliveries per status under the list's other filters: {total, statuses} (the views row).",
    validate: { params: webhookSchemas.webhookId, query: webhookSchemas.deliveryCounts },
    handler: ({ params, query }, ctx) => ctx.webhooks.deliveryCounts(params.id, query),
  }),
  route({
    id: 'webhooks.delivery',
    method: 'GET',
    path: '/webhooks/deliveries/{id}',
    auth: 'manage_options',
    description: 'One delivery with the payload it sends.',
    validate: { params: webhookSchemas.deliveryId, query: none() },
    handler: ({ params }, ctx) => ctx.webhooks.delivery(params.id),
  }),
  route({
    id: 'webhooks.redeliver',
    method: 'POST',
    path: '/webhooks/deliveries/{id}/redeliver',
    auth: 'manage_options',
    description: 'Attempt a delivery again now (same id and body) and answer it as the attempt left it.',
    validate: { params: webhookSchemas.deliveryId, payload: none() },
    handler: ({ params, actor }, ctx) => ctx.webhooks.redeliver(params.id, actor),
  }),
];
