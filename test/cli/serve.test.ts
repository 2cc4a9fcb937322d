// `cashtrack serve` as a real process of the built binary: the socket is the point here.
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BinaryRunner, requireCurrentBuild } from '../helpers/binary.js';
import { createTestContext, createTestDatabase, destroyTestContext, dialects, type TestContext, type TestDatabase } from '../helpers/context.js';
import { waitFor } from '../helpers/jobs.js';

for (const dialect of dialects) {
  describe(`cashtrack serve [${dialect}]`, () => {
    let db: TestDatabase;
    let runner: BinaryRunner;
    let taken: Server;
    let port: number;
    beforeAll(async () => {
      requireCurrentBuild();
      db = await createTestDatabase(dialect);
      runner = new BinaryRunner(db, 'serve-test-secret-0123456789abcdef0123456789');
      taken = createServer();
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      port = (taken.address() as { port: number }).port;
    });
    afterAll(async () => {
      await runner.killAll();
      await new Promise((resolve) => taken.close(resolve));
      await db.drop();
    });

    it('names the address and exits 1 without a stack trace when the port is already in use', async () => {
      const child = runner.start(['serve', '--host', '127.0.0.1', '--port', String(port), '--migrate']);
      const { code } = await child.finished();
      expect(code).toBe(1);
      expect(child.stderr).toMatch(new RegExp(`^svc_port_in_use: Address 127\\.0\\.0\\.1:${port} is already in use`, 'm'));
      expect(child.stderr).not.toMatch(/\n\s+at /);
      expect(child.stderr).not.toContain('EADDRINUSE');
    });

    it('refuses to start on a payout minimum the site currency cannot express, exit 1', async () => {
      const child = runner.start(['serve', '--host', '127.0.0.1', '--port', '0', '--migrate'], { CASHTRACK_PAYOUT_MINIMUM: '10.005' });
      const { code } = await child.finished();
      expect(code).toBe(1);
      expect(child.stderr).toMatch(/^svc_invalid_config: Invalid configuration payouts\.minimum: payouts\.minimum has more than 2 decimal places for USD/m);
    });

    it('with --workers 2, stops after the first worker fails on a port in use, exit 1, and starts no other', async () => {
      const child = runner.start(['serve', '--host', '127.0.0.1', '--port', String(port), '--workers', '2']);
      const { code } = await child.finished();
      expect(code).toBe(1);
      expect(child.stderr.match(/^svc_port_in_use: /gm)).toHaveLength(1);
      expect(child.stderr).toMatch(/^svc_worker_failed: The first worker exited \(code 1\) before it was ready/m);
      expect(child.stderr).not.toMatch(/\n\s+at /);
    });

    it('refuses a worker count that is not auto or 1-64: a usage error for --workers, svc_invalid_config for CASHTRACK_WORKERS', async () => {
      for (const bad of ['0', 'abc', '65', '1.5', '-2']) {
        const child = runner.start(['serve', '--port', '0', `--workers=${bad}`, '--json']);
        expect(await child.finished()).toEqual({ code: 2, signal: null });
        expect(JSON.parse(child.stderr)).toMatchObject({ code: 'svc_usage', message: `--workers must be auto or a whole number from 1 to 64, got "${bad}"` });
      }
      const child = runner.start(['serve', '--port', '0'], { CASHTRACK_WORKERS: 'many' });
      expect((await child.finished()).code).toBe(1);
      expect(child.stderr).toMatch(
        /^svc_invalid_config: Invalid configuration CASHTRACK_WORKERS \(server\.workers\): must be auto or a whole number from 1 to 64$/m,
      );
    });
  });
}

// The first start of a daemon on a database without an administrator: the administrator exists
// before the daemon answers anything, and the banner comes after the start-up log lines, framed.
for (const dialect of dialects) {
  describe(`cashtrack serve, first start [${dialect}]`, () => {
    let t: TestContext;
    let runner: BinaryRunner;
    beforeAll(async () => {
      requireCurrentBuild();
      t = await createTestContext(dialect);
      runner = new BinaryRunner(t.db, 'serve-test-secret-0123456789abcdef0123456789');
    });
    afterAll(async () => {
      await runner.killAll();
      await destroyTestContext(t);
    });

    it('answers no request before the administrator exists, then prints the framed banner after the last start-up log line', async () => {
      const port = await freePort();
      // An uncommitted "admin" row holds the administrator's creation (SQLite: the write lock;
      // MariaDB: the login's unique key) for as long as this transaction stays open.
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let holding!: () => void;
      const held = new Promise<void>((resolve) => (holding = resolve));
      const hold = t.ctx.db
        .transaction(async (tx) => {
          await t.ctx.db.execute(
            "INSERT INTO users (login, email, display_name, role, status, created_at, updated_at) VALUES ('admin', 'held@example.com', 'Held', 'member', 'active', ?, ?)",
            [new Date(), new Date()],
            tx,
          );
          holding();
          await released;
          throw new Error('rolled back on purpose');
        }, 0)
        .catch((err: Error) => err);
      await held;
      const child = runner.start(['serve', '--host', '127.0.0.1', '--port', String(port)], {
        CASHTRACK_LOG_STDOUT: 'true',
        CASHTRACK_DATABASE_BUSY_TIMEOUT_MS: '60000',
      });
      const answered = async () => {
        try {
          return (await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2000) })).ok;
        } catch {
          return false;
        }
      };
      // While the administrator cannot be created, nothing may answer (the daemon has long had
      // time to listen: it would, before creating the administrator).
      const until = Date.now() + 8000;
      while (Date.now() < until) {
        expect(await answered(), 'a request answered before the administrator existed').toBe(false);
        expect(child.process.exitCode, child.stderr).toBeNull();
        await new Promise((r) => setTimeout(r, 20));
      }
      release();
      expect(((await hold) as Error).message).toBe('rolled back on purpose');
      const deadline = Date.now() + 60_000;
      while (!(await answered())) {
        expect(Date.now() < deadline, child.stderr).toBe(true);
        await new Promise((r) => setTimeout(r, 20));
      }
      const [{ n }] = await t.ctx.db.select<{ n: number }>("SELECT COUNT(*) AS n FROM users WHERE role = 'administrator' AND login = 'admin'");
      expect(Number(n)).toBe(1);

      await waitFor(() => Promise.resolve(child.stderr.includes('cashtrack: listening on') || null), 30_000, 'the listening line');
      const lines = child.stdout.split('\n');
      const listening = lines.findIndex((l) => l.startsWith('{') && JSON.parse(l).message === 'Listening');
      const top = lines.findIndex((l) => /^\+-+\+$/.test(l));
      expect(listening).toBeGreaterThanOrEqual(0);
      expect(top).toBeGreaterThan(listening);
      // Every start-up log line comes before the banner.
      expect(lines.slice(top).some((l) => l.startsWith('{') && /"source":"(daemon|db)"/.test(l))).toBe(false);
      const bottom = lines.findIndex((l, i) => i > top && l === lines[top]);
      const frame = lines.slice(top + 1, bottom);
      expect(frame.every((l) => l.length === lines[top].length && l.startsWith('| ') && l.endsWith(' |'))).toBe(true);
      const text = frame.join('\n');
      expect(text).toMatch(/app password:\s+(?:[A-Za-z0-9]{4} ?){6}/);
      expect(text).toContain(`http://127.0.0.1:${port}/wp-json/svc/v1`);
      expect(text).toContain('cashtrack users set-password admin');
      child.process.kill('SIGTERM');
      await child.finished();
    }, 120_000);
  });
}

/** A port free on 127.0.0.1 now (taken and given back). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
