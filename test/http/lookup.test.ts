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

  it('pages the matches at most 20 a page, with X-WP-Total and X-WP-TotalPages', async () => {
    const get = (query: string) => server.inject({ url: `${NS}/lookup/users?${query}`, headers: { authorization: admin.authorization } });
    const first = await get('search=member');
    expect(first.headers['x-wp-total']).toBe('30');
    expect(first.headers['x-wp-totalpages']).toBe('2');
    expect(String(first.headers.link)).toContain('rel="next"');
    const second = await get('search=member&page=2');
    const labels = [...(first.result as { label: string }[]), ...(second.result as { label: string }[])].map((r) => r.label);
    expect(labels).toHaveLength(30);
    expect(new Set(labels).size).toBe(30);
    const small = await get('search=member&per_page=7&page=5');
    expect((small.result as { label: string }[]).map((r) => r.label)).toEqual(labels.slice(28, 30));
    expect(small.headers['x-wp-totalpages']).toBe('5');
    const tooMany = await get('search=member&per_page=21');
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.result).toMatchObject({ code: 'rest_invalid_param', data: { details: { per_page: { code: 'rest_out_of_bounds' } } } });
    expect((await get('search=member&page=3')).result).toMatchObject({ code: 'rest_invalid_page_number', data: { total: 30, total_pages: 2 } });
  });

  it('names the users of include (a picker showing the user it holds), still matching the search', async () => {
    const get = (query: string) => server.inject({ url: `${NS}/lookup/users?${query}`, headers: { authorization: admin.authorization } });
    const all = (await get('search=member2&per_page=2')).result as { id: number; label: string }[];
    const [a, b] = all.map((u) => u.id);
    const both = await get(`include=${b},${a}`);
    expect(both.statusCode).toBe(200);
    expect(both.headers['x-wp-total']).toBe('2');
    expect(both.result).toEqual(all);
    expect(((await get(`include[]=${a}&include[]=${b}&search=member20`)).result as { label: string }[]).map((u) => u.label)).toEqual([
      'Member 20 (member20, m20@example.com)',
    ]);
    expect((await get('include=888888')).result).toEqual([]);
    expect((await get('include=0')).result).toMatchObject({ code: 'rest_invalid_param' });
    expect((await get(`include=${Array.from({ length: 21 }, (_, i) => i + 1).join(',')}`)).result).toMatchObject({ code: 'rest_invalid_param' });
  });

  it('refuses an overlong search', async () => {
    const res = await server.inject({ url: `${NS}/lookup/users?search=${'a'.repeat(300)}`, headers: { authorization: admin.authorization } });
    expect(res.result).toMatchObject({ code: 'rest_invalid_param', data: { details: { search: { code: 'rest_too_long' } } } });
  });
});
