// The two table walks a member's data request needs, shared by every owning service so each one
// only names its own table: reading one member's rows page by page (an export of a member with a
// hundred thousand entries never holds them all), and replacing a person's words (login, e-mail,
// name) inside free text that is not keyed by member (log lines, stored responses, webhook bodies).
import { Database } from './database.js';
import type { Transaction } from './transaction.js';

/** How many rows one page of a walk reads. */
export const WALK_PAGE = 500;

/**
 * The rows of `sql` (a SELECT whose WHERE ends so that `AND <key> > ?` can follow, without ORDER BY
 * or LIMIT), in pages of `WALK_PAGE` by `key` ascending: keyset paging, so each page is one index
 * range and the walk costs the same on page 1 and page 200.
 */
export async function* walkPages<T extends Record<string, unknown>>(
  db: Database,
  sql: string,
  params: unknown[],
  key: { column: string; field: string },
): AsyncGenerator<T[]> {
  let after: unknown = null;
  for (;;) {
    const rows = await db.select<T>(
      `${sql}${after === null ? '' : ` AND ${key.column} > ?`} ORDER BY ${key.column} LIMIT ${WALK_PAGE}`,
      after === null ? params : [...params, after],
    );
    if (rows.length > 0) yield rows;
    if (rows.length < WALK_PAGE) return;
    after = rows[rows.length - 1][key.field];
  }
}

/** `walkPages`, one row at a time. */
export async function* walkRows<T extends Record<string, unknown>>(
  db: Database,
  sql: string,
  params: unknown[],
  key: { column: string; field: string },
): AsyncGenerator<T> {
  for await (const page of walkPages<T>(db, sql, params, key)) yield* page;
}

/** A word to replace (a login, an e-mail, a name) and what replaces it. */
export interface Replacement {
  find: string;
  replace: string;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `text` with every replacement applied, ignoring case (the database's LIKE found it ignoring case). */
export function replaceWords(text: string, replacements: readonly Replacement[]): string {
  let out = text;
  // Longest first: an e-mail holds the login, which must not be replaced inside it first.
  for (const r of [...replacements].sort((a, b) => b.find.length - a.find.length)) {
    out = out.replace(new RegExp(escapeRegExp(r.find), 'gi'), () => r.replace);
  }
  return out;
}

/**
 * Replaces `replacements` in the text `columns` of `table`, in `t`: the rows that hold any of them
 * (LIKE, optionally narrowed by `where`) are read in pages by `key` and written back changed.
 * Answers how many rows changed. A table that is not keyed by member is scanned whole: an erasure
 * is rare, and the person's words may be anywhere in such text.
 */
export async function replaceInColumns(
  db: Database,
  t: Transaction,
  spec: { table: string; key: string; columns: readonly string[]; where?: string; params?: unknown[] },
  replacements: readonly Replacement[],
): Promise<number> {
  const words = replacements.filter((r) => r.find.length > 0);
  if (words.length === 0 || spec.columns.length === 0) return 0;
  const likes = spec.columns.flatMap((c) => words.map(() => `${c} LIKE ? ESCAPE '!'`));
  const likeParams = spec.columns.flatMap(() => words.map((w) => Database.likeContains(w.find)));
  const base = `SELECT ${spec.key}, ${spec.columns.join(', ')} FROM ${spec.table} WHERE ${spec.where ? `${spec.where} AND ` : ''}(${likes.join(' OR ')})`;
  const params = [...(spec.params ?? []), ...likeParams];
  let changed = 0;
  let after: unknown = null;
  for (;;) {
    const rows = await db.select<Record<string, unknown>>(
      `${base}${after === null ? '' : ` AND ${spec.key} > ?`} ORDER BY ${spec.key} LIMIT ${WALK_PAGE}`,
      after === null ? params : [...params, after],
      t,
    );
    for (const row of rows) {
      const sets: string[] = [];
      const values: unknown[] = [];
      for (const column of spec.columns) {
        const value = row[column];
        if (typeof value !== 'string') continue;
        const next = replaceWords(value, words);
        if (next !== value) {
          sets.push(`${column} = ?`);
          values.push(next);
        }
      }
      if (sets.length === 0) continue;
      await db.execute(`UPDATE ${spec.table} SET ${sets.join(', ')} WHERE ${spec.key} = ?`, [...values, row[spec.key]], t);
      changed++;
    }
    if (rows.length < WALK_PAGE) return changed;
    after = rows[rows.length - 1][spec.key];
  }
}
