// Orders: list, one order, manual entry (a missing-cashback claim), status and amount changes,
// assignment of an unmatched order to its member, the review of held orders (release, decline),
// and POST /orders/poll (starts a poll job: 202).
import Joi from 'joi';
import type { OrderFilters } from '../../services/orders/rows.js';
import { ORDER_STATUSES, REVIEW_STATES, type OrderChange, type RecordInput, type UpdateInput } from '../../services/orders/index.js';
import { advertiserId, amount as amountField, currency, dateTime, flag, id, networkId, networkRef, none, note, paging } from '../../fields.js';
import { accepted, created, PagedResult, RestResponse, route, type RouteDef } from '../rest/types.js';

const amount = amountField().description('Decimal string in the order currency, e.g. "12.50".');
const status = Joi.string().valid(...ORDER_STATUSES);

/** A manual order as the route and `cashtrack orders create` take it: amounts as decimal strings. */
export type OrderCreateInput = Omit<RecordInput, 'source' | 'raw' | 'sale_amount' | 'commission' | 'clicked_at' | 'event_at'> & {
  sale_amount: string;
  commission: string;
  clicked_at?: Date;
  event_at?: Date;
};

/** Input schemas, shared with `cashtrack orders ...`. */
export const orderSchemas = {
  list: Joi.object<OrderFilters, true>({
    ...paging,
    status: status.description('Only orders in this status.'),
    member_id: id().description("Only this member's orders."),
    network: networkRef().description('Only orders from this network.'),
    advertiser: advertiserId().description('Only orders of this advertiser id.'),
    unmatched: flag().description('true: only orders without a member; false: only orders with one.'),
    review: Joi.string().valid(...REVIEW_STATES).description('Only orders held for review (held), or released or declined after it.'),
    search: Joi.string().trim().min(1).max(191).description('Prefix of the network transaction id or the merchant order ref.'),
    after: dateTime().description('Orders recorded after this time (ISO 8601).'),
    before: dateTime().description('Orders recorded before this time (ISO 8601).'),
  }),
  create: Joi.object<OrderCreateInput, true>({
    network: networkRef().required(),
    transaction_id: Joi.string().trim().max(191).pattern(/^[\x21-\x7e]+$/, 'printable ASCII').required().description("The network's transaction id."),
    member_id: id().description('The member (default: matched from sub_id).'),
    sub_id: Joi.string().trim().max(191).description('Tracking sub id: digits are a user id, anything else a login.'),
    advertiser: advertiserId(),
    merchant_ref: Joi.string().trim().max(191).description("The shop's order reference."),
    sale_amount: amount.required(),
    commission: amount.required().description("The site's commission, a decimal string in the order currency."),
    currency: currency(),
    status: status.default('pending'),
    clicked_at: dateTime(),
    event_at: dateTime().description('When the purchase happened.'),
    note: note().min(1).required().description('Who asked for it and why (e.g. the claim).'),
  }),
  update: Joi.object<UpdateInput, true>({
    status,
    sale_amount: amount,
    commission: amount,
    currency: currency(),
    note: note().min(1).description('Why; kept on the order and added to the ledger entries it posts.'),
  }).or('status', 'sale_amount', 'commission', 'currency', 'note'),
  assign: Joi.object<{ member_id: number; note?: string }, true>({
    member_id: id().required(),
    note: note().min(1),
  }),
  review: Joi.object<{ note?: string }, true>({
    note: note().min(1).description('Why; kept on the order (and, on a release, added to the ledger entries it posts).'),
  }),
  orderId: Joi.object<{ id: number }, true>({ id: id().required() }),
  poll: Joi.object<{ network?: string; since?: Date }, true>({
    network: networkId().description('Only this network (default: every enabled, configured network).'),
    since: dateTime().description('Start of the window (default: the oldest pending order of the network minus 7 days, else 30 days ago).'),
  }),
};

/** 201 for a new order, 200 for a known one (with `duplicate: true` when nothing changed). */
export const changeStatus = (change: OrderChange): number => (change.changes[0] === 'created' ? 201 : 200);


export const ordersRoutes: RouteDef[] = [
  route({
    id: 'orders.list',
    method: 'GET',
    path: '/orders',
    auth: 'manage_options',
    description: 'Orders, newest first.',
    validate: { query: orderSchemas.list },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.orders.list(query);
      return new PagedResult(items, total, query.page, query.per_page);
    },
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
    description: 'Give an unmatched order its member and apply the ledger effects of its status.',
    validate: { params: orderSchemas.orderId, payload: orderSchemas.assign },
    handler: ({ params, payload, actor, idempotency }, ctx) => ctx.orders.assign(params.id, payload.member_id, actor, idempotency?.once(200), payload.note ?? null),
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
