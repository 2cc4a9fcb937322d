import { describe, expect, it } from 'vitest';
import { addMinor, applyRate, currencyExponent, formatAmount, parseAmount, parsePercent } from '../src/money.js';

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
});
