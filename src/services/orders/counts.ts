// A read model of the orders table: how many orders each network has (a network's
// `counts.orders`), and how many per status for the views row of the order list (GET
// /orders/counts, under the list's own filters), and the orders each poll brought in per hour (the
// intake watchdog's history). SQL reads only; the orders service stays the
// table's only writer.
// The composition root builds it before the networks service that shows the counts.
import type { Database } from '../../db/database.js';
import { countByStatus, type StatusCounts } from '../../db/lists.js';
import { toInt } from '../../db/values.js';
import { ORDER_STATUSES } from './states.js';
import { orderWhere, type OrderWhere } from './store.js';

export class OrderCounts {
  constructor(private readonly deps: { db: Database }) {}

  /** How many orders each network has (only `networks` when given). */
  async countByNetwork(networks?: string[]): Promise<Record<string, number>> {
    if (networks?.length === 0) return {};
    const only = networks ? ` WHERE network IN (${networks.map(() => '?').join(', ')})` : '';
    const rows = await this.deps.db.select<{ network: unknown; n: unknown }>(
      `SELECT network, COUNT(*) AS n FROM orders${only} GROUP BY network`,
      networks ?? [],
    );
    return Object.fromEntries(rows.map((r) => [String(r.network), toInt(r.n)]));
  }

  /**
   * Orders a network's poll brought in (created with source `poll`) per UTC hour in [from, to),
   * keyed `YYYY-MM-DD HH`: the polled half of the intake watchdog's history.
   */
  async polledByHour(network: string, from: Date, to: Date): Promise<Map<string, number>> {
    const db = this.deps.db;
    const rows = await db.select<{ h: unknown; n: unknown }>(
      `SELECT ${db.hourOf('created_at')} AS h, COUNT(*) AS n FROM orders
       WHERE created_at >= ? AND created_at < ? AND network = ? AND source = 'poll' GROUP BY ${db.hourOf('created_at')}`,
      [from, to, network],
    );
    return new Map(rows.map((r) => [String(r.h), toInt(r.n)]));
  }

  /** Orders a network's poll brought in during [from, to). */
  async polled(network: string, from: Date, to: Date): Promise<number> {
    const [row] = await this.deps.db.select<{ n: unknown }>(
      "SELECT COUNT(*) AS n FROM orders WHERE created_at >= ? AND created_at < ? AND network = ? AND source = 'poll'",
      [from, to, network],
    );
    return toInt(row?.n ?? 0);
  }

  /** The views row of `GET /orders`: orders per status under the list's other filters. */
  countByStatus(filters: Omit<OrderWhere, 'status' | 'status_exclude'>): Promise<StatusCounts> {
    return countByStatus(this.deps.db, 'orders o', 'o.status', orderWhere(filters), ORDER_STATUSES);
  }
}
