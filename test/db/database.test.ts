import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildContext } from '../../src/context.js';
import { Database, parseDatabaseUrl } from '../../src/db/database.js';
import { isTransientDbError, translateDbError } from '../../src/db/errors.js';
import { readSum } from '../../src/db/values.js';
import { describeEachDialect } from '../helpers/context.js';

describe('database URLs', () => {
  it('parses sqlite, mysql and mariadb URLs', () => {
    expect(parseDatabaseUrl('sqlite:/tmp/x.sqlite')).toEqual({ dialect: 'sqlite', storage: '/tmp/x.sqlite' });
    expect(parseDatabaseUrl('sqlite:///tmp/y.sqlite').storage).toBe('/tmp/y.sqlite');
    expect(parseDatabaseUrl('sqlite:data/z.sqlite').storage).toMatch(/\/data\/z\.sqlite$/);
    expect(parseDatabaseUrl('mariadb://u:p%40ss@db.example:3307/cash')).toEqual({
      dialect: 'mysql',
      host: 'db.example',
      port: 3307,
      username: 'u',
      password: 'p@ss',
      database: 'cash',
    });
    expect(() => parseDatabaseUrl('mysql://root@127.0.0.1:3306/')).toThrow(/names no database/);
  });

  it('takes a Unix socket for a server on the same host, and refuses other parameters', () => {
    expect(parseDatabaseUrl('mysql://root@localhost/cash?socket=/run/mysqld/mysqld.sock')).toMatchObject({
      dialect: 'mysql',
      database: 'cash',
      socketPath: '/run/mysqld/mysqld.sock',
    });
    expect(() => parseDatabaseUrl('mysql://root@localhost/cash?socket=mysqld.sock')).toThrow(/absolute path/);
    expect(() => parseDatabaseUrl('mysql://root@localhost/cash?ssl=true')).toThrow(/unknown database URL parameter ssl/);
    expect(() => new Database({ url: 'mysql://root@localhost/cash?sock=/x' })).toThrow(/CASHTRACK_DATABASE_URL/);
  });
});

describe.runIf(process.env.CASHTRACK_TEST_MYSQL_URL)('a MariaDB server on the same host', () => {
  it('is reached through its Unix socket when the URL names one', async () => {
    const tcp = new Database({ url: process.env.CASHTRACK_TEST_MYSQL_URL! });
    try {
      const [{ socket, host }] = await tcp.select<{ socket: string; host: string }>(
        'SELECT @@socket AS socket, HOST AS host FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()',
      );
      expect(host).toMatch(/:\d+$/);
      const url = new URL(process.env.CASHTRACK_TEST_MYSQL_URL!);
      url.search = `?socket=${socket}`;
      const local = new Database({ url: url.toString() });
      try {
        // A socket connection has no port in its host.
        const [row] = await local.select<{ host: string }>('SELECT HOST AS host FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()');
        expect(row.host).toBe('localhost');
        expect(await local.transaction(async (t) => (await local.select<{ n: unknown }>('SELECT 1 AS n', [], t))[0].n)).toEqual(1);
      } finally {
        await local.close();
      }
    } finally {
      await tcp.close();
    }
  });
});

describe('transient errors', () => {
  it('recognises deadlocks, lock waits and SQLITE_BUSY, and nothing else', () => {
    expect(isTransientDbError({ original: { errno: 1213 } })).toBe(true);
    expect(isTransientDbError({ parent: { errno: 1205 } })).toBe(true);
    expect(isTransientDbError({ original: { code: 'SQLITE_BUSY' } })).toBe(true);
    expect(isTransientDbError({ original: { errno: 1062 } })).toBe(false);
    expect(translateDbError({ original: { code: 'SQLITE_BUSY' } })).toMatchObject({ code: 'svc_database_busy', status: 503 });
  });
});

describeEachDialect('transactions', (use) => {
  it('retries a transaction that met a transient error and commits once', async () => {
    const { db } = use().ctx;
    await db.execute("INSERT INTO settings (name, value) VALUES ('retry-test', '0')");
    let attempts = 0;
    await db.transaction(async (t) => {
      attempts++;
      await db.execute("UPDATE settings SET value = value + 1 WHERE name = 'retry-test'", [], t);
      if (attempts < 3) throw Object.assign(new Error('deadlock'), { original: { errno: 1213, code: 'ER_LOCK_DEADLOCK' } });
    });
    expect(attempts).toBe(3);
    expect((await db.select<{ value: string }>("SELECT value FROM settings WHERE name = 'retry-test'"))[0].value).toBe('1');
  });

  it('does not retry other errors, and rolls back', async () => {
    const { db } = use().ctx;
    let attempts = 0;
    await expect(
      db.transaction(async (t) => {
        attempts++;
        await db.execute("UPDATE settings SET value = '99' WHERE name = 'retry-test'", [], t);
        throw new Error('business rule');
      }),
    ).rejects.toThrow('business rule');
    expect(attempts).toBe(1);
    expect((await db.select<{ value: string }>("SELECT value FROM settings WHERE name = 'retry-test'"))[0].value).toBe('1');
  });

  it('runs many concurrent write transactions without losing one', async () => {
    const { db } = use().ctx;
    await db.execute("INSERT INTO settings (name, value) VALUES ('counter', '0')");
    await Promise.all(
      Array.from({ length: 40 }, () =>
        db.transaction(async (t) => {
          const [row] = await db.select<{ value: string }>(`SELECT value FROM settings WHERE name = 'counter'${db.forUpdate()}`, [], t);
          await db.execute("UPDATE settings SET value = ? WHERE name = 'counter'", [String(Number(row.value) + 1)], t);
        }),
      ),
    );
    expect((await db.select<{ value: string }>("SELECT value FROM settings WHERE name = 'counter'"))[0].value).toBe('40');
  });
});

describeEachDialect('dialect helpers', (use, dialect) => {
  let tables = 0;
  /** A table of this test's own, so no test sees another's rows. */
  async function table(): Promise<string> {
    const name = `helper_${++tables}`;
    await use().ctx.db.execute(
      `CREATE TABLE ${name} (k VARCHAR(32) NOT NULL, c VARCHAR(8) NOT NULL, n BIGINT NOT NULL DEFAULT 0, m BIGINT NOT NULL DEFAULT 0, s VARCHAR(32) NULL, PRIMARY KEY (k, c))`,
    );
    return name;
  }
  const rows = async (name: string) =>
    (await use().ctx.db.select<Record<string, unknown>>(`SELECT k, c, n, m, s FROM ${name} ORDER BY k, c`)).map((r) => ({
      k: r.k,
      c: r.c,
      n: Number(r.n),
      m: Number(r.m),
      s: r.s,
    }));

  it('insertIgnore inserts the new rows, leaves the existing ones alone and counts the inserted', async () => {
    const { db } = use().ctx;
    const name = await table();
    expect((await db.execute(db.insertIgnore(name, ['k', 'c', 'n']), ['a', 'EUR', 1])).affected).toBe(1);
    const { affected } = await db.execute(db.insertIgnore(name, ['k', 'c', 'n'], 3), ['a', 'EUR', 99, 'b', 'EUR', 2, 'a', 'USD', 3]);
    expect(affected).toBe(2);
    expect(await rows(name)).toEqual([
      { k: 'a', c: 'EUR', n: 1, m: 0, s: null },
      { k: 'a', c: 'USD', n: 3, m: 0, s: null },
      { k: 'b', c: 'EUR', n: 2, m: 0, s: null },
    ]);
  });

  it('upsert inserts a new row and gives an existing one the listed columns of the incoming row', async () => {
    const { db } = use().ctx;
    const name = await table();
    const sql = db.upsert(name, ['k', 'c', 'n', 's'], ['k', 'c'], ['s']);
    await db.execute(sql, ['a', 'EUR', 1, 'first']);
    await db.execute(sql, ['a', 'EUR', 50, 'second']);
    await db.transaction((t) =>
      db.execute(db.upsert(name, ['k', 'c', 'n', 's'], ['k', 'c'], ['n', 's'], 2), ['a', 'EUR', 7, 'third', 'b', 'EUR', 8, 'new'], t),
    );
    expect(await rows(name)).toEqual([
      { k: 'a', c: 'EUR', n: 7, m: 0, s: 'third' },
      { k: 'b', c: 'EUR', n: 8, m: 0, s: 'new' },
    ]);
  });

  it('upsert takes expressions over the existing and the incoming row, their placeholders after the rows', async () => {
    const { db } = use().ctx;
    const name = await table();
    const sql = db.upsert(name, ['k', 'c', 'n', 'm'], ['k', 'c'], { n: `n + ${db.incoming('n')} + ?`, m: `CASE WHEN m >= ? THEN 0 ELSE m + 1 END` });
    await db.execute(sql, ['a', 'EUR', 5, 0, 100, 2]);
    expect(await rows(name)).toEqual([{ k: 'a', c: 'EUR', n: 5, m: 0, s: null }]);
    await db.execute(sql, ['a', 'EUR', 5, 0, 100, 2]);
    await db.execute(sql, ['a', 'EUR', 1, 0, 1000, 2]);
    expect(await rows(name)).toEqual([{ k: 'a', c: 'EUR', n: 1111, m: 2, s: null }]);
    await db.execute(sql, ['a', 'EUR', 1, 0, 0, 2]);
    expect(await rows(name)).toEqual([{ k: 'a', c: 'EUR', n: 1112, m: 0, s: null }]);
  });

  it('addToRows adds to existing rows, makes the missing ones and counts only those', async () => {
    const { db } = use().ctx;
    const name = await table();
    await db.execute(`INSERT INTO ${name} (k, c, n, m) VALUES ('a', 'EUR', 10, 1)`);
    const created = await db.transaction((t) =>
      db.addToRows(
        name,
        ['k', 'c'],
        ['n', 'm'],
        ['s'],
        [
          { key: ['a', 'EUR'], add: [5, -1], set: ['x'] },
          { key: ['b', 'EUR'], add: [-3, 2], set: ['y'] },
          { key: ['b', 'USD'], add: [4, 4], set: [null] },
        ],
        t,
      ),
    );
    expect(created).toBe(2);
    expect(await rows(name)).toEqual([
      { k: 'a', c: 'EUR', n: 15, m: 0, s: 'x' },
      { k: 'b', c: 'EUR', n: -3, m: 2, s: 'y' },
      { k: 'b', c: 'USD', n: 4, m: 4, s: null },
    ]);
    // Past one statement's chunk of 500 rows, still every row once.
    const many = Array.from({ length: 501 }, (_, i) => ({ key: [`k${i}`, 'EUR'], add: [i + 1, 1], set: [] as unknown[] }));
    expect(await db.transaction((t) => db.addToRows(name, ['k', 'c'], ['n', 'm'], [], many, t))).toBe(501);
    expect(await db.transaction((t) => db.addToRows(name, ['k', 'c'], ['n', 'm'], [], many, t))).toBe(0);
    const [sum] = await db.select<{ total: unknown; n: unknown }>(`SELECT SUM(n) AS total, COUNT(*) AS n FROM ${name} WHERE k LIKE 'k%'`);
    expect([Number(sum.total), Number(sum.n)]).toEqual([501 * 502, 501]);
  });

  it('forUpdate locks the rows read on MariaDB, and with skipLocked passes over those another transaction holds', async () => {
    const { db } = use().ctx;
    const name = await table();
    await db.execute(`INSERT INTO ${name} (k, c) VALUES ('a', 'EUR'), ('b', 'EUR')`);
    if (dialect === 'sqlite') {
      // One writer holds the whole database: no row locks, and the statements run as they are.
      expect([db.forUpdate(), db.forUpdate({ skipLocked: true })]).toEqual(['', '']);
      expect(await db.transaction((t) => db.select(`SELECT k FROM ${name} ORDER BY k${db.forUpdate({ skipLocked: true })}`, [], t))).toEqual([
        { k: 'a' },
        { k: 'b' },
      ]);
      return;
    }
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const holder = db.transaction(async (t) => {
      await db.select(`SELECT k FROM ${name} WHERE k = 'a'${db.forUpdate()}`, [], t);
      locked();
      await held;
    }, 0);
    await isLocked;
    const free = await db.transaction((t) => db.select<{ k: string }>(`SELECT k FROM ${name} ORDER BY k${db.forUpdate({ skipLocked: true })}`, [], t), 0);
    expect(free).toEqual([{ k: 'b' }]);
    release();
    await holder;
    expect(await db.transaction((t) => db.select(`SELECT k FROM ${name} ORDER BY k${db.forUpdate({ skipLocked: true })}`, [], t), 0)).toEqual([
      { k: 'a' },
      { k: 'b' },
    ]);
  });

  it('indexHint names an index for MariaDB and leaves the table bare on SQLite, the query answering alike', async () => {
    const { db } = use().ctx;
    const name = await table();
    await db.execute(`INSERT INTO ${name} (k, c, n) VALUES ('a', 'EUR', 1), ('b', 'EUR', 2)`);
    const from = db.indexHint(name, 'FORCE INDEX (PRIMARY)');
    expect(from).toBe(dialect === 'mysql' ? `${name} FORCE INDEX (PRIMARY)` : name);
    expect(await db.select(`SELECT k FROM ${from} WHERE k = ? AND c = ?`, ['b', 'EUR'])).toEqual([{ k: 'b' }]);
  });

  it('exactSum sums past 2^63 exactly', async () => {
    const { db } = use().ctx;
    const name = await table();
    const big = 2n ** 62n + 7n;
    await db.execute(`INSERT INTO ${name} (k, c, n) VALUES ('a', 'EUR', ?), ('b', 'EUR', ?), ('c', 'EUR', ?)`, [big, big, -3n]);
    const [row] = await db.select<Record<string, unknown>>(`SELECT ${db.exactSum('n', 'total')} FROM ${name}`);
    expect(readSum(row, 'total')).toBe(2n * big - 3n);
  });

  it('singleWriter and rowLocks tell the embedded database from the server', () => {
    const { db } = use().ctx;
    expect({ singleWriter: db.singleWriter, rowLocks: db.rowLocks }).toEqual(
      dialect === 'sqlite' ? { singleWriter: true, rowLocks: false } : { singleWriter: false, rowLocks: true },
    );
  });
});

describeEachDialect('placeholders', (use) => {
  it('refuses an object or an array bound to a placeholder instead of turning it into SQL', async () => {
    const { db } = use().ctx;
    await db.execute("INSERT INTO settings (name, value) VALUES ('placeholder-test', 'secret-value')");
    // mysql2's query expands an array into a list (older releases also an object into `key` = value,
    // making `value = ?` with {value: 1} the always-true (value = value) = 1).
    await expect(db.select('SELECT name FROM settings WHERE name = ? AND value = ?', ['placeholder-test', { value: 1 }])).rejects.toThrow(
      /SQL parameter 2 is an object/,
    );
    await expect(db.select('SELECT name FROM settings WHERE name IN (?)', [['placeholder-test', 'other']])).rejects.toThrow(/SQL parameter 1 is an array/);
    await expect(db.select('SELECT name FROM settings ORDER BY name LIMIT ?', [[0, 1000]])).rejects.toThrow(/SQL parameter 1 is an array/);
    await expect(db.execute('UPDATE settings SET value = ? WHERE name = ?', [{ value: 'changed' }, 'placeholder-test'])).rejects.toThrow(/is an object/);
    await expect(db.transaction((t) => db.execute('UPDATE settings SET value = ? WHERE name = ?', ['changed', ['placeholder-test']], t))).rejects.toThrow(
      /is an array/,
    );
    const [row] = await db.select<{ value: string }>('SELECT value FROM settings WHERE name = ?', ['placeholder-test']);
    expect(row.value).toBe('secret-value');
    // Values a placeholder does take still work: text, numbers, booleans, dates, bytes, null.
    const [ok] = await db.select<Record<string, unknown>>('SELECT ? AS t, ? AS n, ? AS b, ? AS d, ? AS x, ? AS z', [
      'a',
      1,
      true,
      new Date(0),
      Buffer.from('y'),
      null,
    ]);
    expect(ok.t).toBe('a');
    expect(ok.z).toBeNull();
  });
});

describeEachDialect('reads', (use) => {
  it('see what another connection committed since', async () => {
    const { ctx, config } = use();
    const other = new Database({ url: config.database.url });
    try {
      await ctx.db.execute("INSERT INTO settings (name, value) VALUES ('reads-test', 'one')");
      const sql = 'SELECT value FROM settings WHERE name = ?';
      expect(await ctx.db.select(sql, ['reads-test'])).toEqual([{ value: 'one' }]);
      await other.execute("UPDATE settings SET value = 'two' WHERE name = 'reads-test'");
      expect(await ctx.db.select(sql, ['reads-test'])).toEqual([{ value: 'two' }]);
    } finally {
      await other.close();
    }
  });
});

describe('SQLite connections', () => {
  it('use WAL, synchronous=FULL and a busy timeout', async () => {
    const { createTestDatabase } = await import('../helpers/context.js');
    const tdb = await createTestDatabase('sqlite');
    const db = new Database({ url: tdb.url, busyTimeoutMs: 4321 });
    try {
      expect(await db.select('PRAGMA journal_mode')).toEqual([{ journal_mode: 'wal' }]);
      expect(await db.select('PRAGMA synchronous')).toEqual([{ synchronous: 2 }]);
      expect(await db.select('PRAGMA busy_timeout')).toEqual([{ timeout: 4321 }]);
      await db.transaction(async (t) => {
        expect(await db.select('PRAGMA synchronous', [], t)).toEqual([{ synchronous: 2 }]);
      });
    } finally {
      await db.close();
      await tdb.drop();
    }
  });

  it('open a fresh file from several processes at the same moment (the switch to WAL is tried again, not failed)', async () => {
    // Switching a new file to WAL answers SQLITE_BUSY at once, without the busy handler, when
    // another connection opens it meanwhile: two daemons or a daemon and a command starting together.
    const root = mkdtempSync(join(tmpdir(), 'cashtrack-open-'));
    try {
      for (let round = 0; round < 40; round++) {
        const url = `sqlite:${join(root, `fresh-${round}.sqlite`)}`;
        const handles = Array.from({ length: 6 }, () => new Database({ url }));
        try {
          const modes = await Promise.all(handles.map((d) => d.select<{ journal_mode: string }>('PRAGMA journal_mode')));
          expect(modes.map((m) => m[0].journal_mode)).toEqual(handles.map(() => 'wal'));
        } finally {
          await Promise.all(handles.map((d) => d.close()));
        }
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

// SQLite only: MariaDB's files are the server's.
describe('SQLite files', () => {
  const modeOf = (path: string) => statSync(path).mode & 0o777;

  it('creates the database directory 0700 and the database, -wal and -shm files 0600', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cashtrack-files-'));
    const file = join(root, 'new', 'nested', 'cashtrack.sqlite');
    const db = new Database({ url: `sqlite:${file}` });
    try {
      await db.execute('CREATE TABLE t (x INTEGER)');
      await db.transaction((t) => db.execute('INSERT INTO t (x) VALUES (1)', [], t));
      expect((await db.select<{ x: number }>('SELECT x FROM t'))[0].x).toBe(1);
      expect(modeOf(join(root, 'new'))).toBe(0o700);
      expect(modeOf(dirname(file))).toBe(0o700);
      for (const f of [file, `${file}-wal`, `${file}-shm`]) expect(modeOf(f), f).toBe(0o600);
    } finally {
      await db.close();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('tightens a database and its -wal and -shm files that others could read', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cashtrack-files-'));
    const file = join(root, 'cashtrack.sqlite');
    const first = new Database({ url: `sqlite:${file}` });
    await first.execute('CREATE TABLE t (x INTEGER)');
    // An older release's files: world-readable. (Closing checkpoints and removes -wal and -shm,
    // so they are made again, readable too, while the first handle is still open.)
    const second = new Database({ url: `sqlite:${file}` });
    try {
      for (const f of [file, `${file}-wal`, `${file}-shm`]) chmodSync(f, 0o644);
      await second.execute('INSERT INTO t (x) VALUES (2)');
      for (const f of [file, `${file}-wal`, `${file}-shm`]) expect(modeOf(f), f).toBe(0o600);
    } finally {
      await second.close();
      await first.close();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('tightens the data directory when a context is built on it', async () => {
    const { createTestDatabase, testConfig } = await import('../helpers/context.js');
    const tdb = await createTestDatabase('sqlite');
    chmodSync(tdb.dataDir, 0o755);
    const ctx = buildContext(testConfig(tdb), { logStream: null });
    try {
      expect(modeOf(tdb.dataDir)).toBe(0o700);
    } finally {
      await ctx.close();
      await tdb.drop();
    }
  });
});
