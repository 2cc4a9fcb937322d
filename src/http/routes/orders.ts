// Orders: list, one order, manual entry (a missing-cashback claim), status and amount changes,
// assignment of an unmatched order to its member, the review of held orders (release, decline),
// and POST /orders/poll (starts a poll job: 202).
import { changeStatus, orderSchemas } from '../../services/orders/schemas.js';
import { none } from '../../fields.js';
import { accepted, created, PagedResult, RestResponse, route, type RouteDef } from '../rest/types.js';

export const ordersRoutes: RouteDef[] = [
  route({
    id: 'orders.list',
    method: 'GET',
    path: '/orders',
    auth: 'manage_options',
    description: 'Orders, newest first (orderby, order), filtered.',
    validate: { query: orderSchemas.list },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.orders.list(query);
      return new PagedResult(items, total, query.page, query.per_page);
    },
  }),
  route({
    id: 'orders.counts',
    method: 'GET',
    path: '/orders/counts',
    auth: 'manage_options',
    description: "Orders per status under the list's other filters: {total, statuses} (the views row).",
    validate: { query: orderSchemas.counts },
    handler: ({ query }, ctx) => ctx.orders.counts(query),
  }),
  route({
    id: 'orders.get',
    method: 'GET',
    path: '/orders/{id}',
    auth: 'manage_options',
    description: 'One order, with the network record.',
    validate: { params: orderSchemas.orderId, query: none() },
    handler: ({ params }, ctx) => ctx.orders.get(params.id),
  }),
  route({
    id: 'orders.create',
    location: (order) => `/orders/${order.id}`,
    method: 'POST',
    path: '/orders',
    auth: 'manage_options',
    idempotent: true,
    description: 'Record an order by hand (e.g. a missing-cashback claim); a known transaction is not recorded twice.',
    validate: { payload: orderSchemas.create },
    async handler({ payload, actor, idempotency }, ctx) {
      const change = await ctx.orders.record({ ...payload, source: 'manual' }, actor, idempotency?.once(changeStatus));
      return changeStatus(change) === 201 ? created(change) : new RestResponse(change, 200);
    },
  }),
  route({
    id: 'orders.update',
    method: 'POST',
    path: '/orders/{id}',
    auth: 'manage_options',
    idempotent: true,
    description: 'Change the status of an order, or its amounts while pending.',
    validate: { params: orderSchemas.orderId, payload: orderSchemas.update },
    handler: ({ params, payload, actor, idempotency }, ctx) => ctx.orders.update(params.id, payload, actor, idempotency?.once(200)),
  }),
  route({
    id: 'orders.assign',
    method: 'POST',
    path: '/orders/{id}/assign',
    auth: 'manage_options',
    idempotent: true,
    description:
      'Give an unmatched order its member (or a candidate click, whose member it is: the order records the click) and apply the ledger effects of its status.',
    validate: { params: orderSchemas.orderId, payload: orderSchemas.assign },
    handler: ({ params, payload, actor, idempotency }, ctx) =>
      ctx.orders.assign(params.id, payload.member_id ?? null, actor, idempotency?.once(200), payload.note ?? null, payload.click_id ?? null),
  }),
  route({
    id: 'orders.candidates',
    method: 'GET',
    path: '/orders/{id}/candidates',
    auth: 'manage_options',
    description:
      "The members whose clicks could have made the order (same shop, within the network's cookie window before the sale), ranked, each with the click as evidence.",
    validate: { params: orderSchemas.orderId, query: none() },
    handler: async ({ params }, ctx) => ctx.clicks.candidates(await ctx.orders.get(params.id)),
  }),
  route({
    id: 'orders.release',
    method: 'POST',
    path: '/orders/{id}/release',
    auth: 'manage_options',
    idempotent: true,
    description: 'Release an order held for review: the ledger effects of its current status apply, once (409 svc_order_not_held otherwise).',
    validate: { params: orderSchemas.orderId, payload: orderSchemas.review },
    handler: ({ params, payload, actor, idempotency }, ctx) => ctx.orders.release(params.id, actor, idempotency?.once(200), payload?.note ?? null),
  }),
  route({
    id: 'orders.decline',
    method: 'POST',
    path: '/orders/{id}/decline',
    auth: 'manage_options',
    idempotent: true,
    description: "Decline an order held for review: it becomes declined with no ledger effect, and the network's later reports of it are ignored.",
    validate: { params: orderSchemas.orderId, payload: orderSchemas.review },
    handler: ({ params, payload, actor, idempotency }, ctx) => ctx.orders.declineHeld(params.id, actor, idempotency?.once(200), payload?.note ?? null),
  }),
  route({
    id: 'orders.poll',
    method: 'POST',
    path: '/orders/poll',
    auth: 'manage_options',
    description: 'Start an order poll job (202 with the job; 409 svc_job_already_running when the same poll is under way).',
    validate: { payload: orderSchemas.poll },
    handler: async ({ payload, actor }, ctx) => accepted(await ctx.orders.startPoll(payload, actor)),
  }),
];
