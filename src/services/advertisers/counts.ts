// A read model of the advertisers table: how many active advertisers each network has (a
// network's `counts.advertisers`), and how many per status for the views row of the list. SQL reads only; the advertiser service stays
// the table's only writer. The composition root builds it before the networks service.
import type { Database } from '../../db/database.js';
import { countByStatus, type StatusCounts } from '../../db/lists.js';
import { toInt } from '../../db/values.js';
import { advertiserWhere, type AdvertiserCountFilters } from './listing.js';
import { ADVERTISER_STATUSES } from './rows.js';

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

  /** The views row of `GET /advertisers`: advertisers per status under the list's other filters. */
  countByStatus(filters: AdvertiserCountFilters): Promise<StatusCounts> {
    return countByStatus(this.deps.db, 'advertisers', 'status', advertiserWhere(filters), ADVERTISER_STATUSES);
  }
}
