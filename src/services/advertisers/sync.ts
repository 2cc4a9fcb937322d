// The advertiser sync (AdvertiserService.sync): walks a network's list a page at a time, stores
// each page in one upsert, then marks what a finished sync did not see inactive.
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { toInt } from '../../db/values.js';
import type { ModuleRuntime, NetworkAdvertiser, NetworkModule } from '../../networks/types.js';
import type { WalkTotal } from '../jobs/index.js';
import type { LogService } from '../logs/index.js';
import type { NetworkService } from '../networks/index.js';

export interface SyncCounts {
  pages: number;
  seen: number;
  created: number;
  updated: number;
  deactivated: number;
  failed: number;
}

/** Where a sync stands: saved after each page, so a resumed sync skips the pages it did. */
export interface SyncState {
  network: string;
  sync: number;
  /**
   * Where the network's list goes on after the last stored page (null: it ended there), from
   * modules that can start part-way. Absent otherwise: a resume walks the list again and skips
   * `counts.pages` pages.
   */
  next?: string | null;
  counts: SyncCounts;
}

export interface SyncOptions {
  /** The state saved by an interrupted run of this sync, to resume from. */
  resume?: SyncState | null;
  /** Called after each page is stored (the job saves its checkpoint here). */
  onPage?: (state: SyncState) => Promise<void>;
  /** Advertisers handled (stored or refused as malformed; `failed` counts the latter), as they are (the job's progress). */
  onProgress?: (delta: { done: number; failed: number }) => void;
  /** The size of the network's list, once the network tells it, and exactly at the end of the walk (the job's total). */
  onTotal?: (total: WalkTotal) => void;
  signal?: AbortSignal;
  actor?: string;
}

/** What the sync needs of the service's dependencies. */
export interface SyncDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  networks: NetworkService;
}

/** Columns the sync writes; on an existing row it updates exactly these (plus updated_at). */
const SYNCED = [
  'name',
  'domain',
  'site_url',
  'logo_url',
  'tracking_template',
  'commission_type',
  'commission_min',
  'commission_max',
  'commission_currency',
  'validation_days',
  'categories',
  'countries',
  'status',
  'raw',
  'last_seen_sync',
] as const;

const cut = (v: unknown, n: number): string | null => (v === null || v === undefined || v === '' ? null : String(v).slice(0, n));

/**
 * The pages a sync has still to store, each with the list position after it when the module has
 * positions: from the resumed state's position when it has one (the pages stored before are not
 * fetched again), else from the start, skipping the pages stored already.
 */
async function* remainingPages(
  module: NetworkModule,
  rt: ModuleRuntime,
  resume: SyncState | null,
): AsyncGenerator<{ items: NetworkAdvertiser[]; next?: string | null }> {
  if (module.listAdvertisersFrom && (!resume || resume.next !== undefined)) {
    // A null position: the list was stored to its end before the process stopped.
    if (resume?.next === null) return;
    yield* module.listAdvertisersFrom(rt, resume?.next ?? null);
    return;
  }
  let index = 0;
  for await (const items of module.listAdvertisers(rt)) if (index++ >= (resume?.counts.pages ?? 0)) yield { items };
}

/**
 * Walks the network's advertiser pages and upserts each page in one statement, then marks the
 * advertisers this sync did not see as inactive. Records counts or the error in the network's
 * state and the log. A failure throws after recording; `resume` picks it up where it stopped.
 */
export async function syncAdvertisers(deps: SyncDeps, network: string, options: SyncOptions = {}): Promise<SyncCounts> {
  const { db, clock, logger, networks } = deps;
  const { module, runtime: rt } = await networks.runtime(network, options.signal);
  const id = module.id;
  const resume = options.resume && options.resume.network === id ? options.resume : null;
  let sync = resume?.sync ?? 0;
  if (!sync) {
    const [row] = await db.select<{ n: unknown }>('SELECT MAX(last_seen_sync) AS n FROM advertisers WHERE module = ?', [id]);
    sync = (row?.n === null || row?.n === undefined ? 0 : toInt(row.n)) + 1;
  }
  const counts: SyncCounts = resume ? { ...resume.counts } : { pages: 0, seen: 0, created: 0, updated: 0, deactivated: 0, failed: 0 };
  const skip = counts.pages;
  const handled = () => counts.seen + counts.failed;
  const walk: ModuleRuntime = { ...rt, setTotal: (total) => options.onTotal?.({ total, handled: handled() }) };
  logger.info('advertisers', resume ? 'Advertiser sync resumed' : 'Advertiser sync started', { network: id, sync, pages_done: skip, actor: options.actor });
  try {
    for await (const page of remainingPages(module, walk, resume)) {
      options.signal?.throwIfAborted();
      const [before, failedBefore] = [handled(), counts.failed];
      await storePage(deps, id, sync, page.items, counts);
      options.onProgress?.({ done: handled() - before, failed: counts.failed - failedBefore });
      counts.pages++;
      await options.onPage?.({ network: id, sync, ...(page.next === undefined ? {} : { next: page.next }), counts: { ...counts } });
    }
    options.signal?.throwIfAborted();
    // The list's end: what was handled is its size, whatever the network announced.
    options.onTotal?.({ total: handled(), handled: handled() });
    const { affected } = await db.execute(
      "UPDATE advertisers SET status = 'inactive', updated_at = ? WHERE module = ? AND last_seen_sync < ? AND status = 'active'",
      [clock.now(), id, sync],
    );
    counts.deactivated = affected;
  } catch (err) {
    if (options.signal?.aborted) throw err;
    const message = err instanceof Error ? err.message : String(err);
    await deps.networks.recordRun(id, 'advertisers', counts, message);
    logger.error('advertisers', 'Advertiser sync failed', { network: id, sync, ...counts, error: message.slice(0, 500) });
    throw err;
  }
  await deps.networks.recordRun(id, 'advertisers', counts, null);
  logger.info('advertisers', 'Advertiser sync finished', { network: id, sync, ...counts });
  return counts;
}

/** One multi-row upsert for a page; rows the network sent malformed count as failed. */
async function storePage(deps: Pick<SyncDeps, 'db' | 'clock'>, module: string, sync: number, page: NetworkAdvertiser[], counts: SyncCounts): Promise<void> {
  const { db } = deps;
  const now = deps.clock.now();
  const rows = new Map<string, unknown[]>();
  for (const a of page) {
    const key = typeof a?.id === 'string' ? a.id : a?.id === undefined || a?.id === null ? '' : String(a.id);
    if (!key || key.length > 128 || typeof a.name !== 'string' || !a.name.trim()) {
      counts.failed++;
      continue;
    }
    let raw: string | null = null;
    try {
      raw = a.raw === undefined ? null : JSON.stringify(a.raw);
    } catch {
      raw = null;
    }
    const c = a.commission;
    rows.set(key, [
      module,
      key,
      a.name.trim().slice(0, 191),
      cut(a.domain, 191),
      cut(a.site_url, 1000),
      cut(a.logo_url, 1000),
      cut(a.tracking_template, 2000),
      c ? c.type : null,
      cut(c?.min, 32),
      cut(c?.max, 32),
      cut(c?.currency, 3),
      Number.isSafeInteger(a.validation_days) ? a.validation_days : null,
      JSON.stringify(Array.isArray(a.categories) ? a.categories : []),
      JSON.stringify(Array.isArray(a.countries) ? a.countries : []),
      a.status === 'inactive' ? 'inactive' : 'active',
      raw,
      sync,
      now,
      now,
    ]);
  }
  counts.seen += rows.size;
  if (rows.size === 0) return;
  const keys = [...rows.keys()];
  const existing = await db.select<{ advertiser: unknown }>(
    `SELECT advertiser FROM advertisers WHERE module = ? AND advertiser IN (${keys.map(() => '?').join(', ')})`,
    [module, ...keys],
  );
  const insertCols = ['module', 'advertiser', ...SYNCED.slice(0, SYNCED.length), 'created_at', 'updated_at'];
  await db.execute(db.upsert('advertisers', insertCols, ['module', 'advertiser'], [...SYNCED, 'updated_at'], keys.length), [...rows.values()].flat());
  counts.updated += existing.length;
  counts.created += rows.size - existing.length;
}
