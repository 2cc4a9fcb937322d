// vitest globalSetup: a folder for the run's template databases (test/helpers/context.ts). The
// first file that needs a migrated database of a dialect migrates one there, once for the whole
// run, and every fresh database after it is a copy: on the shared 2-core machine migrating took
// 2 s on SQLite and 7 s on MariaDB, once or more per file; a copy takes 0.1 s and 1.5 s. It is made by a
// worker, not here, so a run of files that need no database pays nothing for it.
// test/db/migrator.test.ts and the tests of `db migrate` and of a first start still migrate empty
// databases of their own, so the migrations themselves stay tested on both dialects.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import type { TestProject } from 'vitest/node';
import type { Template } from '../helpers/context.js';

export default function templateFolder(project: TestProject): () => Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cashtrack-templates-'));
  project.provide('templateDir', dir);
  return async () => {
    await dropTemplates(dir);
    rmSync(dir, { recursive: true, force: true });
  };
}

/** Drops the MariaDB template, if a file made one. */
async function dropTemplates(dir: string): Promise<void> {
  const described = join(dir, 'mysql.json');
  if (!existsSync(described)) return;
  const template = JSON.parse(readFileSync(described, 'utf8')) as Template;
  if (!('database' in template)) return;
  const conn = await mysql.createConnection(template.url);
  await conn.query(`DROP DATABASE IF EXISTS \`${template.database}\``);
  await conn.end();
}
