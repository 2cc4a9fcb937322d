// The orders a missing-cashback claim could be about: a read model over the orders table for the
// claims domain (read-only; the orders service stays its only writer). By the shop's order
// reference first; else by the sale amount within a tolerance in a window around the purchase,
// among orders without a member.
import type { Database } from '../../db/database.js';
import type { Transaction } from '../../db/transaction.js';
import { toDate, toInt } from '../../db/values.js';
import { toMinor } from '../../money.js';
import type { OrderStatus } from './states.js';

/** What a claim needs to know of an order. */
export interface OrderMatch {
  id: number;
  network: string;
  transaction_id: string;
  advertiser: string | null;
  merchant_ref: string | null;
  member_id: number | null;
  status: OrderStatus;
  sale_amount: number;
  currency: string;
  event_at: Date | null;
  created_at: Date;
}

const COLUMNS = 'id, network, transaction_id, advertiser, merchant_ref, member_id, status, sale_amount, currency, event_at, created_at';

function toMatch(r: Record<string, unknown>): OrderMatch {
  return {
    id: toInt(r.id),
    network: String(r.network),
    transaction_id: String(r.transaction_id),
    advertiser: r.advertiser === null || r.advertiser === undefined ? null : String(r.advertiser),
    merchant_ref: r.merchant_ref === null || r.merchant_ref === undefined ? null : String(r.merchant_ref),
    member_id: r.member_id === null || r.member_id === undefined ? null : toInt(r.member_id),
    status: String(r.status) as OrderStatus,
    sale_amount: toMinor(r.sale_amount),
    currency: String(r.currency),
    event_at: toDate(r.event_at),
    created_at: toDate(r.created_at)!,
  };
}

/** Finds the orders a claim may be about (see the header). */
export class OrderMatches {
  constructor(private readonly deps: { db: Database }) {}

  async byId(id: number, t?: Transaction): Promise<OrderMatch | null> {
    const [row] = await this.deps.db.select<Record<string, unknown>>(`SELECT ${COLUMNS} FROM orders WHERE id = ?`, [id], t);
    return row ? toMatch(row) : null;
  }

  /** The order of this network transaction, or null. */
  async byTransaction(network: string, transactionId: string, t?: Transaction): Promise<OrderMatch | null> {
    const [row] = await this.deps.db.select<Record<string, unknown>>(
      `SELECT ${COLUMNS} FROM orders WHERE network = ? AND transaction_id = ?`,
      [network, transactionId],
      t,
    );
    return row ? toMatch(row) : null;
  }

  /** The orders of this shop with this order reference, oldest first. */
  async byRef(network: string, advertiser: string, ref: string, t?: Transaction): Promise<OrderMatch[]> {
    const rows = await this.deps.db.select<Record<string, unknown>>(
      `SELECT ${COLUMNS} FROM orders WHERE merchant_ref = ? AND network = ? AND advertiser = ? ORDER BY id LIMIT 20`,
      [ref, network, advertiser],
      t,
    );
    return rows.map(toMatch);
  }

  /**
   * Orders of this shop without a member whose sale is within [min, max] minor units of
   * `currency` and whose purchase (else recording) time is within [from, to], oldest first.
   */
  async unmatchedByAmount(
    q: { network: string; advertiser: string; currency: string; min: number; max: number; from: Date; to: Date },
    t?: Transaction,
  ): Promise<OrderMatch[]> {
    const rows = await this.deps.db.select<Record<string, unknown>>(
      `SELECT ${COLUMNS} FROM orders WHERE network = ? AND advertiser = ? AND member_id IS NULL AND currency = ?
       AND sale_amount >= ? AND sale_amount <= ? AND COALESCE(event_at, created_at) >= ? AND COALESCE(event_at, created_at) <= ?
       ORDER BY id LIMIT 20`,
      [q.network, q.advertiser, q.currency, q.min, q.max, q.from, q.to],
      t,
    );
    return rows.map(toMatch);
  }
}
