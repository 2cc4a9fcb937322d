// `cashtrack export KIND --out FILE`: the export POST /exports makes, run in-process: the file the
// command writes holds the rows of the list command under the same filters, is owner-only, and the
// export is listed like one made over REST; a filter the kind does not take is refused.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildContext, type Context } from '../../src/context.js';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase, dialects, testConfig, type TestDatabase } from '../helpers/context.js';

type Json = Record<string, any>;

for (const dialect of dialects) {
  describe(`cashtrack export [${dialect}]`, () => {
    let db: TestDatabase;
    let ctx: Context;
    const cli = (args: string[], tty?: { columns: number }) => runCli(args, { db, tty });
    beforeAll(async () => {
      db = await createTestDatabase(dialect);
      expect((await cli(['db', 'migrate'])).code).toBe(0);
      for (const login of ['hal', 'ivy']) expect((await cli(['users', 'create', login, '--email', `${login}@example.com`])).code).toBe(0);
      ctx = buildContext(testConfig(db), { logStream: null });
      for (const [login, amount, note] of [
        ['hal', '10.00', '=2+2'],
        ['hal', '2.50', 'bonus'],
        ['ivy', '4.00', 'welcome'],
      ]) {
        const m = await ctx.users.resolveMember(login);
        await ctx.ledger.adjust({ member_id: m.id, type: 'credit', amount, currency: 'USD', note }, 'test');
      }
    });
    afterAll(async () => {
      await ctx?.close();
      await db?.drop();
    });

    it('writes the ledger entries of one member to --out as CSV, owner-only, as `ledger entries` lists them', async () => {
      const out = join(db.dataDir, 'hal.csv');
      const res = await cli(['export', 'ledger_entries', '--member', 'hal', '--out', out, '--json']);
      expect(res.code, res.stderr).toBe(0);
      const exp = res.json<Json>();
      expect(exp).toMatchObject({ kind: 'ledger_entries', format: 'csv', status: 'done', rows: 2, out });
      expect(statSync(out).mode & 0o777).toBe(0o600);
      const rows = parse(readFileSync(out, 'utf8'), { columns: true }) as Json[];
      const listed = (await cli(['ledger', 'entries', 'hal', '--json'])).json<Json[]>();
      expect(rows.map((r) => [Number(r.id), r.amount, r.currency]).sort()).toEqual(listed.map((e) => [e.id, e.amount, e.currency]).sort());
      expect(rows.map((r) => r.note).sort()).toEqual(["'=2+2", 'bonus']);
      expect((await ctx.exports.get(exp.id)).status).toBe('done');
    });

    it('writes JSON Lines of every balance, draws a progress bar on a terminal, and refuses a filter the kind lacks', async () => {
      const out = join(db.dataDir, 'balances.jsonl');
      const res = await cli(['export', 'balances', '--format', 'jsonl', '--out', out], { columns: 100 });
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).toMatch(/export \d+: 2 balances row\(s\), \d+ bytes written to /);
      expect(res.stderr).toContain('exports.run');
      const lines = readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(lines.map((b) => [b.login, b.available]).sort()).toEqual([
        ['hal', '12.50'],
        ['ivy', '4.00'],
      ]);
      const bad = await cli(['export', 'balances', '--method', 'paypal', '--out', join(db.dataDir, 'x.csv')]);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain('rest_invalid_param');
      const kind = await cli(['export', 'secrets', '--out', join(db.dataDir, 'x.csv')]);
      expect(kind.code).not.toBe(0);
    });
  });
}
