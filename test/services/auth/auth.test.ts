import { expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock.js';
import { buildContext } from '../../../src/context.js';
import { ServiceError } from '../../../src/errors.js';
import { describeEachDialect } from '../../helpers/context.js';
import { basic, createActor } from '../../helpers/http.js';

const clock = new ManualClock('2026-11-24T08:00:00Z');

/** The status each settled attempt ended with (200 for a success). */
async function outcomes(attempts: Promise<unknown>[]): Promise<number[]> {
  return (await Promise.allSettled(attempts)).map((r) => (r.status === 'fulfilled' ? 200 : r.reason instanceof ServiceError ? r.reason.status : 500));
}

const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

describeEachDialect(
  'the authentication service under concurrent and flooding attempts',
  (use) => {
    /** Counts the login-form password checks that actually run. */
    const countChecks = () => {
      const { ctx } = use();
      const original = ctx.users.checkPassword.bind(ctx.users);
      const seen = { checks: 0, restore: () => void (ctx.users.checkPassword = original) };
      ctx.users.checkPassword = async (password, stored) => {
        seen.checks++;
        return original(password, stored);
      };
      return seen;
    };

    it('counts each attempt before checking it: of 100 concurrent wrong application passwords from one address, only the limit is looked up', async () => {
      const { ctx } = use();
      await createActor(ctx, 'administrator', 'racer');
      const statuses = await outcomes(
        Array.from({ length: 100 }, (_, i) =>
          ctx.auth.authenticateBasic(basic('racer', `wrong wrong wrong wrong wrong ${String(i).padStart(4, '0')}`), '203.0.113.5'),
        ),
      );
      expect(count(statuses, 401)).toBe(10); // auth.throttle.max_failures_per_address
      expect(count(statuses, 429)).toBe(90);
    });

    it("lets a client's first burst of 40 concurrent requests with its right application password through, however low the address limit", async () => {
      const { ctx } = use();
      const actor = await createActor(ctx, 'administrator', 'burster');
      const statuses = await outcomes(Array.from({ length: 40 }, () => ctx.auth.authenticateBasic(actor.authorization, '203.0.113.7')));
      expect(count(statuses, 200)).toBe(40);
    });

    it('checks a burst of one repeated wrong application password once, counting one failure', async () => {
      const { ctx } = use();
      await createActor(ctx, 'administrator', 'repeater');
      const header = basic('repeater', 'wrong wrong wrong wrong wrong wron');
      const statuses = await outcomes(Array.from({ length: 100 }, () => ctx.auth.authenticateBasic(header, '203.0.113.8')));
      expect(count(statuses, 401)).toBe(100);
      // Nine more distinct failures are still allowed to this address (limit 10): one was counted.
      const more = await outcomes(Array.from({ length: 10 }, (_, i) => ctx.auth.authenticateBasic(basic('repeater', `other wrong ${i}`), '203.0.113.8')));
      expect(count(more, 401)).toBe(9);
      expect(count(more, 429)).toBe(1);
    });

    it('counts each attempt before checking it: of 100 concurrent wrong login passwords for one user, at most failures_before_delay + 1 are checked', async () => {
      const { ctx } = use();
      await ctx.users.create({ login: 'sprinter', email: 'sprinter@example.com', password: 'the right password' });
      const seen = countChecks();
      try {
        const statuses = await outcomes(Array.from({ length: 100 }, (_, i) => ctx.auth.login('sprinter', `wrong ${i}`, `203.0.113.${100 + (i % 50)}`, null)));
        expect(seen.checks).toBeLessThanOrEqual(4);
        expect(count(statuses, 401)).toBe(seen.checks);
        expect(count(statuses, 429)).toBe(100 - seen.checks);
        // Unknown logins are counted per address only, but before the check all the same.
        seen.checks = 0;
        const unknown = await outcomes(Array.from({ length: 100 }, (_, i) => ctx.auth.login(`ghost${i}`, 'guess', '203.0.113.6', null)));
        expect(seen.checks).toBe(10);
        expect(count(unknown, 401)).toBe(10);
      } finally {
        seen.restore();
      }
    });

    it('keeps a delayed user delayed and a refused /64 refused through 20,500 failures from rotating addresses', async () => {
      const { ctx } = use();
      await ctx.users.create({ login: 'target', email: 'target@example.com', password: 'the right password' });
      // Fail until the delay reaches its cap (waiting out each delay on the way).
      for (let i = 0; ; i++) {
        const err = await ctx.auth.login('target', 'a wrong password', `198.51.100.${i}`, null).catch((e: ServiceError) => e);
        expect(err).toBeInstanceOf(ServiceError);
        if ((err as ServiceError).status !== 429) continue;
        if ((err as ServiceError).data.retry_after === 60) break;
        clock.advance(Number((err as ServiceError).data.retry_after) * 1000);
      }

      // 20,500 cheap failures with distinct logins from distinct /128s of one /64: the /64 is
      // refused after its 10, and nothing else moves.
      const prefix = '2001:db8:dead:beef';
      for (let i = 0; i < 20_500; i += 500) {
        const batch = await outcomes(
          Array.from({ length: 500 }, (_, k) => ctx.auth.authenticateBasic(basic(`ghost${i + k}`, 'x'), `${prefix}:${(i + k).toString(16)}:1:2:3`)),
        );
        expect(count(batch, 401) + count(batch, 429)).toBe(500);
      }
      // And 20,500 counters of other /64s, as many distinct networks would leave them (written in
      // bulk: through the service, each is one more failure like the 50 that follow, 12 s more).
      const rows = Array.from({ length: 20_500 }, (_, i) => [
        'address',
        `2001:db8:${(i >> 8).toString(16)}:${(i & 255).toString(16)}::/64`,
        1,
        null,
        new Date(clock.now().getTime() + 600_000),
      ]);
      await ctx.db.transaction((t) => ctx.db.insertMany('auth_throttle', ['kind', 'throttle_key', 'failures', 'next_allowed_at', 'reset_at'], rows, t));
      for (let i = 0; i < 50; i++)
        await expect(ctx.auth.authenticateBasic(basic(`ghost-net-${i}`, 'x'), `2001:db8:${i.toString(16)}:ff::1`)).rejects.toMatchObject({ status: 401 });

      await expect(ctx.auth.login('target', 'the right password', '192.0.2.222', null)).rejects.toMatchObject({ status: 429, code: 'svc_too_many_attempts' });
      await expect(ctx.auth.authenticateBasic(basic('ghost-last', 'x'), `${prefix}:ffff::9`)).rejects.toMatchObject({ status: 429 });
      clock.advance(60_000);
      const session = await ctx.auth.login('target', 'the right password', '192.0.2.222', null);
      expect(session.session.user.login).toBe('target');
      clock.advance(601_000);
    }, 120_000);

    it('counts failures on one database together, whichever daemon saw them', async () => {
      const { ctx, config } = use();
      const other = buildContext(config, { logStream: null, clock });
      try {
        await ctx.users.create({ login: 'roamer', email: 'roamer@example.com', password: 'the right password' });
        for (let i = 0; i < 4; i++) {
          const daemon = i % 2 ? other : ctx;
          await expect(daemon.auth.login('roamer', 'a wrong password', `192.0.2.${10 + i}`, null)).rejects.toMatchObject({ status: 401 });
        }
        await expect(other.auth.login('roamer', 'the right password', '192.0.2.20', null)).rejects.toMatchObject({ status: 429, data: { retry_after: 1 } });
        await expect(ctx.auth.login('roamer', 'the right password', '192.0.2.20', null)).rejects.toMatchObject({ status: 429 });
        for (let i = 0; i < 10; i++) await other.auth.authenticateBasic(basic(`ghost${i}`, 'x'), '192.0.2.99').catch(() => {});
        await expect(ctx.auth.authenticateBasic(basic('ghost', 'x'), '192.0.2.99')).rejects.toMatchObject({ status: 429 });
        clock.advance(601_000);
      } finally {
        await other.close();
      }
    });

    it('upgrades a password hash made at a lower cost on the next successful login, and only then', async () => {
      const { ctx } = use();
      const { hashPassword } = await import('../../../src/services/users/passwords.js');
      const user = await ctx.users.create({ login: 'oldtimer', email: 'oldtimer@example.com' });
      const weak = await hashPassword('the right password', 8);
      await ctx.db.execute('UPDATE users SET password_hash = ? WHERE id = ?', [weak, user.id]);
      await expect(ctx.auth.login('oldtimer', 'a wrong password', '192.0.2.30', null)).rejects.toMatchObject({ status: 401 });
      expect((await ctx.users.credentialsOf('oldtimer'))!.passwordHash).toBe(weak);
      await ctx.auth.login('oldtimer', 'the right password', '192.0.2.30', null);
      const upgraded = (await ctx.users.credentialsOf('oldtimer'))!.passwordHash!;
      expect(upgraded).toMatch(/^\$scrypt\$N=1024,r=8,p=1\$/); // auth.scrypt_log_n in tests
      expect(await ctx.users.checkPassword('the right password', upgraded)).toBe(true);
      await ctx.auth.login('oldtimer', 'the right password', '192.0.2.30', null);
      expect((await ctx.users.credentialsOf('oldtimer'))!.passwordHash).toBe(upgraded);
    });
  },
  {
    'auth.throttle.max_failures_per_address': 10,
    'auth.throttle.failures_before_delay': 3,
    'auth.throttle.max_delay_seconds': 60,
    'auth.throttle.window_seconds': 600,
    'auth.password_checks.max_concurrent': 64,
    'auth.password_checks.per_address': 64,
  },
  { clock },
);
