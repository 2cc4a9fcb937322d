// What the CLI prints from data (a network's feed, a request, the AI provider's answer) is text,
// never a command to the terminal: each printer named in issue 17 gets data holding escape
// sequences and C0/C1 controls, prints none of them, and its --json output parses back to the
// exact value stored.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildContext, type Context } from '../../src/context.js';
import { CLI_SECRET, runCli } from '../helpers/cli.js';
import { createTestDatabase, dialects, testConfig, type TestDatabase } from '../helpers/context.js';
import { addShop } from '../helpers/pages.js';
import { expectPlain, HOSTILE, HOSTILE_SHOWN } from '../helpers/terminal.js';
import { startOpenAiFixture, type OpenAiFixture } from '../fixtures/openai-server.js';

type Json = Record<string, any>;

for (const dialect of dialects) {
  describe(`what the CLI prints from data [${dialect}]`, () => {
    let db: TestDatabase;
    let ctx: Context;
    let fixture: OpenAiFixture;
    beforeAll(async () => {
      db = await createTestDatabase(dialect);
      expect((await runCli(['db', 'migrate'], { db })).code).toBe(0);
      ctx = buildContext(testConfig(db, { secret: CLI_SECRET }), { logStream: null });
      fixture = await startOpenAiFixture();
    });
    afterAll(async () => {
      await ctx?.close();
      await fixture?.close();
      await db?.drop();
    });
    beforeEach(() => fixture.reset());

    it('advertisers list shows a name from a feed as plain text; --json keeps it exact', async () => {
      await addShop(ctx, 'tnet', 'adv-1', { name: HOSTILE, domain: `${HOSTILE}.example` });
      const table = await runCli(['advertisers', 'list', '--network', 'tnet'], { db });
      expect(table.code, table.stderr).toBe(0);
      expectPlain(table.stdout);
      expect(table.stdout).toContain(HOSTILE_SHOWN);
      const json = await runCli(['advertisers', 'list', '--network', 'tnet', '--json'], { db });
      expectPlain(json.stdout);
      expect(json.json<Json[]>()[0]).toMatchObject({ name: HOSTILE, domain: `${HOSTILE}.example` });
    });

    it('pages show prints the title on one line and the body with its line breaks and tabs, nothing else', async () => {
      await addShop(ctx, 'tnet', 'adv-2', { name: 'Page Shop' });
      const created = await runCli(['pages', 'create', 'tnet', 'adv-2', '--json'], { db });
      expect(created.code, created.stderr).toBe(0);
      const id = created.json<Json>().id as number;
      // As an edit or a template could leave them: the printer is what is tested here.
      const body = `<p>${HOSTILE}</p>\n<p>second\tline</p>`;
      await ctx.db.execute('UPDATE pages SET title = ?, body = ? WHERE id = ?', [`${HOSTILE}\nslug   forged`, body, id]);
      const show = await runCli(['pages', 'show', String(id)], { db });
      expect(show.code, show.stderr).toBe(0);
      expectPlain(show.stdout);
      expect(show.stdout).toMatch(new RegExp(`^title\\s+${HOSTILE_SHOWN} slug   forged$`, 'm'));
      expect(show.stdout).toContain(`<p>${HOSTILE_SHOWN}</p>\n<p>second\tline</p>`);
      const json = await runCli(['pages', 'show', String(id), '--json'], { db });
      expectPlain(json.stdout);
      expect(json.json<Json>()).toMatchObject({ title: `${HOSTILE}\nslug   forged`, body });
    });

    it('users list shows a display name from a request as plain text; --json keeps it exact', async () => {
      const user = await ctx.users.create({ login: 'term-user', email: 'term@example.com', role: 'member' });
      await ctx.db.execute('UPDATE users SET display_name = ? WHERE id = ?', [HOSTILE, user.id]);
      const table = await runCli(['users', 'list', '--search', 'term-user'], { db });
      expect(table.code, table.stderr).toBe(0);
      expectPlain(table.stdout);
      expect(table.stdout).toMatch(new RegExp(`term-user\\s+term@example\\.com\\s+${HOSTILE_SHOWN}\\s+member`));
      const json = await runCli(['users', 'list', '--search', 'term-user', '--json'], { db });
      expectPlain(json.stdout);
      expect(json.json<Json[]>()[0]).toMatchObject({ login: 'term-user', display_name: HOSTILE });
    });

    it("ai shop prints the provider's proposal as text, and overview the model it reported", async () => {
      await ctx.ai.configure({ base_url: fixture.baseUrl, model: 'fixture-model', api_key: 'sk-terminal-test', concurrency: 1 }, 'test');
      const shop = await addShop(ctx, 'tnet', 'adv-3', { name: 'Ai Shop' });
      const content = { description: `Described ${HOSTILE}`, body: `<p>${HOSTILE}</p>` };
      fixture.script({ kind: 'good', content, model: HOSTILE });
      const preview = await runCli(['ai', 'shop', String(shop), '--dry-run'], { db });
      expect(preview.code, preview.stderr).toBe(0);
      expectPlain(preview.stdout);
      // The AI domain's own cleaning already drops control characters from the description; the
      // model's name it reports reaches the usage line as it came.
      expect(preview.stdout).toMatch(/^description {2}Described A/m);
      expect(preview.stdout).toContain(`${HOSTILE_SHOWN}: 120 prompt + 80 completion = 200 tokens`);
      fixture.script({ kind: 'good', content, model: HOSTILE });
      const json = await runCli(['ai', 'shop', String(shop), '--dry-run', '--json'], { db });
      expectPlain(json.stdout);
      const proposal = json.json<Json>().proposal;
      expect(typeof proposal.description).toBe('string');

      const overview = await runCli(['overview'], { db });
      expect(overview.code, overview.stderr).toBe(0);
      expectPlain(overview.stdout);
      expect(overview.stdout).toContain(HOSTILE_SHOWN);
      const overviewJson = await runCli(['overview', '--json'], { db });
      expectPlain(overviewJson.stdout);
      expect(overviewJson.json<Json>().ai.by_model.map((m: Json) => m.model)).toContain(HOSTILE);
    });

    it('logs prints an entry from a request on one plain line; --json keeps it exact', async () => {
      ctx.logger.warning('term-tests', `${HOSTILE}\n2026-01-01T00:00:00.000Z ERROR   [forged] line`, { agent: HOSTILE });
      await ctx.logger.flush();
      const plain = await runCli(['logs', '--source', 'term-tests'], { db });
      expect(plain.code, plain.stderr).toBe(0);
      expectPlain(plain.stdout);
      expect(plain.stdout.trimEnd().split('\n')).toHaveLength(1);
      expect(plain.stdout).toContain(`[term-tests] ${HOSTILE_SHOWN} 2026-01-01T00:00:00.000Z ERROR   [forged] line`);
      const json = await runCli(['logs', '--source', 'term-tests', '--json'], { db });
      expectPlain(json.stdout);
      expect(json.json<Json[]>()[0]).toMatchObject({ message: `${HOSTILE}\n2026-01-01T00:00:00.000Z ERROR   [forged] line`, context: { agent: HOSTILE } });
    });
  });
}
