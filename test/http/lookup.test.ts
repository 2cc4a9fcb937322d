import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Server } from '@hapi/hapi';
import { describeEachDialect } from '../helpers/context.js';
import { createActor, NS, testServer, type Actor } from '../helpers/http.js';

describeEachDialect('GET /lookup/users', (use) => {
  let server: Server;
  let admin: Actor;
  beforeAll(async () => {
    server = await testServer(use().ctx);
    admin = await createActor(use().ctx, 'administrator', 'root-admin');
    for (let i = 0; i < 30; i++) await use().ctx.users.create({ login: `member${i}`, email: `m${i}@example.com`, display_name: `Member ${i}` });
  });
  afterAll(() => server.stop());

  it('returns at most 20 {id, label} matches by prefix', async () => {
    const res = await server.inject({ url: `${NS}/lookup/users?search=mem`, headers: { authorization: admin.authorization } });
    expect(res.statusCode).toBe(200);
    const body = res.result as { id: number; label: string }[];
    expect(body).toHaveLength(20);
    expect(body[0]).toEqual({ id: expect.any(Number), label: 'Member 0 (member0, m0@example.com)' });
  });

  it('matches emails and display names', async () => {
    const res = await server.inject({ url: `${NS}/lookup/users?search=m29@`, headers: { authorization: admin.authorization } });
    expect((res.result as { label: string }[]).map((r) => r.label)).toEqual(['Member 29 (member29, m29@example.com)']);
  });

  it('treats SQL and wildcards as plain text', async () => {
    for (const search of ["' OR 1=1 --", '%', '_', '!']) {
      const res = await server.inject({ url: `${NS}/lookup/users?search=${encodeURIComponent(search)}`, headers: { authorization: admin.authorization } });
      expect(res.statusCode).toBe(200);
      expect(res.result).toEqual([]);
    }
  });

  it('refuses an overlong search', async () => {
    const res = await server.inject({ url: `${NS}/lookup/users?search=${'a'.repeat(300)}`, headers: { authorization: admin.authorization } });
    expect(res.result).toMatchObject({ code: 'rest_invalid_param', data: { details: { search: { code: 'rest_too_long' } } } });
  });
});
