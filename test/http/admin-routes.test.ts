// How the daemon serves the admin screens: the shell for every screen's URL, never cached and with
// the REST root written in; hashed assets cached for a year; a strict CSP and no framing on both;
// a clear 503 when the screens were never built.
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Hapi from '@hapi/hapi';
import { expect, it } from 'vitest';
import { ADMIN_CSP, adminRoutes } from '../../src/http/admin-routes.js';
import { registerPlainRoutes } from '../../src/http/plain-routes.js';
import { restHost } from '../../src/http/rest/host.js';
import { describeEachDialect } from '../helpers/context.js';
import { testServer } from '../helpers/http.js';

describeEachDialect('the admin screens as the daemon serves them', (use) => {
  it('answers the shell for /admin, /admin/ and any screen URL, uncached, with the REST root and a strict CSP', async () => {
    const server = await testServer(use().ctx);
    for (const url of ['/admin', '/admin/', '/admin/orders?status=pending', '/admin/members/12']) {
      const res = await server.inject(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['cache-control']).toMatch(/no-cache/);
      expect(res.headers['content-security-policy']).toBe(ADMIN_CSP);
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.payload).toContain('<meta name="cashtrack-rest-root" content="/wp-json/"');
      expect(res.payload).not.toMatch(/<script>(?!<\/script>)|<script(?![^>]*\bsrc=)[^>]*>/);
    }
    await server.stop();
  });

  it('serves hashed assets for a year and refuses what is not one of them', async () => {
    const server = await testServer(use().ctx);
    const shell = (await server.inject('/admin/')).payload;
    const script = /src="\/admin\/(assets\/[^"]+\.js)"/.exec(shell)![1];
    const res = await server.inject(`/admin/${script}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/javascript/);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.headers['content-security-policy']).toBe(ADMIN_CSP);
    for (const url of ['/admin/assets/missing-abc.js', '/admin/assets/../../package.json', '/admin/assets/%2e%2e%2fpackage.json', '/admin/assets/x.map']) {
      expect((await server.inject(url)).statusCode, url).toBe(404);
    }
    await server.stop();
  });

  it('writes the configured REST root into the shell, and says how to build the screens when they are missing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ct-admin-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<meta name="cashtrack-rest-root" content="/wp-json/" />');
    const ctx = { ...use().ctx, config: { ...use().ctx.config, server: { ...use().ctx.config.server, rest_root: 'api' } } };
    const server = Hapi.server();
    registerPlainRoutes(server, adminRoutes(ctx, dir));
    expect((await server.inject('/admin/')).payload).toContain('content="/api/"');
    const missing = Hapi.server();
    await missing.register({ plugin: restHost, options: { ctx: use().ctx, routes: [] } });
    registerPlainRoutes(missing, adminRoutes(use().ctx, join(dir, 'nothing-here')));
    const res = await missing.inject('/admin/');
    expect(res.statusCode).toBe(503);
    expect(JSON.parse(res.payload)).toMatchObject({ code: 'svc_admin_not_built', message: expect.stringContaining('npm run build') });
  });
});
