// Advertiser lists: the filtered, paged listing, the walk and count over filters that runs over
// many advertisers use, and the name typeahead (behind AdvertiserService's list methods).
import { Database } from '../../db/database.js';
import { toInt } from '../../db/values.js';
import { COLUMNS, shape, type Advertiser, type AdvertiserStatus } from './rows.js';

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

/** Filtered and paged; `search` matches the start of the name (network's or override). */
export async function listAdvertisers(
  db: Database,
  mediaUrl: ((name: string | null) => string | null) | undefined,
  filters: AdvertiserFilters,
): Promise<{ items: Advertiser[]; total: number }> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filters.network) where.push('module = ?'), params.push(filters.network);
  if (filters.status) where.push('status = ?'), params.push(filters.status);
  if (filters.search) {
    const like = Database.likePrefix(filters.search.trim());
    where.push("(name LIKE ? ESCAPE '!' OR name_override LIKE ? ESCAPE '!')");
    params.push(like, like);
  }
  if (filters.has_page !== undefined) where.push(filters.has_page ? 'page_id IS NOT NULL' : 'page_id IS NULL');
  if (filters.has_logo !== undefined)
    where.push(filters.has_logo ? '(local_logo IS NOT NULL OR logo_url IS NOT NULL)' : '(local_logo IS NULL AND logo_url IS NULL)');
  const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
  const dir = filters.order === 'desc' ? 'DESC' : 'ASC';
  const order = filters.orderby === 'updated' ? `updated_at ${dir}, id ${dir}` : `name ${dir}, id ${dir}`;
  const offset = (filters.page - 1) * filters.per_page;
  const [rows, count] = await Promise.all([
    db.select<Record<string, unknown>>(`SELECT ${COLUMNS} FROM advertisers ${clause} ORDER BY ${order} LIMIT ${filters.per_page} OFFSET ${offset}`, params),
    db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM advertisers ${clause}`, params),
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
