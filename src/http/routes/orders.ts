// Orders: list, one order, manual entry (a missing-cashback claim), status and amount changes,
// assignment of an unmatched order to its member, the review of held orders (release, decline),
// and POST /orders/poll (starts a poll job: 202).
import Joi from 'joi';
import { networkParam } from '../../jobs/types/per-network.js';
import { ORDER_STATUSES, REVIEW_STATES, type OrderChange, type RecordInput } from '../../services/orders.js';
import { dateTime, flag, paging } from '../rest/schema.js';
import { accepted, created, PagedResult, RestResponse, type RestInput, type RouteDef } from '../rest/types.js';

const id = Joi.number().integer().min(1).max(Number.MAX_SAFE_INTEGER);
const amount = Joi.string().max(40).description('Decimal string in the order currency, e.g. "12.50".');
const currency = Joi.string().pattern(/^[A-Z]{3}$/).description('ISO 4217 code (default: the site currency).');
const network = Joi.string().max(64).pattern(/^[\x21-\x7e]+$/, 'printable ASCII').description('Network id, e.g. awin.');
const advertiser = Joi.string().trim().max(128).pattern(/^[\x20-\x7e]+$/, 'printable ASCII').description("The network's advertiser id.");
const status = Joi.string().valid(...ORDER_STATUSES);
const note = Joi.string().trim().max(500);

/** Input schemas, shared with `cashtrack orders ...`. */
export const orderSchemas = {
  list: Joi.object({
    ...paging,
    status: status.description('Only orders in this status.'),
    member_id: id.description("Only this member's orders."),
    network: network.description('Only orders from this network.'),
    advertiser: advertiser.description('Only orders of this advertiser id.'),
    unmatched: flag().description('true: only orders without a member; false: only orders with one.'),
    review: Joi.string().valid(...REVIEW_STATES).description('Only orders held for review (held), or released or declined after it.'),
    search: Joi.string().trim().min(1).max(191).description('Prefix of the network transaction id or the merchant order ref.'),
    after: dateTime().description('Orders recorded after this time (ISO 8601).'),
    before: dateTime().description('Orders recorded before this time (ISO 8601).'),
  }),
  create: Joi.object({
    network: network.required(),
    transaction_id: Joi.string().trim().max(191).pattern(/^[\x21-\x7e]+$/, 'printable ASCII').required().description("The network's transaction id."),
    member_id: id.description('The member (default: matched from sub_id).'),
    sub_id: Joi.string().trim().max(191).description('Tracking sub id: digits are a user id, anything else a login.'),
    advertiser,
    merchant_ref: Joi.string().trim().max(191).description("The shop's order reference."),
    sale_amount: amount.required(),
    commission: amount.required().description("The site's commission, a decimal string in the order currency."),
    currency,
    status: status.default('pending'),
    clicked_at: dateTime(),
    event_at: dateTime().description('When the purchase happened.'),
    note: note.min(1).required().description('Who asked for it and why (e.g. the claim).'),
  }),
  update: Joi.object({
    status,
    sale_amount: amount,
    commission: amount,
    currency,
    note: note.min(1).description('Why; kept on the order and added to the ledger entries it posts.'),
  }).or('status', 'sale_amount', 'commission', 'currency', 'note'),
  assign: Joi.object({
    member_id: id.required(),
    note: note.min(1),
  }),
  review: Joi.object({
    note: note.min(1).description('Why; kept on the order (and, on a release, added to the ledger entries it posts).'),
  }),
  orderId: Joi.object({ id: id.required() }),
  poll: Joi.object({
    network: networkParam,
    since: dateTime().description('Start of the window (default: the oldest pending order of the network minus 7 days, else 30 days ago).'),
  }),
};

/** 201 for a new order, 200 for a known one (with `duplicate: true` when nothing changed). */
export const changeStatus = (change: OrderChange): number => (change.changes[0] === 'created' ? 201 : 200);


export const ordersRoutes: RouteDef[] = [
  {
    id: 'orders.list',
    method: 'GET',
    path: '/orders',
    auth: 'manage_options',
    description: 'Orders, newest first.',
    validate: { query: orderSchemas.list },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.orders.list(query as never);
      return new PagedResult(items, total, query.page, query.per_page);
    },
  },
  {
    id: 'orders.get',
    method: 'GET',
    path: '/orders/{id}',
    auth: 'manage_options',
    description: 'One order, with the network record.',
    validate: { params: orderSchemas.orderId, query: Joi.object({}) },
    handler: ({ params }, ctx) => ctx.orders.get(params.id),
  },
  {
    id: 'orders.create',
    method: 'POST',
    path: '/orders',
    auth: 'manage_options',
    idempotent: true,
    description: 'Record an order by hand (e.g. a missing-cashback claim); a known transaction is not recorded twice.',
    validate: { payload: orderSchemas.create },
    async handler({ payload, actor, idempotency }, ctx) {
      const change = await ctx.orders.record({ ...(payload as Omit<RecordInput, 'source'>), source: 'manual' }, actor, idempotency?.once(changeStatus));
      return changeStatus(change) === 201 ? created(change) : new RestResponse(change, 200);
    },
  },
  {
    id: 'orders.update',
    method: 'POST',
    path: '/orders/{id}',
    auth: 'manage_options',
    idempotent: true,
    description: 'Change the status of an order, or its amounts while pending.',
    validate: { params: orderSchemas.orderId, payload: orderSchemas.update },
    handler: ({ params, payload, actor, idempotency }, ctx) => ctx.orders.update(params.id, payload as never, actor, idempotency?.once(200)),
  },
  {
    id: 'orders.assign',
    method: 'POST',
    path: '/orders/{id}/assign',
    auth: 'manage_options',
    idempotent: true,
    description: 'Give an unmatched order its member and apply the ledger effects of its status.',
    validate: { params: orderSchemas.orderId, payload: orderSchemas.assign },
    handler: ({ params, payload, actor, idempotency }, ctx) => ctx.orders.assign(params.id, payload.member_id, actor, idempotency?.once(200), payload.note ?? null),
  },
  {
    id: 'orders.release',
    method: 'POST',
    path: '/orders/{id}/release',
    auth: 'manage_options',
    idempotent: true,
    description: 'Release an order held for review: the ledger effects of its current status apply, once (409 svc_order_not_held otherwise).',
    validate: { params: orderSchemas.orderId, payload: orderSchemas.review },
    handler: ({ params, payload, actor, idempotency }, ctx) => ctx.orders.release(params.id, actor, idempotency?.once(200), payload?.note ?? null),
  },
  {
    id: 'orders.decline',
    method: 'POST',
    path: '/orders/{id}/decline',
    auth: 'manage_options',
    idempotent: true,
    description: "Decline an order held for review: it becomes declined with no ledger effect, and the network's later reports of it are ignored.",
    validate: { params: orderSchemas.orderId, payload: orderSchemas.review },
    handler: ({ params, payload, actor, idempotency }, ctx) => ctx.orders.declineHeld(params.id, actor, idempotency?.once(200), payload?.note ?? null),
  },
  {
    id: 'orders.poll',
    method: 'POST',
    path: '/orders/poll',
    auth: 'manage_options',
    description: 'Start an order poll job (202 with the job; 409 svc_job_already_running when the same poll is under way).',
    validate: { payload: orderSchemas.poll },
    handler: async ({ payload, actor }, ctx) => accepted(await ctx.orders.startPoll(payload, actor)),
  },
];
