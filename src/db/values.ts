// Values read back from raw queries: both dialects return dates and big integers differently.

/** A DATETIME column as a Date (MariaDB gives a Date, SQLite a `YYYY-MM-DD HH:MM:SS.SSS +00:00` string). */
export function toDate(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value;
  if (typeof value === 'string' && isSqliteUtc(value)) return new Date(sqliteUtcToIso(value));
  const s = String(value);
  const iso = s.includes('T') ? s : s.replace(' ', 'T').replace(/ ?([+-]\d\d:\d\d)$/, '$1');
  const d = new Date(/[zZ]|[+-]\d\d:\d\d$/.test(iso) ? iso : iso + 'Z');
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
