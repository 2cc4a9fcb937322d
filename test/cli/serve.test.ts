// `cashtrack serve` as a real process of the built binary: the socket is the point here.
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BinaryRunner, requireCurrentBuild } from '../helpers/binary.js';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/context.js';

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
  });
}
