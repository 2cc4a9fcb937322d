// The pure rules of coupons: what a listed record becomes, what an edit may hold, plain text, and
// the status a coupon has at an instant.
import { describe, expect, it } from 'vitest';
import type { NetworkCoupon } from '../../../src/networks/types.js';
import { endsBeforeStart, fingerprint, toIncoming } from '../../../src/services/coupons/incoming.js';
import { statusAt, shapeCoupon, originalOwners, fieldList, COUPON_FIELDS } from '../../../src/services/coupons/rows.js';
import { plainText } from '../../../src/services/coupons/text.js';
import { editValue, fromColumn, sameValue, toColumn } from '../../../src/services/coupons/values.js';
import { networkCoupon } from '../../helpers/coupons.js';

const incoming = (c: Partial<NetworkCoupon>) => {
  const full = networkCoupon(1, c);
  const key = fingerprint(full);
  return key ? toIncoming(full, key.hash) : { error: 'no key' };
};

describe('a listed coupon', () => {
  it('is refused without a usable id, advertiser or title, or with a code too long to be one', () => {
    expect(fingerprint(networkCoupon('', {}))).toBeNull();
    expect(fingerprint(networkCoupon('x'.repeat(129), {}))).toBeNull();
    expect(fingerprint({ ...networkCoupon(1), id: { nested: true } as never })).toBeNull();
    expect(fingerprint(null as never)).toBeNull();
    expect(toIncoming(null as never, 'h')).toEqual({ error: 'not a coupon' });
    expect(incoming({ advertiser_id: '' })).toEqual({ error: 'no usable advertiser id' });
    expect(incoming({ advertiser_id: 'a'.repeat(129) })).toEqual({ error: 'no usable advertiser id' });
    expect(incoming({ title: '<script>x</script>' })).toEqual({ error: 'no title' });
    expect(incoming({ code: 'C'.repeat(192) })).toEqual({ error: 'code too long' });
  });

  it('takes numeric ids, reads placeholder codes as deals and cuts long text', () => {
    const full = {
      ...networkCoupon(1),
      id: 551 as never,
      advertiser_id: 6000 as never,
      code: 'No Code Needed',
      title: 'T'.repeat(600),
      description: 'd'.repeat(30_000),
    };
    const result = toIncoming(full, fingerprint(full)!.hash);
    if ('error' in result) throw new Error(result.error);
    expect(result.coupon).toMatchObject({ coupon_id: '551', advertiser: '6000' });
    expect(result.coupon.values.code).toBe('');
    expect((result.coupon.values.title as string).length).toBe(500);
    expect((result.coupon.values.title as string).endsWith('…')).toBe(true);
    expect((result.coupon.values.description as string).length).toBe(20_000);
  });

  it('keeps only valid discounts, regions, URLs and dates', () => {
    const result = incoming({
      discount: { type: 'gift' as never, value: '-5', currency: 'euro', text: '<b>5</b> off' },
      regions: ['de', 'XXX', 7 as never, 'de', ' at '],
      url: 'javascript:alert(1)',
      tracking_url: 'https://u:p@track.example/x',
      starts_at: new Date('nope'),
      ends_at: 'tomorrow' as never,
      exclusive: 'yes' as never,
    });
    if ('error' in result) throw new Error(result.error);
    expect(result.coupon.values).toMatchObject({
      discount_type: 'other',
      discount_value: null,
      discount_currency: null,
      discount_text: '5 off',
      regions: ['DE', 'AT'],
      landing_url: null,
      starts_at: null,
      ends_at: null,
      exclusive: false,
    });
    expect(result.coupon.network_url).toBeNull();
    const currencyOk = incoming({ discount: { type: 'amount', value: ' 12.50 ', currency: 'eur', text: null } });
    if ('error' in currencyOk) throw new Error(currencyOk.error);
    expect(currencyOk.coupon.values).toMatchObject({ discount_type: 'amount', discount_value: '12.50', discount_currency: 'EUR' });
  });

  it('stores a raw record that cannot be written as JSON as none', () => {
    const raw: Record<string, unknown> = {};
    raw.self = raw;
    const result = incoming({ raw });
    if ('error' in result) throw new Error(result.error);
    expect(result.coupon.raw).toBeNull();
    expect(incoming({ raw: undefined })).toMatchObject({ coupon: { raw: null } });
  });

  it('changes its hash when a stored field changes, not when only the raw record does', () => {
    const a = fingerprint(networkCoupon(1, { raw: { rating: 1 } }))!;
    expect(fingerprint(networkCoupon(1, { raw: { rating: 2 } }))!.hash).toBe(a.hash);
    expect(fingerprint(networkCoupon(1, { title: 'Other' }))!.hash).not.toBe(a.hash);
    expect(fingerprint(networkCoupon(1, { ends_at: new Date(0) }))!.hash).not.toBe(a.hash);
  });

  it('knows when it ends before it starts', () => {
    expect(endsBeforeStart(networkCoupon(1, { starts_at: new Date(2), ends_at: new Date(1) }))).toBe(true);
    expect(endsBeforeStart(networkCoupon(1, { starts_at: new Date(1), ends_at: null }))).toBe(false);
  });
});

describe('an edit', () => {
  it('normalises each field to its canonical value', () => {
    expect(editValue('code', null)).toBe('');
    expect(editValue('code', ' SAVE<b>10</b> ')).toBe('SAVE10');
    expect(editValue('description', null)).toBeNull();
    expect(editValue('description', '   ')).toBeNull();
    expect(editValue('discount_value', null)).toBeNull();
    expect(editValue('discount_value', ' 7.5 ')).toBe('7.5');
    expect(editValue('discount_currency', null)).toBeNull();
    expect(editValue('discount_currency', 'gbp')).toBe('GBP');
    expect(editValue('discount_type', 'free_shipping')).toBe('free_shipping');
    expect(editValue('landing_url', '')).toBeNull();
    expect(editValue('landing_url', null)).toBeNull();
    expect(editValue('landing_url', 'https://shop.example/a b')).toBe('https://shop.example/a%20b');
    expect(editValue('starts_at', null)).toBeNull();
    expect(editValue('starts_at', new Date('2030-01-01T00:00:00Z'))).toBe('2030-01-01T00:00:00.000Z');
    expect(editValue('ends_at', '2030-01-01T02:00:00+0200')).toBe('2030-01-01T00:00:00.000Z');
    expect(editValue('regions', ['gb', 'GB', 'de'])).toEqual(['GB', 'DE']);
    expect(editValue('exclusive', true)).toBe(true);
  });

  it('refuses values a coupon cannot hold with svc_invalid_coupon naming the field', () => {
    const bad: [string, unknown][] = [
      ['code', 5],
      ['code', 'C'.repeat(192)],
      ['title', 'T'.repeat(501)],
      ['description', 'd'.repeat(20_001)],
      ['terms', 3],
      ['discount_value', 5],
      ['discount_currency', 7],
      ['discount_text', 'x'.repeat(192)],
      ['landing_url', 'ftp://x.example'],
      ['landing_url', 42],
      ['starts_at', 'not a date+00:00'],
      ['ends_at', 12],
      ['regions', 'GB'],
      ['regions', Array(301).fill('GB')],
    ];
    for (const [field, value] of bad) {
      expect(() => editValue(field as never, value), field).toThrow(
        expect.objectContaining({ code: 'svc_invalid_coupon', data: { params: { [field]: expect.any(String) } } }),
      );
    }
  });

  it('reads and writes column values the same way on both dialects', () => {
    expect(fromColumn('exclusive', 1)).toBe(true);
    expect(fromColumn('exclusive', '0')).toBe(false);
    expect(fromColumn('regions', '["GB"]')).toEqual(['GB']);
    expect(fromColumn('regions', '{"a":1}')).toEqual([]);
    expect(fromColumn('regions', 'broken')).toEqual([]);
    expect(fromColumn('code', null)).toBe('');
    expect(fromColumn('discount_type', null)).toBe('other');
    expect(fromColumn('terms', undefined)).toBeNull();
    expect(fromColumn('ends_at', '2030-01-01 00:00:00.000 +00:00')).toBe('2030-01-01T00:00:00.000Z');
    expect(toColumn('ends_at', null)).toBeNull();
    expect(toColumn('exclusive', false)).toBe(0);
    expect(toColumn('regions', null)).toBe('[]');
    expect(sameValue(['A'], ['A'])).toBe(true);
    expect(sameValue(undefined, null)).toBe(true);
  });
});

describe('plain text and status', () => {
  it('removes markup and control characters and keeps paragraphs apart', () => {
    expect(plainText('a\u0000b\r\nc', true)).toBe('ab\nc');
    expect(plainText('<ul><li>one</li><li>two</li></ul>\n\n\n\nend', true)).toBe('one\ntwo\n\nend');
    expect(plainText('  spaced \n out  ', false)).toBe('spaced out');
    expect(plainText('5 &lt; 6 &amp;&amp; <img src=x onerror=alert(1)>ok', false)).toBe('5 < 6 && ok');
  });

  it('computes the status from the dates at an instant', () => {
    const now = new Date('2030-06-01T00:00:00Z');
    expect(statusAt('removed', null, null, now)).toBe('removed');
    expect(statusAt('active', null, new Date('2030-06-01T00:00:00Z'), now)).toBe('expired');
    expect(statusAt('active', new Date('2030-07-01T00:00:00Z'), new Date('2030-06-15T00:00:00Z'), now)).toBe('expired');
    expect(statusAt('expired', new Date('2030-07-01T00:00:00Z'), null, now)).toBe('scheduled');
    expect(statusAt('scheduled', new Date('2030-05-01T00:00:00Z'), new Date('2030-07-01T00:00:00Z'), now)).toBe('active');
  });

  it('reads stored lists and owners defensively', () => {
    expect(fieldList('["title","bogus"]', COUPON_FIELDS)).toEqual(['title']);
    expect(fieldList('{"title":1}', COUPON_FIELDS)).toEqual([]);
    expect(originalOwners('{"title":"network","description":"someone"}')).toEqual({ title: 'network' });
    expect(originalOwners('[1]')).toEqual({});
    const c = shapeCoupon(
      { id: 1, network: 'n', advertiser: 'a', coupon_id: 'c', code: null, title: null, exclusive: true, regions: '{"x":1}', status: 'active' },
      new Date(),
    );
    expect(c).toMatchObject({ type: 'deal', code: '', title: '', exclusive: true, regions: [], discount: { type: 'other' }, original: null });
  });
});
