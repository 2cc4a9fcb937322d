import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildContext, type Context } from '../../src/context.js';
import { createTestDatabase, dialects, testConfig, type TestDatabase } from '../helpers/context.js';
import { CLI_SECRET, runCli } from '../helpers/cli.js';
import { image } from '../helpers/images.js';

type Json = Record<string, any>;

for (const dialect of dialects) {
  describe(`cashtrack claims [${dialect}]`, () => {
    let db: TestDatabase;
    let ctx: Context;
    beforeAll(async () => {
      db = await createTestDatabase(dialect);
      expect((await runCli(['db', 'migrate'], { db })).code).toBe(0);
      expect((await runCli(['users', 'create', 'cleo', '--email', 'cleo@example.com'], { db })).code).toBe(0);
      ctx = buildContext(testConfig(db, { secret: CLI_SECRET }), { logStream: null });
      const now = new Date();
      await ctx.db.execute(
        "INSERT INTO advertisers (module, advertiser, name, status, last_seen_sync, created_at, updated_at) VALUES ('awin', '1001', 'Shop 1001', 'active', 1, ?, ?)",
        [now, now],
      );
    });
    afterAll(async () => {
      await ctx?.close();
      await db.drop();
    });
    const base = [
      'claims',
      'create',
      '--member',
      'cleo',
      '--network',
      'awin',
      '--advertiser',
      '1001',
      '--purchased-at',
      '2026-11-20T10:00:00Z',
      '--amount',
      '48.00',
    ];

    it('creates, lists, shows and declines claims through the same service as the REST API', async () => {
      const png = join(db.dataDir, 'receipt.png');
      writeFileSync(png, await image('png'));
      const created = await runCli([...base, '--order-ref', 'CLI-1', '--currency', 'GBP', '--receipt', png, '--note', 'paid by card', '--json'], { db });
      expect(created.code, created.stderr).toBe(0);
      const claim = created.json<Json>();
      expect(claim).toMatchObject({
        member: { login: 'cleo' },
        network: 'awin',
        order_ref: 'CLI-1',
        amount: '48.00',
        currency: 'GBP',
        status: 'open',
        receipt: true,
        duplicate: false,
        actor: 'cli',
      });
      const again = await runCli([...base, '--order-ref', 'CLI-1', '--currency', 'GBP'], { db });
      expect(again.stdout).toBe(`claim ${claim.id} already on file: open (${claim.reason})\n`);
      const list = await runCli(['claims', 'list', '--status', 'open', '--member', 'cleo'], { db });
      expect(list.code).toBe(0);
      expect(list.stdout).toContain('CLI-1');
      expect(list.stdout).toContain('1 claim(s)');
      const shown = await runCli(['claims', 'show', String(claim.id)], { db });
      expect(shown.stdout).toMatch(/order ref\s+CLI-1/);
      expect(shown.stdout).toMatch(/receipt\s+yes/);
      const declined = await runCli(['claims', 'decline', String(claim.id), '--reason', 'Bought in the shop'], { db });
      expect(declined.stdout).toBe(`claim ${claim.id} declined: Bought in the shop\n`);
      expect((await ctx.claims.get(claim.id)).status).toBe('declined');
      const twice = await runCli(['claims', 'decline', String(claim.id), '--reason', 'Bought in the shop'], { db });
      expect(twice.code).toBe(0);
    });

    it('refuses bad input with its code and a non-zero exit', async () => {
      const future = await runCli([...base.slice(0, -4), '--purchased-at', '2999-01-01T00:00:00Z', '--amount', '48.00', '--order-ref', 'CLI-2'], { db });
      expect(future.code).toBe(1);
      expect(future.stderr).toContain('svc_claim_purchase_in_future');
      const notImage = join(db.dataDir, 'receipt.txt');
      writeFileSync(notImage, 'a receipt, typed');
      const text = await runCli([...base, '--order-ref', 'CLI-3', '--receipt', notImage], { db });
      expect([text.code, text.stderr]).toEqual([1, expect.stringContaining('svc_claim_receipt_not_image')]);
      const missing = await runCli([...base, '--order-ref', 'CLI-4', '--receipt', join(db.dataDir, 'nope.png')], { db });
      expect(missing.code).toBe(2);
      const money = await runCli([...base.slice(0, -2), '--amount', 'ten', '--order-ref', 'CLI-5'], { db });
      expect([money.code, money.stderr]).toEqual([1, expect.stringContaining('svc_invalid_amount')]);
      const declineOpen = await runCli(['claims', 'decline', '999'], { db });
      expect(declineOpen.code).toBe(2);
    });

    it("takes the member's click as evidence and shows it; refuses another member's click or a word that is no click id", async () => {
      const dee = (await ctx.users.create({ login: 'dee', email: 'dee@example.com' })).id;
      const cleo = (await ctx.users.idByLogin('cleo'))!;
      const at = new Date('2026-11-20T09:30:00Z');
      const insert = async (id: string, member: number) =>
        ctx.db.execute(
          "INSERT INTO clicks (id, member_id, network, advertiser, coupon_id, url, cashback_rule, ip_prefix, ua_hash, created_at) VALUES (?, ?, 'awin', '1001', NULL, NULL, 'percent_commission:50', NULL, NULL, ?)",
          [id, member, at],
        );
      await insert('c1kf0q9s2a7b3c4d5e6', cleo);
      await insert('c1kf0q9s2a7b3c4d5e7', dee);
      const theirs = await runCli([...base, '--order-ref', 'CLI-6', '--click-id', 'c1kf0q9s2a7b3c4d5e7'], { db });
      expect([theirs.code, theirs.stderr]).toEqual([1, expect.stringContaining('svc_click_mismatch')]);
      const word = await runCli([...base, '--order-ref', 'CLI-7', '--click-id', 'yesterday'], { db });
      expect([word.code, word.stderr]).toEqual([1, expect.stringContaining('rest_invalid_param')]);
      // None given: cleo's latest click on the shop before the purchase.
      const taken = await runCli([...base, '--order-ref', 'CLI-8', '--json'], { db });
      expect(taken.code, taken.stderr).toBe(0);
      const claim = taken.json<Json>();
      expect(claim).toMatchObject({ click_id: 'c1kf0q9s2a7b3c4d5e6', click: { created_at: at.toISOString() } });
      const shown = await runCli(['claims', 'show', String(claim.id)], { db });
      expect(shown.stdout).toMatch(/click\s+c1kf0q9s2a7b3c4d5e6 at 2026-11-20T09:30:00.000Z, rate shown percent_commission 50/);
    });
  });
}
