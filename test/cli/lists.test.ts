// The list options of the CLI are the REST list's parameters (the same schemas and service calls):
// --status a,b and --status-exclude, --after/--before (strictly), --orderby/--order with the id
// tiebreak, and a bad value named as a usage error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/context.js';
import { runCli } from '../helpers/cli.js';

type Json = Record<string, any>;

for (const dialect of dialects) {
  describe(`cashtrack list options [${dialect}]`, () => {
    let db: TestDatabase;
    const cli = (args: string[]) => runCli(args, { db });
    beforeAll(async () => {
      db = await createTestDatabase(dialect);
      expect((await cli(['db', 'migrate'])).code).toBe(0);
      expect((await cli(['users', 'create', 'lia', '--email', 'lia@example.com'])).code).toBe(0);
      expect((await cli(['ledger', 'adjust', 'lia', 'credit', '500.00', '--note', 'seed'])).code).toBe(0);
      for (const [i, amount] of ['30.00', '10.00', '30.00', '20.00'].entries()) {
        const res = await cli(['payouts', 'create', 'lia', amount, '--method', i % 2 ? 'paypal' : 'bank_transfer', '--json']);
        expect(res.code).toBe(0);
      }
      const ids = (await cli(['payouts', 'list', '--json'])).json<Json[]>().map((p) => p.id as number);
      expect((await cli(['payouts', 'complete', String(ids[0])])).code).toBe(0);
      expect((await cli(['payouts', 'cancel', String(ids[1]), '--reason', 'wrong IBAN'])).code).toBe(0);
      for (const [n, status] of [
        ['1', 'pending'],
        ['2', 'approved'],
        ['3', 'declined'],
      ]) {
        const res = await cli([
          'orders',
          'create',
          '--network',
          'awin',
          '--transaction-id',
          `CLI-${n}`,
          '--sale-amount',
          '100.00',
          '--commission',
          `${n}0.00`,
          '--status',
          status,
          '--note',
          'claim',
        ]);
        expect(res.code, res.stderr).toBe(0);
      }
    });
    afterAll(() => db.drop());

    it('lists payouts in some statuses, by amount both ways with ties by id, in a method', async () => {
      const all = (await cli(['payouts', 'list', '--json'])).json<Json[]>();
      const asc = await cli(['payouts', 'list', '--status', 'pending,paid', '--orderby', 'amount', '--order', 'asc', '--json']);
      expect(asc.code, asc.stderr).toBe(0);
      const expected = all
        .filter((p) => p.status !== 'cancelled')
        .sort((a, b) => Number(a.amount) - Number(b.amount) || a.id - b.id)
        .map((p) => p.id);
      expect(asc.json<Json[]>().map((p) => p.id)).toEqual(expected);
      const desc = await cli(['payouts', 'list', '--status-exclude', 'cancelled', '--orderby', 'amount', '--order', 'desc', '--json']);
      expect(desc.json<Json[]>().map((p) => p.id)).toEqual([...expected].reverse());
      const paypal = (await cli(['payouts', 'list', '--method', 'paypal', '--json'])).json<Json[]>();
      expect(paypal.map((p) => p.method)).toEqual(['paypal', 'paypal']);
    });

    it('lists orders in some statuses, sorted, and strictly after an instant', async () => {
      const res = await cli(['orders', 'list', '--status', 'pending,declined', '--orderby', 'commission', '--order', 'asc', '--json']);
      expect(res.code, res.stderr).toBe(0);
      expect(res.json<Json[]>().map((o) => [o.transaction_id, o.status])).toEqual([
        ['CLI-1', 'pending'],
        ['CLI-3', 'declined'],
      ]);
      const all = (await cli(['orders', 'list', '--orderby', 'id', '--order', 'asc', '--json'])).json<Json[]>();
      const after = await cli(['orders', 'list', '--after', all[0].created_at, '--json']);
      expect(after.json<Json[]>().every((o) => o.created_at > all[0].created_at)).toBe(true);
      expect(after.json<Json[]>().map((o) => o.id)).not.toContain(all[0].id);
    });

    it("lists a member's ledger entries of some types, sorted by amount", async () => {
      const res = await cli(['ledger', 'entries', 'lia', '--type', 'payout,payout_return', '--orderby', 'amount', '--order', 'asc', '--json']);
      expect(res.code, res.stderr).toBe(0);
      const entries = res.json<Json[]>();
      expect(new Set(entries.map((e) => e.type))).toEqual(new Set(['payout', 'payout_return']));
      expect(entries.map((e) => Number(e.amount))).toEqual(entries.map((e) => Number(e.amount)).sort((a, b) => a - b));
    });

    it('names a bad status or sort field as a usage error', async () => {
      const bad = await cli(['payouts', 'list', '--status', 'pending,lost']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--status');
      expect(bad.stderr).toContain('"lost" is not one of pending, paid, cancelled');
      const field = await cli(['orders', 'list', '--orderby', 'colour']);
      expect(field.code).toBe(2);
      expect(field.stderr).toContain('--orderby');
    });
  });
}
