import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Server } from '@hapi/hapi';
import { ManualClock } from '../../src/clock.js';
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

    const get = (headers: Record<string, string> = {}, url = `${NS}/logs?per_page=1`) => server.inject({ url, headers: { 'x-forwarded-for': '203.0.113.9', ...headers } });

    it('accepts an application password with or without its spaces, and by email', async () => {
      expect(admin.password).toMatch(/^[A-Za-z0-9]{4}( [A-Za-z0-9]{4}){5}$/);
      expect((await get({ authorization: basic('boss', admin.password) })).statusCode).toBe(200);
      expect((await get({ authorization: basic('boss', admin.password.replace(/ /g, '')) })).statusCode).toBe(200);
      expect((await get({ authorization: basic('boss', admin.password.replace(/ /g, '-')) })).statusCode).toBe(200);
      expect((await get({ authorization: basic('boss@example.com', admin.password) })).statusCode).toBe(200);
    });

    it('answers 401 invalid_username, invalid_email and incorrect_password', async () => {
      const unknown = await get({ authorization: basic('nobody', admin.password) });
      expect(unknown.statusCode).toBe(401);
      expect(unknown.result).toMatchObject({ code: 'invalid_username', data: { status: 401 } });
      expect((await get({ authorization: basic('nobody@example.com', admin.password) })).result).toMatchObject({ code: 'invalid_email' });
      expect((await get({ authorization: basic('boss', 'abcd abcd abcd abcd abcd abcd') })).result).toMatchObject({ code: 'incorrect_password' });
    });

    it('answers 401 rest_invalid_authorization to a Basic header that is not base64 login:password', async () => {
      for (const header of ['Basic !!!notbase64', 'Basic ' + Buffer.from('nocolon').toString('base64'), 'Basic ']) {
        const res = await get({ authorization: header });
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

    it('refuses names that are empty or already used by the same user', async () => {
      const { ctx } = use();
      const user = await ctx.users.requireByLogin('boss');
      await expect(ctx.appPasswords.create(user, '   ')).rejects.toMatchObject({ code: 'application_password_empty_name', status: 400 });
      await ctx.appPasswords.create(user, 'Laptop');
      await expect(ctx.appPasswords.create(user, 'laptop')).rejects.toMatchObject({ code: 'application_password_duplicate_name', status: 409 });
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

    it('throttles repeated failures per login with 429 svc_too_many_attempts and Retry-After', async () => {
      const victim = await createActor(use().ctx, 'administrator', 'victim');
      for (let i = 0; i < 3; i++) await get({ authorization: basic('victim', 'wrong'), 'x-forwarded-for': `192.0.2.${i}` });
      const res = await get({ authorization: victim.authorization, 'x-forwarded-for': '192.0.2.200' });
      expect(res.statusCode).toBe(429);
      expect(res.result).toMatchObject({ code: 'svc_too_many_attempts' });
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      clock.advance(601_000);
      expect((await get({ authorization: victim.authorization })).statusCode).toBe(200);
    });

    it('throttles repeated failures per address', async () => {
      for (let i = 0; i < 5; i++) await get({ authorization: basic(`ghost${i}`, 'x'), 'x-forwarded-for': '192.0.2.77' });
      const res = await get({ authorization: admin.authorization, 'x-forwarded-for': '192.0.2.77' });
      expect(res.statusCode).toBe(429);
      expect((await get({ authorization: admin.authorization, 'x-forwarded-for': '192.0.2.78' })).statusCode).toBe(200);
      clock.advance(601_000);
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

      const again = await server.inject({ method: 'POST', url: '/login', payload: 'login=cookie&password=long+enough+pw', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(again.statusCode).toBe(200);
      const cookie2 = ([] as string[]).concat(again.headers['set-cookie'] as string[])[0].split(';')[0];
      const nonce2 = (again.result as { nonce: string }).nonce;
      const out = await server.inject({ method: 'POST', url: '/logout', headers: { cookie: cookie2 } });
      expect(out.result).toMatchObject({ logged_out: true });
      const after = await get({ cookie: cookie2, 'x-wp-nonce': nonce2 });
      expect(after.statusCode).toBe(401);
      expect((await server.inject({ url: '/rest-nonce', headers: { cookie: cookie2 } })).result).toMatchObject({ code: 'rest_not_logged_in' });
    });

    it('marks the cookie Secure behind https and clears it the same way on logout', async () => {
      const https = { 'x-forwarded-proto': 'https' };
      const login = await server.inject({ method: 'POST', url: '/login', payload: { login: 'cookie', password: 'long enough pw' }, headers: https });
      const set = ([] as string[]).concat(login.headers['set-cookie'] as string[])[0];
      expect(set).toMatch(/; Secure/);
      const out = await server.inject({ method: 'POST', url: '/logout', headers: { ...https, cookie: set.split(';')[0] } });
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
      const bad = await server.inject({ method: 'POST', url: '/login', payload: { login: 'cookie', password: 'nope nope' }, headers: { 'x-forwarded-for': '192.0.2.150' } });
      const none = await server.inject({ method: 'POST', url: '/login', payload: { login: 'no-such-user', password: 'nope nope' }, headers: { 'x-forwarded-for': '192.0.2.151' } });
      expect(bad.statusCode).toBe(401);
      expect(bad.result).toMatchObject({ code: 'svc_invalid_credentials' });
      expect(none.result).toMatchObject({ code: 'svc_invalid_credentials' });
      const missing = await server.inject({ method: 'POST', url: '/login', payload: { login: 'cookie' } });
      expect(missing.result).toMatchObject({ code: 'rest_missing_callback_param', data: { params: ['password'] } });
    });
  },
  { 'server.trust_proxy': true, 'auth.throttle.max_failures_per_login': 3, 'auth.throttle.max_failures_per_address': 5, 'auth.throttle.window_seconds': 600 },
  { clock },
);
