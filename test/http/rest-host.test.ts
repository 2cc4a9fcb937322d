import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Server } from '@hapi/hapi';
import { describeEachDialect } from '../helpers/context.js';
import { basic, createActor, NS, testServer, type Actor } from '../helpers/http.js';

describeEachDialect('REST host conventions', (use) => {
  let server: Server;
  let admin: Actor;
  let member: Actor;

  beforeAll(async () => {
    const { ctx } = use();
    server = await testServer(use().ctx);
    admin = await createActor(ctx, 'administrator');
    member = await createActor(ctx, 'member');
    for (let i = 0; i < 25; i++) ctx.logger.info('test', `entry ${i}`, { i });
    await ctx.logger.flush();
  });
  afterAll(async () => {
    await server.stop();
  });

  it('answers 401 rest_forbidden without credentials', async () => {
    const res = await server.inject({ url: `${NS}/logs` });
    expect(res.statusCode).toBe(401);
    expect(res.result).toMatchObject({ code: 'rest_forbidden', data: { status: 401 } });
  });

  it('answers 403 rest_forbidden to a member', async () => {
    const res = await server.inject({ url: `${NS}/logs`, headers: { authorization: member.authorization } });
    expect(res.statusCode).toBe(403);
    expect(res.result).toMatchObject({ code: 'rest_forbidden', data: { status: 403 } });
  });

  it('serves a page with X-WP-Total, X-WP-TotalPages and Link next keeping the query', async () => {
    const res = await server.inject({ url: `${NS}/logs?per_page=10&source=test`, headers: { authorization: admin.authorization } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-wp-total']).toBe('25');
    expect(res.headers['x-wp-totalpages']).toBe('3');
    const links = ([] as string[]).concat(res.headers.link as string | string[]);
    expect(links.some((l) => /<[^>]+\?per_page=10&source=test&page=2>; rel="next"/.test(l))).toBe(true);
    expect(links.some((l) => l.includes('rel="https://api.w.org/"'))).toBe(true);
    const body = res.result as { message: string }[];
    expect(body).toHaveLength(10);
    expect(body[0].message).toBe('entry 24');
  });

  it('gives prev and next on a middle page', async () => {
    const res = await server.inject({ url: `${NS}/logs?per_page=10&source=test&page=2`, headers: { authorization: admin.authorization } });
    const links = ([] as string[]).concat(res.headers.link as string | string[]).join(',');
    expect(links).toMatch(/page=1>; rel="prev"/);
    expect(links).toMatch(/page=3>; rel="next"/);
  });

  it('answers 400 rest_invalid_page_number past the end, with total and total_pages', async () => {
    const res = await server.inject({ url: `${NS}/logs?per_page=10&source=test&page=4`, headers: { authorization: admin.authorization } });
    expect(res.statusCode).toBe(400);
    expect(res.result).toEqual({ code: 'rest_invalid_page_number', message: expect.any(String), data: { status: 400, total: 25, total_pages: 3 } });
  });

  it('serves the last page exactly, one item short of a full page', async () => {
    const res = await server.inject({ url: `${NS}/logs?per_page=12&source=test&page=3`, headers: { authorization: admin.authorization } });
    expect(res.statusCode).toBe(200);
    expect(res.result).toHaveLength(1);
    expect(res.headers['x-wp-totalpages']).toBe('3');
    const past = await server.inject({ url: `${NS}/logs?per_page=12&source=test&page=4`, headers: { authorization: admin.authorization } });
    expect(past.result).toMatchObject({ code: 'rest_invalid_page_number', data: { total: 25, total_pages: 3 } });
  });

  it('answers an empty list with zero totals when nothing matches, on any page', async () => {
    const res = await server.inject({ url: `${NS}/logs?source=nothing&page=3`, headers: { authorization: admin.authorization } });
    expect(res.statusCode).toBe(200);
    expect(res.result).toEqual([]);
    expect(res.headers['x-wp-total']).toBe('0');
    expect(res.headers['x-wp-totalpages']).toBe('0');
  });

  // Detail codes as docs/errors.md lists them (its examples column names these very requests).
  it.each([
    ['per_page=0', 'per_page', 'rest_out_of_bounds'],
    ['per_page=101', 'per_page', 'rest_out_of_bounds'],
    ['per_page=abc', 'per_page', 'rest_invalid_type'],
    ['page=0', 'page', 'rest_out_of_bounds'],
    ['page=99999999999999999999999', 'page', 'rest_out_of_bounds'],
    ['level=loud', 'level', 'rest_not_in_enum'],
    ['after=yesterday', 'after', 'rest_invalid_date'],
    ['search=', 'search', 'rest_too_short'],
    ['unknown=1', 'unknown', 'rest_additional_properties_forbidden'],
  ])('answers 400 rest_invalid_param for %s with detail code %s', async (qs, param, detail) => {
    const res = await server.inject({ url: `${NS}/logs?${qs}`, headers: { authorization: admin.authorization } });
    expect(res.statusCode).toBe(400);
    const body = res.result as { code: string; data: { params: Record<string, string>; details: Record<string, { code: string; data: unknown }> } };
    expect(body.code).toBe('rest_invalid_param');
    expect(Object.keys(body.data.params)).toEqual([param]);
    expect(body.data.details).toEqual({ [param]: { code: detail, message: expect.any(String), data: detail === 'rest_invalid_type' ? { param } : null } });
  });

  it('accepts per_page at exactly 1 and 100, the documented bounds', async () => {
    for (const n of [1, 100]) {
      const res = await server.inject({ url: `${NS}/logs?per_page=${n}&source=test`, headers: { authorization: admin.authorization } });
      expect(res.statusCode).toBe(200);
      expect(res.result).toHaveLength(Math.min(n, 25));
    }
  });

  it('answers 400 rest_invalid_method_override for an override that is not a method, by header or by _method', async () => {
    for (const req of [
      { url: `${NS}/logs?per_page=1`, headers: { authorization: admin.authorization, 'x-http-method-override': 'TRACE' } },
      { url: `${NS}/logs?per_page=1&_method=CONNECT`, headers: { authorization: admin.authorization } },
    ]) {
      const res = await server.inject({ method: 'POST', ...req });
      expect(res.statusCode).toBe(400);
      expect(res.result).toEqual({ code: 'rest_invalid_method_override', message: expect.any(String), data: { status: 400 } });
    }
  });

  it('answers 400 rest_callback_disabled to a _jsonp request', async () => {
    const res = await server.inject({ url: `${NS}/logs?per_page=1&_jsonp=cb`, headers: { authorization: admin.authorization } });
    expect(res.statusCode).toBe(400);
    expect(res.result).toEqual({ code: 'rest_callback_disabled', message: expect.any(String), data: { status: 400 } });
  });

  it('validates before checking permission, as the host platform does', async () => {
    const res = await server.inject({ url: `${NS}/logs?per_page=500` });
    expect(res.statusCode).toBe(400);
  });

  it('answers 404 rest_no_route for an unknown route and for a wrong method', async () => {
    for (const req of [
      { method: 'GET', url: `${NS}/nope` },
      { method: 'DELETE', url: `${NS}/logs` },
      { method: 'GET', url: '/elsewhere' },
    ]) {
      const res = await server.inject({ ...req, headers: { authorization: admin.authorization } });
      expect(res.statusCode).toBe(404);
      expect(res.result).toMatchObject({ code: 'rest_no_route', data: { status: 404 } });
    }
  });

  it('checks credentials before routing: a bad password on an unknown route is 401', async () => {
    const res = await server.inject({ url: `${NS}/nope`, headers: { authorization: basic(admin.login, 'wrong') } });
    expect(res.statusCode).toBe(401);
    expect(res.result).toMatchObject({ code: 'incorrect_password' });
  });

  it('ignores a trailing slash and letter case in the path', async () => {
    const res = await server.inject({ url: `${NS}/Logs/?per_page=1`, headers: { authorization: admin.authorization } });
    expect(res.statusCode).toBe(200);
  });

  it('serves the ?rest_route= form', async () => {
    const res = await server.inject({ url: `/?rest_route=/svc/v1/logs&per_page=2`, headers: { authorization: admin.authorization } });
    expect(res.statusCode).toBe(200);
    expect(res.result).toHaveLength(2);
  });

  it('serves ?rest_route=/ as the root index, with or without a trailing slash on any route', async () => {
    expect((await server.inject({ url: '/?rest_route=/' })).result).toMatchObject({ namespaces: ['svc/v1'] });
    expect((await server.inject({ url: '/?rest_route=/svc/v1/logs/&per_page=1', headers: { authorization: admin.authorization } })).statusCode).toBe(200);
  });

  it('authenticates and applies the conventions whatever the case of the REST root', async () => {
    const res = await server.inject({ url: '/WP-JSON/svc/v1/logs?per_page=1&_fields=id', headers: { authorization: admin.authorization } });
    expect(res.statusCode).toBe(200);
    expect(Object.keys((res.result as object[])[0])).toEqual(['id']);
  });

  it('wraps responses and errors in _envelope with status 200', async () => {
    const ok = await server.inject({ url: `${NS}/logs?per_page=1&_envelope`, headers: { authorization: admin.authorization } });
    expect(ok.statusCode).toBe(200);
    expect(ok.result).toMatchObject({ status: 200, headers: { 'x-wp-total': expect.any(String) } });
    const err = await server.inject({ url: `${NS}/logs?_envelope=1` });
    expect(err.statusCode).toBe(200);
    expect(err.result).toMatchObject({ status: 401, body: { code: 'rest_forbidden' } });
  });

  it('keeps only _fields', async () => {
    const res = await server.inject({ url: `${NS}/logs?per_page=2&_fields=id,message`, headers: { authorization: admin.authorization } });
    for (const item of res.result as Record<string, unknown>[]) expect(Object.keys(item).sort()).toEqual(['id', 'message']);
  });

  it('honours X-HTTP-Method-Override and _method on POST', async () => {
    const viaHeader = await server.inject({
      method: 'POST',
      url: `${NS}/logs?per_page=1`,
      headers: { authorization: admin.authorization, 'x-http-method-override': 'GET' },
    });
    expect(viaHeader.statusCode).toBe(200);
    const viaQuery = await server.inject({ method: 'POST', url: `${NS}/logs?per_page=1&_method=DELETE`, headers: { authorization: admin.authorization } });
    expect(viaQuery.statusCode).toBe(404);
    expect(viaQuery.result).toMatchObject({ code: 'rest_no_route' });
  });

  it('publishes the root and namespace index documents generated from the route table', async () => {
    const root = await server.inject({ url: '/wp-json/' });
    expect(root.statusCode).toBe(200);
    const doc = root.result as {
      namespaces: string[];
      routes: Record<
        string,
        { namespace: string; methods: string[]; endpoints: { methods: string[]; args: Record<string, { type: string; required: boolean }> }[] }
      >;
    };
    expect(doc.namespaces).toContain('svc/v1');
    const logs = doc.routes['/svc/v1/logs'];
    expect(logs.namespace).toBe('svc/v1');
    expect(logs.methods).toEqual(['GET']);
    expect(logs.endpoints[0].args.per_page).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 10, required: false });
    expect(logs.endpoints[0].args.level).toMatchObject({ type: 'array', items: { type: 'string', enum: ['debug', 'info', 'warning', 'error'] } });
    const ns = await server.inject({ url: '/wp-json/svc/v1' });
    expect(ns.result).toMatchObject({ namespace: 'svc/v1', routes: { '/svc/v1/logs': { methods: ['GET'] } } });
  });

  it('answers OPTIONS with the route data and Allow', async () => {
    const res = await server.inject({ method: 'OPTIONS', url: `${NS}/logs` });
    expect(res.statusCode).toBe(200);
    expect(res.headers.allow).toBe('GET');
    expect(res.result).toMatchObject({ namespace: 'svc/v1', methods: ['GET'] });
  });

  it('sends the discovery Link and CORS expose headers on every REST response, errors included', async () => {
    const res = await server.inject({ url: `${NS}/logs` });
    expect(String(res.headers.link)).toContain('rel="https://api.w.org/"');
    expect(res.headers['access-control-expose-headers']).toBe('X-WP-Total, X-WP-TotalPages, Link');
  });

  it('answers malformed JSON with 400 rest_invalid_json', async () => {
    const res = await server.inject({ method: 'POST', url: '/login', payload: '{"login":', headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(400);
    expect(res.result).toMatchObject({ code: 'rest_invalid_json', data: { status: 400 } });
  });
});
