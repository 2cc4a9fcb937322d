import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/context.js';
import { runCli } from '../helpers/cli.js';

type Json = Record<string, any>;

for (const dialect of dialects) {
  describe(`cashtrack members [${dialect}]`, () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase(dialect);
      expect((await runCli(['db', 'migrate'], { db })).code).toBe(0);
      expect((await runCli(['users', 'create', 'mia', '--email', 'mia@example.com', '--display-name', 'Mia Wallace'], { db })).code).toBe(0);
      expect((await runCli(['ledger', 'adjust', 'mia', 'credit', '12.00', '--note', 'seed'], { db })).code).toBe(0);
      expect((await runCli(['payouts', 'create', 'mia', '12.00', '--method', 'paypal', '--details', 'mia@paypal.example'], { db })).code).toBe(0);
    });
    afterAll(() => db.drop());

    it('exports a member by login to standard output and to an owner-only file', async () => {
      const out = await runCli(['members', 'export', 'mia'], { db });
      expect(out.code, out.stderr).toBe(0);
      const doc = out.json<Json>();
      expect(doc.member).toMatchObject({ login: 'mia', email: 'mia@example.com', display_name: 'Mia Wallace' });
      expect(doc.payouts).toEqual([expect.objectContaining({ details: 'mia@paypal.example', status: 'pending' })]);
      expect(doc.ledger_entries.map((e: Json) => e.type)).toEqual(['adjustment', 'payout']);
      const file = join(db.dataDir, 'mia.json');
      const saved = await runCli(['members', 'export', 'mia@example.com', '--out', file, '--json'], { db });
      expect(saved.code, saved.stderr).toBe(0);
      expect(saved.json<Json>()).toMatchObject({ member_id: doc.member.id, file });
      expect(JSON.parse(await readFile(file, 'utf8')).member.login).toBe('mia');
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      const unwritable = await runCli(['members', 'export', 'mia', '--out', join(db.dataDir, 'no-such-dir', 'mia.json')], { db });
      expect(unwritable.code).toBe(1);
      expect(unwritable.stderr).toMatch(/^svc_file_unwritable: Cannot write .*ENOENT/);
      const unknown = await runCli(['members', 'export', 'nobody'], { db });
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/^svc_member_not_found: /);
    });

    it('erases only with --yes, refuses a payout in flight, and forces with a note', async () => {
      const noYes = await runCli(['members', 'erase', 'mia'], { db });
      expect(noYes.code).toBe(2);
      expect(noYes.stderr).toContain('add --yes to confirm');
      const refused = await runCli(['members', 'erase', 'mia', '--yes'], { db });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^svc_member_payout_in_flight: /);
      const noNote = await runCli(['members', 'erase', 'mia', '--yes', '--force'], { db });
      expect(noNote.code).toBe(1);
      expect(noNote.stderr).toMatch(/^svc_note_required: /);
      const forced = await runCli(['members', 'erase', 'mia', '--yes', '--force', '--note', 'Ticket 9', '--json'], { db });
      expect(forced.code, forced.stderr).toBe(0);
      const result = forced.json<Json>();
      expect(result.member.login).toBe(`erased-${result.member.id}`);
      expect(result.payouts_cancelled).toHaveLength(1);
      expect(result.written_off).toEqual([expect.objectContaining({ amount: '-12.00', note: 'Written off at erasure: Ticket 9' })]);
      const again = await runCli(['members', 'erase', String(result.member.id), '--yes'], { db });
      expect(again.code).toBe(0);
      expect(again.stdout).toContain(`member ${result.member.id} erased at ${result.erased_at} (now erased-${result.member.id})`);
      expect((await runCli(['ledger', 'verify'], { db })).code).toBe(0);
    });
  });
}
