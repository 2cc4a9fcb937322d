// GET /users/me: who the request is authenticated as, by application password or cookie and nonce.
import { expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/context.js';
import { adminClient, NS } from '../helpers/http.js';

describeEachDialect('GET /users/me', (use) => {
  const api = adminClient(use);

  it("answers the caller's own user, without its password hash or anything else", async () => {
    const res = await api.get('/users/me');
    expect(res.statusCode).toBe(200);
    const body = JSON.parse(res.payload);
    expect(body).toEqual({
      id: api.admin.id,
      login: api.admin.login,
      email: `${api.admin.login}@example.com`,
      display_name: expect.any(String),
      role: 'administrator',
    });
  });

  it('answers the cookie session its user once signed in, and 401 without credentials', async () => {
    const login = await api.server.inject({ method: 'POST', url: '/login', payload: { login: api.admin.login, password: 'correct horse battery' } });
    expect(login.statusCode).toBe(200);
    const cookie = String(login.headers['set-cookie']).split(';')[0];
    const { nonce } = JSON.parse(login.payload);
    const me = await api.server.inject({ url: `${NS}/users/me`, headers: { cookie, 'x-wp-nonce': nonce } });
    expect(JSON.parse(me.payload)).toMatchObject({ id: api.admin.id, role: 'administrator' });
    expect((await api.server.inject(`${NS}/users/me`)).statusCode).toBe(401);
  });
});
