// Money: integer minor units below the API (safe integers, never floats), decimal strings with the
// currency's ISO 4217 exponent at the edges. Exponents come from the runtime's ICU data
// (Intl), which ships the ISO 4217 table: USD 2, JPY 0, BHD 3.
import { ServiceError } from './errors.js';

/** Largest amount accepted, in minor units: far below 2^53, so sums of many stay exact. */
export const MAX_MINOR = 10n ** 15n;

const exponents = new Map<string, number>();
let known: Set<string> | null = null;

/** The ISO 4217 exponent of `code`; throws 400 `svc_invalid_currency` for an unknown code. */
export function currencyExponent(code: string): number {
  const cached = exponents.get(code);
  if (cached !== undefined) return cached;
  known ??= new Set(Intl.supportedValuesOf('currency'));
  if (!/^[A-Z]{3}$/.test(code) || !known.has(code)) throw new ServiceError('svc_invalid_currency', `Unknown currency "${String(code).slice(0, 8)}": use an ISO 4217 code such as USD.`, 400, { currency: code });
  const exponent = new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits ?? 2;
  exponents.set(code, exponent);
  return exponent;
}

export function isCurrency(code: string): boolean {
  try {
    currencyExponent(code);
    return true;
  } catch {
    return false;
  }
}

/**
 * "12.50" USD → 1250. Accepts an optional leading minus only when `allowNegative`; refuses
 * anything but digits and one dot, more decimals than the currency has, and amounts past MAX_MINOR.
 */
export function parseAmount(input: unknown, currency: string, options: { allowNegative?: boolean; allowZero?: boolean; field?: string } = {}): number {
  const field = options.field ?? 'amount';
  const exponent = currencyExponent(currency);
  const text = typeof input === 'number' && Number.isFinite(input) ? String(input) : input;
  const fail = (message: string) => new ServiceError('svc_invalid_amount', `${field} ${message}`, 400, { field, currency });
  if (typeof text !== 'string') throw fail('must be a decimal string such as "12.50".');
  const m = /^(-)?(\d{1,20})(?:\.(\d+))?$/.exec(text.trim());
  if (!m) throw fail('must be a decimal string such as "12.50", without currency symbols or thousands separators.');
  const [, minus, whole, fraction = ''] = m;
  if (fraction.length > exponent) throw fail(exponent === 0 ? `must be a whole number in ${currency}.` : `has more than ${exponent} decimal places for ${currency}.`);
  const minor = BigInt(whole) * 10n ** BigInt(exponent) + BigInt(fraction.padEnd(exponent, '0') || '0');
  if (minor > MAX_MINOR) throw fail('is too large.');
  const value = minus ? -Number(minor) : Number(minor);
  if (minus && minor !== 0n && !options.allowNegative) throw fail('must not be negative.');
  if (value === 0 && !options.allowZero) throw fail('must be greater than zero.');
  return value === 0 ? 0 : value;
}

/** 1250 USD → "12.50"; -5 JPY → "-5". */
export function formatAmount(minor: number | bigint, currency: string): string {
  const exponent = currencyExponent(currency);
  const n = BigInt(minor);
  const negative = n < 0n;
  const digits = (negative ? -n : n).toString().padStart(exponent + 1, '0');
  const text = exponent === 0 ? digits : `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
  return negative ? `-${text}` : text;
}

/** A minor-unit integer read from the database (MariaDB BIGINT arrives as a string). */
export function toMinor(value: unknown): number {
  const n = typeof value === 'number' ? value : Number(value ?? 0);
  if (!Number.isSafeInteger(n)) throw new RangeError(`amount out of the safe integer range: ${String(value)}`);
  return n;
}

/** Adds minor amounts, refusing a result past the safe range (never silently inexact). */
export function addMinor(...values: number[]): number {
  const sum = values.reduce((a, b) => a + BigInt(b), 0n);
  if (sum > BigInt(Number.MAX_SAFE_INTEGER) || sum < -BigInt(Number.MAX_SAFE_INTEGER)) throw new ServiceError('svc_amount_overflow', 'The resulting amount is out of range.', 409);
  return Number(sum);
}

/**
 * A non-negative decimal rate such as "50" or "12.5" (percent), kept exact as a fraction, and
 * applied to an amount rounding down to the minor unit.
 */
export interface Rate {
  numerator: bigint;
  denominator: bigint;
}

export function parsePercent(input: string | number, field = 'value'): Rate {
  const text = String(input).trim();
  const m = /^(\d{1,6})(?:\.(\d{1,6}))?$/.exec(text);
  if (!m) throw new ServiceError('svc_invalid_rate', `${field} must be a percentage such as "50" or "12.5".`, 400, { field });
  const fraction = m[2] ?? '';
  const numerator = BigInt(m[1] + fraction);
  const denominator = 100n * 10n ** BigInt(fraction.length);
  if (numerator > denominator) throw new ServiceError('svc_invalid_rate', `${field} must be at most 100.`, 400, { field });
  return { numerator, denominator };
}

/** floor(amount × rate) for a non-negative amount; the remainder is the site's. */
export function applyRate(minor: number, rate: Rate): number {
  if (minor < 0) return -applyRate(-minor, rate);
  return Number((BigInt(minor) * rate.numerator) / rate.denominator);
}
