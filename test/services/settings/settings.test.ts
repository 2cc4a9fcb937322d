import { expect, it } from 'vitest';
import { describeEachDialect } from '../../helpers/context.js';

describeEachDialect('settings revisions', (use) => {
  it('answers 0 before the first bump, and a bump moves only its own revision', async () => {
    const { settings } = use().ctx;
    expect(await settings.revision('test_a_revision')).toBe('0');
    const auth = await settings.authRevision();
    await settings.bumpRevision('test_a_revision');
    const a = await settings.revision('test_a_revision');
    expect(a).not.toBe('0');
    expect(await settings.revision('test_b_revision')).toBe('0');
    expect(await settings.authRevision()).toBe(auth);
    await settings.bumpAuthRevision();
    expect(await settings.authRevision()).not.toBe(auth);
    expect(await settings.revision('test_a_revision')).toBe(a);
  });

  it('shows a bump committed in a transaction only once it commits', async () => {
    const { settings, db } = use().ctx;
    const before = await settings.revision('test_c_revision');
    await expect(
      db.transaction(async (t) => {
        await settings.bumpRevision('test_c_revision', t);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await settings.revision('test_c_revision')).toBe(before);
    await db.transaction((t) => settings.bumpRevision('test_c_revision', t));
    expect(await settings.revision('test_c_revision')).not.toBe(before);
  });

  it('shares reads among concurrent callers of one name, each seeing a value read after its call began', async () => {
    const { settings, db } = use().ctx;
    await settings.bumpRevision('test_d_revision');
    const reads: string[] = [];
    const select = db.select.bind(db);
    db.select = (async (sql: string, params?: unknown[], t?: never) => {
      if (params?.[0] === 'test_d_revision') reads.push(sql);
      return select(sql, params, t);
    }) as typeof db.select;
    try {
      const first = settings.revision('test_d_revision');
      const rest = Array.from({ length: 10 }, () => settings.revision('test_d_revision'));
      const values = await Promise.all([first, ...rest]);
      expect(new Set(values).size).toBe(1);
      // The first read, and one shared by all who arrived while it ran.
      expect(reads).toHaveLength(2);
    } finally {
      db.select = select;
    }
  });
});
