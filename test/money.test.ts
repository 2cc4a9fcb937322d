import { describe, expect, it } from 'vitest';
import {
  addMinor,
  applyRate,
  ceilingIn,
  currencyExponent,
  formatAmount,
  MAX_MINOR,
  parseAmount,
  parseCeiling,
  parsePercent,
  toExactMinor,
} from '../src/money.js';

describe('money', () => {
  it('knows ISO 4217 exponents', () => {
    expect([currencyExponent('USD'), currencyExponent('JPY'), currencyExponent('BHD')]).toEqual([2, 0, 3]);
    expect(() => currencyExponent('XYZ')).toThrow(expect.objectContaining({ code: 'svc_invalid_currency' }));
    expect(() => currencyExponent('usd')).toThrow(expect.objectContaining({ code: 'svc_invalid_currency' }));
  });

  it('parses decimal strings into minor units exactly', () => {
    expect(parseAmount('12.50', 'USD')).toBe(1250);
    expect(parseAmount('12.5', 'USD')).toBe(1250);
    expect(parseAmount('12', 'USD')).toBe(1200);
    expect(parseAmount('0.01', 'USD')).toBe(1);
    expect(parseAmount('1250', 'JPY')).toBe(1250);
    expect(parseAmount('1.005', 'BHD')).toBe(1005);
    expect(parseAmount('0.29', 'USD')).toBe(29); // 0.29 * 100 is 28.999999999999996 in floats
  });

  it.each([
    ['12.505', 'USD', 'more than 2 decimal places'],
    ['12.5', 'JPY', 'whole number'],
    ['-1.00', 'USD', 'negative'],
    ['0', 'USD', 'greater than zero'],
    ['0.00', 'USD', 'greater than zero'],
    ['abc', 'USD', 'decimal string'],
    ['1,000.00', 'USD', 'decimal string'],
    ['$5', 'USD', 'decimal string'],
    ['1e5', 'USD', 'decimal string'],
    ['10000000000000.01', 'USD', 'too large'],
    [' ', 'USD', 'decimal string'],
  ])('refuses %s %s', (input, currency, message) => {
    expect(() => parseAmount(input, currency)).toThrow(expect.objectContaining({ code: 'svc_invalid_amount', message: expect.stringContaining(message) }));
  });

  it('formats minor units with the currency exponent', () => {
    expect(formatAmount(1250, 'USD')).toBe('12.50');
    expect(formatAmount(5, 'USD')).toBe('0.05');
    expect(formatAmount(-5, 'USD')).toBe('-0.05');
    expect(formatAmount(1250, 'JPY')).toBe('1250');
    expect(formatAmount(1005, 'BHD')).toBe('1.005');
    expect(formatAmount(0, 'USD')).toBe('0.00');
  });

  it('applies percentages exactly, rounding down', () => {
    expect(applyRate(999, parsePercent('50'))).toBe(499);
    expect(applyRate(1000, parsePercent('12.5'))).toBe(125);
    expect(applyRate(1, parsePercent('99.9999'))).toBe(0);
    expect(applyRate(9_007_199_254_740, parsePercent('33.333333'))).toBe(3_002_399_721_556);
    expect(() => parsePercent('101')).toThrow(expect.objectContaining({ code: 'svc_invalid_rate' }));
    expect(() => parsePercent('-1')).toThrow(expect.objectContaining({ code: 'svc_invalid_rate' }));
  });

  it('refuses sums past the safe integer range', () => {
    expect(addMinor(1, 2, -3)).toBe(0);
    expect(() => addMinor(Number.MAX_SAFE_INTEGER, 1)).toThrow(expect.objectContaining({ code: 'svc_amount_overflow' }));
  });

  it('refuses any amount past the hard bound of 10^12 minor units, in every currency', () => {
    expect(MAX_MINOR).toBe(10n ** 12n);
    expect(parseAmount('10000000000.00', 'USD')).toBe(1_000_000_000_000);
    expect(parseAmount('1000000000000', 'JPY')).toBe(1_000_000_000_000);
    expect(parseAmount('1000000000.000', 'BHD')).toBe(1_000_000_000_000);
    // The security review's payout: almost 5 trillion credited from one postback.
    for (const [input, currency] of [
      ['9999999999999.99', 'USD'],
      ['10000000000.01', 'USD'],
      ['1000000000001', 'JPY'],
      ['1000000000.001', 'BHD'],
      ['99999999999999999999', 'USD'],
    ]) {
      expect(() => parseAmount(input, currency)).toThrow(
        expect.objectContaining({ code: 'svc_invalid_amount', message: expect.stringContaining('too large') }),
      );
    }
    // A JSON number is read from its shortest decimal text: float noise is refused, never rounded.
    expect(parseAmount(12.5, 'USD')).toBe(1250);
    expect(() => parseAmount(0.1 + 0.2, 'USD')).toThrow(expect.objectContaining({ code: 'svc_invalid_amount' }));
    expect(() => parseAmount(1e21, 'USD')).toThrow(expect.objectContaining({ code: 'svc_invalid_amount' }));
  });

  it('formats totals past 2^53 exactly from bigints', () => {
    expect(formatAmount(2n ** 53n + 1n, 'USD')).toBe('90071992547409.93');
    expect(formatAmount(-(2n ** 63n), 'JPY')).toBe('-9223372036854775808');
  });

  it('reads database totals exactly and refuses a number that may have lost digits', () => {
    expect(toExactMinor('9007199254740993')).toBe(9_007_199_254_740_993n);
    expect(toExactMinor('-18446744073709551616')).toBe(-(2n ** 64n));
    expect(toExactMinor('12.0000')).toBe(12n);
    expect(toExactMinor(null)).toBe(0n);
    expect(toExactMinor(42)).toBe(42n);
    expect(() => toExactMinor(2 ** 53 + 2)).toThrow(RangeError);
    expect(() => toExactMinor(1.5)).toThrow(RangeError);
    expect(() => toExactMinor('12.5')).toThrow(RangeError);
  });

  it('reads review ceilings per currency, a bare amount as units of any currency, and "none" as no ceiling', () => {
    expect(parseCeiling(null)).toBeNull();
    expect(parseCeiling(' none ')).toBeNull();
    expect(parseCeiling('')).toBeNull();
    const c = parseCeiling('500.00 GBP, 80000 jpy, 1000')!;
    expect(ceilingIn(c, 'GBP')).toBe(50_000);
    expect(ceilingIn(c, 'JPY')).toBe(80_000);
    expect(ceilingIn(c, 'USD')).toBe(100_000);
    expect(ceilingIn(c, 'BHD')).toBe(1_000_000);
    const named = parseCeiling('500.00 GBP')!;
    expect(ceilingIn(named, 'GBP')).toBe(50_000);
    expect(ceilingIn(named, 'EUR')).toBeNull();
    // Decimals a currency lacks lower the ceiling, never raise it.
    expect(ceilingIn(parseCeiling('99.99')!, 'JPY')).toBe(99);
    expect(ceilingIn(parseCeiling('0')!, 'USD')).toBe(0);
  });

  it.each([
    ['lots', 'list of amounts'],
    ['12 XYZ', 'unknown currency'],
    ['1.005 USD', 'more than 2 decimal places'],
    ['1, 2', 'one amount without a currency'],
    ['5 USD, 6 USD', 'USD twice'],
    ['-5', 'list of amounts'],
    ['9999999999999', 'too large'],
    ['99999999999999 USD', 'list of amounts'],
  ])('refuses the review ceiling %s', (input, message) => {
    expect(() => parseCeiling(input)).toThrow(
      expect.objectContaining({ code: 'svc_invalid_setting', message: expect.stringContaining(message), data: { field: 'review_above' } }),
    );
  });
});
