import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forwardedAddress } from '../../src/http/rest/request-state.js';
import type { Server } from '@hapi/hapi';
import { ManualClock } from '../../src/clock.js';
import { buildContext } from '../../src/context.js';
import { describeEachDialect } from '../helpers/context.js';
import { basic, createActor, NS, testServer, type Actor } from '../helpers/http.js';

const clock = new ManualClock('2026-11-22T10:00:00Z');

describeEachDialect(
  'authentication',
  (use) => {
    let server: Server;
    let admin: Actor;

    beforeAll(async () => {
      server = await testServer(use().ctx);
      admin = await createActor(use().ctx, 'administrator', 'boss');
    });
    afterAll(async () => {
      await server.stop();
    });

    const get = (headers: Record<string, string> = {}, url = `${NS}/logs?per_page=1`) =>
      server.inject({ url, headers: { 'x-forwarded-for': '203.0.113.9', ...headers } });

    it('accepts an application password with or without its spaces, and by email', async () => {
      expect(admin.password).toMatch(/^[A-Za-z0-9]{4}( [A-Za-z0-9]{4}){5}$/);
      expect((await get({ authorization: basic('boss', admin.password) })).statusCode).toBe(200);
      expect((await get({ authorization: basic('boss', admin.password.replace(/ /g, '')) })).statusCode).toBe(200);
      expect((await get({ authorization: basic('boss', admin.password.replace(/ /g, '-')) })).statusCode).toBe(200);
      expect((await get({ authorization: basic('boss@example.com', admin.password) })).statusCode).toBe(200);
    });

    it('answers 401 invalid_username, invalid_email and incorrect_password', async () => {
      const from = { 'x-forwarded-for': '198.51.100.31' };
      const unknown = await get({ authorization: basic('nobody', admin.password), ...from });
      expect(unknown.statusCode).toBe(401);
      expect(unknown.result).toMatchObject({ code: 'invalid_username', data: { status: 401 } });
      expect((await get({ authorization: basic('nobody@example.com', admin.password), ...from })).result).toMatchObject({ code: 'invalid_email' });
      expect((await get({ authorization: basic('boss', 'abcd abcd abcd abcd abcd abcd'), ...from })).result).toMatchObject({ code: 'incorrect_password' });
    });

    it('answers 401 rest_invalid_authorization to a Basic header that is not base64 login:password', async () => {
      for (const header of ['Basic !!!notbase64', `Basic ${Buffer.from('nocolon').toString('base64')}`, 'Basic ']) {
        const res = await get({ authorization: header, 'x-forwarded-for': '198.51.100.32' });
        expect(res.statusCode).toBe(401);
        expect(res.result).toMatchObject({ code: 'rest_invalid_authorization' });
      }
    });

    it('stops accepting a revoked password on the next request, even from the cache', async () => {
      const { ctx } = use();
      const user = await ctx.users.requireByLogin('boss');
      const extra = await ctx.appPasswords.create(user, 'to revoke');
      const from = { 'x-forwarded-for': '198.51.100.50' };
      expect((await get({ authorization: basic('boss', extra.password), ...from })).statusCode).toBe(200);
      // Revoke through SQL as another process would (the cache of this process is not told).
      await ctx.db.execute('DELETE FROM app_passwords WHERE uuid = ?', [extra.uuid]);
      await ctx.settings.bumpAuthRevision();
      const res = await get({ authorization: basic('boss', extra.password), ...from });
      expect(res.statusCode).toBe(401);
      expect(res.result).toMatchObject({ code: 'incorrect_password' });
    });

    it('sees a revoke, a role change and a disable made by another process on the next request, while other requests read pages', async () => {
      const { ctx, config } = use();
      // Another process on the same database (a CLI command, a second daemon): its own connections.
      const other = buildContext(config, { logStream: null });
      try {
        const user = await ctx.users.create({ login: 'changing', email: 'changing@example.com', role: 'administrator' });
        const first = await ctx.appPasswords.create(user, 'first');
        const second = await ctx.appPasswords.create(user, 'second');
        const from = { 'x-forwarded-for': '198.51.100.51' };
        // Pages in flight beside each check, so the revision is read while the readers are busy.
        const asAdmin = () => get({ authorization: basic('boss', admin.password), ...from }, `${NS}/logs?per_page=100`);
        const as = (password: string) => get({ authorization: basic('changing', password), ...from });
        const check = async (password: string) => (await Promise.all([as(password), asAdmin(), asAdmin()]))[0];
        expect((await check(first.password)).statusCode).toBe(200);
        expect((await check(second.password)).statusCode).toBe(200);

        await other.appPasswords.revoke(user, first.uuid);
        expect((await check(first.password)).result).toMatchObject({ code: 'incorrect_password' });
        expect((await check(second.password)).statusCode).toBe(200);

        await other.users.update(user.id, { role: 'member' });
        expect((await check(second.password)).result).toMatchObject({ code: 'rest_forbidden' });
        await other.users.update(user.id, { role: 'administrator' });
        expect((await check(second.password)).statusCode).toBe(200);

        await other.users.setStatus(user.id, 'disabled');
        expect((await check(second.password)).result).toMatchObject({ code: 'svc_user_disabled' });
      } finally {
        await other.close();
      }
    });

    it('refuses names that are empty or already used by the same user', async () => {
      const { ctx } = use();
      const user = await ctx.users.requireByLogin('boss');
      await expect(ctx.appPasswords.create(user, '   ')).rejects.toMatchObject({ code: 'application_password_empty_name', status: 400 });
      await ctx.appPasswords.create(user, 'Laptop');
      await expect(ctx.appPasswords.create(user, 'laptop')).rejects.toMatchObject({ code: 'application_password_duplicate_name', status: 409 });
    });

    it('takes a name of exactly 191 characters and refuses 192 with application_password_invalid_name', async () => {
      const { ctx } = use();
      const user = await ctx.users.requireByLogin('boss');
      await expect(ctx.appPasswords.create(user, 'n'.repeat(192))).rejects.toMatchObject({ code: 'application_password_invalid_name', status: 400 });
      await expect(ctx.appPasswords.create(user, 'n'.repeat(191))).resolves.toMatchObject({ password: expect.any(String) });
    });

    it('records last_used and last_ip at most once a day', async () => {
      const { ctx } = use();
      const user = await createActor(ctx, 'administrator', 'usage');
      await get({ authorization: user.authorization, 'x-forwarded-for': '198.51.100.1' });
      await ctx.appPasswords.drain();
      const first = (await ctx.appPasswords.list(await ctx.users.requireByLogin('usage')))[0];
      expect(first.last_used).toBe(clock.now().toISOString());
      clock.advance(3_600_000);
      await get({ authorization: user.authorization });
      await ctx.appPasswords.drain();
      expect((await ctx.appPasswords.list(await ctx.users.requireByLogin('usage')))[0].last_used).toBe(first.last_used);
      clock.advance(86_400_000);
      await get({ authorization: user.authorization });
      await ctx.appPasswords.drain();
      expect((await ctx.appPasswords.list(await ctx.users.requireByLogin('usage')))[0].last_used).toBe(clock.now().toISOString());
    });

    it('refuses a disabled user at once', async () => {
      const { ctx } = use();
      const gone = await createActor(ctx, 'administrator', 'leaver');
      expect((await get({ authorization: gone.authorization })).statusCode).toBe(200);
      await ctx.users.setStatus(gone.id, 'disabled');
      const res = await get({ authorization: gone.authorization });
      expect(res.statusCode).toBe(401);
      expect(res.result).toMatchObject({ code: 'svc_user_disabled' });
    });

    it('throttles repeated failures per address with 429 svc_too_many_attempts and Retry-After, for that address only', async () => {
      for (let i = 0; i < 5; i++) await get({ authorization: basic(`ghost${i}`, 'x'), 'x-forwarded-for': '192.0.2.77' });
      const res = await get({ authorization: basic('ghost9', 'x'), 'x-forwarded-for': '192.0.2.77' });
      expect(res.statusCode).toBe(429);
      expect(res.result).toMatchObject({ code: 'svc_too_many_attempts', data: { retry_after: 600 } });
      expect(res.headers['retry-after']).toBe('600');
      expect((await get({ authorization: admin.authorization, 'x-forwarded-for': '192.0.2.78' })).statusCode).toBe(200);
      clock.advance(601_000);
      expect((await get({ authorization: basic('ghost9', 'x'), 'x-forwarded-for': '192.0.2.77' })).statusCode).toBe(401);
    });

    it('logs authentication failures without the secret', async () => {
      const { ctx } = use();
      await get({ authorization: basic('boss', 'secret-guess-1234') });
      await ctx.logger.flush();
      const { items } = await ctx.logger.list({ source: 'auth', search: 'failed', page: 1, per_page: 100 });
      expect(items.length).toBeGreaterThan(0);
      expect(JSON.stringify(items)).not.toContain('secret-guess-1234');
      expect(JSON.stringify(items)).not.toContain(admin.password);
    });

    it('logs in with a cookie session and the REST nonce', async () => {
      const { ctx } = use();
      clock.set('2026-12-01T00:01:00Z'); // just after a tick boundary, so the ages below are exact
      await ctx.users.create({ login: 'cookie', email: 'cookie@example.com', role: 'administrator', password: 'long enough pw' });
      const login = await server.inject({ method: 'POST', url: '/login', payload: { login: 'cookie', password: 'long enough pw' } });
      expect(login.statusCode).toBe(200);
      const setCookie = ([] as string[]).concat(login.headers['set-cookie'] as string[])[0];
      expect(setCookie).toMatch(/^cashtrack_session=[\w-]+;/);
      expect(setCookie).toMatch(/HttpOnly/);
      expect(setCookie).toMatch(/SameSite=Lax/);
      expect(setCookie).not.toMatch(/Secure/);
      const { nonce, user } = login.result as { nonce: string; user: { login: string } };
      expect(user.login).toBe('cookie');
      expect(nonce).toMatch(/^[0-9a-f]{10}$/);
      const cookie = setCookie.split(';')[0];

      const noNonce = await get({ cookie });
      expect(noNonce.statusCode).toBe(401);
      expect(noNonce.result).toMatchObject({ code: 'rest_forbidden' });

      const wrong = await get({ cookie, 'x-wp-nonce': '0123456789' });
      expect(wrong.statusCode).toBe(403);
      expect(wrong.result).toMatchObject({ code: 'rest_cookie_invalid_nonce' });

      const ok = await get({ cookie, 'x-wp-nonce': nonce });
      expect(ok.statusCode).toBe(200);
      expect(ok.headers['x-wp-nonce']).toMatch(/^[0-9a-f]{10}$/);
      expect((await get({ cookie }, `${NS}/logs?per_page=1&_wpnonce=${nonce}`)).statusCode).toBe(200);

      const fresh = await server.inject({ url: '/rest-nonce', headers: { cookie } });
      expect(fresh.statusCode).toBe(200);
      expect(fresh.headers['content-type']).toMatch(/^text\/plain/);
      expect(String(fresh.payload)).toMatch(/^[0-9a-f]{10}$/);

      // Valid for the current and previous 12-hour tick, not after.
      clock.advance(13 * 3_600_000);
      expect((await get({ cookie, 'x-wp-nonce': nonce })).statusCode).toBe(200);
      clock.advance(12 * 3_600_000);
      expect((await get({ cookie, 'x-wp-nonce': nonce })).statusCode).toBe(403);

      const again = await server.inject({
        method: 'POST',
        url: '/login',
        payload: 'login=cookie&password=long+enough+pw',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(again.statusCode).toBe(200);
      const cookie2 = ([] as string[]).concat(again.headers['set-cookie'] as string[])[0].split(';')[0];
      const nonce2 = (again.result as { nonce: string }).nonce;
      const out = await server.inject({ method: 'POST', url: '/logout', headers: { cookie: cookie2, 'x-wp-nonce': nonce2 } });
      expect(out.result).toMatchObject({ logged_out: true });
      const after = await get({ cookie: cookie2, 'x-wp-nonce': nonce2 });
      expect(after.statusCode).toBe(401);
      expect((await server.inject({ url: '/rest-nonce', headers: { cookie: cookie2 } })).result).toMatchObject({ code: 'rest_not_logged_in' });
    });

    it('marks the cookie Secure behind https and clears it the same way on logout', async () => {
      // Its own address too: failures of other tests from the default one count against it.
      const https = { 'x-forwarded-proto': 'https', 'x-forwarded-for': '192.0.2.160' };
      // A user of its own: this test must not depend on another one having made one.
      await use().ctx.users.create({ login: 'securecookie', email: 'securecookie@example.com', role: 'administrator', password: 'long enough pw' });
      const login = await server.inject({ method: 'POST', url: '/login', payload: { login: 'securecookie', password: 'long enough pw' }, headers: https });
      const set = ([] as string[]).concat(login.headers['set-cookie'] as string[])[0];
      expect(set).toMatch(/; Secure/);
      const nonce = (login.result as { nonce: string }).nonce;
      const out = await server.inject({ method: 'POST', url: '/logout', headers: { ...https, cookie: set.split(';')[0], 'x-wp-nonce': nonce } });
      expect(([] as string[]).concat(out.headers['set-cookie'] as string[])[0]).toMatch(/^cashtrack_session=; Max-Age=0;.*Secure/);
      const plain = await server.inject({ method: 'POST', url: '/logout', headers: { cookie: set.split(';')[0] } });
      expect(([] as string[]).concat(plain.headers['set-cookie'] as string[])[0]).not.toMatch(/Secure/);
    });

    it('takes the client address from the rightmost X-Forwarded-For entry (the one our proxy added)', async () => {
      const { ctx } = use();
      await get({ authorization: basic('boss', 'wrong-for-address-test'), 'x-forwarded-for': '6.6.6.6, 192.0.2.99' });
      await ctx.logger.flush();
      const { items } = await ctx.logger.list({ source: 'auth', search: 'failed', page: 1, per_page: 1 });
      expect(items[0].context).toMatchObject({ ip: '192.0.2.99' });
    });

    it('treats an expired session as anonymous', async () => {
      await use().ctx.users.create({ login: 'expiring', email: 'expiring@example.com', role: 'administrator', password: 'long enough pw' });
      const login = await server.inject({ method: 'POST', url: '/login', payload: { login: 'expiring', password: 'long enough pw' } });
      const cookie = ([] as string[]).concat(login.headers['set-cookie'] as string[])[0].split(';')[0];
      const nonce = (login.result as { nonce: string }).nonce;
      clock.advance(49 * 3_600_000);
      const res = await get({ cookie, 'x-wp-nonce': nonce });
      expect(res.statusCode).toBe(401);
      expect(res.result).toMatchObject({ code: 'rest_forbidden' });
    });

    it('refuses a wrong login password with one code whether or not the login exists', async () => {
      await use().ctx.users.create({ login: 'warncookie', email: 'warncookie@example.com', role: 'administrator', password: 'long enough pw' });
      const bad = await server.inject({
        method: 'POST',
        url: '/login',
        payload: { login: 'warncookie', password: 'nope nope' },
        headers: { 'x-forwarded-for': '192.0.2.150' },
      });
      const none = await server.inject({
        method: 'POST',
        url: '/login',
        payload: { login: 'no-such-user', password: 'nope nope' },
        headers: { 'x-forwarded-for': '192.0.2.151' },
      });
      expect(bad.statusCode).toBe(401);
      expect(bad.result).toMatchObject({ code: 'svc_invalid_credentials' });
      expect(none.result).toMatchObject({ code: 'svc_invalid_credentials' });
      const missing = await server.inject({ method: 'POST', url: '/login', payload: { login: 'cookie' } });
      expect(missing.result).toMatchObject({ code: 'rest_missing_callback_param', data: { params: ['password'] } });
    });
  },
  { 'server.trust_proxy': true, 'auth.throttle.failures_before_delay': 3, 'auth.throttle.max_failures_per_address': 5, 'auth.throttle.window_seconds': 600 },
  { clock },
);

const throttleClock = new ManualClock('2026-11-23T10:00:00Z');

describeEachDialect(
  'authentication throttle, login bounds and cross-site requests',
  (use, dialect) => {
    let server: Server;
    let next = 0;
    // A fresh client address per attempt, unless a test says otherwise.
    const fresh = () => `198.18.${Math.floor(++next / 250)}.${next % 250}`;

    beforeAll(async () => {
      server = await testServer(use().ctx);
    });
    afterAll(async () => {
      await server.stop();
    });

    const get = (headers: Record<string, string>) => server.inject({ url: `${NS}/logs?per_page=1`, headers: { 'x-forwarded-for': fresh(), ...headers } });
    const login = (name: string, password: string, headers: Record<string, string> = {}) =>
      server.inject({ method: 'POST', url: '/login', payload: { login: name, password }, headers: { 'x-forwarded-for': fresh(), ...headers } });
    const cookieOf = (res: { headers: Record<string, unknown> }) => ([] as string[]).concat(res.headers['set-cookie'] as string[])[0].split(';')[0];
    const createUser = (name: string) =>
      use().ctx.users.create({ login: name, email: `${name}@example.com`, role: 'administrator', password: 'the right password' });
    /** Fails `count` logins for `name`, each from a new address, waiting out any delay in between. */
    const failLogins = async (name: string, count: number) => {
      for (let failed = 0; failed < count; ) {
        const res = await login(name, 'a wrong password');
        if (res.statusCode === 429) throttleClock.advance(Number(res.headers['retry-after']) * 1000);
        else expect(res.statusCode).toBe(401), failed++;
      }
    };

    it('never lets failures from ten addresses stop the right application password', async () => {
      const victim = await createActor(use().ctx, 'administrator', 'integrator');
      for (let i = 0; i < 10; i++) {
        expect(
          (await get({ authorization: basic('integrator', 'wrong wrong wrong wrong wrong wron'), 'x-forwarded-for': `192.0.2.${i}` })).result,
        ).toMatchObject({ code: 'incorrect_password' });
      }
      expect((await get({ authorization: victim.authorization })).statusCode).toBe(200);
      expect((await get({ authorization: victim.authorization, 'x-forwarded-for': '192.0.2.0' })).statusCode).toBe(200);
    });

    it('lets the right login password in after at most the current delay, whatever ten other addresses did', async () => {
      await createUser('ann');
      await failLogins('ann', 10);
      const refused = await login('ann', 'the right password');
      expect(refused.statusCode).toBe(429);
      expect(refused.result).toMatchObject({ code: 'svc_too_many_attempts' });
      const wait = Number(refused.headers['retry-after']);
      expect(wait).toBeGreaterThan(0);
      expect(wait).toBeLessThanOrEqual(60);
      throttleClock.advance(wait * 1000);
      expect((await login('ann', 'the right password')).statusCode).toBe(200);
      // The success forgot the failures: the next typo is not delayed.
      expect((await login('ann', 'a typo')).statusCode).toBe(401);
      expect((await login('ann', 'the right password')).statusCode).toBe(200);
    });

    it('grows the delay of one user after failures_before_delay failures: 1 s, 2 s, 4 s ... up to max_delay_seconds', async () => {
      await createUser('bea');
      await failLogins('bea', 3);
      for (const delay of [1, 2, 4, 8, 16, 32, 60, 60]) {
        expect((await login('bea', 'a wrong password')).statusCode).toBe(401);
        const refused = await login('bea', 'the right password');
        expect(refused.statusCode).toBe(429);
        expect(refused.headers['retry-after']).toBe(String(delay));
        expect(refused.result).toMatchObject({ data: { retry_after: delay } });
        // Refused attempts are not counted: the delay does not move.
        expect((await login('bea', 'a wrong password')).headers['retry-after']).toBe(String(delay));
        throttleClock.advance(delay * 1000);
      }
      expect((await login('bea', 'the right password')).statusCode).toBe(200);
    });

    it('counts the login, its case variants and the email of one user as one counter', async () => {
      await createUser('anna');
      const variants = ['anna', 'ANNA', 'anna@example.com', 'Anna@Example.COM', ...(dialect === 'mysql' ? ['ÁNNA', 'ánna@example.com'] : [])];
      // Three failures pass (failures_before_delay); the fourth sets a delay for every variant.
      for (const name of variants.slice(0, 4)) expect((await login(name, 'a wrong password')).statusCode).toBe(401);
      for (const name of variants) {
        const res = await login(name, 'the right password');
        expect(res.statusCode, name).toBe(429);
        expect(res.headers['retry-after']).toBe('1');
      }
      throttleClock.advance(1000);
      expect((await login(variants[variants.length - 1], 'the right password')).statusCode).toBe(200);
    });

    it('counts failures from one IPv6 /64 together, and an IPv4-mapped address as its IPv4 address', async () => {
      for (let i = 1; i <= 5; i++)
        expect((await get({ authorization: basic(`nobody${i}`, 'x'), 'x-forwarded-for': `2001:db8:77:12:${i}::1` })).statusCode).toBe(401);
      expect((await get({ authorization: basic('nobody', 'x'), 'x-forwarded-for': '2001:db8:77:12:ffff:ffff:ffff:fffe' })).statusCode).toBe(429);
      expect((await get({ authorization: basic('nobody', 'x'), 'x-forwarded-for': '2001:db8:77:13::1' })).statusCode).toBe(401);
      for (let i = 1; i <= 5; i++) await get({ authorization: basic(`nobody${i}`, 'x'), 'x-forwarded-for': '::ffff:192.0.2.50' });
      expect((await get({ authorization: basic('nobody', 'x'), 'x-forwarded-for': '192.0.2.50' })).statusCode).toBe(429);
      throttleClock.advance(601_000);
    });

    it('answers a burst of logins beyond the bound with 429 svc_login_busy at once, and never runs more password checks together', async () => {
      const { ctx } = use();
      const original = ctx.users.checkPassword.bind(ctx.users);
      let running = 0;
      let peak = 0;
      let checks = 0;
      ctx.users.checkPassword = async (password, stored) => {
        checks++;
        peak = Math.max(peak, ++running);
        try {
          // Hold the check open so that a burst really overlaps.
          await new Promise((r) => setTimeout(r, 25));
          return await original(password, stored);
        } finally {
          running--;
        }
      };
      try {
        const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => login(`stranger${i}`, 'guess', { 'x-forwarded-for': `203.0.113.${i}` })));
        const busy = burst.filter((r) => r.statusCode === 429);
        expect(peak).toBeLessThanOrEqual(2); // auth.password_checks.max_concurrent
        expect(burst.filter((r) => r.statusCode === 401)).toHaveLength(checks);
        expect(busy.length).toBeGreaterThanOrEqual(20 - 2 * 2);
        for (const r of busy) {
          expect(r.result).toMatchObject({ code: 'svc_login_busy', data: { retry_after: 1 } });
          expect(r.headers['retry-after']).toBe('1');
        }

        // One address gets one check at a time (auth.password_checks.per_address).
        checks = 0;
        peak = 0;
        const same = await Promise.all(Array.from({ length: 5 }, () => login('stranger', 'guess', { 'x-forwarded-for': '2001:db8:5::1' })));
        expect(peak).toBe(1);
        expect(same.filter((r) => r.statusCode === 401)).toHaveLength(checks);
        expect(same.filter((r) => (r.result as { code: string }).code === 'svc_login_busy').length).toBeGreaterThanOrEqual(3);
      } finally {
        ctx.users.checkPassword = original;
      }
    });

    it('refuses a login or logout posted by another site with 403 svc_cross_site_request', async () => {
      const { ctx } = use();
      await createUser('cora');
      for (const headers of [
        { origin: 'https://evil.example' },
        { origin: 'null' },
        { 'sec-fetch-site': 'cross-site' },
        { 'sec-fetch-site': 'same-site' },
      ] as Record<string, string>[]) {
        const res = await login('cora', 'the right password', headers);
        expect(res.statusCode).toBe(403);
        expect(res.result).toMatchObject({ code: 'svc_cross_site_request' });
        expect(res.headers['set-cookie']).toBeUndefined();
      }
      // Origin wins over a Sec-Fetch-Site that claims the same origin.
      expect((await login('cora', 'the right password', { origin: 'https://evil.example', 'sec-fetch-site': 'same-origin' })).statusCode).toBe(403);
      const ok = await login('cora', 'the right password');
      const cookie = cookieOf(ok);
      const nonce = (ok.result as { nonce: string }).nonce;
      const forged = await server.inject({ method: 'POST', url: '/logout', headers: { cookie, 'x-wp-nonce': nonce, origin: 'https://evil.example' } });
      expect(forged.statusCode).toBe(403);
      expect(forged.result).toMatchObject({ code: 'svc_cross_site_request' });
      expect((await get({ cookie, 'x-wp-nonce': nonce })).statusCode).toBe(200);
      await ctx.logger.flush();
      expect((await ctx.logger.list({ source: 'auth', search: 'Cross-site', page: 1, per_page: 1 })).total).toBeGreaterThan(0);
    });

    it('accepts a login from its own origin, a listed CORS origin, a same-origin fetch and a client that sends neither header', async () => {
      await createUser('dora');
      const own = { host: 'admin.example', origin: 'http://admin.example' };
      for (const headers of [own, { origin: 'https://console.example' }, { 'sec-fetch-site': 'same-origin' }, { 'sec-fetch-site': 'none' }, {}] as Record<
        string,
        string
      >[]) {
        expect((await login('dora', 'the right password', headers)).statusCode).toBe(200);
      }
    });

    it('refuses a logout by cookie without its nonce with 403 rest_cookie_invalid_nonce and keeps the session', async () => {
      await createUser('edna');
      const res = await login('edna', 'the right password');
      const cookie = cookieOf(res);
      const nonce = (res.result as { nonce: string }).nonce;
      for (const headers of [{}, { 'x-wp-nonce': '0123456789' }]) {
        const out = await server.inject({ method: 'POST', url: '/logout', headers: { cookie, ...headers } });
        expect(out.statusCode).toBe(403);
        expect(out.result).toMatchObject({ code: 'rest_cookie_invalid_nonce' });
        expect(out.headers['set-cookie']).toBeUndefined();
      }
      expect((await get({ cookie, 'x-wp-nonce': nonce })).statusCode).toBe(200);
      // The nonce in a form body, as a plain HTML form would send it.
      const out = await server.inject({
        method: 'POST',
        url: '/logout',
        payload: `_wpnonce=${nonce}`,
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(out.result).toMatchObject({ logged_out: true });
      expect((await get({ cookie, 'x-wp-nonce': nonce })).statusCode).toBe(401);
      // A dead session needs no nonce: its cookie is only cleared.
      const again = await server.inject({ method: 'POST', url: '/logout', headers: { cookie } });
      expect(again.result).toMatchObject({ logged_out: false });
      expect(([] as string[]).concat(again.headers['set-cookie'] as string[])[0]).toMatch(/^cashtrack_session=; Max-Age=0/);
    });
  },
  {
    'server.trust_proxy': true,
    'server.cors_origins': ['https://console.example'],
    'auth.throttle.failures_before_delay': 3,
    'auth.throttle.max_delay_seconds': 60,
    'auth.throttle.max_failures_per_address': 5,
    'auth.throttle.window_seconds': 600,
  },
  { clock: throttleClock },
);

describe('X-Forwarded-For entries', () => {
  it('reads addresses bare, in brackets or with a port, and nothing else', () => {
    expect(['203.0.113.9', ' 203.0.113.9:51000', '2001:db8::1', '[2001:db8::1]', '[2001:db8::1]:443', '::ffff:203.0.113.9'].map(forwardedAddress)).toEqual([
      '203.0.113.9',
      '203.0.113.9',
      '2001:db8::1',
      '2001:db8::1',
      '2001:db8::1',
      '::ffff:203.0.113.9',
    ]);
    for (const junk of ['', 'unknown', 'proxy.example', '999.1.1.1', '203.0.113.9:http', `fe80::1%${'x'.repeat(200)}`, '[fe80::1%eth0]:443', '_hidden'])
      expect(forwardedAddress(junk), junk).toBeNull();
  });
});

describeEachDialect(
  'client addresses behind a trusted proxy',
  (use) => {
    let server: Server;
    beforeAll(async () => {
      server = await testServer(use().ctx);
    });
    afterAll(() => server.stop());
    const wrong = (forwarded: string) =>
      server.inject({
        url: `${NS}/logs?per_page=1`,
        headers: { authorization: basic('nobody', 'abcd abcd abcd abcd abcd abcd'), 'x-forwarded-for': forwarded },
      });

    it("counts X-Forwarded-For values that are not addresses under the proxy's own address, and logs that once", async () => {
      // Each made-up value would otherwise be a fresh counter: unlimited guesses from one client.
      const values = ['garbage-1', 'unknown', '203.0.113.5, not-an-ip', '<script>', '999.1.1.1'];
      for (const value of values) expect((await wrong(value)).statusCode).toBe(401);
      const refused = await wrong('garbage-6');
      expect(refused.statusCode).toBe(429);
      expect(refused.result).toMatchObject({ code: 'svc_too_many_attempts' });
      // The socket's address (the proxy's) is the one counted: it is refused whatever it forwards now.
      expect((await server.inject({ url: `${NS}/logs?per_page=1`, headers: { authorization: basic('nobody', 'x') } })).statusCode).toBe(429);
      // A real address, bare, with a port or bracketed, is still the client's own counter.
      for (const forwarded of ['198.51.100.61', '198.51.100.62:51000', '[2001:db8::63]:443']) expect((await wrong(forwarded)).statusCode).toBe(401);
      await use().ctx.logger.flush();
      const logged = await use().ctx.logger.list({ source: 'http', search: 'X-Forwarded-For', page: 1, per_page: 10 });
      expect(logged.total).toBe(1);
      expect(logged.items[0]).toMatchObject({ level: 'warning', context: { value: 'garbage-1' } });
    });
  },
  { 'server.trust_proxy': true, 'auth.throttle.max_failures_per_address': 5, 'auth.throttle.window_seconds': 600 },
);
