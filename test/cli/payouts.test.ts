import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/context.js';
import { runCli } from '../helpers/cli.js';

type Json = Record<string, any>;

for (const dialect of dialects) {
  describe(`cashtrack payouts [${dialect}]`, () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase(dialect);
      expect((await runCli(['db', 'migrate'], { db })).code).toBe(0);
      expect((await runCli(['users', 'create', 'pia', '--email', 'pia@example.com'], { db })).code).toBe(0);
      expect((await runCli(['ledger', 'adjust', 'pia', 'credit', '100.00', '--note', 'seed'], { db })).code).toBe(0);
    });
    afterAll(() => db.drop());

    it('creates by login, completes, cancels, lists and shows payouts', async () => {
      const created = await runCli(['payouts', 'create', 'pia', '30.00', '--method', 'paypal', '--details', 'pia@paypal.example', '--json'], { db });
      expect(created.code).toBe(0);
      const a = created.json<Json>();
      expect(a.payout).toMatchObject({ login: 'pia', amount: '30.00', status: 'pending', details: 'pia@paypal.example', actor: 'cli' });
      expect(a.balance.available).toBe('70.00');
      const text = await runCli(['payouts', 'create', 'pia', '20.00', '--method', 'bank_transfer'], { db });
      expect(text.stdout).toMatch(/^payout \d+ created: 20\.00 USD to pia via bank_transfer \(pending\); available balance 50\.00 USD\n$/);
      const b = Number(/payout (\d+)/.exec(text.stdout)![1]);
      const paid = await runCli(['payouts', 'complete', String(a.payout.id), '--reference', 'PP-1', '--json'], { db });
      expect(paid.json<Json>().payout).toMatchObject({ status: 'paid', reference: 'PP-1', closed_by: 'cli' });
      const cancelled = await runCli(['payouts', 'cancel', String(b), '--reason', 'wrong IBAN'], { db });
      expect(cancelled.stdout).toContain('credited back to pia; available balance 70.00 USD');
      const list = await runCli(['payouts', 'list', '--member', 'pia', '--json'], { db });
      expect(list.json<Json[]>().map((p) => p.status)).toEqual(['cancelled', 'paid']);
      const table = await runCli(['payouts', 'list', '--status', 'paid', '--member', 'pia'], { db });
      expect(table.stdout).toMatch(/ID\s+LOGIN\s+AMOUNT/);
      expect(table.stdout).toContain('1 payout(s)');
      const show = await runCli(['payouts', 'show', String(a.payout.id)], { db });
      expect(show.stdout).toMatch(/details\s+pia@paypal\.example/);
      const again = await runCli(['payouts', 'cancel', String(a.payout.id), '--reason', 'too late'], { db });
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/^svc_payout_closed: /);
      const verify = await runCli(['ledger', 'verify', '--json'], { db });
      expect(verify.json()).toEqual({ ok: true, discrepancies: [] });
    });

    it('runs a create once per idempotency key, replays refusals, and refuses the key with another body', async () => {
      // A member of its own, so the balances and lists of the other tests do not move.
      expect((await runCli(['users', 'create', 'pam', '--email', 'pam@example.com'], { db })).code).toBe(0);
      expect((await runCli(['ledger', 'adjust', 'pam', 'credit', '100.00', '--note', 'seed'], { db })).code).toBe(0);
      const args = ['payouts', 'create', 'pam', '15.00', '--method', 'paypal', '--idempotency-key', 'cli-payout-1', '--json'];
      const first = await runCli(args, { db });
      const second = await runCli(args, { db });
      expect(first.code).toBe(0);
      expect(second.json()).toEqual(first.json());
      const text = await runCli(args.slice(0, -1), { db });
      expect(text.stdout).toContain('(replayed');
      const other = await runCli(['payouts', 'create', 'pam', '16.00', '--method', 'paypal', '--idempotency-key', 'cli-payout-1'], { db });
      expect(other.code).toBe(1);
      expect(other.stderr).toMatch(/^svc_idempotency_key_reused: /);
      const tooMuch = ['payouts', 'create', 'pam', '999.00', '--method', 'paypal', '--idempotency-key', 'cli-payout-2'];
      expect((await runCli(tooMuch, { db })).stderr).toMatch(/^svc_insufficient_funds: /);
      const replayed = await runCli(tooMuch, { db });
      expect(replayed.code).toBe(1);
      expect(replayed.stderr).toMatch(/^svc_insufficient_funds: /);
      const list = await runCli(['payouts', 'list', '--member', 'pam', '--status', 'pending', '--json'], { db });
      expect(list.json<Json[]>().filter((p) => p.amount === '15.00')).toHaveLength(1);
    });

    it('refuses bad input with the REST codes', async () => {
      const cases: [string[], number, RegExp][] = [
        [['payouts', 'create', 'pia', '12.505', '--method', 'paypal'], 1, /^svc_invalid_amount: /],
        [['payouts', 'create', 'pia', '-1.00', '--method', 'paypal'], 1, /^svc_invalid_amount: /],
        [['payouts', 'create', 'pia', '5.00', '--method', 'paypal'], 1, /^svc_payout_below_minimum: /],
        [['payouts', 'create', 'nobody', '50.00', '--method', 'paypal'], 1, /^svc_member_not_found: /],
        [['payouts', 'create', '424242', '50.00', '--method', 'paypal'], 1, /^svc_member_not_found: /],
        [['payouts', 'create', 'pia', '50.00', '--method', 'paypal', '--currency', 'usd'], 1, /^rest_invalid_param: .*currency/],
        [['payouts', 'create', 'pia', '50.00'], 2, /--method/],
        [['payouts', 'cancel', '1'], 2, /--reason/],
        [['payouts', 'cancel', 'abc', '--reason', 'x'], 1, /^rest_invalid_param: .*id/],
        [['payouts', 'complete', '424242'], 1, /^svc_payout_not_found: /],
        [['payouts', 'list', '--status', 'sent'], 2, /status/],
      ];
      for (const [argv, code, stderr] of cases) {
        const r = await runCli(argv, { db });
        expect(r.code, argv.join(' ')).toBe(code);
        expect(r.stderr, argv.join(' ')).toMatch(stderr);
      }
    });
  });
}
