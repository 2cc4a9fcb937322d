import { PassThrough, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureAdministrator, firstRunBanner } from '../../src/cli/commands/serve.js';
import { createTestContext, destroyTestContext, dialects, type TestContext } from '../helpers/context.js';
import { basic, NS, testServer } from '../helpers/http.js';

for (const dialect of dialects) {
  describe(`first run [${dialect}]`, () => {
    // Each test gets its own database: "first" is about what is already there.
    let t: TestContext | undefined;
    beforeEach(async () => {
      t = await createTestContext(dialect);
    });
    afterEach(() => destroyTestContext(t));

    const io = () => {
      let text = '';
      const stdout = new Writable({ write: (c, _e, done) => ((text += c.toString()), done()) });
      return { io: { stdout, stderr: stdout, stdin: new PassThrough(), env: {} }, text: () => text };
    };

    it('creates admin with a one-time application password, which the banner shows with the namespace URL', async () => {
      const out = io();
      const admin = await ensureAdministrator(t!.ctx, out.io);
      expect(admin?.login).toBe('admin');
      expect(out.text()).toBe('');
      const banner = firstRunBanner(admin!, 'http://127.0.0.1:8080/wp-json/svc/v1');
      const password = banner.match(/app password:\s+((?:[A-Za-z0-9]{4} ?){6})/)?.[1].trim();
      expect(password).toBe(admin!.password);
      expect(banner).toContain('http://127.0.0.1:8080/wp-json/svc/v1');
      expect(banner).toContain('cashtrack users set-password admin');
      const server = await testServer(t!.ctx);
      const res = await server.inject({ url: `${NS}/logs`, headers: { authorization: basic('admin', password!) } });
      expect(res.statusCode).toBe(200);
      await server.stop();
    });

    it('does nothing once an administrator exists', async () => {
      await t!.ctx.users.create({ login: 'boss', email: 'boss@example.com', role: 'administrator' });
      const out = io();
      expect(await ensureAdministrator(t!.ctx, out.io)).toBeNull();
      expect(out.text()).toBe('');
      expect(await t!.ctx.users.findByLogin('admin')).toBeNull();
    });
  });
}

for (const dialect of dialects) {
  describe(`first run when "admin" is taken by a member [${dialect}]`, () => {
    it('creates nothing and says how to make an administrator', async () => {
      const t = await createTestContext(dialect);
      try {
        await t.ctx.users.create({ login: 'admin', email: 'a@example.com', role: 'member' });
        let err = '';
        const sink = new Writable({ write: (c, _e, done) => ((err += c.toString()), done()) });
        expect(await ensureAdministrator(t.ctx, { stdout: sink, stderr: sink, stdin: new PassThrough(), env: {} })).toBeNull();
        expect(err).toContain('cashtrack users create');
        expect(await t.ctx.appPasswords.list((await t.ctx.users.findByLogin('admin'))!)).toEqual([]);
      } finally {
        await destroyTestContext(t);
      }
    });
  });
}
