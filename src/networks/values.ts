// Value conversions the network modules share: amounts to exact decimal strings, the networks'
// date formats, date windows, URLs, country codes and commission ranges.
import { currencyExponent, isCurrency } from '../money.js';
import { ServiceError } from '../errors.js';
import type { NetworkAdvertiser } from './types.js';

const DAY_MS = 86_400_000;

/** A finite number as plain decimal text (no exponent); null past 1e21 or for NaN/Infinity. */
export function plainNumber(n: number): string | null {
  if (!Number.isFinite(n) || Math.abs(n) >= 1e21) return null;
  const s = String(n);
  if (!/e/i.test(s)) return s;
  return n.toFixed(20).replace(/0+$/, '').replace(/\.$/, '');
}

/** Rounds plain decimal text to `exponent` places, half away from zero; null if not a decimal. */
export function roundDecimal(text: string, exponent: number): string | null {
  const m = /^([+-])?(\d*)(?:\.(\d*))?$/.exec(text);
  if (!m || (!m[2] && !m[3])) return null;
  const [, sign, whole = '', fraction = ''] = m;
  let units = BigInt((whole || '0') + fraction.slice(0, exponent).padEnd(exponent, '0'));
  if (fraction.length > exponent && fraction[exponent] >= '5') units += 1n;
  const digits = units.toString().padStart(exponent + 1, '0');
  const body = exponent === 0 ? digits : `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
  return sign === '-' && units !== 0n ? `-${body}` : body;
}

/**
 * An amount as the currency's decimal string ("12.50" for USD, "1250" for JPY).
 * JSON numbers go through String(), which is exact for the 15 significant digits money needs,
 * so 12.5 → "12.50"; float noise a network serialised (0.30000000000000004) is rounded away,
 * half away from zero. Absent values (null, undefined, "") are zero. Text that is not a plain
 * decimal ("1,234.50", "$5") is returned trimmed and unchanged, so the orders service refuses it
 * with its own error and the raw record shows what the network sent.
 */
export function decimalAmount(value: unknown, currency: string): string {
  const exponent = isCurrency(currency) ? currencyExponent(currency) : 2;
  if (value === null || value === undefined || (typeof value === 'string' && value.trim() === '')) return roundDecimal('0', exponent)!;
  const text = typeof value === 'number' ? plainNumber(value) : typeof value === 'string' ? value.trim() : null;
  if (text === null) return String(value).slice(0, 64);
  return roundDecimal(text, exponent) ?? text.slice(0, 64);
}

/** True when `text` is a negative decimal. */
export function isNegative(text: string): boolean {
  return /^-\d/.test(text) && !/^-0*(\.0*)?$/.test(text);
}

/** An ISO 4217 code from a network field, upper-cased; `fallback` when absent. */
export function currencyCode(value: unknown, fallback: string): string {
  const text = typeof value === 'string' ? value.trim().toUpperCase() : '';
  return text || fallback;
}

/** A percentage as decimal text without the % sign and trailing zeros ("6.00" → "6"). */
export function percentText(value: unknown): string | null {
  const raw = typeof value === 'number' ? plainNumber(value) : typeof value === 'string' ? value.trim().replace(/%$/, '').trim() : null;
  if (!raw || !/^\d+(\.\d+)?$/.test(raw)) return null;
  return raw.includes('.') ? raw.replace(/0+$/, '').replace(/\.$/, '') : raw.replace(/^0+(?=\d)/, '');
}

/** Commission rates → the advertiser's commission range; mixed types keep no single range. */
export function commissionRange(rates: { value: unknown; percent: boolean }[], currency: string | null): NonNullable<NetworkAdvertiser['commission']> | null {
  const percent: string[] = [];
  const flat: string[] = [];
  for (const r of rates) {
    if (r.percent) {
      const p = percentText(r.value);
      if (p !== null) percent.push(p);
    } else if (r.value !== null && r.value !== undefined && r.value !== '') {
      const a = decimalAmount(r.value, currency ?? 'USD');
      if (/^\d+(\.\d+)?$/.test(a)) flat.push(a);
    }
  }
  if (!percent.length && !flat.length) return null;
  if (percent.length && flat.length) return { type: 'mixed', min: null, max: null, currency };
  const values = percent.length ? percent : flat;
  const sorted = [...values].sort((a, b) => Number(a) - Number(b));
  return { type: percent.length ? 'percent' : 'flat', min: sorted[0], max: sorted[sorted.length - 1], currency: flat.length ? currency : null };
}

/**
 * A network date. Text without a zone ("2024-03-02T14:05:00", "2024-03-01 09:15:02",
 * "2024-04-15") is read as UTC: the modules ask for UTC where the API lets them choose.
 */
export function parseDate(value: unknown): Date | null {
  if (typeof value !== 'string' || !value.trim()) return null;
  const text = value.trim();
  const local = /^(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?$/.exec(text);
  const date = local ? new Date(`${local[1]}T${local[2] ?? '00:00:00'}Z`) : new Date(text);
  return Number.isNaN(date.getTime()) ? null : date;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** "2024-03-01T10:00:00" (UTC, no zone suffix): Awin's startDate/endDate. */
export function isoLocalUtc(d: Date): string {
  return d.toISOString().slice(0, 19);
}

/** "2024-03-01T10:00:00Z": impact.com's date filters. */
export function isoUtc(d: Date): string {
  return `${d.toISOString().slice(0, 19)}Z`;
}

/** "01.03.2024 10:00:00": Admitad's documented date-time filter format. */
export function dmyTime(d: Date): string {
  return `${pad(d.getUTCDate())}.${pad(d.getUTCMonth() + 1)}.${d.getUTCFullYear()} ${d.toISOString().slice(11, 19)}`;
}

/** The last whole second inside [from, to): the networks' end filters are inclusive. */
export function inclusiveEnd(to: Date): Date {
  return new Date(Math.floor((to.getTime() - 1) / 1000) * 1000);
}

/** Splits [from, to) into consecutive windows of at most `maxDays`; empty when from >= to. */
export function splitWindows(from: Date, to: Date, maxDays: number): { from: Date; to: Date }[] {
  if (!(from instanceof Date) || !(to instanceof Date) || Number.isNaN(from.getTime()) || Number.isNaN(to.getTime())) {
    throw new ServiceError('svc_invalid_window', 'The transaction window needs valid from and to dates.', 400);
  }
  const out: { from: Date; to: Date }[] = [];
  const step = maxDays * DAY_MS;
  for (let start = from.getTime(); start < to.getTime(); start += step) out.push({ from: new Date(start), to: new Date(Math.min(start + step, to.getTime())) });
  return out;
}

export function daysBefore(d: Date, days: number): Date {
  return new Date(d.getTime() - days * DAY_MS);
}

/** A trimmed string, or null for null/undefined/empty. Numbers become their plain text. */
export function text(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const s = typeof value === 'number' ? (plainNumber(value) ?? '') : String(value).trim();
  return s === '' ? null : s;
}

/** An absolute http(s) URL: protocol-relative ("//cdn…") gets https, a path gets `base`. */
export function absoluteUrl(value: unknown, base?: string): string | null {
  const s = text(value);
  if (!s) return null;
  try {
    const url = s.startsWith('//') ? new URL(`https:${s}`) : new URL(s, base);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.toString() : null;
  } catch {
    return null;
  }
}

/** The host of a URL (or bare host) in lower case without "www."; null if none. */
export function domainOf(value: unknown): string | null {
  const s = text(value);
  if (!s) return null;
  try {
    const host = new URL(
      /^[a-z][a-z0-9+.-]*:/i.test(s) || s.startsWith('//') ? (s.startsWith('//') ? `https:${s}` : s) : `https://${s}`,
    ).hostname.toLowerCase();
    return host.replace(/^www\./, '') || null;
  } catch {
    return null;
  }
}

/** ISO 3166-1 alpha-2 codes only ("00" worldwide, "CANADA" and the like are dropped), unique. */
export function countryCodes(values: unknown[]): string[] {
  const out = new Set<string>();
  for (const v of values) {
    const s = typeof v === 'string' ? v.trim().toUpperCase() : '';
    if (/^[A-Z]{2}$/.test(s)) out.add(s);
  }
  return [...out];
}

export function chunk<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Reads a possibly-missing array member. */
export function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export type Rec = Record<string, unknown>;

/** Reads a possibly-missing object member. */
export function obj(value: unknown): Rec {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Rec) : {};
}
