// The orders table as stored and as shown: row decoding, the API shape (decimal strings, member,
// standing credits), the insert of new rows, the locked reads a change starts from, orders by id and
// the filtered list, each page with its standing credits added (one query per page). The updates
// stay with the rules that make them (changes.ts, admin.ts, poll.ts); the counts per network other
// domains show are a read model of their own (counts.ts).
import type { Clock } from '../../clock.js';
import type { CashbackRule } from '../../cashback-rule.js';
import { Database } from '../../db/database.js';
import { ListWhere, orderClause, pageClause, type OneOrMany } from '../../db/lists.js';
import type { Transaction } from '../../db/transaction.js';
import { walkPages } from '../../db/erasure.js';
import { toDate, toInt, toIso } from '../../db/values.js';
import { formatAmount, toMinor } from '../../money.js';
import { ASCII_ID, decodeRule, encodeRule, type CashbackRuleService } from '../cashback/index.js';
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
  click_id: string | null;
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
  /** When the network paid the order (services/orders/payments.ts), under which payment, and how much when it said. */
  network_paid_at: Date | null;
  network_payment_id: string | null;
  network_paid_amount: number | null;
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
  /** The click the order came from (its sub id was the click id, or it was assigned with the click). */
  click_id: string | null;
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
  /** Null until the network has paid the order: when, under which payment id, and the amount paid when the network says it. */
  network_payment: { paid_at: string; payment_id: string; amount: string | null } | null;
  /** The network's record (single-order reads only), with secret-looking keys redacted. */
  raw?: unknown;
}

export const ORDER_COLUMNS =
  'o.id, o.network, o.transaction_id, o.merchant_ref, o.advertiser, o.member_id, o.sub_id, o.sale_amount, o.commission, o.currency, o.cashback, o.cashback_rule, o.click_id, o.status, o.source, o.review, o.review_reason, o.reviewed_by, o.reviewed_at, o.clicked_at, o.event_at, o.status_changed_at, o.note, o.created_at, o.updated_at, o.network_paid_at, o.network_payment_id, o.network_paid_amount';

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
    click_id: nullable(r.click_id),
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
    network_paid_at: toDate(r.network_paid_at),
    network_payment_id: nullable(r.network_payment_id),
    network_paid_amount: r.network_paid_amount === null || r.network_paid_amount === undefined ? null : toMinor(r.network_paid_amount),
  };
}

/** An order's network payment as the API shows it. */
export function shapeNetworkPayment(row: OrderRow): Order['network_payment'] {
  if (row.network_paid_at === null || row.network_payment_id === null) return null;
  return {
    paid_at: row.network_paid_at.toISOString(),
    payment_id: row.network_payment_id,
    amount: row.network_paid_amount === null ? null : formatAmount(row.network_paid_amount, row.currency),
  };
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The key of a network transaction in maps of orders. */
export function orderKey(network: string, transactionId: string): string {
  return `${network}\0${transactionId}`;
}

/** The fields `GET /orders` sorts by, and the column each is. */
export const ORDER_ORDERBY = {
  id: 'o.id',
  created_at: 'o.created_at',
  event_at: 'o.event_at',
  status_changed_at: 'o.status_changed_at',
  status: 'o.status',
  commission: 'o.commission',
  cashback: 'o.cashback',
} as const;
export type OrderOrderby = keyof typeof ORDER_ORDERBY;

/** The filters of the order list and of its counts (everything but paging and sort). */
export interface OrderWhere {
  status?: OneOrMany<OrderStatus>;
  status_exclude?: OneOrMany<OrderStatus>;
  member_id?: number;
  network?: OneOrMany<string>;
  advertiser?: string;
  currency?: OneOrMany<string>;
  unmatched?: boolean;
  review?: ReviewState;
  /** true: only orders held for review; false: every other one (what the overview's per-day figures count). */
  held?: boolean;
  search?: string;
  after?: Date;
  before?: Date;
}

export interface OrderFilters extends OrderWhere {
  /** Default id (newest first). */
  orderby?: OrderOrderby;
  order?: 'asc' | 'desc';
  page: number;
  per_page: number;
}

/** The WHERE of the order list and of its counts per status. */
export function orderWhere(f: OrderWhere): ListWhere {
  const w = new ListWhere()
    .anyOf('o.status', f.status)
    .noneOf('o.status', f.status_exclude)
    .eq('o.member_id', f.member_id)
    .anyOf('o.network', f.network)
    .eq('o.advertiser', f.advertiser)
    .anyOf('o.currency', f.currency)
    .eq('o.review', f.review)
    .after('o.created_at', f.after)
    .before('o.created_at', f.before);
  if (f.unmatched !== undefined) w.add(f.unmatched ? 'o.member_id IS NULL' : 'o.member_id IS NOT NULL');
  if (f.held !== undefined) w.add(f.held ? "o.review = 'held'" : "(o.review IS NULL OR o.review <> 'held')");
  if (f.search) {
    const like = Database.likePrefix(f.search.trim());
    // transaction_id is ASCII-only on MariaDB: comparing it with other characters is an error there.
    if (ASCII_ID.test(f.search.trim())) w.add("(o.transaction_id LIKE ? ESCAPE '!' OR o.merchant_ref LIKE ? ESCAPE '!')", like, like);
    else w.add("o.merchant_ref LIKE ? ESCAPE '!'", like);
  }
  return w;
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
    network_payment: shapeNetworkPayment(row),
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
  news: { report: OrderReport; memberId: number | null; rule: CashbackRule; clickId: string | null; held: ReviewReason | null }[],
  t: Transaction,
): Promise<OrderRow[]> {
  const now = deps.clock.now();
  const rows = news.map(
    ({ report: r, memberId, rule, clickId, held }): OrderRow => ({
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
      click_id: clickId,
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
      network_paid_at: null,
      network_payment_id: null,
      network_paid_amount: null,
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
      'click_id',
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
      o.click_id,
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

/** Reads and shapes orders. */
export class OrderReader {
  constructor(private readonly db: Database) {}

  /** One order row, locked for the rest of the transaction on MariaDB. */
  async lockById(id: number, t: Transaction): Promise<OrderRow | null> {
    const [row] = await this.db.select<Record<string, unknown>>(`SELECT ${ORDER_COLUMNS} FROM orders o WHERE o.id = ?${this.db.forUpdate()}`, [id], t);
    return row ? toOrderRow(row) : null;
  }

  /**
   * The orders of these network transactions, keyed by `orderKey`, locked on MariaDB (a SQLite
   * write transaction is exclusive). On MariaDB a locking read of a missing key would take a gap
   * lock, and racing reports of a new transaction would then deadlock on their INSERTs; so the
   * keys are looked up with a plain read and only the rows found are locked, by primary key and in
   * id order (so concurrent batches lock in one order). A racing INSERT then fails on the unique
   * key instead, and the caller runs again and finds the row.
   */
  async lockByTransactions(keys: { network: string; transactionId: string }[], t: Transaction): Promise<Map<string, OrderRow>> {
    const byNetwork = new Map<string, Set<string>>();
    for (const k of keys) {
      if (!byNetwork.has(k.network)) byNetwork.set(k.network, new Set());
      byNetwork.get(k.network)!.add(k.transactionId);
    }
    const found = new Map<string, OrderRow>();
    const ids: number[] = [];
    for (const [network, set] of byNetwork) {
      const list = [...set];
      for (let i = 0; i < list.length; i += 500) {
        const chunk = list.slice(i, i + 500);
        const where = `network = ? AND transaction_id IN (${chunk.map(() => '?').join(', ')})`;
        if (!this.db.rowLocks) {
          const rows = await this.db.select<Record<string, unknown>>(`SELECT ${ORDER_COLUMNS} FROM orders o WHERE o.${where}`, [network, ...chunk], t);
          for (const r of rows.map(toOrderRow)) found.set(orderKey(r.network, r.transaction_id), r);
        } else {
          const rows = await this.db.select<{ id: unknown }>(`SELECT id FROM orders WHERE ${where}`, [network, ...chunk], t);
          ids.push(...rows.map((r) => toInt(r.id)));
        }
      }
    }
    if (ids.length > 0) {
      ids.sort((a, b) => a - b);
      for (let i = 0; i < ids.length; i += 500) {
        const chunk = ids.slice(i, i + 500);
        const rows = await this.db.select<Record<string, unknown>>(
          `SELECT ${ORDER_COLUMNS} FROM orders o WHERE o.id IN (${chunk.map(() => '?').join(', ')}) ORDER BY o.id${this.db.forUpdate()}`,
          chunk,
          t,
        );
        for (const r of rows.map(toOrderRow)) found.set(orderKey(r.network, r.transaction_id), r);
      }
    }
    return found;
  }

  /** Orders by id, shaped (with `raw` when asked), in the order of `ids`. */
  async byIds(ids: number[], options: { raw?: boolean; t?: Transaction } = {}): Promise<Order[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.select<Record<string, unknown>>(
      `SELECT ${ORDER_COLUMNS}${options.raw ? ', o.raw' : ''}, u.login AS member_login, u.display_name AS member_display_name
       FROM orders o LEFT JOIN users u ON u.id = o.member_id WHERE o.id IN (${ids.map(() => '?').join(', ')})`,
      ids,
      options.t,
    );
    const shaped = await this.shape(rows, options);
    const byId = new Map(shaped.map((o) => [o.id, o]));
    return ids.map((id) => byId.get(id)).filter((o): o is Order => o !== undefined);
  }

  /** Every order of a member with its raw network record, oldest first, read page by page (their data export). */
  async *ofMember(memberId: number): AsyncGenerator<Order> {
    const sql = `SELECT ${ORDER_COLUMNS}, o.raw, u.login AS member_login, u.display_name AS member_display_name
       FROM orders o LEFT JOIN users u ON u.id = o.member_id WHERE o.member_id = ?`;
    for await (const page of walkPages(this.db, sql, [memberId], { column: 'o.id', field: 'id' })) yield* await this.shape(page, { raw: true });
  }

  /** Newest first, filtered and paged. */
  async list(f: OrderFilters): Promise<{ items: Order[]; total: number }> {
    const where = orderWhere(f);
    const [rows, count] = await Promise.all([
      this.db.select<Record<string, unknown>>(
        `SELECT ${ORDER_COLUMNS}, u.login AS member_login, u.display_name AS member_display_name
         FROM orders o LEFT JOIN users u ON u.id = o.member_id ${where.sql} ${orderClause(ORDER_ORDERBY, f, 'o.id', { orderby: 'id', order: 'desc' })} ${pageClause(f)}`,
        where.params,
      ),
      this.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM orders o ${where.sql}`, where.params),
    ]);
    return { items: await this.shape(rows, {}), total: toInt(count[0].n) };
  }

  /**
   * The next `limit` orders of the filtered list after id `afterId`, in id order, shaped as the
   * list shows them: the keyset walk of an export, one chunk at a time (never the whole table).
   */
  async listAfter(f: OrderWhere, afterId: number, limit: number): Promise<Order[]> {
    const where = orderWhere(f).add('o.id > ?', afterId);
    const rows = await this.db.select<Record<string, unknown>>(
      `SELECT ${ORDER_COLUMNS}, u.login AS member_login, u.display_name AS member_display_name
       FROM orders o LEFT JOIN users u ON u.id = o.member_id ${where.sql} ORDER BY o.id LIMIT ${Math.max(1, Math.floor(limit))}`,
      where.params,
    );
    return this.shape(rows, {});
  }

  /** Adds the standing credits: one query over the page's cashback and referral entries. */
  private async shape(rows: Record<string, unknown>[], options: { raw?: boolean; t?: Transaction }): Promise<Order[]> {
    const credits = new Map<number, { cashback?: number; referral?: Order['referral'] }>();
    if (rows.length > 0) {
      const ids = rows.map((r) => toInt(r.id));
      const entries = await this.db.select<Record<string, unknown>>(
        `SELECT e.id, e.type, e.amount, e.currency, e.order_id, e.source_id, e.member_id, u.login, u.display_name
         FROM ledger_entries e LEFT JOIN ledger_entries x ON x.reverses_id = e.id JOIN users u ON u.id = e.member_id
         WHERE e.order_id IN (${ids.map(() => '?').join(', ')}) AND e.type IN ('cashback', 'referral') AND x.id IS NULL ORDER BY e.id`,
        ids,
        options.t,
      );
      for (const e of entries) {
        const orderId = toInt(e.order_id);
        const c = credits.get(orderId) ?? {};
        if (e.type === 'cashback') c.cashback = toInt(e.id);
        else {
          c.referral = {
            referral_id: toInt(e.source_id),
            referrer: { id: toInt(e.member_id), login: String(e.login), display_name: String(e.display_name) },
            amount: formatAmount(toMinor(e.amount), String(e.currency)),
            entry_id: toInt(e.id),
          };
        }
        credits.set(orderId, c);
      }
    }
    return rows.map((r) => {
      const o = toOrderRow(r);
      const c = credits.get(o.id) ?? {};
      const order: Order = {
        id: o.id,
        network: o.network,
        transaction_id: o.transaction_id,
        merchant_ref: o.merchant_ref,
        advertiser: o.advertiser,
        member: o.member_id === null ? null : { id: o.member_id, login: String(r.member_login), display_name: String(r.member_display_name) },
        sub_id: o.sub_id,
        sale_amount: formatAmount(o.sale_amount, o.currency),
        commission: formatAmount(o.commission, o.currency),
        currency: o.currency,
        cashback: formatAmount(o.cashback, o.currency),
        cashback_rule: decodeRule(o.cashback_rule),
        click_id: o.click_id,
        status: o.status,
        source: o.source,
        review: shapeReview(o),
        cashback_entry_id: c.cashback ?? null,
        referral: c.referral ?? null,
        clicked_at: toIso(o.clicked_at),
        event_at: toIso(o.event_at),
        status_changed_at: o.status_changed_at.toISOString(),
        created_at: o.created_at.toISOString(),
        updated_at: o.updated_at.toISOString(),
        note: o.note,
        network_payment: shapeNetworkPayment(o),
      };
      if (options.raw) order.raw = parseRaw(r.raw);
      return order;
    });
  }
}

function parseRaw(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  try {
    return JSON.parse(String(value));
  } catch {
    return String(value);
  }
}
