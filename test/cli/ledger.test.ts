import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/context.js';
import { runCli } from '../helpers/cli.js';

for (const dialect of dialects) {
  describe(`cashtrack ledger [${dialect}]`, () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase(dialect);
      expect((await runCli(['db', 'migrate'], { db })).code).toBe(0);
      expect((await runCli(['users', 'create', 'mia', '--email', 'mia@example.com'], { db })).code).toBe(0);
    });
    afterAll(() => db.drop());

    it('adjusts by login, lists entries and members, reverses, and verifies clean', async () => {
      const credit = await runCli(['ledger', 'adjust', 'mia', 'credit', '20.00', '--note', 'support ticket 42', '--json'], { db });
      expect(credit.code).toBe(0);
      const { entry, balance } = credit.json<{ entry: { id: number; amount: string }; balance: { available: string } }>();
      expect(entry.amount).toBe('20.00');
      expect(balance.available).toBe('20.00');
      const over = await runCli(['ledger', 'adjust', 'mia', 'debit', '25.00', '--note', 'too much'], { db });
      expect(over.code).toBe(1);
      expect(over.stderr).toMatch(/^svc_insufficient_funds: /);
      const entries = await runCli(['ledger', 'entries', 'mia', '--json'], { db });
      expect(entries.json<unknown[]>()).toHaveLength(1);
      // Other tests add members of their own: the list is narrowed to this test's member.
      const members = await runCli(['ledger', 'members', '--search', 'mia', '--json'], { db });
      expect(members.json<{ login: string; available: string }[]>()).toEqual([expect.objectContaining({ login: 'mia', available: '20.00' })]);
      const one = await runCli(['ledger', 'members', '--member', 'mia', '--json'], { db });
      expect(one.json<{ login: string; currency: string }[]>()).toEqual([expect.objectContaining({ login: 'mia', currency: 'USD' })]);
      const rev = await runCli(['ledger', 'reverse', String(entry.id), '--note', 'duplicate', '--json'], { db });
      expect(rev.json<{ reversal: { amount: string } }>().reversal.amount).toBe('-20.00');
      const verify = await runCli(['ledger', 'verify', '--json'], { db });
      expect(verify.code).toBe(0);
      expect(verify.json()).toEqual({ ok: true, discrepancies: [] });
    });

    it('runs an adjustment once per idempotency key and refuses the key with another body', async () => {
      expect((await runCli(['users', 'create', 'ivy', '--email', 'ivy@example.com'], { db })).code).toBe(0);
      const args = ['ledger', 'adjust', 'ivy', 'credit', '1.00', '--note', 'retry-safe', '--idempotency-key', 'cli-key-1', '--json'];
      const first = await runCli(args, { db });
      const second = await runCli(args, { db });
      expect(second.json()).toEqual(first.json());
      const other = await runCli(['ledger', 'adjust', 'ivy', 'credit', '2.00', '--note', 'retry-safe', '--idempotency-key', 'cli-key-1'], { db });
      expect(other.code).toBe(1);
      expect(other.stderr).toMatch(/^svc_idempotency_key_reused: /);
    });

    it('exits 1 and lists every discrepancy when the ledger is damaged', async () => {
      // A database of its own: the damage would fail every other test's clean verify.
      const damaged = await createTestDatabase(dialect);
      try {
        expect((await runCli(['db', 'migrate'], { db: damaged })).code).toBe(0);
        expect((await runCli(['users', 'create', 'dan', '--email', 'dan@example.com'], { db: damaged })).code).toBe(0);
        expect((await runCli(['ledger', 'adjust', 'dan', 'credit', '5.00', '--note', 'seed'], { db: damaged })).code).toBe(0);
        const { Database } = await import('../../src/db/database.js');
        const raw = new Database({ url: damaged.url });
        await raw.execute("UPDATE balances SET available = available + 7 WHERE currency = 'USD'");
        await raw.close();
        const r = await runCli(['ledger', 'verify'], { db: damaged });
        expect(r.code).toBe(1);
        expect(r.stdout).toMatch(/balance_mismatch member \d+ USD/);
      } finally {
        await damaged.drop();
      }
    });

    it('refuses bad input with the REST codes', async () => {
      const r = await runCli(['ledger', 'adjust', 'mia', 'sideways', '1.00', '--note', 'x'], { db });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^rest_invalid_param: .*type/);
      const missing = await runCli(['ledger', 'adjust', 'mia', 'credit', '1.00'], { db });
      expect(missing.code).toBe(2);
    });
  });
}
