// Values read back from raw queries: both dialects return dates and big integers differently.

/** A DATETIME column as a Date (MariaDB gives a Date, SQLite a `YYYY-MM-DD HH:MM:SS.SSS +00:00` string). */
export function toDate(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value;
  const s = String(value);
  const iso = s.includes('T') ? s : s.replace(' ', 'T').replace(/ ?([+-]\d\d:\d\d)$/, '$1');
  const d = new Date(/[zZ]|[+-]\d\d:\d\d$/.test(iso) ? iso : iso + 'Z');
  return Number.isNaN(d.getTime()) ? null : d;
}

/** ISO 8601 in UTC, or null. */
export function toIso(value: unknown): string | null {
  const d = toDate(value);
  return d ? d.toISOString() : null;
}

/** An integer column that fits a JS number (ids, counts). */
export function toInt(value: unknown): number {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n)) throw new RangeError(`not a safe integer: ${String(value)}`);
  return n;
}
