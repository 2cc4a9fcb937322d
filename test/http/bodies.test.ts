import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Server } from '@hapi/hapi';
import { createTestContext, destroyTestContext, type TestContext } from '../helpers/context.js';
import { testServer } from '../helpers/http.js';

describe('request bodies', () => {
  let t: TestContext;
  let server: Server;
  beforeAll(async () => {
    t = await createTestContext('sqlite');
    server = await testServer(t.ctx);
  });
  afterAll(async () => {
    await server.stop();
    await destroyTestContext(t);
  });

  it('answers 413 rest_payload_too_large past the limit', async () => {
    const res = await server.inject({ method: 'POST', url: '/login', payload: JSON.stringify({ login: 'a', password: 'x'.repeat(20_000) }), headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(413);
    expect(res.result).toMatchObject({ code: 'rest_payload_too_large', data: { status: 413 } });
  });

  it('answers 415 rest_unsupported_media_type for other body types', async () => {
    const res = await server.inject({ method: 'POST', url: '/login', payload: '<xml/>', headers: { 'content-type': 'application/xml' } });
    expect(res.statusCode).toBe(415);
    expect(res.result).toMatchObject({ code: 'rest_unsupported_media_type' });
  });

  it('answers wrong types and unknown fields with 400 rest_invalid_param', async () => {
    const wrong = await server.inject({ method: 'POST', url: '/login', payload: { login: ['a'], password: 'x' } });
    expect(wrong.result).toMatchObject({ code: 'rest_invalid_param', data: { params: { login: expect.any(String) }, details: { login: { code: 'rest_invalid_type' } } } });
    const unknown = await server.inject({ method: 'POST', url: '/login', payload: { login: 'a', password: 'x', admin: true } });
    expect(unknown.result).toMatchObject({ code: 'rest_invalid_param', data: { details: { admin: { code: 'rest_additional_properties_forbidden' } } } });
  });

  it('never leaks internals in a 500', async () => {
    const res = await server.inject({ method: 'GET', url: '/wp-json/svc/v1/logs', headers: { authorization: 'Basic ' + Buffer.from('x:y').toString('base64') } });
    expect(res.statusCode).toBe(401);
    // Force an internal fault: close the database under the server.
    await t.ctx.db.close();
    const broken = await server.inject({ method: 'POST', url: '/login', payload: { login: 'someone', password: 'whatever1' } });
    expect(broken.statusCode).toBeGreaterThanOrEqual(500);
    const body = broken.result as { code: string; message: string; data: Record<string, unknown> };
    expect(['svc_internal_error', 'svc_database_unavailable']).toContain(body.code);
    expect(JSON.stringify(body)).not.toMatch(/at |\.ts|sqlite|SELECT/i);
  });
});
