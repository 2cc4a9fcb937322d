// The delivery rows of the webhook outbox: claiming due ones for a sender (row locks on MariaDB,
// the one writer on SQLite, and a lease in `next_attempt_at` so a sender that dies mid-attempt
// only delays its deliveries), recording an attempt's outcome, the delivery log and its pruning.
import { countByStatus, ListWhere, orderClause, pageClause, type OneOrMany, type StatusCounts } from '../../db/lists.js';
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { Transaction } from '../../db/transaction.js';
import { replaceInColumns, type Replacement } from '../../db/erasure.js';
import { toInt, toIso } from '../../db/values.js';
import { ServiceError } from '../../errors.js';

export const DELIVERY_STATUSES = ['pending', 'failed', 'delivered', 'dead'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** One delivery as the API and the CLI show it (`payload` only when one delivery is asked for). */
export interface Delivery {
  id: string;
  webhook_id: number;
  event: string;
  status: DeliveryStatus;
  /** Attempts since the delivery was created or last redelivered. */
  attempts: number;
  /** When it is (re)tried next; null when delivered, dead, or its subscription is disabled. */
  next_attempt_at: string | null;
  last_status: number | null;
  last_error: string | null;
  duration_ms: number | null;
  created_at: string;
  updated_at: string;
  delivered_at: string | null;
  payload?: unknown;
}

/** A delivery a sender holds: what it needs for one attempt. */
export interface Claimed {
  id: string;
  webhook_id: number;
  event: string;
  payload: string;
  attempts: number;
  claim: string;
}

/** The fields a subscription's delivery list sorts by, and the column each is. */
export const DELIVERY_ORDERBY = {
  id: 'id',
  created_at: 'created_at',
  delivered_at: 'delivered_at',
  next_attempt_at: 'next_attempt_at',
  attempts: 'attempts',
  status: 'status',
  event: 'event',
} as const;
export type DeliveryOrderby = keyof typeof DELIVERY_ORDERBY;

/** The filters of a subscription's delivery list and of its counts per status. */
export interface DeliveryWhere {
  status?: OneOrMany<DeliveryStatus>;
  status_exclude?: OneOrMany<DeliveryStatus>;
  event?: OneOrMany<string>;
  after?: Date;
  before?: Date;
}

export interface DeliveryFilters extends DeliveryWhere {
  /** Default id (newest first: ids begin with their creation time). */
  orderby?: DeliveryOrderby;
  order?: 'asc' | 'desc';
  page: number;
  per_page: number;
}

/** The filters of the deliveries' counts: the list's, without paging, sort and the status ones. */
export type DeliveryCountFilters = Omit<DeliveryWhere, 'status' | 'status_exclude'>;

function deliveryWhere(webhookId: number, f: DeliveryWhere): ListWhere {
  return new ListWhere()
    .eq('webhook_id', webhookId)
    .anyOf('status', f.status)
    .noneOf('status', f.status_exclude)
    .anyOf('event', f.event)
    .after('created_at', f.after)
    .before('created_at', f.before);
}

const COLUMNS = 'id, webhook_id, event, status, attempts, next_attempt_at, last_status, last_error, duration_ms, created_at, updated_at, delivered_at';

function shape(row: Record<string, unknown>, withPayload = false): Delivery {
  const d: Delivery = {
    id: String(row.id),
    webhook_id: toInt(row.webhook_id),
    event: String(row.event),
    status: String(row.status) as DeliveryStatus,
    attempts: toInt(row.attempts),
    next_attempt_at: toIso(row.next_attempt_at),
    last_status: row.last_status === null || row.last_status === undefined ? null : toInt(row.last_status),
    last_error: (row.last_error as string | null) ?? null,
    duration_ms: row.duration_ms === null || row.duration_ms === undefined ? null : toInt(row.duration_ms),
    created_at: toIso(row.created_at)!,
    updated_at: toIso(row.updated_at)!,
    delivered_at: toIso(row.delivered_at),
  };
  if (withPayload) d.payload = JSON.parse(String(row.payload));
  return d;
}

/** What one attempt came to, as the outbox records it. */
export interface AttemptRecord {
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
  responseStatus: number | null;
  error: string | null;
  durationMs: number | null;
}

/** The webhook_deliveries table (owned with the rest of services/webhooks/). */
export class DeliveryStore {
  constructor(private readonly deps: { db: Database; clock: Clock }) {}

  /**
   * Takes up to `limit` due deliveries for one attempt each: they count the attempt and stay
   * leased (`next_attempt_at` moved `leaseMs` ahead) until their outcome is recorded.
   */
  async claim(limit: number, leaseMs: number): Promise<Claimed[]> {
    const { db, clock } = this.deps;
    // Most polls find nothing due: a plain read answers them without a write transaction (on
    // SQLite, the database's one write lock).
    const [any] = await db.select<{ id: string }>('SELECT id FROM webhook_deliveries WHERE next_attempt_at <= ? LIMIT 1', [clock.now()]);
    if (!any) return [];
    return db.transaction(async (t) => {
      const now = clock.now();
      const due = await db.select<{ id: string }>(
        `SELECT id FROM webhook_deliveries WHERE next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ${Math.max(1, Math.floor(limit))}${db.forUpdate({ skipLocked: true })}`,
        [now],
        t,
      );
      if (due.length === 0) return [];
      return this.lease(
        due.map((d) => d.id),
        now,
        leaseMs,
        t,
      );
    });
  }

  /** Takes one delivery for an attempt now, due or not (a test, a redelivery); null when it is gone. */
  async claimOne(id: string, leaseMs: number, reset: boolean, t: Transaction): Promise<Claimed | null> {
    const now = this.deps.clock.now();
    // A redelivery starts its count again: the retry schedule runs from the start.
    if (reset) await this.deps.db.execute('UPDATE webhook_deliveries SET attempts = 0 WHERE id = ?', [id], t);
    const [claimed] = await this.lease([id], now, leaseMs, t);
    return claimed ?? null;
  }

  private async lease(ids: string[], now: Date, leaseMs: number, t: Transaction): Promise<Claimed[]> {
    const { db } = this.deps;
    const claim = randomBytes(12).toString('hex');
    const marks = ids.map(() => '?').join(', ');
    await db.execute(
      `UPDATE webhook_deliveries SET claim = ?, attempts = attempts + 1, next_attempt_at = ?, updated_at = ? WHERE id IN (${marks})`,
      [claim, new Date(now.getTime() + leaseMs), now, ...ids],
      t,
    );
    const rows = await db.select<Record<string, unknown>>(
      `SELECT id, webhook_id, event, payload, attempts FROM webhook_deliveries WHERE id IN (${marks})`,
      ids,
      t,
    );
    return rows.map((r) => ({
      id: String(r.id),
      webhook_id: toInt(r.webhook_id),
      event: String(r.event),
      payload: String(r.payload),
      attempts: toInt(r.attempts),
      claim,
    }));
  }

  /** Records an attempt's outcome if `d` is still this sender's (false: another sender took it over). */
  async record(d: Claimed, r: AttemptRecord, t: Transaction): Promise<boolean> {
    const now = this.deps.clock.now();
    const { affected } = await this.deps.db.execute(
      `UPDATE webhook_deliveries SET status = ?, next_attempt_at = ?, claim = NULL, last_status = ?, last_error = ?, duration_ms = ?, updated_at = ?,
         delivered_at = ${r.status === 'delivered' ? '?' : 'delivered_at'} WHERE id = ? AND claim = ?`,
      [
        r.status,
        r.nextAttemptAt,
        r.responseStatus,
        r.error === null ? null : r.error.slice(0, 500),
        r.durationMs,
        now,
        ...(r.status === 'delivered' ? [now] : []),
        d.id,
        d.claim,
      ],
      t,
    );
    return affected === 1;
  }

  /** A claimed delivery of a disabled subscription goes back unattempted and waits (no due time). */
  async park(d: Claimed, t?: Transaction): Promise<void> {
    await this.deps.db.execute(
      'UPDATE webhook_deliveries SET attempts = attempts - 1, next_attempt_at = NULL, claim = NULL, updated_at = ? WHERE id = ? AND claim = ?',
      [this.deps.clock.now(), d.id, d.claim],
      t,
    );
  }

  /** Every waiting delivery of a subscription stops (it was disabled); those being attempted settle themselves. */
  async parkAll(webhookId: number, t: Transaction): Promise<void> {
    await this.deps.db.execute(
      "UPDATE webhook_deliveries SET next_attempt_at = NULL WHERE webhook_id = ? AND status IN ('pending', 'failed') AND claim IS NULL",
      [webhookId],
      t,
    );
  }

  /** The waiting deliveries of a re-enabled subscription are due now. */
  async resumeAll(webhookId: number, t: Transaction): Promise<number> {
    const now = this.deps.clock.now();
    const { affected } = await this.deps.db.execute(
      "UPDATE webhook_deliveries SET next_attempt_at = ?, updated_at = ? WHERE webhook_id = ? AND status IN ('pending', 'failed') AND next_attempt_at IS NULL",
      [now, now, webhookId],
      t,
    );
    return affected;
  }

  async removeAll(webhookId: number, t: Transaction): Promise<void> {
    await this.deps.db.execute('DELETE FROM webhook_deliveries WHERE webhook_id = ?', [webhookId], t);
  }

  /** One subscription's deliveries, newest first. */
  async list(webhookId: number, filters: DeliveryFilters): Promise<{ items: Delivery[]; total: number }> {
    const where = deliveryWhere(webhookId, filters);
    // Ids begin with their creation time: id order is creation order.
    const order = orderClause(DELIVERY_ORDERBY, filters, 'id', { orderby: 'id', order: 'desc' });
    const [rows, count] = await Promise.all([
      this.deps.db.select<Record<string, unknown>>(`SELECT ${COLUMNS} FROM webhook_deliveries ${where.sql} ${order} ${pageClause(filters)}`, where.params),
      this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM webhook_deliveries ${where.sql}`, where.params),
    ]);
    return { items: rows.map((r) => shape(r)), total: toInt(count[0].n) };
  }

  /** The views row of a subscription's deliveries: per status (every status, 0 included) under the list's other filters. */
  counts(webhookId: number, filters: DeliveryCountFilters): Promise<StatusCounts> {
    return countByStatus(this.deps.db, 'webhook_deliveries', 'status', deliveryWhere(webhookId, filters), DELIVERY_STATUSES);
  }

  /** One delivery with its payload; 404 svc_webhook_delivery_not_found. */
  async get(id: string, t?: Transaction): Promise<Delivery> {
    const [row] = await this.deps.db.select<Record<string, unknown>>(`SELECT ${COLUMNS}, payload FROM webhook_deliveries WHERE id = ?`, [id], t);
    if (!row) throw new ServiceError('svc_webhook_delivery_not_found', `Webhook delivery ${id} not found.`, 404);
    return shape(row, true);
  }

  /**
   * Deletes deliveries created more than `retentionDays` ago that have nothing left to do:
   * delivered, dead, or waiting on a subscription that stayed disabled all that time.
   */
  /** At a member's erasure, in `t`: the person's words replaced in every stored event body (sent or not). */
  eraseWords(replacements: readonly Replacement[], t: Transaction): Promise<number> {
    return replaceInColumns(this.deps.db, t, { table: 'webhook_deliveries', key: 'id', columns: ['payload', 'last_error'] }, replacements);
  }

  async prune(retentionDays: number): Promise<number> {
    const cutoff = new Date(this.deps.clock.now().getTime() - retentionDays * 86_400_000);
    const { affected } = await this.deps.db.execute(
      "DELETE FROM webhook_deliveries WHERE created_at < ? AND (status IN ('delivered', 'dead') OR next_attempt_at IS NULL)",
      [cutoff],
    );
    return affected;
  }
}
