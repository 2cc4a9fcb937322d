import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildContext } from '../../src/context.js';
import { createTestDatabase, dialects, testConfig, type TestDatabase } from '../helpers/context.js';
import { CLI_SECRET, runCli } from '../helpers/cli.js';

type Json = Record<string, any>;

for (const dialect of dialects) {
  describe(`cashtrack orders and referrals [${dialect}]`, () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase(dialect);
      expect((await runCli(['db', 'migrate'], { db })).code).toBe(0);
      for (const login of ['zoe', 'yan', 'hal', 'rex', 'ria'])
        expect((await runCli(['users', 'create', login, '--email', `${login}@example.com`], { db })).code).toBe(0);
    });
    afterAll(() => db.drop());

    it('creates, lists, shows, approves and assigns orders, and the ledger verifies clean', async () => {
      const created = await runCli(
        [
          'orders',
          'create',
          '--network',
          'awin',
          '--transaction-id',
          'CLI-1',
          '--sale-amount',
          '60.00',
          '--commission',
          '6.00',
          '--member',
          'zoe',
          '--note',
          'claim 7',
          '--json',
        ],
        { db },
      );
      expect(created.code).toBe(0);
      const order = created.json<Json>();
      expect(order).toMatchObject({ status: 'pending', cashback: '3.00', member: { login: 'zoe' }, changes: ['created'] });
      const again = await runCli(
        [
          'orders',
          'create',
          '--network',
          'awin',
          '--transaction-id',
          'CLI-1',
          '--sale-amount',
          '60.00',
          '--commission',
          '6.00',
          '--member',
          'zoe',
          '--note',
          'claim 7',
        ],
        { db },
      );
      expect(again.stdout).toMatch(/unchanged \(already recorded\)/);
      const approved = await runCli(['orders', 'update', String(order.id), '--status', 'approved', '--note', 'ok', '--json'], { db });
      expect(approved.json<Json>()).toMatchObject({ status: 'approved', changes: ['status', 'note'] });
      const unmatched = (
        await runCli(
          [
            'orders',
            'create',
            '--network',
            'awin',
            '--transaction-id',
            'CLI-2',
            '--sale-amount',
            '10.00',
            '--commission',
            '2.00',
            '--sub-id',
            'stranger',
            '--note',
            'claim 8',
            '--json',
          ],
          { db },
        )
      ).json<Json>();
      expect(unmatched.member).toBeNull();
      // Other tests record orders of their own: the lists are narrowed to this test's transaction ids.
      const listed = await runCli(['orders', 'list', '--unmatched', '--search', 'CLI-', '--json'], { db });
      expect(listed.json<Json[]>().map((o) => o.id)).toEqual([unmatched.id]);
      const assigned = await runCli(['orders', 'assign', String(unmatched.id), 'yan'], { db });
      expect(assigned.code).toBe(0);
      expect(assigned.stdout).toMatch(/changed \(member\).*member yan/);
      const shown = await runCli(['orders', 'show', String(order.id)], { db });
      expect(shown.stdout).toMatch(/cashback\s+3\.00 USD \(percent_commission 50\)/);
      const table = await runCli(['orders', 'list', '--search', 'CLI-'], { db });
      expect(table.stdout).toMatch(/^ID\s+CREATED_AT\s+NETWORK/);
      expect(table.stdout).toMatch(/2 order\(s\)/);
      const verify = await runCli(['ledger', 'verify', '--json'], { db });
      expect(verify.json()).toEqual({ ok: true, discrepancies: [] });
    });

    it('lists the orders held for review, releases one and declines another, each once', async () => {
      // Two approved postbacks above the default ceiling of 1000.00, recorded as the daemon would.
      const ctx = buildContext(testConfig(db, { secret: CLI_SECRET }), { logStream: null });
      const hal = (await ctx.users.requireByLogin('hal')).id;
      const report = (id: string) => ({
        network: 'awin',
        transaction_id: id,
        source: 'postback' as const,
        member_id: hal,
        sale_amount: '0',
        commission: '2500.00',
        status: 'approved' as const,
      });
      const [first, second] = await ctx.orders.recordMany([report('HELD-1'), report('HELD-2')], 'postback');
      await ctx.close();
      const held = await runCli(['orders', 'list', '--review', 'held', '--json'], { db });
      expect(
        held
          .json<Json[]>()
          .map((o) => o.id)
          .sort(),
      ).toEqual([first.id, second.id].sort());
      expect((await runCli(['orders', 'list', '--review', 'held'], { db })).stdout).toMatch(
        /^ID\s+CREATED_AT\s+NETWORK\s+TRANSACTION_ID\s+MEMBER\s+STATUS\s+REVIEW/,
      );
      expect((await runCli(['orders', 'show', String(first.id)], { db })).stdout).toMatch(/review\s+held \(above ceiling\)/);
      const cashbackEntries = async () =>
        (await runCli(['ledger', 'entries', 'hal', '--type', 'cashback', '--json'], { db })).json<Json[]>().map((e) => [e.order_id, e.amount]);
      const before = await cashbackEntries();
      const released = await runCli(['orders', 'release', String(first.id), '--note', 'checked with Awin', '--json'], { db });
      expect(released.code).toBe(0);
      expect(released.json<Json>()).toMatchObject({
        id: first.id,
        status: 'approved',
        changes: ['review'],
        review: { state: 'released', reviewed_by: 'cli' },
        cashback_entry_id: expect.any(Number),
      });
      const again = await runCli(['orders', 'release', String(first.id)], { db });
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/^svc_order_not_held: /);
      const declined = await runCli(['orders', 'decline', String(second.id), '--note', 'no such sale'], { db });
      expect(declined.stdout).toMatch(/changed \(review, status\).*declined.*review: declined/);
      // One credit, for the released order only.
      expect(await cashbackEntries()).toEqual([[first.id, '1250.00'], ...before]);
      expect((await runCli(['orders', 'list', '--review', 'held', '--json'], { db })).json<Json[]>()).toEqual([]);
      expect((await runCli(['ledger', 'verify', '--json'], { db })).json()).toEqual({ ok: true, discrepancies: [] });
    });

    it('refuses bad input with the REST and service codes and exit 1, usage errors with exit 2', async () => {
      const bad = await runCli(
        ['orders', 'create', '--network', 'awin', '--transaction-id', 'CLI-9', '--sale-amount', '1.001', '--commission', '1.00', '--note', 'x'],
        { db },
      );
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/^svc_invalid_amount: /);
      const missing = await runCli(['orders', 'update', '999999', '--status', 'approved'], { db });
      expect(missing.stderr).toMatch(/^svc_order_not_found: /);
      const nothing = await runCli(['orders', 'update', '1'], { db });
      expect(nothing.stderr).toMatch(/^rest_invalid_param: /);
      expect((await runCli(['orders', 'list', '--status', 'lost'], { db })).code).toBe(2);
      expect((await runCli(['orders', 'create', '--network', 'awin'], { db })).code).toBe(2);
    });

    it('adds, lists and removes referrals, and refuses a cycle', async () => {
      const added = await runCli(['referrals', 'add', 'rex', 'ria', '--json'], { db });
      expect(added.code).toBe(0);
      expect(added.json<Json>()).toMatchObject({ referrer: { login: 'rex' }, referee: { login: 'ria' }, active: true });
      const cycle = await runCli(['referrals', 'add', 'ria', 'rex'], { db });
      expect(cycle.code).toBe(1);
      expect(cycle.stderr).toMatch(/^svc_referral_cycle: /);
      const list = await runCli(['referrals', 'list', '--active'], { db });
      expect(list.stdout).toMatch(/rex\s+ria/);
      const removed = await runCli(['referrals', 'remove', 'ria'], { db });
      expect(removed.stdout).toMatch(/ended: rex no longer earns from ria/);
      expect((await runCli(['referrals', 'remove', 'ria'], { db })).stderr).toMatch(/^svc_referral_not_found: /);
    });
  });
}
