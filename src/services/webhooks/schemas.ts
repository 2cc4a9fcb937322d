// Input schemas of the webhook routes, shared with `cashtrack webhooks ...`.
import Joi from 'joi';
import { flag, id, paging } from '../../fields.js';
import { WEBHOOK_EVENTS } from './events.js';
import type { CreateWebhookInput, UpdateWebhookInput, WebhookFilters } from './index.js';
import { DELIVERY_STATUSES, type DeliveryFilters } from './outbox.js';

export { DELIVERY_STATUSES };

const url = () =>
  Joi.string()
    .trim()
    .max(2048)
    .uri({ scheme: ['http', 'https'] })
    .description('Where deliveries are POSTed (http or https; checked by the outbound guard).');
// Which names are events is the service's rule (400 svc_webhook_event_unknown, naming the one it
// does not know, for an empty list too), so the schema checks only the shape.
const events = () =>
  Joi.array()
    .items(Joi.string().trim().min(1).max(100))
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
  deliveryId: Joi.object<{ id: string }, true>({
    id: Joi.string()
      .pattern(/^msg_[0-9A-Z]{26}$/, 'delivery id')
      .required()
      .description('A delivery id, msg_...'),
  }),
};
