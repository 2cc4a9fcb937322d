import { describe, expect, it } from 'vitest';
import { duplicateJsonKey, PostbackParams } from '../../src/networks/postback.js';
import { commissionRange, decimalAmount, dmyTime, domainOf, inclusiveEnd, parseDate, percentText, splitWindows } from '../../src/networks/values.js';
import { failure } from '../fixtures/networks/runtime.js';

describe('amounts from network records', () => {
  it("turns JSON numbers and decimal strings into the currency's decimal string", () => {
    expect(decimalAmount('12.5', 'USD')).toBe('12.50');
    expect(decimalAmount(12.5, 'USD')).toBe('12.50');
    expect(decimalAmount('12.50', 'USD')).toBe('12.50');
    expect(decimalAmount(48.0, 'GBP')).toBe('48.00');
    expect(decimalAmount(' 7 ', 'EUR')).toBe('7.00');
    expect(decimalAmount(1250, 'JPY')).toBe('1250');
    expect(decimalAmount('1.2345', 'BHD')).toBe('1.235');
  });

  it('removes float noise the network serialised without inventing precision', () => {
    expect(decimalAmount(0.1 + 0.2, 'USD')).toBe('0.30');
    expect(decimalAmount(1.1 * 3, 'USD')).toBe('3.30');
    expect(decimalAmount(2.675, 'USD')).toBe('2.68'); // a double of 2.675 is 2.67499999…; the text is what counts
    expect(decimalAmount(1e-7, 'USD')).toBe('0.00');
    expect(decimalAmount(123456789012.34, 'USD')).toBe('123456789012.34');
  });

  it('keeps the sign of negative amounts and treats absent ones as zero', () => {
    expect(decimalAmount('-6.00', 'USD')).toBe('-6.00');
    expect(decimalAmount(-0.004, 'USD')).toBe('0.00');
    expect(decimalAmount(null, 'USD')).toBe('0.00');
    expect(decimalAmount('', 'JPY')).toBe('0');
  });

  it('passes unreadable text through unchanged so the orders service refuses it', () => {
    expect(decimalAmount('1,234.50', 'USD')).toBe('1,234.50');
    expect(decimalAmount('$5', 'USD')).toBe('$5');
    expect(decimalAmount(Number.NaN, 'USD')).toBe('NaN');
  });

  it('reads percentages and commission ranges', () => {
    expect(percentText('6.00')).toBe('6');
    expect(percentText('7.50%')).toBe('7.5');
    expect(percentText(12)).toBe('12');
    expect(
      commissionRange(
        [
          { value: '6.00', percent: true },
          { value: 4, percent: true },
        ],
        'USD',
      ),
    ).toEqual({ type: 'percent', min: '4', max: '6', currency: null });
    expect(commissionRange([{ value: 5, percent: false }], 'EUR')).toEqual({ type: 'flat', min: '5.00', max: '5.00', currency: 'EUR' });
    expect(
      commissionRange(
        [
          { value: 5, percent: false },
          { value: 3, percent: true },
        ],
        'EUR',
      ),
    ).toMatchObject({ type: 'mixed', min: null, max: null });
    expect(commissionRange([], 'EUR')).toBeNull();
  });
});

describe('dates and windows', () => {
  it('reads zone-less network dates as UTC and keeps explicit offsets', () => {
    expect(parseDate('2024-03-02T14:05:00')?.toISOString()).toBe('2024-03-02T14:05:00.000Z');
    expect(parseDate('2024-03-01 09:15:02')?.toISOString()).toBe('2024-03-01T09:15:02.000Z');
    expect(parseDate('2024-04-15')?.toISOString()).toBe('2024-04-15T00:00:00.000Z');
    expect(parseDate('2024-03-01T09:31:00-08:00')?.toISOString()).toBe('2024-03-01T17:31:00.000Z');
    expect(parseDate('')).toBeNull();
    expect(parseDate('not a date')).toBeNull();
    expect(dmyTime(new Date('2024-03-01T09:05:07Z'))).toBe('01.03.2024 09:05:07');
  });

  it('splits [from, to) into contiguous windows no wider than allowed', () => {
    const from = new Date('2024-01-01T00:00:00Z');
    const to = new Date('2024-04-10T00:00:00Z'); // 100 days
    const windows = splitWindows(from, to, 31);
    expect(windows).toHaveLength(4);
    expect(windows[0].from).toEqual(from);
    expect(windows[3].to).toEqual(to);
    for (let i = 1; i < windows.length; i++) expect(windows[i].from).toEqual(windows[i - 1].to);
    expect(splitWindows(to, from, 31)).toEqual([]);
    expect(inclusiveEnd(new Date('2024-02-01T00:00:00Z')).toISOString()).toBe('2024-01-31T23:59:59.000Z');
  });

  it('refuses invalid window dates', async () => {
    expect(await failure(Promise.resolve().then(() => splitWindows(new Date('x'), new Date(), 31)))).toMatchObject({ code: 'svc_invalid_window' });
  });

  it('finds the shop domain', () => {
    expect(domainOf('https://www.Example-Shoes.test/path')).toBe('example-shoes.test');
    expect(domainOf('www.example.test')).toBe('example.test');
    expect(domainOf('//cdn.example.test/x')).toBe('cdn.example.test');
    expect(domainOf(null)).toBeNull();
  });
});

describe('postback parameters', () => {
  it('matches names case-insensitively and reads query, form bodies and JSON bodies', () => {
    const p = PostbackParams.read({ TransactionID: '1' }, 'commission=2.50&currency=GBP', '{"clickRef":"u-1","n":12.5}');
    expect(p.get('transactionId')).toBe('1');
    expect(p.get('commission')).toBe('2.50');
    expect(p.get('clickref')).toBe('u-1');
    expect(p.get('n')).toBe('12.5');
  });

  it('treats empty values and unreplaced macros as absent', () => {
    const p = PostbackParams.read({ a: '', b: '!!!clickRef!!!', c: '[[[subid]]]', d: '{SubId1}', e: '  ' });
    for (const k of ['a', 'b', 'c', 'd', 'e']) expect(p.get(k)).toBeUndefined();
  });

  it('accepts a parameter repeated with the same value and refuses different values', () => {
    expect(PostbackParams.read({ id: ['7', '7'] }).get('id')).toBe('7');
    expect(() => PostbackParams.read({ id: ['7', '8'] }).get('id')).toThrow(expect.objectContaining({ code: 'svc_postback_repeated_param', status: 400 }));
    expect(() => PostbackParams.read({ id: '7' }, { ID: '8' }).get('id')).toThrow(expect.objectContaining({ code: 'svc_postback_repeated_param' }));
    // A repeated parameter nobody reads does not matter.
    expect(PostbackParams.read({ utm: ['a', 'b'], id: '1' }).get('id')).toBe('1');
  });

  it('refuses an enormous value and a malformed JSON body', () => {
    expect(() => PostbackParams.read({ id: 'x'.repeat(5000) })).toThrow(expect.objectContaining({ code: 'svc_postback_invalid_param' }));
    expect(() => PostbackParams.read({}, '{"broken":')).toThrow(expect.objectContaining({ code: 'svc_postback_invalid_body' }));
  });
});

describe('duplicateJsonKey', () => {
  it.each([
    ['{"a":1,"a":2}', 'a'],
    ['{"a":{"b":1,"b":1}}', 'b'],
    ['[{"a":1},{"x":[{"c":1,"c":2}]}]', 'c'],
    ['{"\\u0061":1,"a":2}', 'a'],
    ['{"a":"x","b":{"a":1},"a":3}', 'a'],
  ])('finds the repeated key in %s', (text, key) => {
    expect(duplicateJsonKey(text)).toBe(key);
  });

  it.each([
    '{"a":1,"b":2}',
    '{"a":{"a":1},"b":{"a":1}}',
    '[{"a":1},{"a":2}]',
    '{"a":"\\"a\\":1, {\\"a\\"","b":"a"}',
    '{"a":["a","a"],"b":"}{,"}',
    '"a"',
    '[]',
    '{}',
  ])('finds none in %s', (text) => {
    JSON.parse(text);
    expect(duplicateJsonKey(text)).toBeNull();
  });

  it('refuses a repeated key in a JSON body PostbackParams reads', () => {
    expect(() => PostbackParams.read({}, '{"id":"7","id":"8"}')).toThrow(
      expect.objectContaining({ code: 'svc_postback_repeated_param', data: { param: 'id' } }),
    );
  });
});
