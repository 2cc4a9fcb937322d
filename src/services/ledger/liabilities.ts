// A read model of the balances table: what the members are owed, per currency. The overview shows
// it, and a network's receivables show it beside what that network still owes in the currency.
// SQL reads only; the ledger service stays the table's only writer. Every total is summed exactly.
import type { Database } from '../../db/database.js';
import { readSum, toInt } from '../../db/values.js';
import { formatAmount } from '../../money.js';

/** The members' balances in one currency, as decimal strings. */
export interface Liability {
  currency: string;
  /** Sum of the available balances (overdrawn ones count negative). */
  available: string;
  /** Sum of the pending balances: cashback of orders the networks have not approved yet. */
  pending: string;
  /** Sum of the negative available balances (0 or negative). */
  overdrawn: string;
  members_overdrawn: number;
  /** What the members are owed: every positive available balance plus the pending ones (available − overdrawn + pending). */
  owed: string;
}

/** Reads the members' balances per currency. */
export class LedgerLiabilities {
  constructor(private readonly deps: { db: Database }) {}

  /** The liabilities per currency, by currency (only `currencies` when given). One aggregate query. */
  async byCurrency(currencies?: string[]): Promise<Liability[]> {
    if (currencies?.length === 0) return [];
    const db = this.deps.db;
    const only = currencies ? ` WHERE currency IN (${currencies.map(() => '?').join(', ')})` : '';
    const rows = await db.select<Record<string, unknown>>(
      `SELECT currency, ${db.exactSum('available', 'available')}, ${db.exactSum('pending', 'pending')},
              ${db.exactSum('CASE WHEN available < 0 THEN available ELSE 0 END', 'overdrawn')},
              SUM(CASE WHEN available < 0 THEN 1 ELSE 0 END) AS members_overdrawn
       FROM balances${only} GROUP BY currency ORDER BY currency`,
      currencies ?? [],
    );
    return rows.map((r) => {
      const currency = String(r.currency);
      const available = readSum(r, 'available');
      const pending = readSum(r, 'pending');
      const overdrawn = readSum(r, 'overdrawn');
      return {
        currency,
        available: formatAmount(available, currency),
        pending: formatAmount(pending, currency),
        overdrawn: formatAmount(overdrawn, currency),
        members_overdrawn: toInt(r.members_overdrawn ?? 0),
        owed: formatAmount(available - overdrawn + pending, currency),
      };
    });
  }
}
