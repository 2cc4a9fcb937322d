// Money: integer minor units below the API (safe integers, never floats), decimal strings with the
// currency's ISO 4217 exponent at the edges. Exponents come from the runtime's ICU data
// (Intl), which ships the ISO 4217 table: USD 2, JPY 0, BHD 3.
import { ServiceError } from './errors.js';

/**
 * The hard bound on one amount, in minor units (10,000,000,000.00 USD; 1,000,000,000,000 JPY):
 * past anything a real order or adjustment carries, and 9,007 times below 2^53, so a balance
 * moved by thousands of them stays an exact JS number and no BIGINT column or SUM comes near
 * its range. Anything above it is refused as garbage, whoever sends it.
 */
export const MAX_MINOR = 10n ** 12n;

/**
 * The bound on a balance column (available, pending, lifetime totals): the largest exact JS
 * integer. A move that would take one past it is refused (409 svc_amount_overflow) and rolled
 * back, long before the BIGINT column itself (2^63) could overflow or turn into a float.
 */
export const MAX_BALANCE = Number.MAX_SAFE_INTEGER;

const exponents = new Map<string, number>();
let known: Set<string> | null = null;

/** The ISO 4217 exponent of `code`; throws 400 `svc_invalid_currency` for an unknown code. */
export function currencyExponent(code: string): number {
  const cached = exponents.get(code);
  if (cached !== undefined) return cached;
  known ??= new Set(Intl.supportedValuesOf('currency'));
  if (!/^[A-Z]{3}$/.test(code) || !known.has(code))
    throw new ServiceError('svc_invalid_currency', `Unknown currency "${String(code).slice(0, 8)}": use an ISO 4217 code such as USD.`, 400, {
      currency: code,
    });
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
  if (fraction.length > exponent)
    throw fail(exponent === 0 ? `must be a whole number in ${currency}.` : `has more than ${exponent} decimal places for ${currency}.`);
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
  // A safe integer formats without a BigInt (an export formats a million of them).
  const negative = minor < 0;
  const digits = (
    typeof minor === 'number' && Number.isSafeInteger(minor) ? String(Math.abs(minor)) : (negative ? -BigInt(minor) : BigInt(minor)).toString()
  ).padStart(exponent + 1, '0');
  const text = exponent === 0 ? digits : `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
  return negative ? `-${text}` : text;
}

/** A minor-unit integer read from the database (MariaDB BIGINT arrives as a string). */
export function toMinor(value: unknown): number {
  const n = typeof value === 'number' ? value : Number(value ?? 0);
  if (!Number.isSafeInteger(n)) throw new RangeError(`amount out of the safe integer range: ${String(value)}`);
  return n;
}

/**
 * A total read from the database, exactly, as a bigint: MariaDB answers a SUM as DECIMAL text,
 * SQLite sums read through `exactSum` (src/db/values.ts) arrive as integer text. A JS number is
 * taken only while it is exact (a float past 2^53 may already have lost its last digits).
 */
export function toExactMinor(value: unknown): bigint {
  if (value === null || value === undefined) return 0n;
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new RangeError(`total is not an exact integer: ${String(value)}`);
    return BigInt(value);
  }
  // A DECIMAL sum of integers has no fraction, or only zeros ("12.0000" on some servers).
  const m = /^(-?\d+)(?:\.0*)?$/.exec(String(value).trim());
  if (!m) throw new RangeError(`total is not an integer: ${String(value).slice(0, 40)}`);
  return BigInt(m[1]);
}

/** Adds minor amounts, refusing a result past the safe range (never silently inexact). */
export function addMinor(...values: number[]): number {
  const sum = values.reduce((a, b) => a + BigInt(b), 0n);
  if (sum > BigInt(Number.MAX_SAFE_INTEGER) || sum < -BigInt(Number.MAX_SAFE_INTEGER))
    throw new ServiceError('svc_amount_overflow', 'The resulting amount is out of range.', 409);
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

/**
 * A review ceiling (`orders.review_above`, a network's `review_above` setting): the commission
 * above which an order reported by a network is held for an administrator. cashtrack converts
 * no currencies, so a ceiling names its amount per currency ("500.00 GBP, 80000 JPY"); a bare
 * amount ("1000.00") counts as that many units of whatever currency the order is in. Across
 * ISO 4217 the strongest unit is worth a few US dollars, so a bare amount never lets through
 * more than a few times its dollar value, and holds more, never less, in weaker currencies.
 */
export interface Ceiling {
  /** As written (trimmed). */
  text: string;
  /** The bare amount, as decimal text, or null. */
  any: string | null;
  /** Minor units per named currency. */
  byCurrency: Map<string, number>;
}

/**
 * Parses a ceiling; null, '' and "none" are no ceiling (null). 400 svc_invalid_setting (with
 * `field`) for anything else that is not a list of "AMOUNT" or "AMOUNT CUR".
 */
export function parseCeiling(input: unknown, field = 'review_above'): Ceiling | null {
  const fail = (message: string) => new ServiceError('svc_invalid_setting', `${field} ${message}`, 400, { field });
  if (input === null || input === undefined) return null;
  if (typeof input !== 'string') throw fail('must be text such as "1000.00", "500.00 GBP, 80000 JPY" or "none".');
  const text = input.trim();
  if (text === '' || text.toLowerCase() === 'none') return null;
  const ceiling: Ceiling = { text, any: null, byCurrency: new Map() };
  for (const item of text.split(',')) {
    const m = /^(\d{1,13}(?:\.\d{1,3})?)(?:\s+([A-Za-z]{3}))?$/.exec(item.trim());
    if (!m) throw fail(`must be a list of amounts such as "1000.00" or "500.00 GBP", comma-separated, or "none" (got "${item.trim().slice(0, 40)}").`);
    const [, amount, code] = m;
    if (code === undefined) {
      if (ceiling.any !== null) throw fail('may hold one amount without a currency at most.');
      if (BigInt(amount.split('.')[0]) * 1000n > MAX_MINOR) throw fail('is too large.');
      ceiling.any = amount;
      continue;
    }
    const currency = code.toUpperCase();
    if (!isCurrency(currency)) throw fail(`names an unknown currency "${code}".`);
    if (ceiling.byCurrency.has(currency)) throw fail(`names ${currency} twice.`);
    try {
      ceiling.byCurrency.set(currency, parseAmount(amount, currency, { allowZero: true, field }));
    } catch (err) {
      throw err instanceof ServiceError ? fail(err.message.slice(field.length + 1)) : err;
    }
  }
  return ceiling;
}

/** The ceiling for an order in `currency`, in its minor units; null when the ceiling does not cover it. */
export function ceilingIn(ceiling: Ceiling, currency: string): number | null {
  const named = ceiling.byCurrency.get(currency);
  if (named !== undefined) return named;
  if (ceiling.any === null) return null;
  // The bare amount in this currency's units, extra decimals dropped (a lower ceiling, never a higher one).
  const exponent = currencyExponent(currency);
  const [whole, fraction = ''] = ceiling.any.split('.');
  return Number(BigInt(whole) * 10n ** BigInt(exponent) + BigInt(fraction.slice(0, exponent).padEnd(exponent, '0') || '0'));
}
