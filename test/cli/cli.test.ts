import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERSION } from '../../src/cli/main.js';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/context.js';
import { runCli } from '../helpers/cli.js';

describe('cashtrack (no database)', () => {
  it('prints its version', async () => {
    const r = await runCli(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(VERSION);
  });

  it('prints help listing the commands', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    for (const c of ['serve', 'db', 'users', 'app-passwords', 'logs']) expect(r.stdout).toContain(c);
  });

  it('exits 2 on a missing subcommand, an unknown command or a missing option', async () => {
    expect((await runCli([])).code).toBe(2);
    expect((await runCli(['db'])).code).toBe(2);
    expect((await runCli(['logs', '--level', 'loud'])).code).toBe(2);
    expect((await runCli(['frobnicate'])).code).toBe(2);
    const r = await runCli(['users', 'create', 'x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--email');
  });

  it('with --json, reports every error as one JSON object on stderr and keeps the exit codes', async () => {
    const parse = (stderr: string) => {
      const lines = stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      return JSON.parse(lines[0]) as { code: string; message: string; data: Record<string, unknown> };
    };
    // Commander's own usage errors: a missing required option, a bad choice, an unknown option.
    const missing = await runCli(['users', 'create', 'x', '--json']);
    expect(missing.code).toBe(2);
    expect(parse(missing.stderr)).toEqual({ code: 'svc_usage', message: expect.stringContaining('--email'), data: { status: 400 } });
    const choice = await runCli(['users', 'create', 'x', '--email', 'x@example.com', '--role', 'root', '--json']);
    expect(choice.code).toBe(2);
    expect(parse(choice.stderr)).toMatchObject({ code: 'svc_usage', message: expect.stringContaining("'root' is invalid") });
    const unknown = await runCli(['users', 'list', '--frobnicate', '--json']);
    expect(unknown.code).toBe(2);
    expect(parse(unknown.stderr).code).toBe('svc_usage');
    expect(unknown.stderr).not.toContain('cashtrack --help');
    // The CLI's own usage errors, and a group run without a subcommand.
    const perPage = await runCli(['users', 'list', '--per-page', '101', '--json']);
    expect(perPage.code).toBe(2);
    expect(parse(perPage.stderr)).toEqual({ code: 'svc_usage', message: '--per-page must be between 1 and 100, got "101"', data: { status: 400 } });
    const group = await runCli(['ledger', '--json']);
    expect(group.code).toBe(2);
    expect(parse(group.stderr).code).toBe('svc_usage');
    // A service's refusal keeps its code and data; exit 1.
    const config = await runCli(['users', 'list', '--json'], { env: { CASHTRACK_PORT: 'eighty' } });
    expect(config.code).toBe(1);
    expect(parse(config.stderr)).toEqual({
      code: 'svc_invalid_config',
      message: expect.stringContaining('CASHTRACK_PORT'),
      data: { status: 500, key: 'server.port' },
    });
    const database = await runCli(['users', 'list', '--json'], { env: { CASHTRACK_DATABASE_URL: 'mysql://root@127.0.0.1:1/nowhere' } });
    expect(database.code).toBe(1);
    expect(parse(database.stderr)).toMatchObject({ code: 'svc_database_unavailable', data: { status: 503, retry_after: 5 } });
    // Without --json the same errors stay `code: message` lines.
    expect((await runCli(['users', 'list', '--per-page', '101'])).stderr).toBe('svc_usage: --per-page must be between 1 and 100, got "101"\n');
  });

  it('names the bad configuration key and exits 1', async () => {
    const r = await runCli(['users', 'list'], { env: { CASHTRACK_PORT: 'eighty' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^svc_invalid_config: Invalid configuration CASHTRACK_PORT \(server\.port\)/);
  });

  it('explains an unreachable database without a stack trace', async () => {
    const r = await runCli(['users', 'list'], { env: { CASHTRACK_DATABASE_URL: 'mysql://root@127.0.0.1:1/nowhere' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^svc_database_unavailable: /);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    const bad = await runCli(['users', 'list'], { env: { CASHTRACK_DATABASE_URL: 'mysql://root@127.0.0.1:3306/' } });
    expect(bad.stderr).toMatch(/^svc_invalid_config: .*names no database/);
  });

  it('requires a secret in production', async () => {
    const r = await runCli(['users', 'list'], { env: { CASHTRACK_ENV: 'production', CASHTRACK_DATABASE_URL: 'sqlite::memory:' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('CASHTRACK_SECRET');
  });
});

for (const dialect of dialects) {
  describe(`cashtrack commands [${dialect}]`, () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase(dialect);
      if (dialect === 'mysql') expect((await runCli(['db', 'migrate', '--json'], { db })).code).toBe(0);
    });
    afterAll(async () => {
      await db.drop();
    });

    it('reports the migration status', async () => {
      const r = await runCli(['db', 'status', '--json'], { db });
      expect(r.code).toBe(0);
      const status = r.json<{ dialect: string; pending: string[]; executed: string[] }>();
      expect(status.dialect).toBe(dialect);
      if (dialect === 'sqlite') expect(status.pending.length + status.executed.length).toBeGreaterThan(0);
      else expect(status.pending).toEqual([]);
    });

    it('creates users and lists them as JSON', async () => {
      const created = await runCli(['users', 'create', 'ann', '--email', 'ann@example.com', '--role', 'administrator', '--display-name', 'Ann A', '--json'], {
        db,
      });
      expect(created.code).toBe(0);
      expect(created.json()).toMatchObject({ login: 'ann', role: 'administrator', display_name: 'Ann A' });
      const dup = await runCli(['users', 'create', 'ann', '--email', 'x@example.com'], { db });
      expect(dup.code).toBe(1);
      expect(dup.stderr).toMatch(/^svc_user_exists: /);
      const list = await runCli(['users', 'list', '--search', 'an', '--json'], { db });
      expect(list.json<{ login: string }[]>().map((u) => u.login)).toEqual(['ann']);
    });

    it('rejects a role outside the list', async () => {
      const r = await runCli(['users', 'create', 'bo', '--email', 'bo@example.com', '--role', 'root'], { db });
      expect(r.code).toBe(2);
    });

    it('reads a login password from stdin', async () => {
      const r = await runCli(['users', 'create', 'pat', '--email', 'pat@example.com', '--password-stdin', '--json'], { db, stdin: 'a fine password\n' });
      expect(r.code).toBe(0);
      const short = await runCli(['users', 'create', 'sho', '--email', 'sho@example.com', '--password-stdin'], { db, stdin: 'short\n' });
      expect(short.code).toBe(1);
      expect(short.stderr).toMatch(/^svc_invalid_user:/);
    });

    it('imports a CSV and reports what it skipped', async () => {
      const file = join(db.dataDir, 'users.csv');
      writeFileSync(file, 'login,email,display_name\ncat,cat@example.com,Cat\nbad login,x@example.com,X\n');
      const r = await runCli(['users', 'import', file, '--json'], { db });
      expect(r.code).toBe(0);
      expect(r.json()).toEqual({ created: 1, skipped: [{ line: 3, login: 'bad login', code: 'svc_invalid_user', reason: expect.any(String) }] });
      const missing = await runCli(['users', 'import', join(db.dataDir, 'nope.csv')], { db });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/^svc_file_unreadable:/);
    });

    it('creates, lists and revokes application passwords', async () => {
      expect((await runCli(['users', 'create', 'kit', '--email', 'kit@example.com'], { db })).code).toBe(0);
      const created = await runCli(['app-passwords', 'create', 'kit', '--name', 'ci', '--json'], { db });
      expect(created.code).toBe(0);
      const { uuid, name, password } = created.json<{ uuid: string; name: string; password: string }>();
      expect(name).toBe('ci');
      expect(password).toMatch(/^([A-Za-z0-9]{4} ){5}[A-Za-z0-9]{4}$/);
      const list = await runCli(['app-passwords', 'list', 'kit', '--json'], { db });
      expect(list.json<{ uuid: string }[]>().map((p) => p.uuid)).toEqual([uuid]);
      expect(list.stdout).not.toContain(password.replace(/ /g, ''));
      expect((await runCli(['app-passwords', 'revoke', 'kit', uuid, '--json'], { db })).json()).toEqual({ revoked: true, uuid });
      const again = await runCli(['app-passwords', 'revoke', 'kit', uuid], { db });
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/^rest_application_password_not_found:/);
      const nobody = await runCli(['app-passwords', 'create', 'nobody', '--name', 'x'], { db });
      expect(nobody.stderr).toMatch(/^svc_user_not_found:/);
    });

    it('prints the log and prunes it', async () => {
      expect((await runCli(['users', 'create', 'lou', '--email', 'lou@example.com'], { db })).code).toBe(0);
      const list = await runCli(['logs', '--json', '--source', 'users'], { db });
      expect(list.code).toBe(0);
      expect(list.json<{ message: string }[]>().some((e) => e.message === 'User created')).toBe(true);
      const prune = await runCli(['logs', 'prune', '--days', '1', '--json'], { db });
      expect(prune.json()).toEqual({ deleted: 0, retention_days: 1 });
    });
  });
}

if (dialects.includes('mysql')) {
  describe('cashtrack on MariaDB with pending migrations', () => {
    it('refuses to run and names the command to run', async () => {
      const db = await createTestDatabase('mysql');
      try {
        const r = await runCli(['users', 'list'], { db });
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(/^svc_pending_migrations: .*cashtrack db migrate/);
      } finally {
        await db.drop();
      }
    });
  });
}
