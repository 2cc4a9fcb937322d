// One canonical value per coupon field (what `network_values` keeps and edits are compared by),
// how it is read from and written to its column, and how an administrator's or the AI's input
// becomes one, with the limits the columns have.
import { ServiceError } from '../../errors.js';
import { toIso } from '../../db/values.js';
import { DISCOUNT_TYPES } from '../../networks/types.js';
import { parseLinkTarget } from '../../networks/tracking-links.js';
import { parseJson, type CouponField } from './rows.js';
import { plainText } from './text.js';

/** A field's value as JSON can carry it: strings, null, ISO dates, a boolean, a list of regions. */
export type FieldValue = string | null | boolean | string[];

export const LIMITS = { code: 191, title: 500, text: 20_000, discount_value: 32, discount_text: 191, url: 2000, regions: 300 } as const;

const DATE_FIELDS: readonly CouponField[] = ['starts_at', 'ends_at'];

/** The canonical value of `field` in a row read from the database. */
export function fromColumn(field: CouponField, raw: unknown): FieldValue {
  if (DATE_FIELDS.includes(field)) return toIso(raw);
  if (field === 'exclusive') return raw === true || Number(raw) === 1;
  if (field === 'regions') {
    const list = parseJson<unknown>(raw, []);
    return Array.isArray(list) ? list.map(String) : [];
  }
  if (field === 'code' || field === 'title') return raw === null || raw === undefined ? '' : String(raw);
  if (field === 'discount_type') return raw === null || raw === undefined ? 'other' : String(raw);
  return raw === null || raw === undefined ? null : String(raw);
}

/** The statement parameter that stores a canonical value in the field's column. */
export function toColumn(field: CouponField, value: FieldValue): unknown {
  if (DATE_FIELDS.includes(field)) return typeof value === 'string' ? new Date(value) : null;
  if (field === 'exclusive') return value === true ? 1 : 0;
  if (field === 'regions') return JSON.stringify(Array.isArray(value) ? value : []);
  return value;
}

export function sameValue(a: FieldValue | undefined, b: FieldValue | undefined): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

function invalid(field: string, message: string): ServiceError {
  return new ServiceError('svc_invalid_coupon', `Invalid ${field}: ${message}.`, 400, { params: { [field]: message } });
}

function optionalText(field: string, v: unknown, max: number, multiline: boolean): string | null {
  if (v === null) return null;
  if (typeof v !== 'string') throw invalid(field, 'must be a string or null');
  const text = plainText(v, multiline);
  if (text.length > max) throw invalid(field, `must be at most ${max} characters`);
  return text === '' ? null : text;
}

/**
 * An administrator's (or the AI's) value for `field` as its canonical value: text made plain,
 * dates as ISO instants, a URL checked like a tracking link's target. 400 svc_invalid_coupon.
 */
export function editValue(field: CouponField, v: unknown): FieldValue {
  switch (field) {
    case 'code': {
      if (v === null) return '';
      if (typeof v !== 'string') throw invalid(field, 'must be a string ("" for a deal)');
      const code = plainText(v, false);
      if (code.length > LIMITS.code) throw invalid(field, `must be at most ${LIMITS.code} characters`);
      return code;
    }
    case 'title': {
      const title = typeof v === 'string' ? plainText(v, false) : null;
      if (!title) throw invalid(field, 'must be a non-empty string');
      if (title.length > LIMITS.title) throw invalid(field, `must be at most ${LIMITS.title} characters`);
      return title;
    }
    case 'description':
    case 'terms':
      return optionalText(field, v, LIMITS.text, true);
    case 'discount_type':
      if (typeof v !== 'string' || !(DISCOUNT_TYPES as readonly string[]).includes(v)) throw invalid(field, `must be one of ${DISCOUNT_TYPES.join(', ')}`);
      return v;
    case 'discount_value':
      if (v === null) return null;
      if (typeof v !== 'string' || !/^\d{1,20}(\.\d{1,8})?$/.test(v.trim()))
        throw invalid(field, 'must be a non-negative decimal string such as "10" or "12.50"');
      return v.trim();
    case 'discount_currency':
      if (v === null) return null;
      if (typeof v !== 'string' || !/^[A-Za-z]{3}$/.test(v.trim())) throw invalid(field, 'must be a three-letter currency code');
      return v.trim().toUpperCase();
    case 'discount_text':
      return optionalText(field, v, LIMITS.discount_text, false);
    case 'landing_url': {
      if (v === null || v === '') return null;
      try {
        const url = parseLinkTarget(v);
        return url ? url.toString() : null;
      } catch (err) {
        throw invalid(
          field,
          (err as ServiceError).data?.params ? String((err as ServiceError & { data: { params: { url: string } } }).data.params.url) : 'must be an http(s) URL',
        );
      }
    }
    case 'starts_at':
    case 'ends_at': {
      if (v === null) return null;
      const d = v instanceof Date ? v : typeof v === 'string' && /(Z|[+-]\d\d:?\d\d)$/i.test(v.trim()) ? new Date(v.trim()) : null;
      if (!d || Number.isNaN(d.getTime())) throw invalid(field, 'must be an ISO 8601 date-time with a zone (e.g. 2026-12-31T23:59:59Z) or null');
      return d.toISOString();
    }
    case 'exclusive':
      if (typeof v !== 'boolean') throw invalid(field, 'must be true or false');
      return v;
    case 'regions': {
      if (!Array.isArray(v) || v.length > LIMITS.regions || !v.every((r) => typeof r === 'string' && /^[A-Za-z]{2}$/.test(r)))
        throw invalid(field, 'must be a list of two-letter country codes');
      return [...new Set(v.map((r: string) => r.toUpperCase()))];
    }
  }
}
