// A read model of the postbacks table for the intake watchdog: how many postbacks a network had
// accepted per hour. SQL reads only (over the `postbacks_network_received` index); records.ts stays
// the table's only writer, and the postback path is untouched by it.
import type { Database } from '../../db/database.js';
import { toInt } from '../../db/values.js';

export class PostbackCounts {
  constructor(private readonly deps: { db: Database }) {}

  /** Accepted postbacks of `network` (tests left out) per UTC hour in [from, to), keyed `YYYY-MM-DD HH`. */
  async acceptedByHour(network: string, from: Date, to: Date): Promise<Map<string, number>> {
    const db = this.deps.db;
    const rows = await db.select<{ h: unknown; n: unknown }>(
      `SELECT ${db.hourOf('received_at')} AS h, COUNT(*) AS n FROM postbacks
       WHERE network = ? AND received_at >= ? AND received_at < ? AND outcome = 'accepted' AND test = ? GROUP BY ${db.hourOf('received_at')}`,
      [network, from, to, false],
    );
    return new Map(rows.map((r) => [String(r.h), toInt(r.n)]));
  }

  /** Accepted postbacks of `network` (tests left out) received in [from, to). */
  async accepted(network: string, from: Date, to: Date): Promise<number> {
    const [row] = await this.deps.db.select<{ n: unknown }>(
      "SELECT COUNT(*) AS n FROM postbacks WHERE network = ? AND received_at >= ? AND received_at < ? AND outcome = 'accepted' AND test = ?",
      [network, from, to, false],
    );
    return toInt(row?.n ?? 0);
  }
}
