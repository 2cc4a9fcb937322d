// Advertisers: programmes joined on a network, synced from its module a page at a time. The sync
// owns the network's columns; local edits (name override, cashback override, page, local logo,
// description) are never written by it. A sync is numbered per module: what a finished sync did
// not see is marked inactive.
import type { Clock } from '../clock.js';
import { Database } from '../db/database.js';
import { toInt, toIso } from '../db/values.js';
import type { Transaction } from '../db/transaction.js';
import { LOGO_COLUMNS, logoTarget, logoWhere, type LogoScope, type LogoTarget } from './advertiser-logo-rows.js';
import { ServiceError } from '../errors.js';
import type { ModuleRuntime, NetworkAdvertiser, NetworkModule } from '../networks/types.js';
import type { CashbackRuleService, CashbackType, ScopedCashbackRule } from './cashback.js';
import type { LogService } from './logs.js';
import type { NetworkService } from './networks/index.js';
import { checkTargetDomain, parseLinkTarget } from './tracking-links.js';
import type { Job, JobService, WalkTotal } from './jobs.js';
import type { UserService } from './users.js';
import type { AiGeneration } from './ai/calls.js';

export type { LogoScope, LogoTarget } from './advertiser-logo-rows.js';

export const ADVERTISER_STATUSES = ['active', 'inactive'] as const;
export type AdvertiserStatus = (typeof ADVERTISER_STATUSES)[number];

export interface Advertiser {
  /** The advertiser's number here (`POST /ai/shop/{id}`, `/lookup/advertisers?search=42`). */
  id: number;
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
  /** The local logo's public URL (`<public base>/media/<sha256>.<ext>`), or null while there is none. */
  logo: string | null;
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
  /** The last AI generation of the shop's content (model, tokens, when), or null. */
  ai: AiGeneration | null;
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
  /** The public URL of a stored local logo (MediaService.urlOf); without it `logo` is null. */
  mediaUrl?: (name: string | null) => string | null;
  /** The last AI generation of each advertiser (the AI service owns those records). */
  lastAiGeneration?: (ids: number[]) => Promise<Map<number, AiGeneration>>;
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
  'id, module, advertiser, name, name_override, domain, site_url, logo_url, local_logo, tracking_template, commission_type, commission_min, commission_max, commission_currency, validation_days, categories, countries, status, page_id, description, created_at, updated_at';

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

function shape(r: Record<string, unknown>, mediaUrl?: (name: string | null) => string | null): Advertiser {
  const str = (v: unknown) => (v === null || v === undefined ? null : String(v));
  return {
    id: toInt(r.id),
    module: String(r.module),
    advertiser: String(r.advertiser),
    name: str(r.name_override) ?? String(r.name),
    network_name: String(r.name),
    name_override: str(r.name_override),
    domain: str(r.domain),
    site_url: str(r.site_url),
    logo_url: str(r.logo_url),
    local_logo: str(r.local_logo),
    logo: mediaUrl ? mediaUrl(str(r.local_logo)) : null,
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

/** What a shop page is made from: the advertiser's identity, its names and links, and where its page stands. */
export interface PageSource {
  /** The advertiser's row id (pages.advertiser_id). */
  id: number;
  module: string;
  advertiser: string;
  /** The name shown (the override when there is one). */
  name: string;
  domain: string | null;
  site_url: string | null;
  /** The local logo when there is one, else the network's logo URL. */
  logo: string | null;
  description: string | null;
  tracking_template: string | null;
  commission: Advertiser['commission'];
  status: AdvertiserStatus;
  page_id: number | null;
}

const PAGE_SOURCE_COLUMNS = 'id, module, advertiser, name, name_override, domain, site_url, logo_url, local_logo, description, tracking_template, commission_type, commission_min, commission_max, commission_currency, status, page_id';

function shapePageSource(r: Record<string, unknown>): PageSource {
  const a = shape(r);
  return {
    id: toInt(r.id),
    module: a.module,
    advertiser: a.advertiser,
    name: a.name,
    domain: a.domain,
    site_url: a.site_url,
    logo: a.local_logo ?? a.logo_url,
    description: a.description,
    tracking_template: a.tracking_template,
    commission: a.commission,
    status: a.status,
    page_id: a.page_id,
  };
}

function withoutPage(filter: { network?: string; after: number }): { clause: string; params: unknown[] } {
  const params: unknown[] = [filter.after];
  let clause = "id > ? AND status = 'active' AND page_id IS NULL";
  if (filter.network) (clause += ' AND module = ?'), params.push(filter.network);
  return { clause, params };
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
      await this.deps.networks.recordRun(id, 'advertisers', counts, message);
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
    return { items: rows.map((r) => shape(r, this.deps.mediaUrl)), total: toInt(count[0].n) };
  }

  /** One advertiser with its raw record and effective cashback rule; 404 svc_advertiser_not_found. */
  async get(module: string, advertiser: string): Promise<AdvertiserDetail> {
    if (typeof module !== 'string' || typeof advertiser !== 'string' || module.length > 64 || advertiser.length > 128) throw notFound(module, advertiser);
    const [row] = await this.deps.db.select<Record<string, unknown>>(`SELECT ${COLUMNS}, raw FROM advertisers WHERE module = ? AND advertiser = ?`, [module, advertiser]);
    if (!row) throw notFound(module, advertiser);
    return this.detail(row);
  }

  /** One advertiser by its number (`POST /ai/shop/{id}`); 404 svc_advertiser_not_found. */
  async getById(id: number): Promise<AdvertiserDetail> {
    const [row] = Number.isSafeInteger(id) && id > 0 ? await this.deps.db.select<Record<string, unknown>>(`SELECT ${COLUMNS}, raw FROM advertisers WHERE id = ?`, [id]) : [];
    if (!row) throw new ServiceError('svc_advertiser_not_found', 'Advertiser not found.', 404, { id });
    return this.detail(row);
  }

  private async detail(row: Record<string, unknown>): Promise<AdvertiserDetail> {
    const a = shape(row, this.deps.mediaUrl);
    const [cashback, ai] = await Promise.all([this.deps.cashback.resolve(a.module, a.advertiser), this.deps.lastAiGeneration?.([a.id])]);
    return { ...a, raw: json<unknown>(row.raw, null), cashback_rule: cashback, ai: ai?.get(a.id) ?? null };
  }

  /**
   * Sets an advertiser's description (a local edit the sync never writes), in `t` when given;
   * 404 svc_advertiser_not_found.
   */
  async setDescription(id: number, description: string | null, actor: string, t?: Transaction): Promise<void> {
    const { affected } = await this.deps.db.execute('UPDATE advertisers SET description = ?, updated_at = ? WHERE id = ?', [description, this.deps.clock.now(), id], t);
    if (affected === 0) throw new ServiceError('svc_advertiser_not_found', 'Advertiser not found.', 404, { id });
    this.deps.logger.info('advertisers', 'Advertiser description set', { id, actor });
  }

  /**
   * Numbers of the advertisers after `after` (ascending) matching the filters, at most `limit`:
   * a run over many advertisers walks them with this, unaffected by what it changes meanwhile.
   */
  async idsAfter(after: number, filters: { network?: string; status?: AdvertiserStatus; search?: string }, limit: number): Promise<number[]> {
    const { clause, params } = this.where(filters);
    const rows = await this.deps.db.select<{ id: unknown }>(`SELECT id FROM advertisers WHERE id > ?${clause ? ` AND ${clause}` : ''} ORDER BY id LIMIT ${Math.max(1, Math.floor(limit))}`, [after, ...params]);
    return rows.map((r) => toInt(r.id));
  }

  /** How many advertisers match the filters. */
  async count(filters: { network?: string; status?: AdvertiserStatus; search?: string }): Promise<number> {
    const { clause, params } = this.where(filters);
    const [row] = await this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM advertisers${clause ? ` WHERE ${clause}` : ''}`, params);
    return toInt(row.n);
  }

  private where(filters: { network?: string; status?: AdvertiserStatus; search?: string }): { clause: string; params: unknown[] } {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filters.network) (where.push('module = ?'), params.push(filters.network));
    if (filters.status) (where.push('status = ?'), params.push(filters.status));
    if (filters.search?.trim()) {
      const like = Database.likePrefix(filters.search.trim());
      where.push("(name LIKE ? ESCAPE '!' OR name_override LIKE ? ESCAPE '!')");
      params.push(like, like);
    }
    return { clause: where.join(' AND '), params };
  }

  /**
   * Typeahead: a page of the advertisers whose name starts with `search` (or whose number is
   * `search`), by name: `{id: "module/advertiser", label}`, and how many there are.
   */
  async lookup(search: string, page = { page: 1, per_page: 20 }): Promise<{ items: { id: string; label: string }[]; total: number }> {
    const like = Database.likePrefix(search.trim());
    const number = /^\d{1,15}$/.test(search.trim()) ? Number(search.trim()) : null;
    const where = `WHERE name LIKE ? ESCAPE '!' OR name_override LIKE ? ESCAPE '!'${number === null ? '' : ' OR id = ?'}`;
    const params = number === null ? [like, like] : [like, like, number];
    const [rows, count] = await Promise.all([
      this.deps.db.select<Record<string, unknown>>(`SELECT module, advertiser, name, name_override FROM advertisers ${where} ORDER BY name, id LIMIT ${page.per_page} OFFSET ${(page.page - 1) * page.per_page}`, params),
      this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM advertisers ${where}`, params),
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

  // Shop pages read the advertisers they are made from, and set `page_id`, through these methods
  // (this service owns the table).

  /** One advertiser as a page is made from it; 404 svc_advertiser_not_found. */
  async pageSource(module: string, advertiser: string, t?: Transaction): Promise<PageSource> {
    if (typeof module !== 'string' || typeof advertiser !== 'string' || module.length > 64 || advertiser.length > 128) throw notFound(module, advertiser);
    const [row] = await this.deps.db.select<Record<string, unknown>>(`SELECT ${PAGE_SOURCE_COLUMNS} FROM advertisers WHERE module = ? AND advertiser = ?`, [module, advertiser], t);
    if (!row) throw notFound(module, advertiser);
    return shapePageSource(row);
  }

  /** Active advertisers without a page, by id after `after`, at most `limit` (the bulk page job's batches). */
  async pageSources(filter: { network?: string; after: number; limit: number }): Promise<PageSource[]> {
    const { clause, params } = withoutPage(filter);
    const rows = await this.deps.db.select<Record<string, unknown>>(`SELECT ${PAGE_SOURCE_COLUMNS} FROM advertisers WHERE ${clause} ORDER BY id LIMIT ${Math.max(1, Math.floor(filter.limit))}`, params);
    return rows.map(shapePageSource);
  }

  /** How many active advertisers after `after` have no page (the bulk page job's total). */
  async countPageSources(filter: { network?: string; after: number }): Promise<number> {
    const { clause, params } = withoutPage(filter);
    const [row] = await this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM advertisers WHERE ${clause}`, params);
    return toInt(row.n);
  }

  /** Active advertisers, and how many of them have a page. */
  async pageCounts(): Promise<{ active: number; with_page: number; without_page: number }> {
    const [row] = await this.deps.db.select<{ active: unknown; with_page: unknown }>("SELECT COUNT(*) AS active, COUNT(page_id) AS with_page FROM advertisers WHERE status = 'active'");
    const active = toInt(row.active);
    const withPage = toInt(row.with_page ?? 0);
    return { active, with_page: withPage, without_page: active - withPage };
  }

  /**
   * Records each advertiser's new page in `t` (one statement). Throws when one of them has a page
   * already, so the caller's transaction rolls the pages back rather than leave one unlinked.
   */
  async linkPages(links: { advertiserId: number; pageId: number }[], t: Transaction): Promise<void> {
    if (links.length === 0) return;
    const cases = links.map(() => 'WHEN ? THEN ?').join(' ');
    const { affected } = await this.deps.db.execute(
      `UPDATE advertisers SET page_id = CASE id ${cases} END WHERE id IN (${links.map(() => '?').join(', ')}) AND page_id IS NULL`,
      [...links.flatMap((l) => [l.advertiserId, l.pageId]), ...links.map((l) => l.advertiserId)],
      t,
    );
    if (affected !== links.length) throw new ServiceError('svc_page_exists', 'An advertiser got a page meanwhile.', 409, {});
  }

  /** Forgets a deleted page (only if it is still the advertiser's page). */
  async unlinkPage(advertiserId: number, pageId: number, t: Transaction): Promise<void> {
    await this.deps.db.execute('UPDATE advertisers SET page_id = NULL WHERE id = ? AND page_id = ?', [advertiserId, pageId], t);
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

  /** What the logo fetch reads of one advertiser; 404 svc_advertiser_not_found. */
  async logoTarget(module: string, advertiser: string): Promise<LogoTarget> {
    if (typeof module !== 'string' || typeof advertiser !== 'string' || module.length > 64 || advertiser.length > 128) throw notFound(module, advertiser);
    const [row] = await this.deps.db.select<Record<string, unknown>>(`SELECT ${LOGO_COLUMNS} FROM advertisers WHERE module = ? AND advertiser = ?`, [module, advertiser]);
    if (!row) throw notFound(module, advertiser);
    return logoTarget(row);
  }

  /**
   * Points the advertiser's local logo at a stored media file (`<sha256>.<ext>`), in the
   * transaction that stored it: 404 svc_advertiser_not_found (and so a rollback) when the
   * advertiser is gone. The sync never writes this column.
   */
  async setLocalLogo(module: string, advertiser: string, name: string, t: Transaction): Promise<void> {
    const { affected } = await this.deps.db.execute('UPDATE advertisers SET local_logo = ?, updated_at = ? WHERE module = ? AND advertiser = ?', [name, this.deps.clock.now(), module, advertiser], t);
    if (affected !== 1) throw notFound(module, advertiser);
  }

  /** How many advertisers in scope have a local logo and how many lack one. */
  async logoCounts(scope: Omit<LogoScope, 'missing'>): Promise<{ total: number; with_logo: number; without_logo: number }> {
    const { clause, params } = logoWhere({ ...scope, missing: false });
    const [row] = await this.deps.db.select<{ n: unknown; w: unknown }>(`SELECT COUNT(*) AS n, COUNT(local_logo) AS w FROM advertisers ${clause}`, params);
    const total = toInt(row.n);
    const withLogo = toInt(row.w);
    return { total, with_logo: withLogo, without_logo: total - withLogo };
  }

  /** The next advertisers in scope after row id `after`, by id (the bulk logo run's walk), and how many are left from there. */
  async logoBatch(scope: LogoScope, after: number, limit: number): Promise<{ items: LogoTarget[]; left: number }> {
    const { clause, params } = logoWhere(scope);
    const where = `${clause ? `${clause} AND` : 'WHERE'} id > ?`;
    const [rows, count] = await Promise.all([
      this.deps.db.select<Record<string, unknown>>(`SELECT ${LOGO_COLUMNS} FROM advertisers ${where} ORDER BY id LIMIT ${Math.max(1, Math.floor(limit))}`, [...params, after]),
      this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM advertisers ${where}`, [...params, after]),
    ]);
    return { items: rows.map(logoTarget), left: toInt(count[0].n) };
  }
}
