// Values read back from raw queries: both dialects return dates and big integers differently.
import { toExactMinor } from '../money.js';

/** A DATETIME column as a Date (MariaDB gives a Date, SQLite a `YYYY-MM-DD HH:MM:SS.SSS +00:00` string). */
export function toDate(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value;
  if (typeof value === 'string' && isSqliteUtc(value)) return new Date(sqliteUtcToIso(value));
  const s = String(value);
  const iso = s.includes('T') ? s : s.replace(' ', 'T').replace(/ ?([+-]\d\d:\d\d)$/, '$1');
  const d = new Date(/[zZ]|[+-]\d\d:\d\d$/.test(iso) ? iso : `${iso}Z`);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** ISO 8601 in UTC, or null. */
export function toIso(value: unknown): string | null {
  // The common SQLite case needs no Date at all: the text is already UTC to the millisecond.
  if (typeof value === 'string' && isSqliteUtc(value)) return sqliteUtcToIso(value);
  const d = toDate(value);
  return d ? d.toISOString() : null;
}

/** An integer column that fits a JS number (ids, counts). */
export function toInt(value: unknown): number {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n)) throw new RangeError(`not a safe integer: ${String(value)}`);
  return n;
}

/** `YYYY-MM-DD HH:MM:SS.mmm +00:00`, as Sequelize and the direct driver write DATETIME on SQLite. */
function isSqliteUtc(s: string): boolean {
  return s.length === 30 && s.charCodeAt(10) === 32 && s.endsWith(' +00:00');
}

function sqliteUtcToIso(s: string): string {
  return `${s.slice(0, 10)}T${s.slice(11, 23)}Z`;
}

/** 2^32: SQLite sums split their terms at it (see `exactSum`). */
const SPLIT = 4294967296;

/**
 * The SQL of an exact SUM of an integer expression, as the select-list item(s) `readSum` reads
 * back under `alias`. MariaDB sums BIGINT into DECIMAL(65) (no overflow; mysql2 answers the
 * text). SQLite sums 64-bit integers and fails with "integer overflow" past 2^63 (and TOTAL()
 * is a float), so each term is split at 2^32 (a quotient and a remainder, each far inside the
 * range however many rows there are) and both partial sums are read as text, then joined exactly.
 */
export function exactSum(dialect: 'sqlite' | 'mysql', expr: string, alias: string): string {
  if (dialect === 'mysql') return `SUM(${expr}) AS ${alias}`;
  return `CAST(SUM((${expr}) / ${SPLIT}) AS TEXT) AS ${alias}__hi, CAST(SUM((${expr}) % ${SPLIT}) AS TEXT) AS ${alias}__lo`;
}

/** The total `exactSum` selected under `alias`, exactly (0 for an empty group). */
export function readSum(row: Record<string, unknown>, alias: string): bigint {
  if (alias in row) return toExactMinor(row[alias]);
  return toExactMinor(row[`${alias}__hi`]) * BigInt(SPLIT) + toExactMinor(row[`${alias}__lo`]);
}
