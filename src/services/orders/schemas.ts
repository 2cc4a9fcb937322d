// Input schemas of the order routes, shared with `cashtrack orders ...`, and the status a manual
// order is answered and recorded with under an Idempotency-Key (the same at both doors, so a key
// replays the same answer whichever door it came through).
import Joi from 'joi';
import {
  advertiserId,
  amount as amountField,
  anyOf,
  anyOfPattern,
  currency,
  dateRange,
  dateTime,
  flag,
  id,
  networkId,
  networkRef,
  note,
  paging,
  sorting,
  type ListQuery,
  lazySchemas,
} from '../../fields.js';
import type { OrderCountFilters } from './index.js';
import type { RecordInput } from './reports.js';
import { ORDER_ORDERBY, type OrderFilters, type OrderOrderby } from './store.js';
import { ORDER_STATUSES, REVIEW_STATES } from './states.js';
import type { OrderChange, UpdateInput } from './types.js';

export { ORDER_STATUSES, REVIEW_STATES };

const amount = amountField().description('Decimal string in the order currency, e.g. "12.50".');
const status = Joi.string().valid(...ORDER_STATUSES);

/** A manual order as the route and `cashtrack orders create` take it: amounts as decimal strings. */
export type OrderCreateInput = Omit<RecordInput, 'source' | 'raw' | 'member_ref' | 'sale_amount' | 'commission' | 'clicked_at' | 'event_at'> & {
  sale_amount: string;
  commission: string;
  clicked_at?: Date;
  event_at?: Date;
};

/** The list's filters other than the status ones: the counts per status take the same. */
const listFilters = {
  member_id: id().description("Only this member's orders."),
  network: anyOfPattern(networkRef()).description('Only orders from these networks (comma-separated or an array).'),
  advertiser: advertiserId().description('Only orders of this advertiser id.'),
  currency: anyOfPattern(currency(), 20).description('Only orders in these currencies (comma-separated or an array).'),
  unmatched: flag().description('true: only orders without a member; false: only orders with one.'),
  review: Joi.string()
    .valid(...REVIEW_STATES)
    .description('Only orders held for review (held), or released or declined after it.'),
  held: flag().description(
    'true: only orders held for review (as review=held); false: only orders not held (never reviewed, released or declined after review), what the overview counts per day.',
  ),
  search: Joi.string().trim().min(1).max(191).description('Prefix of the network transaction id or the merchant order ref.'),
  ...dateRange('orders recorded (created_at)'),
};

/** Input schemas, shared with `cashtrack orders ...`. */
export const orderSchemas = lazySchemas(() => ({
  list: Joi.object<ListQuery<OrderFilters>, true>({
    ...paging,
    ...sorting(Object.keys(ORDER_ORDERBY) as OrderOrderby[], 'id', 'desc'),
    status: anyOf(ORDER_STATUSES).description('Only orders in one of these statuses (comma-separated or an array).'),
    status_exclude: anyOf(ORDER_STATUSES).description('Only orders in none of these statuses.'),
    ...listFilters,
  }),
  counts: Joi.object<ListQuery<OrderCountFilters>, true>(listFilters),
  create: Joi.object<OrderCreateInput, true>({
    network: networkRef().required(),
    transaction_id: Joi.string()
      .trim()
      .max(191)
      .pattern(/^[\x21-\x7e]+$/, 'printable ASCII')
      .required()
      .description("The network's transaction id."),
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
  assign: Joi.object<{ member_id?: number; click_id?: string; note?: string }, true>({
    member_id: id().description("The member (may be left out with click_id: the click's member)."),
    click_id: Joi.string()
      .trim()
      .lowercase()
      .max(40)
      .pattern(/^c[0-9a-v]{18}$/, 'click id')
      .description("The click that is the evidence (a candidate's, GET /orders/{id}/candidates): recorded on the order."),
    note: note().min(1),
  }).or('member_id', 'click_id'),
  review: Joi.object<{ note?: string }, true>({
    note: note().min(1).description('Why; kept on the order (and, on a release, added to the ledger entries it posts).'),
  }),
  orderId: Joi.object<{ id: number }, true>({ id: id().required() }),
  poll: Joi.object<{ network?: string; since?: Date }, true>({
    network: networkId().description('Only this network (default: every enabled, configured network).'),
    since: dateTime().description('Start of the window (default: the oldest pending order of the network minus 7 days, else 30 days ago).'),
  }),
}));

/** 201 for a new order, 200 for a known one (with `duplicate: true` when nothing changed). */
export const changeStatus = (change: OrderChange): number => (change.changes[0] === 'created' ? 201 : 200);

/** The network payment routes (`/networks/{id}/payments...`), shared with `cashtrack networks import-payments`. */
export const paymentSchemas = lazySchemas(() => ({
  networkId: Joi.object<{ id: string }, true>({ id: networkId().required() }),
  list: Joi.object<{ page: number; per_page: number; unknown?: boolean }, true>({
    ...paging,
    unknown: flag().description('Only payment lines for transactions we do not know (no order).'),
  }),
  import: Joi.object<{ csv: string }, true>({
    csv: Joi.string()
      .max(5_000_000)
      .required()
      .description("The network's payment report as CSV text with a header row, read by the network definition's `payments` mapping."),
  }),
}));
