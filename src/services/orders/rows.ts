// Orders as stored and as shown: row decoding, the API shape (decimal strings, member, standing
// credits) and the insert of new rows. The reads and the list query are in orders/reader.ts; the
// rules that change orders live in orders.ts and orders/changes.ts.
import type { Transaction } from '../../db/transaction.js';
import type { Database } from '../../db/database.js';
import { toDate, toInt, toIso } from '../../db/values.js';
import { formatAmount, toMinor } from '../../money.js';
import type { Clock } from '../../clock.js';
import { decodeRule, encodeRule, type CashbackRuleService, type ScopedCashbackRule } from '../cashback/index.js';
import type { CashbackRule } from '../../cashback-rule.js';
import type { OrderReport } from './reports.js';
import type { OrderSource, OrderStatus, ReviewReason, ReviewState } from './states.js';

export interface OrderRow {
  id: number;
  network: string;
  transaction_id: string;
  merchant_ref: string | null;
  advertiser: string | null;
  member_id: number | null;
  sub_id: string | null;
  sale_amount: number;
  commission: number;
  currency: string;
  cashback: number;
  cashback_rule: string | null;
  status: OrderStatus;
  source: OrderSource;
  review: ReviewState | null;
  review_reason: ReviewReason | null;
  reviewed_by: string | null;
  reviewed_at: Date | null;
  clicked_at: Date | null;
  event_at: Date | null;
  status_changed_at: Date;
  note: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface OrderMember {
  id: number;
  login: string;
  display_name: string;
}

/** An order as the API and CLI show it. */
export interface Order {
  id: number;
  network: string;
  transaction_id: string;
  merchant_ref: string | null;
  advertiser: string | null;
  member: OrderMember | null;
  sub_id: string | null;
  sale_amount: string;
  commission: string;
  currency: string;
  /** The member's cashback, computed when the order was recorded (and on a correction while pending). */
  cashback: string;
  cashback_rule: CashbackRule | null;
  status: OrderStatus;
  source: OrderSource;
  /**
   * Null unless the order was held for review: `state` held (recorded, no ledger effect until an
   * administrator releases it), released or declined; `reason` why it was held.
   */
  review: { state: ReviewState; reason: ReviewReason | null; reviewed_by: string | null; reviewed_at: string | null } | null;
  /** The standing (not reversed) cashback credit of this order, if any. */
  cashback_entry_id: number | null;
  /** The standing referral credit of this order, if any. */
  referral: { referral_id: number; referrer: OrderMember; amount: string; entry_id: number } | null;
  clicked_at: string | null;
  event_at: string | null;
  status_changed_at: string;
  created_at: string;
  updated_at: string;
  note: string | null;
  /** The network's record (single-order reads only), with secret-looking keys redacted. */
  raw?: unknown;
}

export const ORDER_COLUMNS =
  'o.id, o.network, o.transaction_id, o.merchant_ref, o.advertiser, o.member_id, o.sub_id, o.sale_amount, o.commission, o.currency, o.cashback, o.cashback_rule, o.status, o.source, o.review, o.review_reason, o.reviewed_by, o.reviewed_at, o.clicked_at, o.event_at, o.status_changed_at, o.note, o.created_at, o.updated_at';

export function toOrderRow(r: Record<string, unknown>): OrderRow {
  const nullable = (v: unknown) => (v === null || v === undefined ? null : String(v));
  return {
    id: toInt(r.id),
    network: String(r.network),
    transaction_id: String(r.transaction_id),
    merchant_ref: nullable(r.merchant_ref),
    advertiser: nullable(r.advertiser),
    member_id: r.member_id === null || r.member_id === undefined ? null : toInt(r.member_id),
    sub_id: nullable(r.sub_id),
    sale_amount: toMinor(r.sale_amount),
    commission: toMinor(r.commission),
    currency: String(r.currency),
    cashback: toMinor(r.cashback),
    cashback_rule: nullable(r.cashback_rule),
    status: r.status as OrderStatus,
    source: r.source as OrderSource,
    review: nullable(r.review) as ReviewState | null,
    review_reason: nullable(r.review_reason) as ReviewReason | null,
    reviewed_by: nullable(r.reviewed_by),
    reviewed_at: toDate(r.reviewed_at),
    clicked_at: toDate(r.clicked_at),
    event_at: toDate(r.event_at),
    status_changed_at: toDate(r.status_changed_at)!,
    note: nullable(r.note),
    created_at: toDate(r.created_at)!,
    updated_at: toDate(r.updated_at)!,
  };
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The key of a network transaction in maps of orders. */
export function orderKey(network: string, transactionId: string): string {
  return `${network}\0${transactionId}`;
}

export interface OrderFilters {
  status?: OrderStatus;
  member_id?: number;
  network?: string;
  advertiser?: string;
  unmatched?: boolean;
  review?: ReviewState;
  search?: string;
  after?: Date;
  before?: Date;
  page: number;
  per_page: number;
}

/**
 * `order` as it stood at `row`: the row's own fields (status, amounts, dates) from `row`; the
 * member and the standing credits as in `order`. A batch that changes one order twice answers
 * each report with the order as that report left it.
 */
export function atRow(order: Order, row: OrderRow): Order {
  return {
    ...order,
    sale_amount: formatAmount(row.sale_amount, row.currency),
    commission: formatAmount(row.commission, row.currency),
    currency: row.currency,
    cashback: formatAmount(row.cashback, row.currency),
    cashback_rule: decodeRule(row.cashback_rule),
    status: row.status,
    review: shapeReview(row),
    status_changed_at: row.status_changed_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function shapeReview(row: OrderRow): Order['review'] {
  return row.review === null ? null : { state: row.review, reason: row.review_reason, reviewed_by: row.reviewed_by, reviewed_at: toIso(row.reviewed_at) };
}

/**
 * Inserts new orders with their cashback from the rule (in key order, so concurrent batches
 * take the new keys' locks in one order) and answers their rows. A key another transaction
 * inserted meanwhile fails on the unique key, and the batch runs again.
 */
export async function insertOrders(
  deps: { db: Database; clock: Clock; cashback: CashbackRuleService },
  news: { report: OrderReport; memberId: number | null; rule: ScopedCashbackRule; held: ReviewReason | null }[],
  t: Transaction,
): Promise<OrderRow[]> {
  const now = deps.clock.now();
  const rows = news.map(
    ({ report: r, memberId, rule, held }): OrderRow => ({
      id: 0,
      network: r.network,
      transaction_id: r.transactionId,
      merchant_ref: r.merchantRef,
      advertiser: r.advertiser,
      member_id: memberId,
      sub_id: r.subId,
      sale_amount: r.amounts.sale,
      commission: r.amounts.commission,
      currency: r.amounts.currency,
      cashback: deps.cashback.compute(rule, r.amounts),
      cashback_rule: encodeRule(rule),
      status: r.status,
      source: r.source,
      review: held ? 'held' : null,
      review_reason: held,
      reviewed_by: null,
      reviewed_at: null,
      clicked_at: r.clickedAt,
      event_at: r.eventAt,
      status_changed_at: now,
      note: r.note,
      created_at: now,
      updated_at: now,
    }),
  );
  const raw = new Map(news.map(({ report: r }) => [orderKey(r.network, r.transactionId), r.raw]));
  rows.sort((x, y) => (x.network === y.network ? compare(x.transaction_id, y.transaction_id) : compare(x.network, y.network)));
  const ids = await deps.db.insertMany(
    'orders',
    [
      'network',
      'transaction_id',
      'merchant_ref',
      'advertiser',
      'member_id',
      'sub_id',
      'sale_amount',
      'commission',
      'currency',
      'cashback',
      'cashback_rule',
      'status',
      'source',
      'review',
      'review_reason',
      'reviewed_by',
      'reviewed_at',
      'clicked_at',
      'event_at',
      'status_changed_at',
      'raw',
      'note',
      'created_at',
      'updated_at',
    ],
    rows.map((o) => [
      o.network,
      o.transaction_id,
      o.merchant_ref,
      o.advertiser,
      o.member_id,
      o.sub_id,
      o.sale_amount,
      o.commission,
      o.currency,
      o.cashback,
      o.cashback_rule,
      o.status,
      o.source,
      o.review,
      o.review_reason,
      o.reviewed_by,
      o.reviewed_at,
      o.clicked_at,
      o.event_at,
      now,
      raw.get(orderKey(o.network, o.transaction_id)) ?? null,
      o.note,
      now,
      now,
    ]),
    t,
  );
  rows.forEach((o, i) => {
    o.id = ids[i];
  });
  return rows;
}
