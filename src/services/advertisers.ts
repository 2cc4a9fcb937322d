// Advertisers: programmes joined on a network, synced from its module a page at a time. The sync
// owns the network's columns; local edits (name override, cashback override, page, local logo,
// description) are never written by it. A sync is numbered per module: what a finished sync did
// not see is marked inactive.
import type { Clock } from '../clock.js';
import { Database } from '../db/database.js';
import { toInt, toIso } from '../db/values.js';
import { ServiceError } from '../errors.js';
import type { ModuleRuntime, NetworkAdvertiser, NetworkModule } from '../networks/types.js';
import type { CashbackRuleService, CashbackType, ScopedCashbackRule } from './cashback.js';
import type { LogService } from './logs.js';
import type { NetworkService } from './networks/index.js';
import { checkTargetDomain, parseLinkTarget } from './tracking-links.js';
import type { Job, JobService, WalkTotal } from './jobs.js';
import type { UserService } from './users.js';

export const ADVERTISER_STATUSES = ['active', 'inactive'] as const;
export type AdvertiserStatus = (typeof ADVERTISER_STATUSES)[number];

export interface Advertiser {
  module: string;
  advertiser: string;
  /** The name shown: the override when there is one, else the network's. */
  name: string;
  network_name: string;
  name_override: string | null;
  domain: string | null;
  site_url: string | null;
  logo_url: string | null;
  local_logo: string | null;
  tracking_template: string | null;
  commission: { type: string; min: string | null; max: string | null; currency: string | null } | null;
  validation_days: number | null;
  categories: string[];
  countries: string[];
  status: AdvertiserStatus;
  page_id: number | null;
  description: string | null;
  created_at: string | null;
  updated_at: string | null;
}

export interface AdvertiserDetail extends Advertiser {
  raw: unknown;
  cashback_rule: ScopedCashbackRule;
}

export interface AdvertiserFilters {
  network?: string;
  search?: string;
  status?: AdvertiserStatus;
  has_page?: boolean;
  has_logo?: boolean;
  orderby?: 'name' | 'updated';
  order?: 'asc' | 'desc';
  page: number;
  per_page: number;
}

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

export interface AdvertiserServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  networks: NetworkService;
  cashback: CashbackRuleService;
  users: UserService;
  /** Sync jobs are queued here (`startSync`). */
  jobs: Pick<JobService, 'enqueue'>;
}

/** A tracking link crediting a member, as `GET /advertisers/{module}/{advertiser}/link` answers it. */
export interface TrackingLink {
  url: string;
  module: string;
  advertiser: string;
  member: { id: number; login: string };
  /** What the network carries back with the conversion: the member's id (see OrderService). */
  sub_id: string;
  /** Whether the link lands on a target URL rather than the advertiser's home page. */
  deeplink: boolean;
}

const COLUMNS =
  'module, advertiser, name, name_override, domain, site_url, logo_url, local_logo, tracking_template, commission_type, commission_min, commission_max, commission_currency, validation_days, categories, countries, status, page_id, description, created_at, updated_at';

/** Columns the sync writes; on an existing row it updates exactly these (plus updated_at). */
const SYNCED = ['name', 'domain', 'site_url', 'logo_url', 'tracking_template', 'commission_type', 'commission_min', 'commission_max', 'commission_currency', 'validation_days', 'categories', 'countries', 'status', 'raw', 'last_seen_sync'] as const;

const cut = (v: unknown, n: number): string | null => (v === null || v === undefined || v === '' ? null : String(v).slice(0, n));

function json<T>(v: unknown, fallback: T): T {
  if (typeof v !== 'string' || !v) return fallback;
  try {
    return JSON.parse(v) as T;
  } catch {
    return fallback;
  }
}

function shape(r: Record<string, unknown>): Advertiser {
  const str = (v: unknown) => (v === null || v === undefined ? null : String(v));
  return {
    module: String(r.module),
    advertiser: String(r.advertiser),
    name: str(r.name_override) ?? String(r.name),
    network_name: String(r.name),
    name_override: str(r.name_override),
    domain: str(r.domain),
    site_url: str(r.site_url),
    logo_url: str(r.logo_url),
    local_logo: str(r.local_logo),
    tracking_template: str(r.tracking_template),
    commission: r.commission_type ? { type: String(r.commission_type), min: str(r.commission_min), max: str(r.commission_max), currency: str(r.commission_currency) } : null,
    validation_days: r.validation_days === null || r.validation_days === undefined ? null : toInt(r.validation_days),
    categories: json<string[]>(r.categories, []),
    countries: json<string[]>(r.countries, []),
    status: r.status === 'inactive' ? 'inactive' : 'active',
    page_id: r.page_id === null || r.page_id === undefined ? null : toInt(r.page_id),
    description: str(r.description),
    created_at: toIso(r.created_at),
    updated_at: toIso(r.updated_at),
  };
}

function notFound(module: string, advertiser: string): ServiceError {
  return new ServiceError('svc_advertiser_not_found', 'Advertiser not found.', 404, { module: String(module).slice(0, 64), advertiser: String(advertiser).slice(0, 128) });
}

/**
 * The pages a sync has still to store, each with the list position after it when the module has
 * positions: from the resumed state's position when it has one (the pages stored before are not
 * fetched again), else from the start, skipping the pages stored already.
 */
async function* remainingPages(module: NetworkModule, rt: ModuleRuntime, resume: SyncState | null): AsyncGenerator<{ items: NetworkAdvertiser[]; next?: string | null }> {
  if (module.listAdvertisersFrom && (!resume || resume.next !== undefined)) {
    // A null position: the list was stored to its end before the process stopped.
    if (resume?.next === null) return;
    yield* module.listAdvertisersFrom(rt, resume?.next ?? null);
    return;
  }
  let index = 0;
  for await (const items of module.listAdvertisers(rt)) if (index++ >= (resume?.counts.pages ?? 0)) yield { items };
}

/** Syncs, lists and looks up advertisers; sets per-advertiser cashback. */
export class AdvertiserService {
  constructor(private readonly deps: AdvertiserServiceDeps) {}

  /** Advertisers per module (active ones), for the networks' counts. */
  async countByModule(modules?: string[]): Promise<Record<string, number>> {
    if (modules?.length === 0) return {};
    const only = modules ? ` AND module IN (${modules.map(() => '?').join(', ')})` : '';
    const rows = await this.deps.db.select<{ module: unknown; n: unknown }>(`SELECT module, COUNT(*) AS n FROM advertisers WHERE status = 'active'${only} GROUP BY module`, modules ?? []);
    return Object.fromEntries(rows.map((r) => [String(r.module), toInt(r.n)]));
  }

  /**
   * Walks the network's advertiser pages and upserts each page in one statement, then marks the
   * advertisers this sync did not see as inactive. Records counts or the error in the network's
   * state and the log. A failure throws after recording; `resume` picks it up where it stopped.
   */
  async sync(network: string, options: SyncOptions = {}): Promise<SyncCounts> {
    const { db, clock, logger, networks } = this.deps;
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
        await this.storePage(id, sync, page.items, counts);
        options.onProgress?.({ done: handled() - before, failed: counts.failed - failedBefore });
        counts.pages++;
        await options.onPage?.({ network: id, sync, ...(page.next === undefined ? {} : { next: page.next }), counts: { ...counts } });
      }
      options.signal?.throwIfAborted();
      // The list's end: what was handled is its size, whatever the network announced.
      options.onTotal?.({ total: handled(), handled: handled() });
      const { affected } = await db.execute("UPDATE advertisers SET status = 'inactive', updated_at = ? WHERE module = ? AND last_seen_sync < ? AND status = 'active'", [clock.now(), id, sync]);
      counts.deactivated = affected;
    } catch (err) {
      if (options.signal?.aborted) throw err;
      const message = err instanceof Error ? err.message : String(err);
      await this.deps.networks.recordRun(id, 'advertisers', { ...counts, error: message }, message);
      logger.error('advertisers', 'Advertiser sync failed', { network: id, sync, ...counts, error: message.slice(0, 500) });
      throw err;
    }
    await this.deps.networks.recordRun(id, 'advertisers', counts, null);
    logger.info('advertisers', 'Advertiser sync finished', { network: id, sync, ...counts });
    return counts;
  }

  /** One multi-row upsert for a page; rows the network sent malformed count as failed. */
  private async storePage(module: string, sync: number, page: NetworkAdvertiser[], counts: SyncCounts): Promise<void> {
    const { db } = this.deps;
    const now = this.deps.clock.now();
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
        module, key, a.name.trim().slice(0, 191), cut(a.domain, 191), cut(a.site_url, 1000), cut(a.logo_url, 1000), cut(a.tracking_template, 2000),
        c ? c.type : null, cut(c?.min, 32), cut(c?.max, 32), cut(c?.currency, 3),
        Number.isSafeInteger(a.validation_days) ? a.validation_days : null,
        JSON.stringify(Array.isArray(a.categories) ? a.categories : []), JSON.stringify(Array.isArray(a.countries) ? a.countries : []),
        a.status === 'inactive' ? 'inactive' : 'active', raw, sync, now, now,
      ]);
    }
    counts.seen += rows.size;
    if (rows.size === 0) return;
    const keys = [...rows.keys()];
    const existing = await db.select<{ advertiser: unknown }>(`SELECT advertiser FROM advertisers WHERE module = ? AND advertiser IN (${keys.map(() => '?').join(', ')})`, [module, ...keys]);
    const insertCols = ['module', 'advertiser', ...SYNCED.slice(0, SYNCED.length), 'created_at', 'updated_at'];
    await db.execute(db.upsert('advertisers', insertCols, ['module', 'advertiser'], [...SYNCED, 'updated_at'], keys.length), [...rows.values()].flat());
    counts.updated += existing.length;
    counts.created += rows.size - existing.length;
  }

  /** Filtered and paged; `search` matches the start of the name (network's or override). */
  async list(filters: AdvertiserFilters): Promise<{ items: Advertiser[]; total: number }> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filters.network) (where.push('module = ?'), params.push(filters.network));
    if (filters.status) (where.push('status = ?'), params.push(filters.status));
    if (filters.search) {
      const like = Database.likePrefix(filters.search.trim());
      where.push("(name LIKE ? ESCAPE '!' OR name_override LIKE ? ESCAPE '!')");
      params.push(like, like);
    }
    if (filters.has_page !== undefined) where.push(filters.has_page ? 'page_id IS NOT NULL' : 'page_id IS NULL');
    if (filters.has_logo !== undefined) where.push(filters.has_logo ? '(local_logo IS NOT NULL OR logo_url IS NOT NULL)' : '(local_logo IS NULL AND logo_url IS NULL)');
    const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const dir = filters.order === 'desc' ? 'DESC' : 'ASC';
    const order = filters.orderby === 'updated' ? `updated_at ${dir}, id ${dir}` : `name ${dir}, id ${dir}`;
    const offset = (filters.page - 1) * filters.per_page;
    const [rows, count] = await Promise.all([
      this.deps.db.select<Record<string, unknown>>(`SELECT ${COLUMNS} FROM advertisers ${clause} ORDER BY ${order} LIMIT ${filters.per_page} OFFSET ${offset}`, params),
      this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM advertisers ${clause}`, params),
    ]);
    return { items: rows.map(shape), total: toInt(count[0].n) };
  }

  /** One advertiser with its raw record and effective cashback rule; 404 svc_advertiser_not_found. */
  async get(module: string, advertiser: string): Promise<AdvertiserDetail> {
    if (typeof module !== 'string' || typeof advertiser !== 'string' || module.length > 64 || advertiser.length > 128) throw notFound(module, advertiser);
    const [row] = await this.deps.db.select<Record<string, unknown>>(`SELECT ${COLUMNS}, raw FROM advertisers WHERE module = ? AND advertiser = ?`, [module, advertiser]);
    if (!row) throw notFound(module, advertiser);
    return { ...shape(row), raw: json<unknown>(row.raw, null), cashback_rule: await this.deps.cashback.resolve(module, advertiser) };
  }

  /** Typeahead: a page of the advertisers whose name starts with `search`, by name: `{id: "module/advertiser", label}`, and how many there are. */
  async lookup(search: string, page = { page: 1, per_page: 20 }): Promise<{ items: { id: string; label: string }[]; total: number }> {
    const like = Database.likePrefix(search.trim());
    const where = "WHERE name LIKE ? ESCAPE '!' OR name_override LIKE ? ESCAPE '!'";
    const [rows, count] = await Promise.all([
      this.deps.db.select<Record<string, unknown>>(`SELECT module, advertiser, name, name_override FROM advertisers ${where} ORDER BY name, id LIMIT ${page.per_page} OFFSET ${(page.page - 1) * page.per_page}`, [like, like]),
      this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM advertisers ${where}`, [like, like]),
    ]);
    return { items: rows.map((r) => ({ id: `${String(r.module)}/${String(r.advertiser)}`, label: `${String(r.name_override ?? r.name)} (${String(r.module)})` })), total: toInt(count[0].n) };
  }

  /**
   * The network's tracking link that credits `member` (a user id, or a login or email) for a visit
   * to the advertiser, landing on `url` when one is given. The sub id is the member's id: the
   * orders service matches a numeric sub id to a user id, so the conversion reaches this member.
   * Refuses (in this order) a bad URL (400 svc_invalid_url), an unknown advertiser or member (404
   * svc_advertiser_not_found, svc_member_not_found), a network that is disabled or not configured
   * (409 svc_network_disabled, svc_network_not_configured), an inactive advertiser (409
   * svc_advertiser_inactive), a disabled member (409 svc_member_disabled), a URL off the
   * advertiser's domain (400 svc_invalid_url), and a link the module cannot build (409
   * svc_tracking_link_unavailable, svc_deeplink_unsupported).
   */
  async trackingLink(module: string, advertiser: string, input: { member: string | number; url?: string | null }): Promise<TrackingLink> {
    const target = parseLinkTarget(input.url);
    if (typeof module !== 'string' || typeof advertiser !== 'string' || module.length > 64 || advertiser.length > 128) throw notFound(module, advertiser);
    const [row] = await this.deps.db.select<Record<string, unknown>>('SELECT module, advertiser, domain, site_url, tracking_template, status FROM advertisers WHERE module = ? AND advertiser = ?', [module, advertiser]);
    if (!row) throw notFound(module, advertiser);
    const member = await this.deps.users.resolveMember(input.member);
    const { module: network, settings } = await this.deps.networks.requireUsable(module);
    if (row.status === 'inactive') {
      throw new ServiceError('svc_advertiser_inactive', `${module}/${advertiser} is inactive: the network no longer lists it, so a link would earn nothing.`, 409, { module, advertiser });
    }
    if (member.status !== 'active') throw new ServiceError('svc_member_disabled', `Member ${member.login} is disabled.`, 409, { member_id: member.id });
    const domain = row.domain === null || row.domain === undefined ? (row.site_url ? String(row.site_url) : null) : String(row.domain);
    if (target) checkTargetDomain(target, domain);
    const subId = String(member.id);
    const url = network.trackingLink(settings, {
      advertiser_id: advertiser,
      sub_id: subId,
      url: target ? target.toString() : null,
      tracking_template: row.tracking_template === null || row.tracking_template === undefined ? null : String(row.tracking_template),
    });
    if (!url) throw new ServiceError('svc_tracking_link_unavailable', `${network.name} gave no tracking link for ${module}/${advertiser}.`, 409, { network: module, advertiser });
    this.deps.logger.debug('advertisers', 'Tracking link built', { module, advertiser, member_id: member.id, deeplink: target !== null });
    return { url, module, advertiser, member: { id: member.id, login: member.login }, sub_id: subId, deeplink: target !== null };
  }

  /** 404 svc_advertiser_not_found unless the advertiser is on file (active or not). */
  async requireAdvertiser(module: string, advertiser: string): Promise<void> {
    const [row] = await this.deps.db.select('SELECT 1 AS found FROM advertisers WHERE module = ? AND advertiser = ?', [module, advertiser]);
    if (!row) throw notFound(module, advertiser);
  }

  /**
   * Starts an `advertisers.sync` job: of one network (404 svc_network_not_found when there is
   * none), or of every enabled, configured one. 409 svc_job_already_running while the same sync
   * is queued or running. The one way to start a sync: the route, the CLI and schedules call it.
   */
  async startSync(input: { network?: string }, actor: string): Promise<Job> {
    if (input.network !== undefined) await this.deps.networks.module(input.network);
    return this.deps.jobs.enqueue('advertisers.sync', input.network !== undefined ? { network: input.network } : {}, actor, { unique: true });
  }

  /** Sets the advertiser's member cashback override (404 when the advertiser is unknown). */
  async setCashback(module: string, advertiser: string, type: CashbackType, value: string, actor: string, currency: string | null = null): Promise<AdvertiserDetail> {
    await this.get(module, advertiser);
    await this.deps.cashback.set(module, advertiser, type, value, currency, actor);
    return this.get(module, advertiser);
  }
}
