// A read model of the orders table: how many orders each network has (a network's
// `counts.orders`), and how many per status for the views row of the order list (GET
// /orders/counts, under the list's own filters). SQL reads only; the orders service stays the
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

  /** The views row of `GET /orders`: orders per status under the list's other filters. */
  countByStatus(filters: Omit<OrderWhere, 'status' | 'status_exclude'>): Promise<StatusCounts> {
    return countByStatus(this.deps.db, 'orders o', 'o.status', orderWhere(filters), ORDER_STATUSES);
  }
}
