import { createServer as createTcpServer, connect, type Server as TcpServer, type Socket } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildContext, ensureSchema } from '../../src/context.js';
import { createTestDatabase, dialects, testConfig } from '../helpers/context.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { createActor, NS, testServer } from '../helpers/http.js';

describe('a missing or damaged SQLite file', () => {
  it('creates a missing database file and its directory on first use', async () => {
    const dir = tempDir('cashtrack-missing-');
    const r = await runCli(['users', 'list', '--json'], {
      env: { CASHTRACK_DATABASE_URL: `sqlite:${join(dir, 'nested', 'db.sqlite')}`, CASHTRACK_DATA_DIR: dir },
    });
    expect(r.code).toBe(0);
    expect(r.json()).toEqual([]);
  });

  it('answers svc_database_corrupt for a file that is not a SQLite database', async () => {
    const dir = tempDir('cashtrack-corrupt-');
    const file = join(dir, 'db.sqlite');
    writeFileSync(file, 'this is not a database'.repeat(100));
    const r = await runCli(['users', 'list'], { env: { CASHTRACK_DATABASE_URL: `sqlite:${file}`, CASHTRACK_DATA_DIR: dir } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^svc_database_corrupt: /);
  });
});

/** A TCP relay to MariaDB that a test can cut and restore, to play a database going away. */
async function relay(target: { host: string; port: number }) {
  const sockets = new Set<Socket>();
  let server: TcpServer | null = null;
  let port = 0;
  const open = () =>
    new Promise<void>((resolve) => {
      server = createTcpServer((client) => {
        const upstream = connect(target.port, target.host);
        sockets.add(client).add(upstream);
        client.pipe(upstream).pipe(client);
        const drop = () => (client.destroy(), upstream.destroy());
        client.on('error', drop).on('close', drop);
        upstream.on('error', drop).on('close', drop);
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as { port: number }).port;
        resolve();
      });
    });
  await open();
  return {
    get port() {
      return port;
    },
    async cut() {
      for (const s of sockets) s.destroy();
      sockets.clear();
      await new Promise<void>((r) => server!.close(() => r()));
    },
    open,
  };
}

if (dialects.includes('mysql')) {
  describe('MariaDB going away and coming back', () => {
    it('answers 503 svc_database_unavailable with Retry-After while it is down and recovers without a restart', async () => {
      const db = await createTestDatabase('mysql');
      const real = new URL(db.url);
      const proxy = await relay({ host: real.hostname, port: Number(real.port || 3306) });
      const viaProxy = new URL(db.url);
      viaProxy.port = String(proxy.port);
      const ctx = buildContext(testConfig({ ...db, url: viaProxy.toString() }), { logStream: null });
      try {
        await ensureSchema(ctx, true);
        const admin = await createActor(ctx);
        const server = await testServer(ctx);
        const get = () => server.inject({ url: `${NS}/logs?per_page=1`, headers: { authorization: admin.authorization } });
        expect((await get()).statusCode).toBe(200);

        await proxy.cut();
        const down = await get();
        expect(down.statusCode).toBe(503);
        expect(down.result).toMatchObject({ code: 'svc_database_unavailable', data: { status: 503, retry_after: 5 } });
        expect(down.headers['retry-after']).toBe('5');
        expect(JSON.stringify(down.result)).not.toMatch(/ECONN|127\.0\.0\.1|SELECT/);

        await proxy.open();
        let status = 0;
        for (let i = 0; i < 20 && status !== 200; i++) {
          status = (await get()).statusCode;
          if (status !== 200) await new Promise((r) => setTimeout(r, 250));
        }
        expect(status).toBe(200);
        await server.stop();
      } finally {
        await ctx.close().catch(() => {});
        await proxy.cut().catch(() => {});
        await db.drop();
      }
    });
  });
}
