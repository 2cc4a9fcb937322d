// A read model of the coupons table for other domains' answers: how many coupons each advertiser
// has active now (a shop page's `%COUPONS_COUNT%`). SQL reads only; the coupon service stays the
// table's only writer. The composition root builds it before the pages service that renders it.
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { statusCondition } from './rows.js';

export class CouponCounts {
  constructor(private readonly deps: { db: Database; clock: Clock }) {}

  /**
   * How many coupons each advertiser has active at this instant (by the advertisers' numeric ids):
   * a shop page's `%COUPONS_COUNT%`. Advertisers without one are absent from the map.
   */
  async countActive(advertiserIds: number[]): Promise<Map<number, number>> {
    const counts = new Map<number, number>();
    if (advertiserIds.length === 0) return counts;
    const cond = statusCondition('active', this.deps.clock.now());
    const rows = await this.deps.db.select<{ id: unknown; n: unknown }>(
      `SELECT a.id, COUNT(*) AS n FROM advertisers a JOIN coupons c ON c.network = a.module AND c.advertiser = a.advertiser
       WHERE a.id IN (${advertiserIds.map(() => '?').join(', ')}) AND ${cond.sql} GROUP BY a.id`,
      [...advertiserIds, ...cond.params],
    );
    for (const r of rows) counts.set(Number(r.id), Number(r.n));
    return counts;
  }
}
