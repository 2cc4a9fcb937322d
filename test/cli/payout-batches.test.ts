import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/context.js';

type Json = Record<string, any>;

for (const dialect of dialects) {
  describe(`cashtrack payouts batch [${dialect}]`, () => {
    let db: TestDatabase;
    const dir = mkdtempSync(join(tmpdir(), 'cashtrack-batch-cli-'));
    beforeAll(async () => {
      db = await createTestDatabase(dialect);
      expect((await runCli(['db', 'migrate'], { db })).code).toBe(0);
      for (const login of ['ada', 'ben']) {
        expect((await runCli(['users', 'create', login, '--email', `${login}@example.com`], { db })).code).toBe(0);
        expect((await runCli(['ledger', 'adjust', login, 'credit', '100.00', '--note', 'seed'], { db })).code).toBe(0);
      }
    });
    afterAll(() => db.drop());

    it('creates, shows, writes the file, applies results and lists batches', async () => {
      const a = (await runCli(['payouts', 'create', 'ada', '30.00', '--method', 'giro', '--details', 'DE01 1234', '--json'], { db })).json<Json>().payout;
      const b = (await runCli(['payouts', 'create', 'ben', '40.00', '--method', 'giro', '--details', 'de011234', '--json'], { db })).json<Json>().payout;
      const c = (await runCli(['payouts', 'create', 'ben', '25.00', '--method', 'giro', '--json'], { db })).json<Json>().payout;
      const preview = await runCli(['payouts', 'batch', 'create', '--method', 'giro', '--preview'], { db });
      expect(preview.stdout).toContain('would batch 1 giro payout(s), 25.00 USD, as csv');
      expect(preview.stdout).toContain(`held: payout ${a.id} (ada, 30.00 USD): The destination is also used by ben (member ${b.member_id}).`);
      const made = await runCli(['payouts', 'batch', 'create', '--method', 'giro', '--idempotency-key', 'cli-batch-1'], { db });
      expect(made.code).toBe(0);
      expect(made.stdout).toMatch(/^batch (\d+) created: 1 giro payout\(s\), 25\.00 USD, 2 held\n/);
      const id = /^batch (\d+)/.exec(made.stdout)![1];
      const again = await runCli(['payouts', 'batch', 'create', '--method', 'giro', '--idempotency-key', 'cli-batch-1'], { db });
      expect(again.stdout).toContain(`batch ${id} created`);
      expect(again.stdout).toContain('(replayed');
      const out = join(dir, 'batch.csv');
      expect((await runCli(['payouts', 'batch', 'file', id, '--out', out], { db })).stdout).toBe(`wrote payout-batch-${id}.csv to ${out}\n`);
      expect(readFileSync(out, 'utf8')).toContain(`${id}-${c.id},${c.id},`);
      expect(statSync(out).mode & 0o777).toBe(0o600);
      const results = join(dir, 'results.csv');
      writeFileSync(results, `item_ref,status,reference,reason\n${id}-${c.id},failed,,Account closed\n`);
      const applied = await runCli(['payouts', 'batch', 'results', id, results], { db });
      expect(applied.stdout).toMatch(new RegExp(`^batch ${id} finished: 1 applied, 0 unchanged, 0 conflict\\(s\\); 0 paid, 1 failed, 0 pending\\n`));
      const shown = await runCli(['payouts', 'batch', 'show', id, '--json'], { db });
      expect(shown.json<Json>()).toMatchObject({ batch: { status: 'finished' }, items: [{ payout_id: c.id, status: 'cancelled', reason: 'Account closed' }] });
      const listed = await runCli(['payouts', 'batch', 'list', '--status', 'finished', '--json'], { db });
      expect(listed.json<Json[]>().map((x) => x.id)).toEqual([Number(id)]);
      const unwritable = await runCli(['payouts', 'batch', 'file', id, '--out', join(dir, 'no-such-dir', 'x.csv')], { db });
      expect(unwritable.code).not.toBe(0);
      expect(unwritable.stderr).toContain('svc_file_unwritable');
      const missing = await runCli(['payouts', 'batch', 'results', id, join(dir, 'nope.csv')], { db });
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toContain('svc_file_unreadable');
    });

    it('releases held payouts with a note, marks paid, and cancels', async () => {
      const listed = (await runCli(['payouts', 'list', '--method', 'giro', '--status', 'pending', '--json'], { db })).json<Json[]>();
      const ids = listed.map((p) => p.id).sort((x, y) => x - y);
      expect(ids).toHaveLength(2);
      const noNote = await runCli(['payouts', 'batch', 'create', ...ids.map(String), '--override', ids.join(',')], { db });
      expect(noNote.code).not.toBe(0);
      expect(noNote.stderr).toContain('svc_payout_override_note_required');
      const made = await runCli(['payouts', 'batch', 'create', ...ids.map(String), '--override', ids.join(','), '--override-note', 'same family', '--json'], {
        db,
      });
      const batch = made.json<Json>().batch;
      expect(batch).toMatchObject({ item_count: 2, held_count: 0 });
      const cancelled = await runCli(['payouts', 'batch', 'cancel', String(batch.id)], { db });
      expect(cancelled.stdout).toBe(`batch ${batch.id} cancelled: its 2 payout(s) are free for another batch\n`);
      const again = (
        await runCli(['payouts', 'batch', 'create', ...ids.map(String), '--override', ids.join(','), '--override-note', 'same family', '--json'], { db })
      ).json<Json>().batch;
      expect((await runCli(['payouts', 'batch', 'send', String(again.id)], { db })).stdout).toBe(`batch ${again.id} sent\n`);
      const paid = await runCli(['payouts', 'batch', 'paid', String(again.id), '--reference', 'TRF-1'], { db });
      expect(paid.stdout).toContain(`batch ${again.id} finished: 2 applied`);
      expect((await runCli(['ledger', 'verify'], { db })).code).toBe(0);
    });
  });
}
