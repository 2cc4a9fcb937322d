import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildContext } from '../../src/context.js';
import { loadConfig } from '../../src/config/index.js';
import { dumpCommand } from '../../src/db/backup.js';
import { parseDatabaseUrl } from '../../src/db/database.js';
import { runCli } from '../helpers/cli.js';
import { createTestContext, destroyTestContext, dialects, type TestContext } from '../helpers/context.js';

describe('cashtrack db backup on SQLite', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createTestContext('sqlite');
  });
  afterAll(() => destroyTestContext(t));

  it('copies the database while another connection keeps writing, and the copy is one consistent point in time', async () => {
    const { ctx } = t;
    const member = await ctx.users.create({ login: 'saver', email: 'saver@example.com', role: 'member' }, 'test');
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing) {
        await ctx.ledger.adjust({ member_id: member.id, type: 'credit', amount: '1.00', note: 'during backup' }, 'test');
        written++;
      }
    })();
    while (written < 5) await new Promise((r) => setTimeout(r, 5));
    const file = join(t.db.dataDir, 'copy.sqlite');
    const res = await runCli(['db', 'backup', file, '--json'], { db: t.db });
    writing = false;
    await writer;
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const out = res.json<{ file: string; bytes: number; pages: number; integrity: string }>();
    expect(out).toMatchObject({ file, integrity: 'ok' });
    expect(out.bytes).toBe(statSync(file).size);
    expect(statSync(file).mode & 0o077).toBe(0);
    // Nothing left beside it under a temporary name.
    expect(readdirSync(t.db.dataDir).filter((f) => f.includes('.partial'))).toEqual([]);

    const copy = buildContext(
      loadConfig({
        env: { CASHTRACK_ENV: 'test' },
        overrides: { 'database.url': `sqlite:${file}`, data_dir: t.db.dataDir, secret: 'test-secret-0123456789abcdef0123456789abcdef', 'log.stdout': false },
      }),
      { logStream: null },
    );
    try {
      expect(await copy.ledger.verify()).toEqual([]);
      const [{ n }] = await copy.db.select<{ n: number }>('SELECT COUNT(*) AS n FROM ledger_entries WHERE member_id = ?', [member.id]);
      expect(Number(n)).toBeGreaterThanOrEqual(5);
      expect(Number(n)).toBeLessThanOrEqual(written);
    } finally {
      await copy.close();
    }
  });

  it('refuses to replace an existing file unless told to', async () => {
    const file = join(t.db.dataDir, 'existing.sqlite');
    writeFileSync(file, 'not a database');
    const refused = await runCli(['db', 'backup', file], { db: t.db });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/svc_backup_exists/);
    expect(statSync(file).size).toBe('not a database'.length);

    const forced = await runCli(['db', 'backup', file, '--force'], { db: t.db });
    expect(forced.code).toBe(0);
    expect(forced.stdout).toMatch(/^backed up to .*existing\.sqlite: \d+ bytes, \d+ pages, integrity ok/);
  });

  it('refuses a folder that does not exist and the database file itself', async () => {
    const missing = await runCli(['db', 'backup', join(t.db.dataDir, 'no', 'such', 'dir', 'x.sqlite'), '--json'], { db: t.db });
    expect(missing.code).not.toBe(0);
    expect(JSON.parse(missing.stderr)).toMatchObject({ code: 'svc_backup_failed' });
    const self = await runCli(['db', 'backup', parseDatabaseUrl(t.db.url).storage!, '--force', '--json'], { db: t.db });
    expect(JSON.parse(self.stderr)).toMatchObject({ code: 'svc_backup_failed' });
    expect(existsSync(parseDatabaseUrl(t.db.url).storage!)).toBe(true);
  });
});

describe.runIf(dialects.includes('mysql'))('cashtrack db backup on MariaDB', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await createTestContext('mysql');
  });
  afterAll(() => destroyTestContext(t));

  it('explains the mariadb-dump command instead, without the password', async () => {
    const url = new URL(t.db.url);
    url.password = 'hunter2-secret';
    const res = await runCli(['db', 'backup', '/tmp/x.sql', '--json'], { db: { ...t.db, url: url.toString() } });
    expect(res.code).not.toBe(0);
    const err = JSON.parse(res.stderr) as { code: string; message: string; data: { command: string } };
    expect(err.code).toBe('svc_backup_use_dump');
    expect(err.data.command).toMatch(
      /^mariadb-dump --single-transaction --quick --routines --triggers --hex-blob --host=127\.0\.0\.1 --port=3306 --user=root --password ct_\w+ > \/tmp\/x\.sql$/,
    );
    expect(res.stderr).not.toContain('hunter2');
  });
});

describe('the dump command', () => {
  it('quotes what a shell would split and prefers a socket when the URL names one', () => {
    expect(dumpCommand({ dialect: 'mysql', socketPath: '/run/mysqld/mysqld.sock', username: "o'brien", database: 'shop db' }, 'back up.sql')).toBe(
      "mariadb-dump --single-transaction --quick --routines --triggers --hex-blob --socket=/run/mysqld/mysqld.sock --user='o'\\''brien' 'shop db' > 'back up.sql'",
    );
  });
});
