// Outgoing webhooks: /webhooks (list, create), /webhooks/{id} (get, update, delete), a test ping,
// a subscription's delivery log, one delivery and its redelivery.
import Joi from 'joi';
import { flag, id, none, paging } from '../../fields.js';
import { DELIVERY_STATUSES, WEBHOOK_EVENTS, type CreateWebhookInput, type DeliveryFilters, type UpdateWebhookInput, type WebhookFilters } from '../../services/webhooks/index.js';
import { created, PagedResult, route, type RouteDef } from '../rest/types.js';

const url = () => Joi.string().trim().max(2048).uri({ scheme: ['http', 'https'] }).description('Where deliveries are POSTed (http or https; checked by the outbound guard).');
const events = () =>
  Joi.array()
    .items(Joi.string().valid('*', ...WEBHOOK_EVENTS))
    .min(1)
    .max(50)
    .single()
    .description(`Events to send: ${WEBHOOK_EVENTS.join(', ')}, or * for all.`);
const description = () => Joi.string().trim().max(500).allow('', null).description('What the subscription is for.');

/** Input schemas, shared with `cashtrack webhooks ...`. */
export const webhookSchemas = {
  list: Joi.object<WebhookFilters, true>({ ...paging, enabled: flag().description('Only enabled (true) or disabled (false) subscriptions.') }),
  create: Joi.object<CreateWebhookInput, true>({
    url: url().required(),
    events: events().required(),
    description: description(),
    enabled: Joi.boolean().description('Default true.'),
  }),
  update: Joi.object<UpdateWebhookInput, true>({
    url: url(),
    events: events(),
    description: description(),
    enabled: Joi.boolean().description('false pauses deliveries; true resumes them and clears the failure count.'),
    rotate_secret: Joi.boolean().description('true: a new secret, answered once; the old one stops signing at once.'),
  }),
  webhookId: Joi.object<{ id: number }, true>({ id: id().required() }),
  deliveries: Joi.object<DeliveryFilters, true>({ ...paging, status: Joi.string().valid(...DELIVERY_STATUSES) }),
  deliveryId: Joi.object<{ id: string }, true>({ id: Joi.string().pattern(/^msg_[0-9A-Z]{26}$/, 'delivery id').required().description('A delivery id, msg_...') }),
};

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
