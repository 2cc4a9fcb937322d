// A read model of the advertisers table for other domains' answers: how many active advertisers
// each network has (a network's `counts.advertisers`). SQL reads only; the advertiser service stays
// the table's only writer. The composition root builds it before the networks service.
import type { Database } from '../../db/database.js';
import { toInt } from '../../db/values.js';

export class AdvertiserCounts {
  constructor(private readonly deps: { db: Database }) {}

  /** Advertisers per module (active ones), for the networks' counts. */
  async countByModule(modules?: string[]): Promise<Record<string, number>> {
    if (modules?.length === 0) return {};
    const only = modules ? ` AND module IN (${modules.map(() => '?').join(', ')})` : '';
    const rows = await this.deps.db.select<{ module: unknown; n: unknown }>(
      `SELECT module, COUNT(*) AS n FROM advertisers WHERE status = 'active'${only} GROUP BY module`,
      modules ?? [],
    );
    return Object.fromEntries(rows.map((r) => [String(r.module), toInt(r.n)]));
  }
}
