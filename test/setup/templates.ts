// vitest globalSetup: the migrations run once per run, into a template of each dialect, and every
// test file's fresh database is a copy of it (test/helpers/context.ts). Migrating a database took
// about 1 s on SQLite and 3 s on MariaDB, several hundred times a run; a copy takes a tenth of that.
// test/db/migrator.test.ts and the tests of `db migrate` and of a first start still migrate empty
// databases of their own, so the migrations themselves stay tested on both dialects.
import type { TestProject } from 'vitest/node';
import { buildContext, ensureSchema } from '../../src/context.js';
import { createTestDatabase, dialects, mysqlTemplateStatements, testConfig, type TestDatabase } from '../helpers/context.js';

export default async function migrateTemplates(project: TestProject): Promise<() => Promise<void>> {
  const made: TestDatabase[] = [];
  const teardown = async () => {
    for (const db of made.splice(0)) await db.drop();
  };
  // Both dialects at once: a run of a single file waits for the slower one, not for the sum.
  const results = await Promise.allSettled(
    dialects.map(async (dialect) => {
      const db = await createTestDatabase(dialect);
      made.push(db);
      const ctx = buildContext(testConfig(db), { logStream: null });
      try {
        await ensureSchema(ctx, true);
      } finally {
        await ctx.close();
      }
      if (dialect === 'sqlite') project.provide('sqliteTemplate', db.url.slice('sqlite:'.length));
      else project.provide('mysqlTemplate', await mysqlTemplateStatements(db.url));
    }),
  );
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) {
    await teardown();
    throw failed.reason;
  }
  return teardown;
}
