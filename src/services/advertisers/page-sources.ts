// The advertisers as shop pages see them: what a page is made from (PageSource), the batches of
// advertisers still without a page, and the `page_id` links (behind AdvertiserService's page methods).
import type { Database } from '../../db/database.js';
import type { Transaction } from '../../db/transaction.js';
import { toInt } from '../../db/values.js';
import { ServiceError } from '../../errors.js';
import { notFound, shape, type Advertiser, type AdvertiserStatus } from './rows.js';

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

const PAGE_SOURCE_COLUMNS =
  'id, module, advertiser, name, name_override, domain, site_url, logo_url, local_logo, description, tracking_template, commission_type, commission_min, commission_max, commission_currency, status, page_id';

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

/** One advertiser as a page is made from it; 404 svc_advertiser_not_found. */
export async function pageSource(db: Database, module: string, advertiser: string, t?: Transaction): Promise<PageSource> {
  if (typeof module !== 'string' || typeof advertiser !== 'string' || module.length > 64 || advertiser.length > 128) throw notFound(module, advertiser);
  const [row] = await db.select<Record<string, unknown>>(
    `SELECT ${PAGE_SOURCE_COLUMNS} FROM advertisers WHERE module = ? AND advertiser = ?`,
    [module, advertiser],
    t,
  );
  if (!row) throw notFound(module, advertiser);
  return shapePageSource(row);
}

/** Active advertisers without a page, by id after `after`, at most `limit` (the bulk page job's batches). */
export async function pageSources(db: Database, filter: { network?: string; after: number; limit: number }): Promise<PageSource[]> {
  const { clause, params } = withoutPage(filter);
  const rows = await db.select<Record<string, unknown>>(
    `SELECT ${PAGE_SOURCE_COLUMNS} FROM advertisers WHERE ${clause} ORDER BY id LIMIT ${Math.max(1, Math.floor(filter.limit))}`,
    params,
  );
  return rows.map(shapePageSource);
}

/** How many active advertisers after `after` have no page (the bulk page job's total). */
export async function countPageSources(db: Database, filter: { network?: string; after: number }): Promise<number> {
  const { clause, params } = withoutPage(filter);
  const [row] = await db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM advertisers WHERE ${clause}`, params);
  return toInt(row.n);
}

/** Active advertisers, and how many of them have a page. */
export async function pageCounts(db: Database): Promise<{ active: number; with_page: number; without_page: number }> {
  const [row] = await db.select<{ active: unknown; with_page: unknown }>(
    "SELECT COUNT(*) AS active, COUNT(page_id) AS with_page FROM advertisers WHERE status = 'active'",
  );
  const active = toInt(row.active);
  const withPage = toInt(row.with_page ?? 0);
  return { active, with_page: withPage, without_page: active - withPage };
}

/**
 * Records each advertiser's new page in `t` (one statement). Throws when one of them has a page
 * already, so the caller's transaction rolls the pages back rather than leave one unlinked.
 */
export async function linkPages(db: Database, links: { advertiserId: number; pageId: number }[], t: Transaction): Promise<void> {
  if (links.length === 0) return;
  const cases = links.map(() => 'WHEN ? THEN ?').join(' ');
  const { affected } = await db.execute(
    `UPDATE advertisers SET page_id = CASE id ${cases} END WHERE id IN (${links.map(() => '?').join(', ')}) AND page_id IS NULL`,
    [...links.flatMap((l) => [l.advertiserId, l.pageId]), ...links.map((l) => l.advertiserId)],
    t,
  );
  if (affected !== links.length) throw new ServiceError('svc_page_exists', 'An advertiser got a page meanwhile.', 409, {});
}

/** Forgets a deleted page (only if it is still the advertiser's page). */
export async function unlinkPage(db: Database, advertiserId: number, pageId: number, t: Transaction): Promise<void> {
  await db.execute('UPDATE advertisers SET page_id = NULL WHERE id = ? AND page_id = ?', [advertiserId, pageId], t);
}
