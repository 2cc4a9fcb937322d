// Users and application passwords over REST: the list with its views row, one user, create and
// change (the last administrator stays one; a new login password revokes sessions), and a user's
// application passwords (shown once, revoked at once, yours with `me`, others' with manage_options).
import { expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/context.js';
import { adminClient, basic, createActor, NS } from '../helpers/http.js';

describeEachDialect('users over REST', (use) => {
  const api = adminClient(use);
  const body = (res: { payload: string }) => JSON.parse(res.payload);
  const as = (authorization: string, method: string, url: string, payload?: object) =>
    api.server.inject({ method, url: `${NS}${url}`, payload, headers: { authorization } });

  it('creates a user (201 with Location), never answering a password or its hash', async () => {
    const res = await api.post('/users', { login: 'carol', email: 'carol@example.com', display_name: 'Carol C', password: 'a long enough one' });
    expect(res.statusCode).toBe(201);
    const carol = body(res);
    expect(carol).toEqual({
      id: expect.any(Number),
      login: 'carol',
      email: 'carol@example.com',
      display_name: 'Carol C',
      role: 'member',
      status: 'active',
      created_at: expect.any(String),
    });
    expect(String(res.headers.location)).toMatch(new RegExp(`${NS}/users/${carol.id}$`));
    expect(res.payload).not.toMatch(/scrypt|password/);
    const again = await api.get(`/users/${carol.id}`);
    expect(body(again)).toEqual(carol);
  });

  it('refuses a taken login or email, a bad email and an unknown user in words', async () => {
    await api.post('/users', { login: 'dave', email: 'dave@example.com' });
    const dup = await api.post('/users', { login: 'DAVE', email: 'other@example.com' });
    expect([dup.statusCode, body(dup).code, body(dup).data.field]).toEqual([409, 'svc_user_exists', 'login']);
    const bad = await api.post('/users', { login: 'erin', email: 'not an email' });
    expect([bad.statusCode, body(bad).code]).toEqual([400, 'rest_invalid_param']);
    const missing = await api.get('/users/999999');
    expect([missing.statusCode, body(missing).code]).toEqual([404, 'svc_user_not_found']);
    const missingUpdate = await api.post('/users/999999', { display_name: 'Nobody' });
    expect([missingUpdate.statusCode, body(missingUpdate).code]).toEqual([404, 'svc_user_not_found']);
    const empty = await api.post('/users/1', {});
    expect([empty.statusCode, body(empty).code]).toEqual([400, 'rest_invalid_param']);
  });

  it('lists users paged and sorted, searches a prefix, filters by role, and counts per role', async () => {
    for (const n of ['lst-a', 'lst-b', 'lst-c'])
      await api.post('/users', { login: n, email: `${n}@list.test`, role: n === 'lst-b' ? 'administrator' : 'member' });
    const page = await api.get('/users?search=lst-&per_page=2&orderby=login&order=desc');
    expect(page.headers['x-wp-total']).toBe('3');
    expect(page.headers['x-wp-totalpages']).toBe('2');
    expect(body(page).map((u: { login: string }) => u.login)).toEqual(['lst-c', 'lst-b']);
    const admins = await api.get('/users?search=lst-&role=administrator');
    expect(body(admins).map((u: { login: string }) => u.login)).toEqual(['lst-b']);
    const others = await api.get('/users?search=lst-&role_exclude=administrator');
    expect(body(others).map((u: { login: string }) => u.login)).toEqual(['lst-a', 'lst-c']);
    expect(body(await api.get('/users/counts?search=lst-'))).toEqual({ total: 3, statuses: { administrator: 1, member: 2 } });
    const bad = await api.get('/users?orderby=password_hash');
    expect([bad.statusCode, body(bad).code]).toEqual([400, 'rest_invalid_param']);
  });

  it('changes display name, email and role; refuses a taken email', async () => {
    const u = body(await api.post('/users', { login: 'frank', email: 'frank@example.com' }));
    const res = await api.post(`/users/${u.id}`, { display_name: 'Frank F', email: 'frank@new.example', role: 'administrator' });
    expect(res.statusCode).toBe(200);
    expect(body(res)).toMatchObject({ id: u.id, login: 'frank', display_name: 'Frank F', email: 'frank@new.example', role: 'administrator' });
    const taken = await api.post(`/users/${u.id}`, { email: 'carol@example.com' });
    expect([taken.statusCode, body(taken).code]).toEqual([409, 'svc_user_exists']);
  });

  it('never makes the last active administrator a member, and a demoted one loses the namespace at once', async () => {
    const other = await createActor(use().ctx, 'administrator');
    expect((await as(other.authorization, 'GET', '/users/me')).statusCode).toBe(200);
    const admins = body(await api.get('/users?role=administrator&per_page=100')) as { id: number }[];
    for (const a of admins.filter((a) => a.id !== api.admin.id)) expect((await api.post(`/users/${a.id}`, { role: 'member' })).statusCode).toBe(200);
    // The demoted administrator's cached credential is read again: 403 now.
    expect((await as(other.authorization, 'GET', '/users/me')).statusCode).toBe(403);
    const last = await api.post(`/users/${api.admin.id}`, { role: 'member' });
    expect([last.statusCode, body(last).code]).toEqual([409, 'svc_last_administrator']);
    expect(body(last).message).toMatch(/last active administrator/);
    expect(body(await api.get(`/users/${api.admin.id}`)).role).toBe('administrator');
  });

  it('sets a login password as the CLI does: the old one stops working and every session is revoked', async () => {
    const u = body(await api.post('/users', { login: 'gina', email: 'gina@example.com', role: 'administrator', password: 'first password' }));
    const login = (password: string) => api.server.inject({ method: 'POST', url: '/login', payload: { login: 'gina', password } });
    const first = await login('first password');
    expect(first.statusCode).toBe(200);
    const cookie = String(first.headers['set-cookie']).split(';')[0];
    const { nonce } = body(first);
    const me = () => api.server.inject({ url: `${NS}/users/me`, headers: { cookie, 'x-wp-nonce': nonce } });
    expect((await me()).statusCode).toBe(200);
    const res = await api.post(`/users/${u.id}`, { password: 'second password' });
    expect(res.statusCode).toBe(200);
    expect(res.payload).not.toMatch(/password|scrypt/);
    expect((await me()).statusCode).not.toBe(200);
    expect((await login('first password')).statusCode).toBe(401);
    expect((await login('second password')).statusCode).toBe(200);
    const short = await api.post(`/users/${u.id}`, { password: 'short' });
    expect([short.statusCode, body(short).code]).toEqual([400, 'rest_invalid_param']);
  });
});

describeEachDialect('application passwords over REST', (use) => {
  const api = adminClient(use);
  const body = (res: { payload: string }) => JSON.parse(res.payload);
  const as = (authorization: string, method: string, url: string, payload?: object) =>
    api.server.inject({ method, url: `${NS}${url}`, payload, headers: { authorization } });

  it('shows a new password once; the list never has it; revoking it refuses its next request (401)', async () => {
    const member = body(await api.post('/users', { login: 'hana', email: 'hana@example.com' }));
    const res = await api.post(`/users/${member.id}/application-passwords`, { name: 'Reporting script' });
    expect(res.statusCode).toBe(201);
    const item = body(res);
    expect(item).toEqual({
      uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Reporting script',
      password: expect.stringMatching(/^([A-Za-z0-9]{4} ){5}[A-Za-z0-9]{4}$/),
      created: expect.any(String),
      last_used: null,
      last_ip: null,
      user_id: member.id,
    });
    expect(String(res.headers.location)).toMatch(new RegExp(`${NS}/users/${member.id}/application-passwords/${item.uuid}$`));
    const listed = body(await api.get(`/users/${member.id}/application-passwords`));
    expect(listed).toEqual([{ uuid: item.uuid, name: 'Reporting script', created: item.created, last_used: null, last_ip: null }]);
    expect(body(await api.get(`/users/${member.id}/application-passwords/${item.uuid}`))).toEqual(listed[0]);

    // The member uses it for their own list (`me`), then it is revoked: the next request is 401.
    const auth = basic('hana', item.password);
    expect((await as(auth, 'GET', '/users/me/application-passwords')).statusCode).toBe(200);
    const del = await api.server.inject({
      method: 'DELETE',
      url: `${NS}/users/${member.id}/application-passwords/${item.uuid}`,
      headers: { authorization: api.admin.authorization },
    });
    expect(del.statusCode).toBe(200);
    expect(body(del)).toEqual({ deleted: true, previous: { ...listed[0], last_used: expect.any(String), last_ip: expect.any(String) } });
    const after = await as(auth, 'GET', '/users/me/application-passwords');
    expect([after.statusCode, body(after).code]).toEqual([401, 'incorrect_password']);
  });

  it('answers an unknown user, an unknown uuid, an empty or too long name and a duplicate in words', async () => {
    const member = body(await api.post('/users', { login: 'ivan', email: 'ivan@example.com' }));
    const path = `/users/${member.id}/application-passwords`;
    const unknownUser = await api.post('/users/999999/application-passwords', { name: 'x' });
    expect([unknownUser.statusCode, body(unknownUser).code]).toEqual([404, 'svc_user_not_found']);
    const unknownUuid = await api.server.inject({
      method: 'DELETE',
      url: `${NS}${path}/6f1c1b84-9e43-4a43-9a43-1b2c3d4e5f60`,
      headers: { authorization: api.admin.authorization },
    });
    expect([unknownUuid.statusCode, body(unknownUuid).code]).toEqual([404, 'rest_application_password_not_found']);
    const notUuid = await api.get(`${path}/not-a-uuid`);
    expect([notUuid.statusCode, body(notUuid).code]).toEqual([400, 'rest_invalid_param']);
    const empty = await api.post(path, { name: '   ' });
    expect([empty.statusCode, body(empty).code]).toEqual([400, 'application_password_empty_name']);
    const long = await api.post(path, { name: 'n'.repeat(192) });
    expect([long.statusCode, body(long).code]).toEqual([400, 'application_password_invalid_name']);
    const missing = await api.post(path, {});
    expect([missing.statusCode, body(missing).code]).toEqual([400, 'rest_missing_callback_param']);
    expect((await api.post(path, { name: 'CI' })).statusCode).toBe(201);
    const dup = await api.post(path, { name: 'ci' });
    expect([dup.statusCode, body(dup).code]).toEqual([409, 'application_password_duplicate_name']);
  });

  it("lets a member manage their own and nobody else's; anonymous callers get 401", async () => {
    const member = await createActor(use().ctx, 'member');
    const other = body(await api.post('/users', { login: 'jules', email: 'jules@example.com' }));
    const own = await as(member.authorization, 'POST', `/users/${member.id}/application-passwords`, { name: 'Phone' });
    expect(own.statusCode).toBe(201);
    expect((await as(member.authorization, 'GET', '/users/me/application-passwords')).statusCode).toBe(200);
    const theirs = await as(member.authorization, 'GET', `/users/${other.id}/application-passwords`);
    expect([theirs.statusCode, body(theirs).code]).toEqual([403, 'rest_forbidden']);
    // No probing: an id that does not exist is refused the same way.
    expect((await as(member.authorization, 'GET', '/users/999999/application-passwords')).statusCode).toBe(403);
    expect((await as(member.authorization, 'GET', '/users')).statusCode).toBe(403);
    const anon = await api.server.inject(`${NS}/users/me/application-passwords`);
    expect([anon.statusCode, body(anon).code]).toEqual([401, 'rest_forbidden']);
    const revoke = await as(member.authorization, 'DELETE', `/users/me/application-passwords/${body(own).uuid}`);
    expect(revoke.statusCode).toBe(200);
  });
});
