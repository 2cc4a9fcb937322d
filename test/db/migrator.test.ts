// The migration lock: processes that migrate one database at the same moment apply each migration
// once, a lock whose holder is alive makes the others wait (then 503 svc_migration_locked), and
// the lock of a holder that died is taken over. The lock is a row, not GET_LOCK, so it holds on a
// Galera cluster too (test/galera/ runs the same race across nodes).
import { afterEach, describe, expect, it } from 'vitest';
import { Database } from '../../src/db/database.js';
import { LOCK_TABLE, migrate, migrationStatus, MIGRATION_LOCK_STALE_MS } from '../../src/db/migrator.js';
import { migrations } from '../../migrations/index.js';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/context.js';

for (const dialect of dialects) {
  describe(`the migration lock [${dialect}]`, () => {
    const open: Database[] = [];
    let db: TestDatabase | undefined;
    const connect = () => {
      const d = new Database({ url: db!.url });
      open.push(d);
      return d;
    };
    afterEach(async () => {
      for (const d of open.splice(0)) await d.close();
      await db?.drop();
      db = undefined;
    });

    it('applies every migration once when two processes migrate a fresh database at the same moment', async () => {
      db = await createTestDatabase(dialect);
      const [a, b] = [connect(), connect()];
      const [first, second] = await Promise.all([migrate(a, { holder: 'a' }), migrate(b, { holder: 'b' })]);
      const all = migrations.map((m) => m.name);
      // One of them applied everything; the other found nothing left once it held the lock.
      expect([first, second].sort((x, y) => y.length - x.length)).toEqual([all, []]);
      const rows = await a.select<{ name: string }>('SELECT name FROM migrations');
      expect(rows.map((r) => r.name).sort()).toEqual([...all].sort());
      expect(await migrationStatus(b)).toEqual({ executed: all, pending: [] });
      // The lock is given back.
      expect(await a.select(`SELECT name FROM ${LOCK_TABLE}`)).toEqual([]);
    }, 120_000);

    it('waits for a live holder and answers 503 svc_migration_locked naming it when the wait runs out', async () => {
      db = await createTestDatabase(dialect);
      const d = connect();
      await migrate(d);
      await d.execute(`INSERT INTO ${LOCK_TABLE} (name, holder, heartbeat_at) VALUES ('migrate', 'other-host:42:abcd', ?)`, [new Date()]);
      const started = Date.now();
      const err = await migrate(d, { waitMs: 600 }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'svc_migration_locked', status: 503, data: { holder: 'other-host:42:abcd' } });
      expect(Date.now() - started).toBeGreaterThanOrEqual(600);
      // The other holder's lock is left alone.
      expect(await d.select(`SELECT holder FROM ${LOCK_TABLE}`)).toEqual([{ holder: 'other-host:42:abcd' }]);
    });

    it('takes over the lock of a holder that stopped renewing it, and gives it back when done', async () => {
      db = await createTestDatabase(dialect);
      const d = connect();
      await migrate(d);
      await d.execute(`INSERT INTO ${LOCK_TABLE} (name, holder, heartbeat_at) VALUES ('migrate', 'dead-host:7:dead', ?)`, [
        new Date(Date.now() - MIGRATION_LOCK_STALE_MS - 1000),
      ]);
      expect(await migrate(d, { waitMs: 5_000 })).toEqual([]);
      expect(await d.select(`SELECT holder FROM ${LOCK_TABLE}`)).toEqual([]);
    });
  });
}
