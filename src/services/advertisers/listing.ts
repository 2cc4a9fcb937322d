// Advertiser lists: the filtered, paged listing, the walk and count over filters that runs over
// many advertisers use, and the name typeahead (behind AdvertiserService's list methods).
import { Database } from '../../db/database.js';
import { ListWhere, orderClause, pageClause, type OneOrMany } from '../../db/lists.js';
import { toInt } from '../../db/values.js';
import { COLUMNS, shape, type Advertiser, type AdvertiserStatus } from './rows.js';

/** The fields the advertiser list sorts by, and the column each is (`updated`: this list's first name for updated_at). */
export const ADVERTISER_ORDERBY = {
  id: 'id',
  name: 'name',
  updated: 'updated_at',
  updated_at: 'updated_at',
  created_at: 'created_at',
  status: 'status',
} as const;
export type AdvertiserOrderby = keyof typeof ADVERTISER_ORDERBY;

/** The filters of the advertiser list and of its counts per status. */
export interface AdvertiserWhere {
  network?: OneOrMany<string>;
  search?: string;
  status?: OneOrMany<AdvertiserStatus>;
  status_exclude?: OneOrMany<AdvertiserStatus>;
  has_page?: boolean;
  has_logo?: boolean;
}

export interface AdvertiserFilters extends AdvertiserWhere {
  /** Default name (A to Z). */
  orderby?: AdvertiserOrderby;
  order?: 'asc' | 'desc';
  page: number;
  per_page: number;
}

/** The filters of `GET /advertisers/counts`: the list's, without paging, sort and the status ones. */
export type AdvertiserCountFilters = Omit<AdvertiserWhere, 'status' | 'status_exclude'>;

/** The WHERE of the advertiser list and of its counts. */
export function advertiserWhere(filters: AdvertiserWhere): ListWhere {
  const w = new ListWhere().anyOf('module', filters.network).anyOf('status', filters.status).noneOf('status', filters.status_exclude);
  if (filters.search?.trim()) {
    const like = Database.likePrefix(filters.search.trim());
    w.add("(name LIKE ? ESCAPE '!' OR name_override LIKE ? ESCAPE '!')", like, like);
  }
  if (filters.has_page !== undefined) w.add(filters.has_page ? 'page_id IS NOT NULL' : 'page_id IS NULL');
  if (filters.has_logo !== undefined)
    w.add(filters.has_logo ? '(local_logo IS NOT NULL OR logo_url IS NOT NULL)' : '(local_logo IS NULL AND logo_url IS NULL)');
  return w;
}

/** Filtered and paged; `search` matches the start of the name (network's or override). */
export async function listAdvertisers(
  db: Database,
  mediaUrl: ((name: string | null) => string | null) | undefined,
  filters: AdvertiserFilters,
): Promise<{ items: Advertiser[]; total: number }> {
  const where = advertiserWhere(filters);
  const order = orderClause(ADVERTISER_ORDERBY, filters, 'id', { orderby: 'name', order: 'asc' });
  const [rows, count] = await Promise.all([
    db.select<Record<string, unknown>>(`SELECT ${COLUMNS} FROM advertisers ${where.sql} ${order} ${pageClause(filters)}`, where.params),
    db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM advertisers ${where.sql}`, where.params),
  ]);
  return { items: rows.map((r) => shape(r, mediaUrl)), total: toInt(count[0].n) };
}

/**
 * Numbers of the advertisers after `after` (ascending) matching the filters, at most `limit`:
 * a run over many advertisers walks them with this, unaffected by what it changes meanwhile.
 */
export async function advertiserIdsAfter(
  db: Database,
  after: number,
  filters: { network?: string; status?: AdvertiserStatus; search?: string },
  limit: number,
): Promise<number[]> {
  const { clause, params } = filterWhere(filters);
  const rows = await db.select<{ id: unknown }>(
    `SELECT id FROM advertisers WHERE id > ?${clause ? ` AND ${clause}` : ''} ORDER BY id LIMIT ${Math.max(1, Math.floor(limit))}`,
    [after, ...params],
  );
  return rows.map((r) => toInt(r.id));
}

/** How many advertisers match the filters. */
export async function countAdvertisers(db: Database, filters: { network?: string; status?: AdvertiserStatus; search?: string }): Promise<number> {
  const { clause, params } = filterWhere(filters);
  const [row] = await db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM advertisers${clause ? ` WHERE ${clause}` : ''}`, params);
  return toInt(row.n);
}

function filterWhere(filters: { network?: string; status?: AdvertiserStatus; search?: string }): { clause: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filters.network) where.push('module = ?'), params.push(filters.network);
  if (filters.status) where.push('status = ?'), params.push(filters.status);
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
export async function lookupAdvertisers(
  db: Database,
  search: string,
  page = { page: 1, per_page: 20 },
): Promise<{ items: { id: string; label: string }[]; total: number }> {
  const like = Database.likePrefix(search.trim());
  const number = /^\d{1,15}$/.test(search.trim()) ? Number(search.trim()) : null;
  const where = `WHERE name LIKE ? ESCAPE '!' OR name_override LIKE ? ESCAPE '!'${number === null ? '' : ' OR id = ?'}`;
  const params = number === null ? [like, like] : [like, like, number];
  const [rows, count] = await Promise.all([
    db.select<Record<string, unknown>>(
      `SELECT module, advertiser, name, name_override FROM advertisers ${where} ORDER BY name, id LIMIT ${page.per_page} OFFSET ${(page.page - 1) * page.per_page}`,
      params,
    ),
    db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM advertisers ${where}`, params),
  ]);
  return {
    items: rows.map((r) => ({ id: `${String(r.module)}/${String(r.advertiser)}`, label: `${String(r.name_override ?? r.name)} (${String(r.module)})` })),
    total: toInt(count[0].n),
  };
}
