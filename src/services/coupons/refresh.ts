// A coupon refresh: walks a network's coupon pages, tells the unchanged coupons (same content
// hash as stored) from the new and changed ones, and has writes.ts merge the latter into their
// rows, never replacing one: a changed coupon takes the network's values except in the fields an
// administrator edited or the AI wrote. A full refresh then marks what the network no longer
// lists `removed` (refusing past the configured share unless forced); every refresh ends by
// moving coupons whose dates say so to expired/scheduled/active, firing
// `cashtrack.coupon.expired` for those that expired.
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { toDate, toInt } from '../../db/values.js';
import { errorCode, ServiceError } from '../../errors.js';
import type { HookBus } from '../../hooks/index.js';
import type { CouponWalk, ModuleRuntime, NetworkCoupon } from '../../networks/types.js';
import type { WalkTotal } from '../jobs/index.js';
import type { LogService } from '../logs/index.js';
import type { NetworkService } from '../networks/index.js';
import { endsBeforeStart, fingerprint, toIncoming, type IncomingCoupon } from './incoming.js';
import { CouponWrites, type Known } from './writes.js';

export interface RefreshCounts {
  /** A refresh of what changed since the last one (no removals), not of the whole list. */
  incremental: boolean;
  pages: number;
  /** Coupons listed and stored (duplicates once per listing). */
  seen: number;
  created: number;
  /** Listed coupons whose record changed (or came back after being removed). */
  updated: number;
  unchanged: number;
  /** Coupons the network no longer lists, marked removed by this refresh. */
  removed: number;
  /** Coupons this refresh moved to expired (their end passed). */
  expired: number;
  /** Listed records that could not be stored (no id, no title...): skipped. */
  failed: number;
  /** Warnings: an id listed again in the same refresh (the last listing wins). */
  duplicates: number;
  /** Warnings: coupons ending before they start (stored, and expired). */
  bad_dates: number;
}

/** Where a refresh stands, saved after each write of changed coupons (at least every 20 pages) so a resumed refresh asks only for the rest. */
export interface RefreshState {
  network: string;
  refresh: number;
  incremental: boolean;
  /** When the refresh began: the next incremental refresh asks for changes since then. */
  started_at: string;
  /** The position of the next page (null: the list was read to its end). */
  next: string | null;
  counts: RefreshCounts;
}

export interface RefreshOptions {
  /** Remove coupons past the `max_removed_share` guard. */
  force?: boolean;
  /** Read the whole list even when the network can list only changes (Awin). */
  full?: boolean;
  resume?: RefreshState | null;
  onPage?: (state: RefreshState) => Promise<void>;
  onProgress?: (delta: { done: number; failed: number }) => void;
  onTotal?: (total: WalkTotal) => void;
  signal?: AbortSignal;
  actor?: string;
}

export interface RefresherDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  hooks: HookBus;
  networks: Pick<NetworkService, 'runtime' | 'recordRun'>;
  /** 0..1: the largest share of a network's coupons one full refresh may mark removed. */
  maxRemovedShare: number;
}

/** Changed coupons written together, at most; and pages read between two checkpoints, at most. */
const FLUSH_ROWS = 500;
const CHECKPOINT_PAGES = 20;
/** How old the last full refresh may be before a network that lists changes gets a full one again. */
const FULL_EVERY_MS = 24 * 3_600_000;
/** Stored coupons read at once when a refresh starts. */
const KNOWN_SLICE = 10_000;

function emptyCounts(incremental: boolean): RefreshCounts {
  return { incremental, pages: 0, seen: 0, created: 0, updated: 0, unchanged: 0, removed: 0, expired: 0, failed: 0, duplicates: 0, bad_dates: 0 };
}

/** Refreshes one network's coupons (the `coupons.refresh` job runs it per network). */
export class CouponRefresher {
  private readonly writes: CouponWrites;

  constructor(private readonly deps: RefresherDeps) {
    this.writes = new CouponWrites(deps);
  }

  async refresh(network: string, options: RefreshOptions = {}): Promise<RefreshCounts> {
    const { db, clock, logger, networks } = this.deps;
    const { module, runtime: rt } = await networks.runtime(network, options.signal);
    if (!module.coupons) throw new ServiceError('svc_coupons_unsupported', `${module.name} has no coupon list to refresh from.`, 409, { network: module.id });
    const id = module.id;
    const resume = options.resume && options.resume.network === id ? options.resume : null;
    const cursor = await this.cursor(id);
    // Incremental where the network can list changes, but a full refresh at least once a day:
    // only a full one finds what the network dropped.
    const fullDue = !cursor.full_at || clock.now().getTime() - cursor.full_at.getTime() >= FULL_EVERY_MS;
    const incremental = resume ? resume.incremental : Boolean(module.couponsSince && !options.full && cursor.updated_since && !fullDue);
    let refresh = resume?.refresh ?? 0;
    if (!refresh) {
      const [row] = await db.select<{ n: unknown }>('SELECT MAX(last_seen_refresh) AS n FROM coupons WHERE network = ?', [id]);
      const highest = Math.max(row?.n === null || row?.n === undefined ? 0 : toInt(row.n), cursor.refresh);
      // An incremental refresh is part of the last full one: what it lists counts as seen by it.
      refresh = incremental ? Math.max(highest, 1) : highest + 1;
    }
    const startedAt = resume ? new Date(resume.started_at) : clock.now();
    const counts: RefreshCounts = resume ? { ...resume.counts } : emptyCounts(incremental);
    const handled = () => counts.seen + counts.failed;
    const listed = new Set<string>();
    const known = await this.known(id);
    const walk: ModuleRuntime = { ...rt, setTotal: (total) => options.onTotal?.({ total, handled: handled() }) };
    const from: CouponWalk = { after: resume?.next ?? null, updatedSince: incremental ? cursor.updated_since : null };
    logger.info('coupons', resume ? 'Coupon refresh resumed' : 'Coupon refresh started', {
      network: id,
      refresh,
      incremental,
      pages_done: counts.pages,
      actor: options.actor,
    });
    try {
      if (!resume || resume.next !== null) {
        // Changed coupons wait in `pending` and are written together (one transaction per
        // FLUSH_ROWS, or every CHECKPOINT_PAGES pages): a refresh where little changed commits a
        // few times, not once a page. A checkpoint follows each write, so a resumed refresh
        // starts after the last page whose changes are stored.
        let pending = new Map<string, IncomingCoupon>();
        let unsaved = 0;
        let next: string | null = null;
        const save = async () => {
          await this.writes.store(id, refresh, [...pending.values()], counts, known);
          pending = new Map();
          unsaved = 0;
          await options.onPage?.({ network: id, refresh, incremental, started_at: startedAt.toISOString(), next, counts: { ...counts } });
        };
        // One page at a time: fetching the next while this one is written kept two pages and
        // everything made from them alive across the database's awaits, and measured no faster
        // (bench:coupons: 6.6 s and 301 MB with it, 6.9 s and 185 MB without).
        for await (const page of module.coupons(walk, from)) {
          options.signal?.throwIfAborted();
          const [before, failedBefore] = [handled(), counts.failed];
          for (const c of this.classify(page.items, counts, listed, known, pending)) {
            pending.delete(c.coupon_id);
            pending.set(c.coupon_id, c);
          }
          options.onProgress?.({ done: handled() - before, failed: counts.failed - failedBefore });
          counts.pages++;
          unsaved++;
          next = page.next;
          if (pending.size >= FLUSH_ROWS || unsaved >= CHECKPOINT_PAGES) await save();
        }
        if (unsaved) await save();
      }
      options.signal?.throwIfAborted();
      options.onTotal?.({ total: handled(), handled: handled() });
      // What a full refresh did not list is gone, but only a walk seen whole knows what it
      // listed: a refresh resumed part-way leaves removals to the next full one.
      if (!incremental && !resume) counts.removed = await this.writes.removeUnlisted(id, known, listed, options.force === true);
      else if (!incremental) logger.info('coupons', 'Coupon refresh resumed part-way: removals wait for the next full refresh', { network: id, refresh });
      counts.expired += await this.writes.sweep(id);
      await this.saveCursor(id, refresh, incremental, startedAt);
    } catch (err) {
      if (options.signal?.aborted) throw err;
      const message = err instanceof Error ? err.message : String(err);
      await networks.recordRun(id, 'coupons', counts, message, errorCode(err));
      logger.error('coupons', 'Coupon refresh failed', {
        network: id,
        refresh,
        ...counts,
        error: message.slice(0, 500),
        ...(err instanceof ServiceError ? { code: err.code } : {}),
      });
      throw err;
    }
    await networks.recordRun(id, 'coupons', counts, null);
    const warn = counts.duplicates || counts.bad_dates || counts.failed;
    logger.write(warn ? 'warning' : 'info', 'coupons', 'Coupon refresh finished', { network: id, refresh, ...counts });
    return counts;
  }

  private async cursor(network: string): Promise<{ refresh: number; updated_since: Date | null; full_at: Date | null }> {
    const [row] = await this.deps.db.select<Record<string, unknown>>('SELECT refresh, updated_since, full_at FROM coupon_refreshes WHERE network = ?', [
      network,
    ]);
    return { refresh: row ? toInt(row.refresh) : 0, updated_since: row ? toDate(row.updated_since) : null, full_at: row ? toDate(row.full_at) : null };
  }

  private async saveCursor(network: string, refresh: number, incremental: boolean, startedAt: Date): Promise<void> {
    const { db, clock } = this.deps;
    const now = clock.now();
    const cols = ['network', 'refresh', 'updated_since', 'full_at', 'finished_at'];
    const set: Record<string, string> = {
      refresh: db.incoming('refresh'),
      updated_since: db.incoming('updated_since'),
      finished_at: db.incoming('finished_at'),
    };
    if (!incremental) set.full_at = db.incoming('full_at');
    await db.execute(db.upsert('coupon_refreshes', cols, ['network'], set), [network, refresh, startedAt, incremental ? null : now, now]);
  }

  /**
   * What the network's stored coupons are, by the network's id: read once per refresh (one scan,
   * a few bytes a coupon), so telling unchanged coupons apart and finding the unlisted ones
   * costs no query a page.
   */
  private async known(network: string): Promise<Map<string, Known>> {
    const out = new Map<string, Known>();
    // In slices along the unique (network, coupon_id) index: the peak memory of a read stays a
    // slice's, however many coupons there are.
    for (let after = ''; ; ) {
      const rows = await this.deps.db.select<{ id: unknown; coupon_id: unknown; content_hash: unknown; status: unknown }>(
        `SELECT id, coupon_id, content_hash, status FROM coupons WHERE network = ? AND coupon_id > ? ORDER BY coupon_id LIMIT ${KNOWN_SLICE}`,
        [network, after],
      );
      for (const r of rows)
        out.set(String(r.coupon_id), {
          id: toInt(r.id),
          hash: r.content_hash === null || r.content_hash === undefined ? null : String(r.content_hash),
          removed: r.status === 'removed',
        });
      if (rows.length < KNOWN_SLICE) return out;
      after = String(rows[rows.length - 1].coupon_id);
    }
  }

  /**
   * Reads one page: records it cannot store count as failed, an id listed again as a duplicate
   * (the last listing wins); answers the coupons that are new or changed. Unchanged coupons
   * (most of them, refresh after refresh) cost no query.
   */
  private classify(
    items: NetworkCoupon[],
    counts: RefreshCounts,
    listed: Set<string>,
    known: Map<string, Known>,
    pending: ReadonlyMap<string, IncomingCoupon>,
  ): IncomingCoupon[] {
    const page = new Map<string, IncomingCoupon | null>();
    let failed = 0;
    for (const item of items) {
      const key = fingerprint(item);
      // The same id twice: the last listing wins.
      if (key && page.has(key.coupon_id)) page.delete(key.coupon_id);
      const old = key ? known.get(key.coupon_id) : undefined;
      // Unchanged (the same record as stored, and not listed earlier in this walk unwritten):
      // nothing to read or write. Listed earlier and not written yet: this listing replaces it.
      if (key && old && old.hash === key.hash && !old.removed && !pending.has(key.coupon_id)) {
        page.set(key.coupon_id, null);
      } else {
        const result = key ? toIncoming(item, key.hash) : { error: 'no usable coupon id' };
        if ('error' in result) {
          failed++;
          continue;
        }
        page.set(key!.coupon_id, result.coupon);
      }
      if (listed.has(key!.coupon_id)) counts.duplicates++;
      listed.add(key!.coupon_id);
      if (endsBeforeStart(item)) counts.bad_dates++;
    }
    counts.failed += failed;
    counts.seen += page.size;
    const changed = [...page.values()].filter((c): c is IncomingCoupon => c !== null);
    counts.unchanged += page.size - changed.length;
    return changed;
  }
}
