import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import type { Context } from '../../../src/context.js';
import { ServiceError } from '../../../src/errors.js';
import { JobRunner } from '../../../src/jobs/runner.js';
import { shopPages } from '../../../src/services/ai/shop-pages.js';
import { sanitizeText } from '../../../src/services/pages/sanitize.js';
import { describeEachDialect } from '../../helpers/context.js';
import { ENCODED_MARKUP, expectPlain } from '../../helpers/markup.js';
import { startOpenAiFixture, type OpenAiFixture } from '../../fixtures/openai-server.js';

const fast = { 'ai.retry_base_ms': 5, 'ai.retry_max_ms': 20, 'ai.timeout_ms': 2000, 'ai.max_attempts': 2 };
let n = 0;

async function shop(ctx: Context, values: { name?: string; status?: string; module?: string; description?: string | null } = {}): Promise<number> {
  const now = new Date();
  const { insertId } = await ctx.db.execute(
    'INSERT INTO advertisers (module, advertiser, name, domain, site_url, status, description, categories, countries, last_seen_sync, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)',
    [
      values.module ?? 'awin',
      `s${process.pid}-${++n}`,
      values.name ?? `Shop ${n}`,
      `shop${n}.example`,
      `https://shop${n}.example/`,
      values.status ?? 'active',
      values.description ?? null,
      '["Fashion"]',
      '["DE","FR"]',
      now,
      now,
    ],
  );
  return insertId!;
}

describeEachDialect(
  'AI shop content',
  (use) => {
    let fixture: OpenAiFixture;
    beforeAll(async () => {
      fixture = await startOpenAiFixture();
    });
    afterAll(async () => {
      await fixture.close();
    });
    beforeEach(async () => {
      fixture.reset();
      await use().ctx.ai.configure({ base_url: fixture.baseUrl, model: 'fixture-model', api_key: 'sk-shop-test-key-99', concurrency: 2 }, 'test');
    });

    it('writes the description and the page body, making a draft page, and shows the generation on the advertiser', async () => {
      const { ctx } = use();
      const id = await shop(ctx, { name: 'Acme Outdoor' });
      const out = await ctx.ai.generateShop(id, {}, 'admin');
      expect(out).toMatchObject({ kind: 'shop', id, saved: true, dry_run: false, generation: { model: 'fixture-model', tokens: { total_tokens: 200 } } });
      expect(out.proposal.description).toContain('Acme Outdoor');
      const advertiser = await ctx.advertisers.getById(id);
      expect(advertiser.description).toBe(out.proposal.description);
      expect(advertiser.page_id).toBe(out.page_id);
      expect(advertiser.ai).toMatchObject({ model: 'fixture-model', outcome: 'saved', tokens: { total_tokens: 200 } });
      const page = await ctx.pages.get(out.page_id!);
      expect(page).toMatchObject({ status: 'draft', body: out.proposal.body });
      // The prompt was rendered from the templates with the shop's tags.
      const user = fixture.requests[0].body.messages[1].content as string;
      expect(user).toContain('for the shop Acme Outdoor.');
      expect(user).toContain('Categories: Fashion');
      expect(user).toContain('Countries: DE, FR');
      // A second generation writes the same page.
      const again = await ctx.ai.generateShop(id, {}, 'admin');
      expect(again.page_id).toBe(out.page_id);
    });

    it('previews on a dry run without writing the advertiser or a page', async () => {
      const { ctx } = use();
      const id = await shop(ctx, { description: 'Kept as it is' });
      const out = await ctx.ai.generateShop(id, { dry_run: true }, 'admin');
      expect(out).toMatchObject({ saved: false, dry_run: true, page_id: null });
      const advertiser = await ctx.advertisers.getById(id);
      expect(advertiser).toMatchObject({ description: 'Kept as it is', page_id: null, ai: { outcome: 'dry_run' } });
    });

    it("gives the prompt the shop's cashback: a flat override as an amount, a percent rule as a percentage", async () => {
      const { ctx } = use();
      const id = await shop(ctx, { name: 'Flat Shop' });
      const a = await ctx.advertisers.getById(id);
      await ctx.advertisers.setCashback(a.module, a.advertiser, 'flat', '5.00', 'admin', 'EUR');
      await ctx.ai.generateShop(id, { dry_run: true }, 'admin');
      expect(fixture.requests.at(-1)!.body.messages[1].content).toContain('Cashback: 5.00 EUR');
      await ctx.advertisers.setCashback(a.module, a.advertiser, 'percent_commission', '40', 'admin');
      await ctx.ai.generateShop(id, { dry_run: true }, 'admin');
      expect(fixture.requests.at(-1)!.body.messages[1].content).toContain('Cashback: 40%');
    });

    it('sanitises script out of the body and the description before saving', async () => {
      const { ctx } = use();
      const id = await shop(ctx);
      fixture.script({ kind: 'script_html' });
      const out = await ctx.ai.generateShop(id, {}, 'admin');
      expect(out.proposal.body).not.toMatch(/script|onclick|javascript:/i);
      expect(out.proposal.body).toContain('<h2>Safe</h2>');
      expect(out.proposal.description).toBe('Great shop');
      expect((await ctx.pages.get(out.page_id!)).body).not.toMatch(/script|onclick|javascript:/i);
    });

    it('stores a plain description from an answer that hides markup behind entities (encoded, double-encoded, mixed)', async () => {
      const { ctx } = use();
      for (const p of Object.values(ENCODED_MARKUP)) {
        const id = await shop(ctx);
        fixture.script({ kind: 'good', content: { description: p, body: '<p>Body</p>' } });
        const out = await ctx.ai.generateShop(id, {}, 'admin');
        expectPlain(out.proposal.description, sanitizeText);
        expectPlain((await ctx.advertisers.getById(id)).description, sanitizeText);
      }
    });

    it('refuses an answer of the wrong shape and keeps the shop as it was', async () => {
      const { ctx } = use();
      const id = await shop(ctx, { description: 'Original' });
      fixture.script({ kind: 'wrong_shape' });
      await expect(ctx.ai.generateShop(id, {}, 'admin')).rejects.toMatchObject({ code: 'svc_ai_bad_output', data: { reason: 'wrong_shape' } });
      expect(await ctx.advertisers.getById(id)).toMatchObject({ description: 'Original', page_id: null, ai: { outcome: 'failed' } });
    });

    it('refuses an inactive advertiser without a page before calling the provider', async () => {
      const { ctx } = use();
      const id = await shop(ctx, { status: 'inactive' });
      await expect(ctx.ai.generateShop(id, {}, 'admin')).rejects.toMatchObject({ code: 'svc_advertiser_inactive', status: 409 });
      expect(fixture.requests).toHaveLength(0);
      await expect(ctx.ai.generateShop(99_999_999, {}, 'admin')).rejects.toMatchObject({ code: 'svc_advertiser_not_found' });
    });

    it('records the failure when the page cannot be written, and leaves the description alone', async () => {
      const { ctx } = use();
      const id = await shop(ctx, { description: 'Before' });
      // The page service refuses the body (here: a stand-in for it that does).
      const pages = ctx.ai.deps.pages;
      const refuse = async () => Promise.reject(new ServiceError('svc_invalid_page', 'The body is empty once markup is removed.', 400, { field: 'body' }));
      ctx.ai.deps.pages = { state: pages.state, ensurePage: refuse, saveBody: refuse };
      try {
        await expect(ctx.ai.generateShop(id, {}, 'admin')).rejects.toMatchObject({ code: 'svc_invalid_page' });
      } finally {
        ctx.ai.deps.pages = pages;
      }
      expect(await ctx.advertisers.getById(id)).toMatchObject({
        description: 'Before',
        page_id: null,
        ai: { outcome: 'failed', tokens: { total_tokens: 200 } },
      });
    });

    it('writes the page another generation made meanwhile instead of failing on it', async () => {
      const { ctx } = use();
      const id = await shop(ctx);
      const first = await ctx.advertisers.getById(id);
      const made = await ctx.pages.create(first.module, first.advertiser, { status: 'draft' }, 'admin');
      // The adapter read the advertiser before that page was made.
      let reads = 0;
      const stale = { getById: async (n: number) => (reads++ === 0 ? { ...first, page_id: null } : ctx.advertisers.getById(n)) };
      const adapter = shopPages({ pages: ctx.pages, advertisers: stale });
      const pageId = await adapter.ensurePage(id, 'admin');
      expect(pageId).toBe(made.id);
      await adapter.saveBody(pageId, '<p>Fresh body</p>', { description: null }, 'admin');
      expect((await ctx.pages.get(made.id)).body).toBe('<p>Fresh body</p>');
    });

    it('bulk-writes the shops of a network, skipping AI-written ones unless overwrite', async () => {
      const { ctx } = use();
      const ids = [await shop(ctx, { module: 'aishops' }), await shop(ctx, { module: 'aishops' }), await shop(ctx, { module: 'aishops' })];
      await ctx.ai.generateShop(ids[0], {}, 'admin');
      fixture.reset();
      const runner = () => new JobRunner({ ctx, jobs: ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 20, progressIntervalMs: 20 }).runPending();
      const first = await ctx.ai.startBulk({ kind: 'shops', filter: { network: 'aishops' }, overwrite: false }, 'admin');
      await runner();
      expect((await ctx.jobs.get(first.id)).result).toMatchObject({
        kind: 'shops',
        saved: 2,
        skipped: 1,
        failed: 0,
        usage: { calls: 2, tokens: { total_tokens: 400 } },
      });
      for (const id of ids) expect((await ctx.advertisers.getById(id)).page_id).not.toBeNull();
      const second = await ctx.ai.startBulk({ kind: 'shops', filter: { network: 'aishops', status: 'active' }, overwrite: true }, 'admin');
      await runner();
      expect((await ctx.jobs.get(second.id)).result).toMatchObject({ saved: 3, skipped: 0 });
    });
  },
  fast,
);
