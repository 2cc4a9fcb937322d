// A coupon as a network lists it, made into the values a `coupons` row stores: plain text, codes
// without the networks' "no code needed" placeholders, checked URLs and regions, and a hash of
// the result so a refresh can pass over a coupon that did not change.
import { createHash } from 'node:crypto';
import { DISCOUNT_TYPES, type NetworkCoupon } from '../../networks/types.js';
import { parseLinkTarget } from '../../networks/tracking-links.js';
import type { CouponField } from './rows.js';
import { plainText } from './text.js';
import { LIMITS, type FieldValue } from './values.js';

export interface IncomingCoupon {
  coupon_id: string;
  advertiser: string;
  values: Record<CouponField, FieldValue>;
  network_url: string | null;
  raw: string | null;
  hash: string;
  /** It ends before it starts: stored as the network sent it, and expired (it can never be used). */
  badDates: boolean;
}

/** What networks put in the code field of a deal ("NOT REQUIRED" is Admitad's; the rest from other feeds). */
const NO_CODE = new Set(['not required', 'не нужен', 'no code needed', 'no code required', 'no code', 'n/a', 'na', 'none', '-', '--', 'null']);

const cut = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

function optionalText(v: unknown, max: number, multiline: boolean): string | null {
  if (typeof v !== 'string') return null;
  const text = plainText(v, multiline);
  return text === '' ? null : cut(text, max);
}

function idOf(v: unknown): string {
  if (typeof v === 'string') return v.trim();
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return '';
}

function dateOf(v: unknown): string | null {
  return v instanceof Date && !Number.isNaN(v.getTime()) ? v.toISOString() : null;
}

function urlOf(v: unknown): string | null {
  try {
    return parseLinkTarget(v)?.toString() ?? null;
  } catch {
    return null;
  }
}

/**
 * Bumped when what `toIncoming` makes of a listed coupon changes: every stored hash then differs
 * and the next refresh rewrites every coupon with the new rules.
 */
const HASH_VERSION = '1';

/**
 * A listed coupon's id and the hash of the fields the module read from it: equal hashes, equal
 * rows. The network's raw record is left out (networks change ratings and counters in it that
 * no stored field shows, and hashing it costs more than the rest): `raw` is the record as of the
 * last change of a stored field. Cheap next to `toIncoming`, which a refresh runs only for what
 * is new or changed. Null for a record with no usable id.
 */
export function fingerprint(c: NetworkCoupon): { coupon_id: string; hash: string } | null {
  if (!c || typeof c !== 'object') return null;
  const couponId = idOf(c.id);
  if (!couponId || couponId.length > 128) return null;
  let text: string;
  try {
    text = JSON.stringify([
      c.advertiser_id,
      c.code,
      c.title,
      c.description,
      c.terms ?? null,
      c.discount ?? null,
      c.url,
      c.tracking_url ?? null,
      c.starts_at,
      c.ends_at,
      c.exclusive ?? false,
      c.regions ?? [],
    ]);
  } catch {
    return null;
  }
  return { coupon_id: couponId, hash: createHash('sha1').update(HASH_VERSION).update('\0').update(text).digest('hex') };
}

/** Whether a listed coupon ends before it starts (stored as sent, and expired). */
export function endsBeforeStart(c: NetworkCoupon): boolean {
  return c.starts_at instanceof Date && c.ends_at instanceof Date && c.ends_at.getTime() < c.starts_at.getTime();
}

/** The row values of one listed coupon, or why it cannot be stored (counted as failed). */
export function toIncoming(c: NetworkCoupon, hash: string): { coupon: IncomingCoupon } | { error: string } {
  if (!c || typeof c !== 'object') return { error: 'not a coupon' };
  const couponId = idOf(c.id);
  const advertiser = idOf(c.advertiser_id);
  if (!couponId || couponId.length > 128) return { error: 'no usable coupon id' };
  if (!advertiser || advertiser.length > 128) return { error: 'no usable advertiser id' };
  const title = optionalText(c.title, LIMITS.title, false);
  if (!title) return { error: 'no title' };
  let code = typeof c.code === 'string' ? plainText(c.code, false) : '';
  if (NO_CODE.has(code.toLowerCase())) code = '';
  if (code.length > LIMITS.code) return { error: 'code too long' };
  const d = c.discount && typeof c.discount === 'object' ? c.discount : null;
  const type = d && (DISCOUNT_TYPES as readonly string[]).includes(d.type) ? d.type : 'other';
  const value = d && typeof d.value === 'string' && /^\d{1,20}(\.\d{1,8})?$/.test(d.value.trim()) ? d.value.trim() : null;
  const currency = d && typeof d.currency === 'string' && /^[A-Za-z]{3}$/.test(d.currency.trim()) ? d.currency.trim().toUpperCase() : null;
  const regions = Array.isArray(c.regions)
    ? [...new Set(c.regions.filter((r): r is string => typeof r === 'string' && /^[A-Za-z]{2}$/.test(r.trim())).map((r) => r.trim().toUpperCase()))]
    : [];
  const values: Record<CouponField, FieldValue> = {
    code,
    title,
    description: optionalText(c.description, LIMITS.text, true),
    terms: optionalText(c.terms, LIMITS.text, true),
    discount_type: type,
    discount_value: value,
    discount_currency: currency,
    discount_text: optionalText(d?.text, LIMITS.discount_text, false),
    landing_url: urlOf(c.url),
    starts_at: dateOf(c.starts_at),
    ends_at: dateOf(c.ends_at),
    exclusive: c.exclusive === true,
    regions: regions.slice(0, LIMITS.regions),
  };
  const networkUrl = urlOf(c.tracking_url);
  let raw: string | null = null;
  try {
    raw = c.raw === undefined ? null : JSON.stringify(c.raw);
  } catch {
    raw = null;
  }
  const badDates = endsBeforeStart(c);
  return { coupon: { coupon_id: couponId, advertiser, values, network_url: networkUrl, raw, hash, badDates } };
}
