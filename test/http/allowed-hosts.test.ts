import { afterAll, beforeAll, expect, it } from 'vitest';
import { connect } from 'node:net';
import type { Server } from '@hapi/hapi';
import { describeEachDialect } from '../helpers/context.js';
import { createActor, NS, testServer, type Actor } from '../helpers/http.js';

/** A request to each kind of endpoint, naming `host`. */
const everywhere = (host: string, admin: Actor) => [
  { url: '/wp-json/', headers: { host } },
  { url: `${NS}/logs`, headers: { host, authorization: admin.authorization } },
  { method: 'POST', url: '/login', payload: { login: admin.login, password: 'correct horse battery' }, headers: { host } },
  { url: '/rest-nonce', headers: { host } },
  { url: '/postback/shopnet?txn=1', headers: { host } },
  { url: '/nothing-here', headers: { host } },
  { url: `/?rest_route=/svc/v1/logs`, headers: { host, authorization: admin.authorization } },
];

describeEachDialect(
  'server.allowed_hosts',
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

    it.each(['evil.example', 'admin.example.com.evil.example', '127.0.0.1:9999', 'localhost', ''])(
      'answers 400 svc_invalid_host to every endpoint for Host "%s"',
      async (host) => {
        for (const request of everywhere(host, admin)) {
          const res = await server.inject(request);
          expect(res.statusCode, `${request.url}`).toBe(400);
          expect(JSON.parse(res.payload)).toMatchObject({ code: 'svc_invalid_host', data: { status: 400 } });
          expect(res.payload).not.toContain('evil');
        }
      },
    );

    // A real socket: the request line is the point, and inject cannot write an absolute one.
    it('refuses a request line with an absolute URL naming another host', async () => {
      const live = await testServer(use().ctx);
      await live.start();
      try {
        const ask = (target: string) =>
          new Promise<string>((resolve, reject) => {
            const socket = connect(live.info.port as number, '127.0.0.1', () =>
              socket.end(`GET ${target} HTTP/1.1\r\nHost: admin.example.com\r\nConnection: close\r\n\r\n`),
            );
            let text = '';
            socket.on('data', (d) => (text += d.toString()));
            socket.on('end', () => resolve(text));
            socket.on('error', reject);
          });
        const refused = await ask('http://evil.example/wp-json/');
        expect(refused).toMatch(/^HTTP\/1\.1 400/);
        expect(refused).toContain('"svc_invalid_host"');
        expect(await ask('http://admin.example.com/wp-json/')).toMatch(/^HTTP\/1\.1 200/);
      } finally {
        await live.stop();
      }
    });

    it.each(['admin.example.com', 'ADMIN.Example.com:8443', 'admin.example.com.', '127.0.0.1:8080', '[::1]:8080'])(
      'serves Host "%s" and puts it in the links',
      async (host) => {
        const res = await server.inject({ url: '/wp-json/', headers: { host } });
        expect(res.statusCode).toBe(200);
        expect(JSON.parse(res.payload).url).toBe(`http://${host}`);
        const list = await server.inject({ url: `${NS}/logs`, headers: { host, authorization: admin.authorization } });
        expect(list.statusCode).toBe(200);
      },
    );
  },
  { 'server.allowed_hosts': ['admin.example.com', '127.0.0.1:8080', '[::1]:8080'] },
);

describeEachDialect(
  'hosts in production',
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

    it('answers only the host of server.public_url when no host is listed', async () => {
      for (const request of everywhere('evil.example', admin)) expect((await server.inject(request)).statusCode, request.url).toBe(400);
      const res = await server.inject({ url: '/wp-json/', headers: { host: 'admin.example.com' } });
      expect(res.statusCode).toBe(200);
      expect(JSON.parse(res.payload).url).toBe('https://admin.example.com');
      const login = await server.inject({
        method: 'POST',
        url: '/login',
        payload: { login: admin.login, password: 'correct horse battery' },
        headers: { host: 'admin.example.com' },
      });
      expect(login.statusCode).toBe(200);
    });
  },
  // Production refuses the test profile's cheap scrypt cost (auth.scrypt_log_n 10): use its floor.
  { env: 'production', 'server.public_url': 'https://admin.example.com', 'auth.scrypt_log_n': 17 },
);

describeEachDialect('any host outside production when none is listed', (use) => {
  let server: Server;
  beforeAll(async () => {
    server = await testServer(use().ctx);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('serves any Host and links to it, as without the setting', async () => {
    const res = await server.inject({ url: '/wp-json/', headers: { host: 'whatever.test:81' } });
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.payload).url).toBe('http://whatever.test:81');
  });
});
