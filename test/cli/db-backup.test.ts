import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
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

  it('refuses a folder that does not exist', async () => {
    const missing = await runCli(['db', 'backup', join(t.db.dataDir, 'no', 'such', 'dir', 'x.sqlite'), '--json'], { db: t.db });
    expect(missing.code).not.toBe(0);
    expect(JSON.parse(missing.stderr)).toMatchObject({ code: 'svc_backup_failed' });
  });

  it('refuses, even with --force, the database, its -wal, -shm and -journal, and any link to them, leaving the live database working', async () => {
    const { ctx } = t;
    const database = parseDatabaseUrl(t.db.url).storage!;
    await ctx.users.create({ login: 'before-backup', email: 'before@example.com', role: 'member' }, 'test');
    // The open context keeps the WAL and its shared memory; a -journal exists only in rollback mode.
    expect(existsSync(`${database}-wal`) && existsSync(`${database}-shm`)).toBe(true);
    expect(existsSync(`${database}-journal`)).toBe(false);
    const links = join(t.db.dataDir, 'links');
    mkdirSync(links, { recursive: true });
    symlinkSync(database, join(links, 'symlink.sqlite'));
    linkSync(database, join(links, 'hardlink.sqlite'));
    symlinkSync(`${database}-journal`, join(links, 'journal-link'));
    symlinkSync(dirname(database), join(links, 'folder'));
    const targets: Array<[string, string]> = [
      [`${database}-wal`, `${database}-wal`],
      [database, database],
      [`${database}-shm`, `${database}-shm`],
      [`${database}-journal`, `${database}-journal`],
      [join(links, 'symlink.sqlite'), database],
      [join(links, 'hardlink.sqlite'), database],
      [join(links, 'journal-link'), `${database}-journal`],
      [join(links, 'folder', `${basename(database)}-wal`), `${database}-wal`],
    ];
    const walBefore = statSync(`${database}-wal`).ino;
    for (const [target, live] of targets) {
      const res = await runCli(['db', 'backup', target, '--force', '--json'], { db: t.db });
      expect(res.code, target).toBe(1);
      expect(JSON.parse(res.stderr), target).toMatchObject({ code: 'svc_backup_target_is_database', data: { database_file: live } });
    }
    expect(statSync(`${database}-wal`).ino).toBe(walBefore);
    expect(existsSync(`${database}-journal`)).toBe(false);
    expect(readFileSync(database).subarray(0, 15).toString()).toBe('SQLite format 3');
    // The daemon's connection and a new one both still read and write.
    await ctx.users.create({ login: 'after-backup', email: 'after@example.com', role: 'member' }, 'test');
    const users = await runCli(['users', 'list', '--search', 'after-backup', '--json'], { db: t.db });
    expect(users.json<Array<{ login: string }>>().map((u) => u.login)).toEqual(['after-backup']);
    // A file beside the database under another name is a backup like any other.
    const beside = await runCli(['db', 'backup', `${database}-copy`, '--json'], { db: t.db });
    expect(beside.code, beside.stderr).toBe(0);
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
