// The advertiser sync (AdvertiserService.sync): walks a network's list a page at a time, stores
// each page's new and changed advertisers in one upsert (the unchanged ones are only marked seen,
// their updated_at left alone), then marks what a finished sync did not see inactive.
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { toInt } from '../../db/values.js';
import { errorCode } from '../../errors.js';
import type { ModuleRuntime, NetworkAdvertiser, NetworkModule } from '../../networks/types.js';
import type { WalkTotal } from '../jobs/index.js';
import type { LogService } from '../logs/index.js';
import type { NetworkService } from '../networks/index.js';

export interface SyncCounts {
  pages: number;
  seen: number;
  created: number;
  /** Listed advertisers whose stored network fields changed (rewritten, updated_at set). */
  updated: number;
  /** Listed advertisers stored already with the same network fields (not rewritten). */
  unchanged: number;
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

/** Columns the sync writes; on a changed row it updates exactly these (plus updated_at). */
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

/** The network's fields: a listed advertiser whose stored values all equal these is unchanged. */
const COMPARED = SYNCED.filter((c) => c !== 'last_seen_sync');

/** Whether `text` holds a C0 or C1 control character or DEL (Unicode's Cc): no network's id does by design. */
function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}

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
  // A checkpoint saved before `unchanged` was counted resumes from 0 for it.
  const counts: SyncCounts = { pages: 0, seen: 0, created: 0, updated: 0, unchanged: 0, deactivated: 0, failed: 0, ...resume?.counts };
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
    await deps.networks.recordRun(id, 'advertisers', counts, message, errorCode(err));
    logger.error('advertisers', 'Advertiser sync failed', { network: id, sync, ...counts, error: message.slice(0, 500) });
    throw err;
  }
  await deps.networks.recordRun(id, 'advertisers', counts, null);
  logger.info('advertisers', 'Advertiser sync finished', { network: id, sync, ...counts });
  return counts;
}

/** Why a listed advertiser cannot be stored, or null. */
function refusal(key: string, a: NetworkAdvertiser): string | null {
  if (!key) return 'no_id';
  if (key.length > 128) return 'id_too_long';
  // An id is a key in URLs, logs and terminals: a control character in it is a broken or hostile feed.
  if (hasControl(key)) return 'id_control_characters';
  if (typeof a.name !== 'string' || !a.name.trim()) return 'no_name';
  return null;
}

/** Stored and listed values of one column, alike once both are text (a driver may answer a number). */
function sameValue(stored: unknown, listed: unknown): boolean {
  if (stored === null || stored === undefined || listed === null || listed === undefined) return (stored ?? null) === (listed ?? null);
  return String(stored) === String(listed);
}

/**
 * Stores a page: one multi-row upsert for the new and changed advertisers, one UPDATE marking the
 * unchanged ones seen (their updated_at stays when nothing of the network's changed). Rows the
 * network sent malformed count as failed and are logged with the reason.
 */
async function storePage(
  deps: Pick<SyncDeps, 'db' | 'clock' | 'logger'>,
  module: string,
  sync: number,
  page: NetworkAdvertiser[],
  counts: SyncCounts,
): Promise<void> {
  const { db } = deps;
  const now = deps.clock.now();
  const rows = new Map<string, unknown[]>();
  const refused: Record<string, number> = {};
  for (const a of page) {
    const key = typeof a?.id === 'string' ? a.id : a?.id === undefined || a?.id === null ? '' : String(a.id);
    const reason = a ? refusal(key, a) : 'no_id';
    if (reason) {
      counts.failed++;
      refused[reason] = (refused[reason] ?? 0) + 1;
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
  if (Object.keys(refused).length) deps.logger.warning('advertisers', 'Advertisers refused', { network: module, sync, refused });
  counts.seen += rows.size;
  if (rows.size === 0) return;
  const keys = [...rows.keys()];
  const stored = await db.select<Record<string, unknown>>(
    `SELECT advertiser, ${COMPARED.join(', ')} FROM advertisers WHERE module = ? AND advertiser IN (${keys.map(() => '?').join(', ')})`,
    [module, ...keys],
  );
  const byKey = new Map(stored.map((r) => [String(r.advertiser), r]));
  const changed: unknown[][] = [];
  const same: string[] = [];
  for (const [key, row] of rows) {
    const old = byKey.get(key);
    // A row's values are module, advertiser, then SYNCED in order (COMPARED is its start).
    if (old && COMPARED.every((c, i) => sameValue(old[c], row[2 + i]))) same.push(key);
    else changed.push(row);
  }
  if (changed.length) {
    const insertCols = ['module', 'advertiser', ...SYNCED, 'created_at', 'updated_at'];
    await db.execute(db.upsert('advertisers', insertCols, ['module', 'advertiser'], [...SYNCED, 'updated_at'], changed.length), changed.flat());
  }
  if (same.length)
    await db.execute(`UPDATE advertisers SET last_seen_sync = ? WHERE module = ? AND advertiser IN (${same.map(() => '?').join(', ')})`, [
      sync,
      module,
      ...same,
    ]);
  counts.created += rows.size - byKey.size;
  counts.updated += byKey.size - same.length;
  counts.unchanged += same.length;
}
