import { beforeAll, describe, expect, it } from 'vitest';
import { GroupCommit, UnitOutcome, type RunTransaction } from '../../src/db/group-commit.js';
import type { Transaction } from '../../src/db/transaction.js';
import { ServiceError } from '../../src/errors.js';
import { describeEachDialect } from '../helpers/context.js';
import { inOneGroup as heldGroup, waitingUnits } from '../helpers/groups.js';

/** A promise and the function that settles it. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}

describe('group commit', () => {
  it('runs a lone unit at once in its own transaction, with no timer in between', () => {
    const calls: unknown[] = [];
    const run: RunTransaction = (fn, retries) => {
      calls.push([fn, retries]);
      return Promise.resolve(undefined as never);
    };
    const groups = new GroupCommit(run, 10, 1);
    const unit = async () => 1;
    void groups.run(unit);
    // Synchronously: the transaction started in the same tick as the submission.
    expect(calls).toEqual([[unit, undefined]]);
  });
});

describeEachDialect('group commit', (use) => {
  const rows = async () => (await use().ctx.db.select<{ v: unknown }>('SELECT v FROM gc_rows ORDER BY id')).map((r) => String(r.v));

  /** A group commit of its own (one group at a time) over the test database. */
  const groupsOf = () => new GroupCommit((fn, retries) => use().ctx.db.transaction(fn, retries), 64, 1);

  /** Runs `units` in one group. */
  const inOneGroup = <R>(groups: GroupCommit, units: ((t: Transaction) => Promise<R>)[]) =>
    heldGroup(
      groups,
      units.map((u) => () => groups.run(u)),
    );

  const insert = (v: string, t: Transaction) => use().ctx.db.execute('INSERT INTO gc_rows (v) VALUES (?)', [v], t);

  beforeAll(async () => {
    const { db } = use().ctx;
    const id = db.dialect === 'mysql' ? 'INTEGER PRIMARY KEY AUTO_INCREMENT' : 'INTEGER PRIMARY KEY';
    await db.execute(`CREATE TABLE gc_rows (id ${id}, v VARCHAR(20) NOT NULL UNIQUE)`);
  });

  it('runs the units that arrive meanwhile in one transaction, and answers each only after it committed', async () => {
    const { db } = use().ctx;
    await db.execute('DELETE FROM gc_rows');
    const groups = groupsOf();
    const seenAtAnswer: string[][] = [];
    const hooks: string[] = [];
    const units = ['a', 'b', 'c'].map((v) => async (t: Transaction) => {
      await insert(v, t);
      t.afterCommit(() => hooks.push(v));
      return v;
    });
    const hold = gate();
    const first = groups.run(() => hold.wait);
    const answers = units.map((u) => groups.run(u).then(async (v) => (seenAtAnswer.push(await rows()), v)));
    await waitingUnits(groups, 3);
    hold.open();
    await first;
    expect(await Promise.all(answers)).toEqual(['a', 'b', 'c']);
    // Each answer came after the commit of all three (read on another connection), hooks before answers.
    expect(seenAtAnswer).toEqual([
      ['a', 'b', 'c'],
      ['a', 'b', 'c'],
      ['a', 'b', 'c'],
    ]);
    expect(hooks).toEqual(['a', 'b', 'c']);
    expect(groups.stats).toEqual({ groups: 1, grouped: 3, failed: 0 });
  });

  it("rolls back a refused unit alone (and drops its after-commit work), answering its refusal after the others' commit", async () => {
    const { db } = use().ctx;
    await db.execute('DELETE FROM gc_rows');
    const groups = groupsOf();
    const hooks: string[] = [];
    const refusal = new ServiceError('svc_test_refused', 'no', 409);
    const taken = new (class extends UnitOutcome {})();
    const settled = await inOneGroup(groups, [
      async (t) => (await insert('a', t), 'a'),
      async (t) => {
        await insert('b', t);
        t.afterCommit(() => hooks.push('b'));
        throw refusal;
      },
      async (t) => {
        await insert('c', t);
        throw taken;
      },
      async (t) => {
        // A unit sees what the units before it in the group wrote (and not what was rolled back).
        const seen = await db.select<{ v: unknown }>('SELECT v FROM gc_rows ORDER BY id', [], t);
        await insert('d', t);
        return seen.map((r) => String(r.v)).join('');
      },
    ]);
    expect(settled).toEqual([
      { status: 'fulfilled', value: 'a' },
      { status: 'rejected', reason: refusal },
      { status: 'rejected', reason: taken },
      { status: 'fulfilled', value: 'a' },
    ]);
    expect(await rows()).toEqual(['a', 'd']);
    expect(hooks).toEqual([]);
    expect(groups.stats).toEqual({ groups: 1, grouped: 4, failed: 0 });
  });

  it('rolls back only the inner savepoint of a unit that catches its failure', async () => {
    const { db } = use().ctx;
    await db.execute('DELETE FROM gc_rows');
    const groups = groupsOf();
    const settled = await inOneGroup(groups, [
      async (t) => {
        await insert('outer', t);
        await t.savepoint(async (inner) => (await insert('inner', inner), Promise.reject(new ServiceError('svc_test', 'x', 400)))).catch(() => {});
        return 'kept';
      },
      async (t) => (await insert('next', t), 'next'),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled']);
    expect(await rows()).toEqual(['outer', 'next']);
  });

  it('runs every unit again alone, in order, when the group fails as a whole', async () => {
    const { db } = use().ctx;
    await db.execute('DELETE FROM gc_rows');
    await db.execute("INSERT INTO gc_rows (v) VALUES ('taken')");
    const groups = groupsOf();
    const runs: string[] = [];
    const unit = (v: string) => async (t: Transaction) => {
      runs.push(v);
      await insert(v, t);
      return v;
    };
    // The unique violation is a fault, not a refusal: the group rolls back, each unit runs alone.
    const settled = await inOneGroup(groups, [unit('a'), unit('taken'), unit('b')]);
    expect(settled[0]).toEqual({ status: 'fulfilled', value: 'a' });
    expect(settled[1]).toMatchObject({ status: 'rejected' });
    expect(settled[2]).toEqual({ status: 'fulfilled', value: 'b' });
    expect(runs).toEqual(['a', 'taken', 'a', 'taken', 'b']);
    expect(await rows()).toEqual(['taken', 'a', 'b']);
    expect(groups.stats).toEqual({ groups: 0, grouped: 0, failed: 1 });
  });

  it('keeps the rest of the group when a lone transaction behind it fails, and never leaves a caller waiting', async () => {
    const groups = groupsOf();
    await expect(groups.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(groups.run(async () => 'after')).resolves.toBe('after');
  });
});
