// The pieces of postback authentication on their own: the signature header as docs/api.md
// writes it, the IP allowlist, and the token hash. Expected signatures come from node:crypto.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ipAllowed, parseSignatureHeader, safeEqual, signatureMatches } from '../../../src/services/postbacks/auth.js';
import { normaliseAllowlist, tokenHash } from '../../../src/services/networks/postback-secrets.js';

const hex = (c: string) => c.repeat(64);
const sign = (secret: string, t: number, payload: string) => createHmac('sha256', secret).update(`${t}.${payload}`).digest('hex');

describe('the X-Postback-Signature header', () => {
  it('reads t, every v1 and every test value, lower-casing the hex and ignoring unknown keys and spaces', () => {
    expect(parseSignatureHeader(`t=1700000000, v1=${hex('A')},v1=${hex('b')},test=${hex('c')},v0=zz`)).toEqual({
      t: 1_700_000_000,
      v1: [hex('a'), hex('b')],
      test: [hex('c')],
    });
  });

  it.each([
    ['not a string', 42],
    ['no t', `v1=${hex('a')}`],
    ['no signature', 't=1700000000'],
    ['t twice', `t=1,t=2,v1=${hex('a')}`],
    ['t not digits', `t=-1,v1=${hex('a')}`],
    ['t of 13 digits', `t=1234567890123,v1=${hex('a')}`],
    ['a v1 of 63 hex digits', `t=1,v1=${'a'.repeat(63)}`],
    ['a v1 that is not hex', `t=1,v1=${hex('g')}`],
    ['a part without =', `t=1,v1=${hex('a')},junk`],
    ['a part with an empty key', `t=1,=x,v1=${hex('a')}`],
    ['over 1024 characters', `t=1,${Array.from({ length: 16 }, () => `v1=${hex('a')}`).join(',')}`],
  ])('refuses a header with %s', (_what, value) => {
    expect(parseSignatureHeader(value)).toBeNull();
  });

  it('matches one of the candidates signed over "<t>.<payload>" with the secret, and no other', () => {
    const good = sign('s3cret', 1_700_000_000, 'a=1&b=2');
    expect(signatureMatches('s3cret', 1_700_000_000, 'a=1&b=2', [hex('0'), good])).toBe(good);
    expect(signatureMatches('s3cret', 1_700_000_001, 'a=1&b=2', [good])).toBeNull();
    expect(signatureMatches('s3cret', 1_700_000_000, 'a=1&b=3', [good])).toBeNull();
    expect(signatureMatches('other', 1_700_000_000, 'a=1&b=2', [good])).toBeNull();
    expect(signatureMatches('s3cret', 1_700_000_000, Buffer.from('a=1&b=2'), [good])).toBe(good);
  });

  it('looks at no more than eight candidates', () => {
    const good = sign('s3cret', 1, 'x');
    expect(signatureMatches('s3cret', 1, 'x', [...Array.from({ length: 8 }, () => hex('0')), good])).toBeNull();
    expect(signatureMatches('s3cret', 1, 'x', [...Array.from({ length: 7 }, () => hex('0')), good])).toBe(good);
  });
});

describe('the postback IP allowlist', () => {
  it('normalises addresses and ranges, dropping duplicates', () => {
    expect(normaliseAllowlist([' 203.0.113.7 ', '198.51.100.0/24', '2001:DB8::/32', '203.0.113.7/32'])).toEqual([
      '203.0.113.7/32',
      '198.51.100.0/24',
      '2001:db8::/32',
    ]);
    expect(normaliseAllowlist(Array.from({ length: 100 }, (_, i) => `10.0.0.${i}`))).toHaveLength(100);
  });

  it.each([
    ['not a list', '203.0.113.7'],
    ['101 entries', Array.from({ length: 101 }, (_, i) => `10.0.${Math.floor(i / 200)}.${i % 200}`)],
    ['a host name', ['example.com']],
    ['a prefix past 32 for IPv4', ['203.0.113.0/33']],
    ['a prefix past 128 for IPv6', ['2001:db8::/129']],
    ['two slashes', ['203.0.113.0/24/8']],
    ['a prefix that is not a number', ['203.0.113.0/x']],
    ['a number', [42]],
  ])('refuses %s with svc_invalid_ip_allowlist', (_what, entries) => {
    expect(() => normaliseAllowlist(entries)).toThrow(expect.objectContaining({ code: 'svc_invalid_ip_allowlist', status: 400 }));
  });

  it('names the entry at fault', () => {
    expect(() => normaliseAllowlist(['10.0.0.1', 'nope'])).toThrow(expect.objectContaining({ data: { entry: 'nope' } }));
  });

  it('lets everyone in with an empty list, and only addresses inside a range otherwise', () => {
    expect(ipAllowed([], null)).toBe(true);
    const list = normaliseAllowlist(['198.51.100.0/24', '2001:db8::/32']);
    expect(ipAllowed(list, '198.51.100.255')).toBe(true);
    expect(ipAllowed(list, '198.51.101.0')).toBe(false);
    expect(ipAllowed(list, '::ffff:198.51.100.9')).toBe(true);
    expect(ipAllowed(list, '2001:db8:ffff::1')).toBe(true);
    expect(ipAllowed(list, '2001:db9::1')).toBe(false);
    expect(ipAllowed(list, null)).toBe(false);
    expect(ipAllowed(list, 'unknown')).toBe(false);
  });
});

describe('the stored token hash', () => {
  it('binds a token to its network and compares in constant time', () => {
    const key = Buffer.alloc(32, 7);
    const a = tokenHash(key, 'shopnet', 'tok');
    expect(a).toBe(`h1:${createHmac('sha256', key).update('shopnet\0tok').digest('hex')}`);
    expect(tokenHash(key, 'signnet', 'tok')).not.toBe(a);
    expect(safeEqual(a, tokenHash(key, 'shopnet', 'tok'))).toBe(true);
    expect(safeEqual(a, `${a}0`)).toBe(false);
    expect(safeEqual('', '')).toBe(true);
  });
});
