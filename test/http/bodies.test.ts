import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Server } from '@hapi/hapi';
import { request as httpRequest } from 'node:http';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { createTestContext, describeEachDialect, destroyTestContext, dialects, type TestContext } from '../helpers/context.js';
import { createActor, NS, testServer, type Actor } from '../helpers/http.js';

for (const dialect of dialects) {
  describe(`request bodies [${dialect}]`, () => {
    let t: TestContext;
    let server: Server;
    beforeAll(async () => {
      t = await createTestContext(dialect);
      server = await testServer(t.ctx);
    });
    afterAll(async () => {
      await server.stop();
      await destroyTestContext(t);
    });

    it('answers 413 rest_payload_too_large past the limit', async () => {
      const res = await server.inject({
        method: 'POST',
        url: '/login',
        payload: JSON.stringify({ login: 'a', password: 'x'.repeat(20_000) }),
        headers: { 'content-type': 'application/json' },
      });
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
      expect(wrong.result).toMatchObject({
        code: 'rest_invalid_param',
        data: { params: { login: expect.any(String) }, details: { login: { code: 'rest_invalid_type' } } },
      });
      const unknown = await server.inject({ method: 'POST', url: '/login', payload: { login: 'a', password: 'x', admin: true } });
      expect(unknown.result).toMatchObject({ code: 'rest_invalid_param', data: { details: { admin: { code: 'rest_additional_properties_forbidden' } } } });
    });

    it('never leaks internals in a 500', async () => {
      const res = await server.inject({
        method: 'GET',
        url: '/wp-json/svc/v1/logs',
        headers: { authorization: `Basic ${Buffer.from('x:y').toString('base64')}` },
      });
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
}

describeEachDialect('bodies without credentials', (use) => {
  let server: Server;
  let admin: Actor;
  // 1 MiB of JSON with 60,000 keys: what an anonymous caller could make the server parse and validate.
  const manyKeys = JSON.stringify(Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, 'v'.repeat(Math.max(0, 1_000_000 / 60_000 - 12))])));
  const url = `${NS}/ledger/adjustments`;
  beforeAll(async () => {
    server = await testServer(use().ctx);
    admin = await createActor(use().ctx, 'administrator');
  });
  afterAll(async () => {
    await server.stop();
  });

  it('answers an anonymous body over server.anonymous_max_body_bytes with 413 before reading it', async () => {
    expect(manyKeys.length).toBeGreaterThan(900_000);
    // Over a real socket: the length is declared, one chunk sent and the rest withheld. An answer
    // can only come if the server decided on the declared length without waiting for the body.
    const live = await testServer(use().ctx);
    await live.start();
    try {
      const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port: live.info.port,
            method: 'POST',
            path: url,
            agent: false,
            headers: { 'content-type': 'application/json', 'content-length': String(manyKeys.length) },
          },
          (r) => {
            let text = '';
            r.on('data', (d) => (text += d));
            r.on('end', () => resolve({ status: r.statusCode!, body: text }));
          },
        );
        req.on('error', reject);
        req.write(manyKeys.slice(0, 4096));
      });
      expect(res.status).toBe(413);
      expect(JSON.parse(res.body)).toMatchObject({ code: 'rest_payload_too_large', data: { status: 413, max_bytes: 16384 } });
    } finally {
      await live.stop();
    }
    const injected = await server.inject({ method: 'POST', url, payload: manyKeys, headers: { 'content-type': 'application/json' } });
    expect(injected.result).toMatchObject({ code: 'rest_payload_too_large', data: { status: 413, max_bytes: 16384 } });
  });

  // A real socket: inject always sends a Content-Length, and the point here is a body without one.
  it('counts an anonymous chunked body as it is read and answers 413 past the limit', async () => {
    const live = await testServer(use().ctx);
    await live.start();
    try {
      const send = (payload: string, headers: Record<string, string>) =>
        new Promise<{ status: number; body: string; written: number }>((resolve, reject) => {
          const req = httpRequest(
            { host: '127.0.0.1', port: live.info.port, method: 'POST', path: url, agent: false, headers: { 'content-type': 'application/json', ...headers } },
            (res) => {
              let body = '';
              res.on('data', (d) => (body += d));
              res.on('end', () => resolve({ status: res.statusCode!, body, written }));
            },
          );
          req.on('error', reject);
          let written = 0;
          // Chunks written one after another while the server reads; it may answer before the end.
          const next = () => {
            if (written >= payload.length || req.destroyed) return req.end();
            const chunk = payload.slice(written, written + 4096);
            written += chunk.length;
            if (req.write(chunk)) setImmediate(next);
            else req.once('drain', next);
          };
          next();
        });
      const anonymous = await send(manyKeys, {});
      expect(anonymous.status).toBe(413);
      expect(JSON.parse(anonymous.body)).toMatchObject({ code: 'rest_payload_too_large', data: { max_bytes: 16384 } });
      const large = JSON.stringify({ member_id: 1, type: 'credit', amount: '1.00', note: 'n'.repeat(900_000) });
      const administrator = await send(large, { authorization: admin.authorization });
      expect(administrator.written).toBe(large.length);
      expect(JSON.parse(administrator.body)).toMatchObject({ code: 'rest_invalid_param', data: { params: { note: expect.any(String) } } });
    } finally {
      await live.stop();
    }
  });

  it('counts the decompressed bytes of an anonymous gzip body', async () => {
    const res = await server.inject({
      method: 'POST',
      url,
      payload: gzipSync(manyKeys),
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    expect(res.statusCode).toBe(413);
  });

  it('still validates a small anonymous body before refusing it for want of credentials', async () => {
    const invalid = await server.inject({ method: 'POST', url, payload: { member_id: 'x' } });
    expect(invalid.statusCode).toBe(400);
    const valid = await server.inject({ method: 'POST', url, payload: { member_id: 1, type: 'credit', amount: '1.00', note: 'n' } });
    expect(valid.statusCode).toBe(401);
  });

  it('reads and validates the same large body from an administrator as before', async () => {
    const res = await server.inject({
      method: 'POST',
      url,
      payload: JSON.stringify({ member_id: 1, type: 'credit', amount: '1.00', note: 'n'.repeat(900_000) }),
      headers: { 'content-type': 'application/json', authorization: admin.authorization },
    });
    expect(res.statusCode).toBe(400);
    expect(res.result).toMatchObject({ code: 'rest_invalid_param', data: { params: { note: expect.any(String) } } });
    const chunked = await server.inject({
      method: 'POST',
      url,
      payload: Readable.from([Buffer.from(JSON.stringify({ member_id: 1, type: 'credit', amount: '1.00', note: 'n'.repeat(100_000) }))]),
      headers: { 'content-type': 'application/json', authorization: admin.authorization },
    });
    expect(chunked.result).toMatchObject({ code: 'rest_invalid_param', data: { params: { note: expect.any(String) } } });
  });

  it('leaves the login and postback endpoints to their own limits', async () => {
    const login = await server.inject({
      method: 'POST',
      url: '/login',
      payload: JSON.stringify({ login: 'a', password: 'p'.repeat(15_000) }),
      headers: { 'content-type': 'application/json' },
    });
    expect(login.result).toMatchObject({ code: 'rest_invalid_param', data: { params: { password: expect.any(String) } } });
    const postback = await server.inject({
      method: 'POST',
      url: '/postback/shopnet',
      payload: 'a='.padEnd(40_000, 'x'),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(postback.result).toMatchObject({ code: 'svc_postbacks_disabled' });
  });
});
