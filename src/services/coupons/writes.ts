// What a coupon refresh writes: new and changed coupons merged into their rows (an edited or
// AI-written field keeps its text; the network's value waits in `network_values`), the coupons
// a full refresh no longer found marked removed (within the removal guard), and the statuses the
// dates call for. Hooks fire after the writes commit, with payloads read only when someone listens.
import type { Clock } from '../../clock.js';
import type { Database, Transaction } from '../../db/database.js';
import { toDate, toInt } from '../../db/values.js';
import { ServiceError } from '../../errors.js';
import { HOOKS, type HookBus } from '../../hooks/index.js';
import type { LogService } from '../logs/index.js';
import type { IncomingCoupon } from './incoming.js';
import type { RefreshCounts } from './refresh.js';
import {
  AI_FIELDS,
  COUPON_FIELDS,
  LIST_COLUMNS,
  fieldList,
  parseJson,
  shapeCoupon,
  statusAt,
  statusCondition,
  type Coupon,
  type CouponField,
  type CouponStatus,
} from './rows.js';
import { toColumn } from './values.js';

export interface CouponWritesDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  hooks: HookBus;
  /** 0..1: the largest share of a network's coupons one full refresh may mark removed. */
  maxRemovedShare: number;
}

/** Columns a refresh writes on a new coupon, or on a listed one with no edited or AI-written field. */
const INSERT_COLUMNS = [
  'network',
  'coupon_id',
  'advertiser',
  ...COUPON_FIELDS,
  'network_url',
  'status',
  'content_hash',
  'raw',
  'last_seen_refresh',
  'created_at',
  'updated_at',
  'removed_at',
];
const UPSERT_SET = INSERT_COLUMNS.filter((c) => c !== 'network' && c !== 'coupon_id' && c !== 'created_at');
/** Rows per statement: 27 placeholders a row, 13,500 a statement, inside both dialects' limits. */
const CHUNK = 500;
const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/** A stored coupon as a refresh first sees it. */
export interface Known {
  id: number;
  hash: string | null;
  removed: boolean;
}

interface Existing {
  id: number;
  hash: string | null;
  status: string;
  owned: Set<CouponField>;
  network: Record<string, unknown>;
  starts_at: Date | null;
  ends_at: Date | null;
}

/** The writes of a coupon refresh. */
export class CouponWrites {
  constructor(private readonly deps: CouponWritesDeps) {}

  /** Writes new and changed coupons in one transaction (rows read again under its lock); hooks fire after it commits. */
  async store(network: string, refresh: number, changed: IncomingCoupon[], counts: RefreshCounts, known: Map<string, Known>): Promise<void> {
    if (changed.length === 0) return;
    const { db, clock, hooks } = this.deps;
    const wantCreated = hooks.wp.hasAction(HOOKS.couponCreated);
    const wantUpdated = hooks.wp.hasAction(HOOKS.couponUpdated);
    const wantExpired = hooks.wp.hasAction(HOOKS.couponExpired);
    await db.transaction(async (t) => {
      const now = clock.now();
      const existing = await this.existing(
        network,
        changed.filter((c) => known.has(c.coupon_id)).map((c) => c.coupon_id),
        t,
      );
      const upserts: unknown[][] = [];
      const created: string[] = [];
      const updated: number[] = [];
      const expired: number[] = [];
      for (const c of changed) {
        const old = existing.get(c.coupon_id);
        if (old && old.hash === c.hash && old.status !== 'removed') continue;
        const starts = old?.owned.has('starts_at') ? old.starts_at : c.values.starts_at ? new Date(c.values.starts_at as string) : null;
        const ends = old?.owned.has('ends_at') ? old.ends_at : c.values.ends_at ? new Date(c.values.ends_at as string) : null;
        const status = statusAt(null, starts, ends, now);
        if (!old) {
          created.push(c.coupon_id);
          upserts.push(this.rowOf(network, refresh, c, status, now));
          continue;
        }
        updated.push(old.id);
        if (status === 'expired' && (old.status === 'active' || old.status === 'scheduled')) expired.push(old.id);
        if (old.owned.size === 0) upserts.push(this.rowOf(network, refresh, c, status, now));
        else await this.mergeOwned(old, refresh, c, status, now, t);
      }
      for (let i = 0; i < upserts.length; i += CHUNK) {
        const chunk = upserts.slice(i, i + CHUNK);
        await db.execute(db.upsert('coupons', INSERT_COLUMNS, ['network', 'coupon_id'], UPSERT_SET, chunk.length), chunk.flat(), t);
      }
      counts.created += created.length;
      counts.updated += updated.length;
      counts.expired += expired.length;
      // A coupon listed again later in this walk is compared with what was just stored.
      for (const c of changed) known.set(c.coupon_id, { id: existing.get(c.coupon_id)?.id ?? 0, hash: c.hash, removed: false });
      // Payloads are read only for hooks someone listens to: a refresh of 100,000 coupons
      // should not read them all back for nobody.
      const createdRows = wantCreated && created.length ? await this.readByKey(network, created, t) : [];
      const updatedRows = wantUpdated && updated.length ? await this.readById(updated, t) : [];
      const expiredRows =
        wantExpired && expired.length ? (wantUpdated ? updatedRows.filter((c) => expired.includes(c.id)) : await this.readById(expired, t)) : [];
      t.afterCommit(() => {
        for (const c of createdRows) hooks.doAction(HOOKS.couponCreated, c, { reason: 'refresh' });
        for (const c of updatedRows) hooks.doAction(HOOKS.couponUpdated, c, { reason: 'refresh', fields: null });
        for (const c of expiredRows) hooks.doAction(HOOKS.couponExpired, c, { reason: 'refresh' });
      });
    });
  }

  /** The stored state of these coupons, their rows held for the transaction. */
  private async existing(network: string, keys: string[], t: Transaction): Promise<Map<string, Existing>> {
    const { db } = this.deps;
    const out = new Map<string, Existing>();
    for (let i = 0; i < keys.length; i += CHUNK) {
      const chunk = keys.slice(i, i + CHUNK);
      const rows = await db.select<Record<string, unknown>>(
        `SELECT id, coupon_id, content_hash, status, edited_fields, ai_fields, network_values, starts_at, ends_at FROM coupons WHERE network = ? AND coupon_id IN (${placeholders(chunk.length)})${db.forUpdate()}`,
        [network, ...chunk],
        t,
      );
      for (const r of rows) {
        const owned = new Set<CouponField>([...fieldList(r.edited_fields, COUPON_FIELDS), ...fieldList(r.ai_fields, AI_FIELDS)]);
        out.set(String(r.coupon_id), {
          id: toInt(r.id),
          hash: r.content_hash === null || r.content_hash === undefined ? null : String(r.content_hash),
          status: String(r.status),
          owned,
          network: parseJson<Record<string, unknown>>(r.network_values, {}) ?? {},
          starts_at: toDate(r.starts_at),
          ends_at: toDate(r.ends_at),
        });
      }
    }
    return out;
  }

  private rowOf(network: string, refresh: number, c: IncomingCoupon, status: CouponStatus, now: Date): unknown[] {
    return [
      network,
      c.coupon_id,
      c.advertiser,
      ...COUPON_FIELDS.map((f) => toColumn(f, c.values[f])),
      c.network_url,
      status,
      c.hash,
      c.raw,
      refresh,
      now,
      now,
      null,
    ];
  }

  /** A changed coupon with edited or AI-written fields: those keep their text; the network's value waits in network_values. */
  private async mergeOwned(old: Existing, refresh: number, c: IncomingCoupon, status: CouponStatus, now: Date, t: Transaction): Promise<void> {
    const sets = ['advertiser = ?'];
    const params: unknown[] = [c.advertiser];
    const networkValues: Record<string, unknown> = { ...old.network };
    for (const f of COUPON_FIELDS) {
      if (old.owned.has(f)) networkValues[f] = c.values[f];
      else sets.push(`${f} = ?`), params.push(toColumn(f, c.values[f]));
    }
    sets.push(
      'network_url = ?',
      'network_values = ?',
      'status = ?',
      'content_hash = ?',
      'raw = ?',
      'last_seen_refresh = ?',
      'updated_at = ?',
      'removed_at = NULL',
    );
    params.push(c.network_url, JSON.stringify(networkValues), status, c.hash, c.raw, refresh, now);
    await this.deps.db.execute(`UPDATE coupons SET ${sets.join(', ')} WHERE id = ?`, [...params, old.id], t);
  }

  private async readByKey(network: string, keys: string[], t: Transaction): Promise<Coupon[]> {
    const out: Coupon[] = [];
    const now = this.deps.clock.now();
    for (let i = 0; i < keys.length; i += CHUNK) {
      const chunk = keys.slice(i, i + CHUNK);
      const rows = await this.deps.db.select<Record<string, unknown>>(
        `SELECT ${LIST_COLUMNS}, NULL AS advertiser_name FROM coupons c WHERE c.network = ? AND c.coupon_id IN (${placeholders(chunk.length)})`,
        [network, ...chunk],
        t,
      );
      out.push(...rows.map((r) => shapeCoupon(r, now)));
    }
    return out;
  }

  private async readById(ids: number[], t?: Transaction): Promise<Coupon[]> {
    const out: Coupon[] = [];
    const now = this.deps.clock.now();
    for (let i = 0; i < ids.length; i += CHUNK) {
      const chunk = ids.slice(i, i + CHUNK);
      const rows = await this.deps.db.select<Record<string, unknown>>(
        `SELECT ${LIST_COLUMNS}, NULL AS advertiser_name FROM coupons c WHERE c.id IN (${placeholders(chunk.length)})`,
        chunk,
        t,
      );
      out.push(...rows.map((r) => shapeCoupon(r, now)));
    }
    return out;
  }

  /**
   * Marks the coupons this full refresh did not list (`listed`) `removed`, unless they are more
   * than the allowed share of the network's coupons and `force` is not given: then 409
   * svc_coupons_mass_removal and nothing is removed.
   */
  async removeUnlisted(network: string, known: ReadonlyMap<string, Known>, listed: ReadonlySet<string>, force: boolean): Promise<number> {
    const { db, clock, hooks } = this.deps;
    let present = 0;
    const gone: number[] = [];
    for (const [couponId, k] of known) {
      if (k.removed) continue;
      present++;
      if (!listed.has(couponId)) gone.push(k.id);
    }
    if (gone.length === 0) return 0;
    const share = this.deps.maxRemovedShare;
    if (gone.length > share * present && !force) {
      throw new ServiceError(
        'svc_coupons_mass_removal',
        `The refresh would mark ${gone.length} of ${present} ${network} coupons removed, more than the allowed ${Math.round(share * 100)}%: more often an outage than a real change, so none were removed. Refresh with force to remove them.`,
        409,
        { network, would_remove: gone.length, total: present, max_removed_share: share },
      );
    }
    const now = clock.now();
    let removed = 0;
    for (let i = 0; i < gone.length; i += CHUNK) {
      const chunk = gone.slice(i, i + CHUNK);
      removed += (
        await db.execute(
          `UPDATE coupons SET status = 'removed', removed_at = ?, updated_at = ? WHERE id IN (${placeholders(chunk.length)}) AND status <> 'removed'`,
          [now, now, ...chunk],
        )
      ).affected;
    }
    if (hooks.wp.hasAction(HOOKS.couponUpdated))
      for (const c of await this.readById(gone)) hooks.doAction(HOOKS.couponUpdated, c, { reason: 'removed', fields: null });
    return removed;
  }

  /**
   * Moves the network's coupons whose dates say so to expired, scheduled or active (time passes
   * between refreshes); fires `cashtrack.coupon.expired` for each that was active or scheduled.
   */
  async sweep(network: string): Promise<number> {
    const { db, clock, hooks } = this.deps;
    const now = clock.now();
    const expiring = statusCondition('expired', now, '');
    const ids = (
      await db.select<{ id: unknown }>(`SELECT id FROM coupons WHERE network = ? AND status IN ('active', 'scheduled') AND ${expiring.sql}`, [
        network,
        ...expiring.params,
      ])
    ).map((r) => toInt(r.id));
    for (let i = 0; i < ids.length; i += CHUNK) {
      const chunk = ids.slice(i, i + CHUNK);
      await db.execute(`UPDATE coupons SET status = 'expired', updated_at = ? WHERE id IN (${placeholders(chunk.length)})`, [now, ...chunk]);
    }
    // `status IN (the others)` rather than `<>`: the (status, ends_at) index finds the few rows
    // to move instead of a scan of the network's coupons.
    for (const [status, from] of [
      ['scheduled', "'active', 'expired'"],
      ['active', "'scheduled', 'expired'"],
    ] as const) {
      const cond = statusCondition(status, now, '');
      await db.execute(`UPDATE coupons SET status = ?, updated_at = ? WHERE status IN (${from}) AND network = ? AND ${cond.sql}`, [
        status,
        now,
        network,
        ...cond.params,
      ]);
    }
    if (ids.length && hooks.wp.hasAction(HOOKS.couponExpired))
      for (const c of await this.readById(ids)) hooks.doAction(HOOKS.couponExpired, c, { reason: 'sweep' });
    if (ids.length) this.deps.logger.info('coupons', 'Coupons expired', { network, count: ids.length });
    return ids.length;
  }
}
