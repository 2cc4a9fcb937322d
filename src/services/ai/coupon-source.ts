// The coupons as the AI service sees them: read and rewritten through the coupon service (which
// owns the table), and walked by id for a bulk run. The walk is a read-only query of the coupons
// table with the coupon service's own status rule: a keyset (id > after) that what the run writes
// cannot shift, which the service's paged list (offsets over a set the run changes) cannot give.
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { toInt } from '../../db/values.js';
import { COUPON_STATUSES, statusCondition, type CouponService, type CouponStatus } from '../coupons/index.js';
import type { CouponSource, CouponWalkFilters } from './index.js';

function where(filters: CouponWalkFilters, now: Date): { sql: string[]; params: unknown[] } {
  const sql: string[] = [];
  const params: unknown[] = [];
  if (filters.network) sql.push('c.network = ?'), params.push(filters.network);
  if (filters.advertiser) sql.push('c.advertiser = ?'), params.push(filters.advertiser);
  if (filters.status && (COUPON_STATUSES as readonly string[]).includes(filters.status)) {
    const cond = statusCondition(filters.status as CouponStatus, now);
    sql.push(cond.sql);
    params.push(...cond.params);
  }
  if (filters.type) sql.push(filters.type === 'code' ? "c.code <> ''" : "c.code = ''");
  return { sql, params };
}

/** The coupon service and the bulk walk over its table, as the AI service needs them. */
export function couponSource(deps: { db: Database; clock: Clock; coupons: CouponService }): CouponSource {
  const { db, clock, coupons } = deps;
  return {
    get: (id) => coupons.get(id),
    applyRewrite: (id, text, meta, t, check) => coupons.applyRewrite(id, text, meta, t, check),
    async idsAfter(after, filters, limit) {
      const w = where(filters, clock.now());
      const rows = await db.select<{ id: unknown; ai_fields: unknown }>(
        `SELECT c.id, c.ai_fields FROM coupons c WHERE c.id > ?${w.sql.map((s) => ` AND ${s}`).join('')} ORDER BY c.id LIMIT ${Math.max(1, Math.floor(limit))}`,
        [after, ...w.params],
      );
      return rows.map((r) => ({ id: toInt(r.id), ai: r.ai_fields !== null && r.ai_fields !== undefined && r.ai_fields !== '' }));
    },
    async count(filters) {
      const w = where(filters, clock.now());
      const [row] = await db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM coupons c${w.sql.length ? ` WHERE ${w.sql.join(' AND ')}` : ''}`, w.params);
      return toInt(row.n);
    },
  };
}
