import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Server, ServerInjectOptions } from '@hapi/hapi';
import { describeEachDialect } from '../helpers/context.js';
import { createActor, NS, testServer, type Actor } from '../helpers/http.js';

const EXPECTED = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

/** One request of each kind of endpoint the daemon has, answered normally or with an error. */
const EVERY_KIND: [string, (admin: Actor) => ServerInjectOptions, number][] = [
  ['a namespace list', (admin) => ({ url: `${NS}/logs`, headers: { authorization: admin.authorization } }), 200],
  ['a namespace refusal', (_admin) => ({ url: `${NS}/logs` }), 401],
  ['a namespace validation error', (admin) => ({ url: `${NS}/logs?per_page=0`, headers: { authorization: admin.authorization } }), 400],
  ['the root index', (_admin) => ({ url: '/wp-json/' }), 200],
  ['an _envelope', (_admin) => ({ url: `${NS}/logs?_envelope` }), 200],
  ['OPTIONS', (_admin) => ({ method: 'OPTIONS', url: `${NS}/logs` }), 200],
  ['a REST 404', (_admin) => ({ url: `${NS}/nothing-here` }), 404],
  ['a 404 outside the REST root', (_admin) => ({ url: '/nothing-here' }), 404],
  ['a login', (admin) => ({ method: 'POST', url: '/login', payload: { login: admin.login, password: 'correct horse battery' } }), 200],
  ['a failed login', (admin) => ({ method: 'POST', url: '/login', payload: { login: admin.login } }), 400],
  ['a logout', (_admin) => ({ method: 'POST', url: '/logout' }), 200],
  ['the nonce endpoint', (_admin) => ({ url: '/rest-nonce' }), 401],
  ['a postback', (_admin) => ({ url: '/postback/shopnet?txn=1' }), 403],
  ['a bad JSON body', (_admin) => ({ method: 'POST', url: '/login', payload: '{', headers: { 'content-type': 'application/json' } }), 400],
];

describeEachDialect('security headers on every response', (use) => {
  let server: Server;
  let admin: Actor;
  beforeAll(async () => {
    server = await testServer(use().ctx);
    admin = await createActor(use().ctx, 'administrator');
  });
  afterAll(async () => {
    await server.stop();
  });

  it.each(EVERY_KIND)('sends nosniff, frame-ancestors, X-Frame-Options and Referrer-Policy on %s, and no HSTS over http', async (_kind, request, status) => {
    const res = await server.inject(request(admin));
    expect(res.statusCode, res.payload).toBe(status);
    expect(res.headers).toMatchObject(EXPECTED);
    expect(res.headers['strict-transport-security']).toBeUndefined();
  });

  it('sends HSTS when a trusted proxy says the client came over https', async () => {
    use().ctx.config.server.trust_proxy = true;
    try {
      const res = await server.inject({ url: '/wp-json/', headers: { 'x-forwarded-proto': 'https' } });
      expect(res.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    } finally {
      use().ctx.config.server.trust_proxy = false;
    }
  });
});

describeEachDialect(
  'security headers on a site served over https',
  (use) => {
    let server: Server;
    let admin: Actor;
    beforeAll(async () => {
      server = await testServer(use().ctx);
      admin = await createActor(use().ctx, 'administrator');
    });
    afterAll(async () => {
      await server.stop();
    });

    it.each(EVERY_KIND)('sends HSTS with the other headers on %s', async (_kind, request, status) => {
      const options = request(admin);
      const res = await server.inject({ ...options, headers: { host: 'admin.example.com', ...options.headers } });
      expect(res.statusCode, res.payload).toBe(status);
      expect(res.headers).toMatchObject({ ...EXPECTED, 'strict-transport-security': 'max-age=31536000; includeSubDomains' });
    });
  },
  { 'server.public_url': 'https://admin.example.com' },
);
