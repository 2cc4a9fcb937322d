// The SQL of the list routes' shared conventions: filters ("is any of", "is none of", strictly
// after / before), the sort with its id tiebreak, and the counts per status of the views row. Each
// domain's store still writes its own FROM and columns; these only build the clauses, so every
// list means the same thing by `status=a,b`, `status_exclude`, `after` and `orderby`.
import type { Database } from './database.js';
import { toInt } from './values.js';

/** A filter's value: one, or "any of" several. */
export type OneOrMany<T> = T | readonly T[];

/** The values of a filter as a list without repeats (none for an absent filter). */
export function valuesOf<T>(value: OneOrMany<T> | undefined): T[] {
  if (value === undefined) return [];
  return [...new Set(Array.isArray(value) ? (value as readonly T[]) : [value as T])];
}

/** The WHERE clause of a list, built one filter at a time; a filter without a value adds nothing. */
export class ListWhere {
  readonly conditions: string[] = [];
  readonly params: unknown[] = [];

  /** A condition with its parameters, as written. */
  add(sql: string, ...params: unknown[]): this {
    this.conditions.push(sql);
    this.params.push(...params);
    return this;
  }

  eq(column: string, value: unknown): this {
    return value === undefined || value === null ? this : this.add(`${column} = ?`, value);
  }

  /** "is any of": one value is `=`, several `IN`. */
  anyOf(column: string, values: OneOrMany<unknown> | undefined): this {
    const unique = valuesOf(values);
    if (unique.length === 0) return this;
    return unique.length === 1 ? this.add(`${column} = ?`, unique[0]) : this.add(`${column} IN (${unique.map(() => '?').join(', ')})`, ...unique);
  }

  /** "is none of". */
  noneOf(column: string, values: OneOrMany<unknown> | undefined): this {
    const unique = valuesOf(values);
    if (unique.length === 0) return this;
    return this.add(`${column} NOT IN (${unique.map(() => '?').join(', ')})`, ...unique);
  }

  /** Strictly after `at`. */
  after(column: string, at: Date | undefined): this {
    return at ? this.add(`${column} > ?`, at) : this;
  }

  /** Strictly before `at`. */
  before(column: string, at: Date | undefined): this {
    return at ? this.add(`${column} < ?`, at) : this;
  }

  /** `WHERE ...`, or nothing. */
  get sql(): string {
    return this.conditions.length ? `WHERE ${this.conditions.join(' AND ')}` : '';
  }

  /** ` AND ...` to follow a WHERE of the caller's, or nothing. */
  get and(): string {
    return this.conditions.length ? ` AND ${this.conditions.join(' AND ')}` : '';
  }
}

/**
 * `ORDER BY` for a list's `orderby`/`order`: the column the field names, then the id in the same
 * direction, so rows with equal values keep one order from page to page.
 */
export function orderClause(
  columns: Readonly<Record<string, string>>,
  sort: { orderby?: string; order?: 'asc' | 'desc' },
  idColumn: string,
  defaults: { orderby: string; order: 'asc' | 'desc' },
): string {
  const dir = (sort.order ?? defaults.order) === 'asc' ? 'ASC' : 'DESC';
  const orderby = sort.orderby ?? defaults.orderby;
  const column = Object.hasOwn(columns, orderby) ? columns[orderby] : undefined;
  if (column === undefined) throw new RangeError(`unknown orderby ${orderby}`);
  return column === idColumn ? `ORDER BY ${idColumn} ${dir}` : `ORDER BY ${column} ${dir}, ${idColumn} ${dir}`;
}

/** `LIMIT ... OFFSET ...` of a page (both are validated integers). */
export function pageClause(paging: { page: number; per_page: number }): string {
  return `LIMIT ${paging.per_page} OFFSET ${(paging.page - 1) * paging.per_page}`;
}

/** The counts of a list's views row: the total and one count per status, every status present. */
export interface StatusCounts {
  total: number;
  statuses: Record<string, number>;
}

/**
 * Counts per status in one query: `key` is the SQL expression giving a row's status (a column, or
 * a CASE for a status computed from dates), `from` the list's FROM, `where` its filters without the
 * status ones. Statuses with no row count 0.
 */
export async function countByStatus(
  db: Database,
  from: string,
  key: string | { sql: string; params: unknown[] },
  where: ListWhere,
  statuses: readonly string[],
): Promise<StatusCounts> {
  const k = typeof key === 'string' ? { sql: key, params: [] } : key;
  const rows = await db.select<{ k: unknown; n: unknown }>(`SELECT ${k.sql} AS k, COUNT(*) AS n FROM ${from} ${where.sql} GROUP BY k`, [
    ...k.params,
    ...where.params,
  ]);
  const counts: Record<string, number> = Object.fromEntries(statuses.map((s) => [s, 0]));
  let total = 0;
  for (const r of rows) {
    const n = toInt(r.n);
    total += n;
    if (r.k !== null && Object.hasOwn(counts, String(r.k))) counts[String(r.k)] = n;
  }
  return { total, statuses: counts };
}
