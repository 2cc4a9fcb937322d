// What the database layer does for a cluster (Galera): a statement outside a transaction that is
// aborted as a deadlock (how a statement loses a certification conflict) runs again; a node cut off
// from its cluster reads as "database unavailable"; and every MariaDB connection asks for causal
// reads, so a daemon on one node sees what another node committed before.
import { describe, expect, it } from 'vitest';
import { Database } from '../../src/db/database.js';
import { isDeadlock, translateDbError } from '../../src/db/errors.js';
import { describeEachDialect } from '../helpers/context.js';

const deadlock = () =>
  Object.assign(new Error('Deadlock found when trying to get lock; try restarting transaction'), { code: 'ER_LOCK_DEADLOCK', errno: 1213 });

/** A MariaDB handle whose driver is replaced by `run` (no server is contacted). */
function withDriver(run: () => Promise<{ affected: number; insertId: number | null }>): Database {
  const db = new Database({ url: 'mysql://root@127.0.0.1:9/none' });
  (db as unknown as { direct: { run: typeof run } }).direct = { run };
  return db;
}

describe('statements outside a transaction on MariaDB', () => {
  it('runs a statement aborted as a deadlock (a lost certification conflict) again, and counts it', async () => {
    let calls = 0;
    const db = withDriver(async () => {
      if (++calls < 3) throw deadlock();
      return { affected: 1, insertId: null };
    });
    expect(await db.execute('UPDATE jobs SET status = ? WHERE id = ?', ['running', 1])).toEqual({ affected: 1, insertId: null });
    expect(calls).toBe(3);
    expect(db.retriedStatements).toBe(2);
  });

  it('gives up after five tries, and never retries other errors', async () => {
    let calls = 0;
    const always = withDriver(async () => {
      calls++;
      throw deadlock();
    });
    await expect(always.execute('DELETE FROM jobs')).rejects.toMatchObject({ errno: 1213 });
    expect(calls).toBe(5);
    let other = 0;
    const duplicate = withDriver(async () => {
      other++;
      throw Object.assign(new Error('Duplicate entry'), { code: 'ER_DUP_ENTRY', errno: 1062 });
    });
    await expect(duplicate.execute('INSERT INTO jobs (id) VALUES (1)')).rejects.toMatchObject({ errno: 1062 });
    expect(other).toBe(1);
  });
});

describe('cluster errors', () => {
  it('recognises a deadlock by its code or number, wrapped or not', () => {
    expect(isDeadlock(deadlock())).toBe(true);
    expect(isDeadlock({ original: { errno: 1213 } })).toBe(true);
    expect(isDeadlock({ errno: 1205 })).toBe(false);
    expect(isDeadlock(null)).toBe(false);
  });

  it('answers 503 svc_database_unavailable for a Galera node outside the primary component, and nothing special for other 1047 errors', () => {
    const notReady = Object.assign(new Error('WSREP has not yet prepared node for application use'), { code: 'ER_UNKNOWN_COM_ERROR', errno: 1047 });
    expect(translateDbError(notReady)).toMatchObject({ code: 'svc_database_unavailable', status: 503, headers: { 'Retry-After': '5' } });
    expect(translateDbError({ name: 'SequelizeDatabaseError', original: notReady })).toMatchObject({ code: 'svc_database_unavailable' });
    expect(translateDbError(Object.assign(new Error('Unknown command'), { code: 'ER_UNKNOWN_COM_ERROR', errno: 1047 }))).toBeNull();
  });
});

describeEachDialect('connections', (use, dialect) => {
  it.runIf(dialect === 'mysql')('ask for causal reads (wsrep_sync_wait = 1) before their first statement', async () => {
    const { db } = use().ctx;
    // Several at once, so that more than one pooled connection answers.
    const rows = await Promise.all(Array.from({ length: 4 }, () => db.select<{ w: unknown }>('SELECT @@SESSION.wsrep_sync_wait AS w')));
    for (const [row] of rows) expect(Number(row.w)).toBe(1);
    const inTransaction = await db.transaction((t) => db.select<{ w: unknown }>('SELECT @@SESSION.wsrep_sync_wait AS w', [], t));
    expect(Number(inTransaction[0].w)).toBe(1);
  });

  it('run plain statements outside a transaction as before', async () => {
    const { db } = use().ctx;
    await db.execute('INSERT INTO settings (name, value) VALUES (?, ?)', ['cluster-test', 'a']);
    expect((await db.execute('UPDATE settings SET value = ? WHERE name = ?', ['b', 'cluster-test'])).affected).toBe(1);
    expect(await db.select('SELECT value FROM settings WHERE name = ?', ['cluster-test'])).toEqual([{ value: 'b' }]);
  });
});

describeEachDialect('transactions', (use) => {
  it('run again up to twice the retries after deadlocks (lost certification conflicts), and the given retries after lock waits', async () => {
    const { db } = use().ctx;
    let runs = 0;
    const before = db.retriedTransactions;
    await expect(
      db.transaction(async () => {
        runs++;
        throw deadlock();
      }, 3),
    ).rejects.toMatchObject({ errno: 1213 });
    expect(runs).toBe(7);
    expect(db.retriedTransactions - before).toBe(6);
    runs = 0;
    await expect(
      db.transaction(async () => {
        runs++;
        throw Object.assign(new Error('Lock wait timeout exceeded'), { code: 'ER_LOCK_WAIT_TIMEOUT', errno: 1205 });
      }, 3),
    ).rejects.toMatchObject({ errno: 1205 });
    expect(runs).toBe(4);
    runs = 0;
    await expect(
      db.transaction(async () => {
        runs++;
        throw deadlock();
      }, 0),
    ).rejects.toMatchObject({ errno: 1213 });
    expect(runs).toBe(1);
  });
});
