import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock.js';
import { addressKey } from '../../../src/services/auth/throttle.js';
import { describeEachDialect } from '../../helpers/context.js';

describe('throttle address keys', () => {
  it('keeps an IPv4 address as it is, also when written as IPv4-mapped IPv6', () => {
    expect(addressKey('192.0.2.7')).toBe('192.0.2.7');
    expect(addressKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(addressKey('::FFFF:c000:207')).toBe('192.0.2.7');
    expect(addressKey('0:0:0:0:0:ffff:192.0.2.7')).toBe('192.0.2.7');
  });

  it('keys an IPv6 address by its /64, however it is written', () => {
    const key = '2001:db8:1:2::/64';
    for (const ip of [
      '2001:db8:1:2::1',
      '2001:0db8:0001:0002:ffff:ffff:ffff:ffff',
      '2001:DB8:1:2:a:b:c:d',
      '[2001:db8:1:2::9]',
      '2001:db8:1:2::1%eth0',
      '2001:db8:1:2:0:0:192.0.2.1',
    ]) {
      expect(addressKey(ip), ip).toBe(key);
    }
    expect(addressKey('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
  });

  it('keeps anything else (a unix socket, garbage) as one bounded key', () => {
    expect(addressKey(null)).toBe('unknown');
    expect(addressKey('')).toBe('unknown');
    expect(addressKey('x'.repeat(100))).toHaveLength(64);
  });
});

const clock = new ManualClock('2026-11-25T00:00:00Z');

describeEachDialect(
  'the authentication throttle',
  (use) => {
    it('refuses an address past its limit until its window ends, and takes back what a success gave', async () => {
      const throttle = use().ctx.authThrottle;
      for (let i = 0; i < 3; i++) await throttle.claimAddress('192.0.2.1');
      await expect(throttle.claimAddress('192.0.2.1')).rejects.toMatchObject({
        code: 'svc_too_many_attempts',
        status: 429,
        data: { retry_after: 60 },
        headers: { 'Retry-After': '60' },
      });
      await throttle.releaseAddress('192.0.2.1');
      await throttle.claimAddress('192.0.2.1');
      clock.advance(59_000);
      await expect(throttle.claimAddress('192.0.2.1')).rejects.toMatchObject({ data: { retry_after: 1 } });
      clock.advance(1_000);
      await throttle.claimAddress('192.0.2.1');
      // A failure counted without a claim (a wrong nonce) is counted even past the limit.
      await throttle.claimAddress('192.0.2.1', false);
      await throttle.claimAddress('192.0.2.1', false);
      await throttle.claimAddress('192.0.2.1', false);
      await expect(throttle.claimAddress('192.0.2.1')).rejects.toMatchObject({ status: 429 });
    });

    it('delays a user more after each failure past the free ones, and forgets them after a quiet window or a success', async () => {
      const throttle = use().ctx.authThrottle;
      expect([1, 2, 3, 4, 5, 6, 7].map((n) => throttle.delayAfter(n))).toEqual([0, 1, 2, 4, 8, 10, 10]);
      await throttle.claimUser(7);
      for (const delay of [1, 2, 4, 8, 10, 10]) {
        await throttle.claimUser(7);
        await expect(throttle.claimUser(7)).rejects.toMatchObject({ data: { retry_after: delay } });
        clock.advance(delay * 1000);
      }
      clock.advance(70_000); // window (60 s) + max delay (10 s) without an attempt
      await throttle.claimUser(7);
      await throttle.claimUser(7);
      await expect(throttle.claimUser(7)).rejects.toMatchObject({ data: { retry_after: 1 } });
      await throttle.clearUser(7);
      await throttle.claimUser(7);
      await throttle.claimUser(7);
    });

    it('prunes counters whose window is over, and only those', async () => {
      const { ctx } = use();
      await ctx.authThrottle.claimAddress('192.0.2.200');
      clock.advance(61_000);
      await ctx.authThrottle.claimAddress('192.0.2.201');
      await ctx.authThrottle.prune();
      const keys = (await ctx.db.select<{ throttle_key: string }>("SELECT throttle_key FROM auth_throttle WHERE kind = 'address' ORDER BY throttle_key")).map(
        (r) => r.throttle_key,
      );
      expect(keys).toContain('192.0.2.201');
      expect(keys).not.toContain('192.0.2.200');
    });
  },
  {
    'auth.throttle.max_failures_per_address': 3,
    'auth.throttle.window_seconds': 60,
    'auth.throttle.failures_before_delay': 1,
    'auth.throttle.max_delay_seconds': 10,
  },
  { clock },
);
