import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Server } from '@hapi/hapi';
import { routeTable } from '../../src/http/routes/index.js';
import { createTestContext, destroyTestContext, dialects, type TestContext } from '../helpers/context.js';
import { testServer } from '../helpers/http.js';

for (const dialect of dialects) {
  describe(`the route table [${dialect}]`, () => {
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

    it("gives every namespace route an id, manage_options (signed_in: a user's own application passwords only) and validation", () => {
      const ids = new Set<string>();
      for (const def of routeTable) {
        expect(def.id, `${def.method} ${def.path}`).toMatch(/^[a-z-]+\.[a-z-]+(\.[a-z-]+)*$/);
        expect(ids.has(def.id), `duplicate id ${def.id}`).toBe(false);
        ids.add(def.id);
        expect(def.auth, def.id).toBe(def.id.startsWith('users.app-passwords.') ? 'signed_in' : 'manage_options');
        expect(def.description, def.id).toBeTruthy();
        const v = def.validate;
        expect(v.query || v.payload, `${def.id} validates nothing`).toBeTruthy();
        if (def.method === 'GET') expect(v.query, `${def.id} has no query schema`).toBeTruthy();
        else expect(v.payload, `${def.id} has no payload schema`).toBeTruthy();
        for (const name of def.path.match(/\{(\w+)\}/g) ?? [])
          expect(v.params?.describe().keys?.[name.slice(1, -1)], `${def.id} path param ${name}`).toBeTruthy();
      }
    });

    it('registers no hapi route without an id, a declared auth mode and validation', () => {
      for (const route of server.table()) {
        const where = `${route.method.toUpperCase()} ${route.path}`;
        expect(route.settings.id, where).toBeTruthy();
        const auth = route.settings.plugins?.cashtrack?.def?.auth ?? route.settings.plugins?.cashtrack?.auth;
        expect(['manage_options', 'signed_in', 'public', 'session'], where).toContain(auth);
        const validate = route.settings.validate as { query?: unknown; payload?: unknown; params?: unknown };
        // The postback endpoint validates its network id; its query and body are read raw by the service.
        expect(validate.query || validate.payload || validate.params, `${where} validates nothing`).toBeTruthy();
        if (route.path.includes('/svc/v1/')) expect(auth, where).toBe(route.path.includes('/application-passwords') ? 'signed_in' : 'manage_options');
      }
    });

    it('refuses every namespace route to anonymous callers', async () => {
      for (const def of routeTable) {
        const url = `/wp-json/svc/v1${def.path.replace(/\{\w+\}/g, '1')}`;
        const res = await server.inject({ method: def.method, url, payload: def.method === 'GET' ? undefined : {} });
        expect([400, 401], `${def.id}: ${res.statusCode}`).toContain(res.statusCode);
      }
    });
  });
}
