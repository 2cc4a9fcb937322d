// Every table has a declared primary key. Galera needs one on every table (it certifies and
// applies row events by key: a table without one replicates slowly and its deletes can diverge),
// and so do Group Replication and row-based replicas; see docs/operations.md, "Past one database
// server". This keeps future migrations to the rule.
import { expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/context.js';

describeEachDialect('the schema', (use, dialect) => {
  it('gives every table a primary key', async () => {
    const { db } = use().ctx;
    let tables: string[];
    const keyless: string[] = [];
    if (dialect === 'mysql') {
      tables = (await db.select<{ name: string }>('SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE()')).map(
        (r) => r.name,
      );
      const keyed = new Set(
        (
          await db.select<{ name: string }>(
            "SELECT table_name AS name FROM information_schema.table_constraints WHERE table_schema = DATABASE() AND constraint_type = 'PRIMARY KEY'",
          )
        ).map((r) => r.name),
      );
      for (const t of tables) if (!keyed.has(t)) keyless.push(t);
    } else {
      tables = (await db.select<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")).map((r) => r.name);
      for (const t of tables) {
        const columns = await db.select<{ pk: number }>(`PRAGMA table_info(${JSON.stringify(t)})`);
        if (!columns.some((c) => Number(c.pk) > 0)) keyless.push(t);
      }
    }
    // The application's tables and the migrator's own (umzug's `migrations`, the lock).
    expect(tables).toEqual(expect.arrayContaining(['users', 'ledger_entries', 'balances', 'jobs', 'migrations', 'migration_lock']));
    expect(keyless).toEqual([]);
  });
});
