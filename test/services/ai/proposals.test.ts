import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import type { Context } from '../../../src/context.js';
import { HOOKS } from '../../../src/hooks/index.js';
import { describeEachDialect } from '../../helpers/context.js';
import { insertCoupon } from '../../helpers/coupons.js';
import { startOpenAiFixture, type OpenAiFixture } from '../../fixtures/openai-server.js';

const fast = { 'ai.retry_base_ms': 5, 'ai.retry_max_ms': 20, 'ai.timeout_ms': 2000, 'ai.max_attempts': 2 };
let n = 0;

async function shop(ctx: Context, description: string | null = 'Shop text before'): Promise<number> {
  const now = new Date();
  const { insertId } = await ctx.db.execute(
    'INSERT INTO advertisers (module, advertiser, name, domain, site_url, status, description, categories, countries, last_seen_sync, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)',
    ['awin', `p${process.pid}-${++n}`, `Proposal Shop ${n}`, `pshop${n}.example`, `https://pshop${n}.example/`, 'active', description, '[]', '[]', now, now],
  );
  return insertId!;
}

async function calls(ctx: Context, kind: string, id: number): Promise<{ outcome: string; total_tokens: number }[]> {
  const rows = await ctx.db.select<{ outcome: unknown; total_tokens: unknown }>(
    'SELECT outcome, total_tokens FROM ai_calls WHERE kind = ? AND item_id = ? ORDER BY id',
    [kind, id],
  );
  return rows.map((r) => ({ outcome: String(r.outcome), total_tokens: Number(r.total_tokens) }));
}

describeEachDialect(
  'AI proposals kept without generating again',
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
      await use().ctx.ai.configure({ base_url: fixture.baseUrl, model: 'fixture-model', api_key: 'sk-proposal-test-key-1' }, 'test');
    });

    it("keeps a coupon's dry-run proposal: exactly its text, the original kept for revert, one provider call and one usage record", async () => {
      const { ctx } = use();
      const id = await insertCoupon(ctx, { title: 'Ten percent off', description: 'On everything' });
      const preview = await ctx.ai.rewriteCoupon(id, { dry_run: true }, 'admin');
      expect(preview.proposal_id).toMatch(/^[0-9a-f]{32}$/);
      expect(Date.parse(preview.expires_at!) - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
      const updated: unknown[] = [];
      ctx.hooks.addAction(HOOKS.couponUpdated, 'test-kept', (_c, meta) => updated.push(meta));
      const kept = await ctx.ai.rewriteCoupon(id, { proposal_id: preview.proposal_id! }, 'editor');
      ctx.hooks.wp.removeAction(HOOKS.couponUpdated, 'test-kept');
      expect(fixture.requests).toHaveLength(1);
      expect(kept).toMatchObject({ kind: 'coupon', id, dry_run: false, saved: true, proposal: preview.proposal, proposal_id: preview.proposal_id });
      const coupon = await ctx.coupons.get(id);
      expect(coupon).toMatchObject({
        title: preview.proposal.title,
        description: preview.proposal.description,
        ai_fields: ['title', 'description'],
        original: { title: 'Ten percent off', description: 'On everything' },
        ai: { outcome: 'saved', tokens: { total_tokens: 200 } },
      });
      expect(updated).toEqual([expect.objectContaining({ reason: 'ai', actor: 'editor', proposal_id: preview.proposal_id })]);
      // The tokens were spent once: the dry run's record became the saved one.
      expect(await calls(ctx, 'coupon', id)).toEqual([{ outcome: 'saved', total_tokens: 200 }]);
      expect(await ctx.coupons.revert(id, { actor: 'admin' })).toMatchObject({ title: 'Ten percent off', description: 'On everything' });
    });

    it('answers a second keep of the same proposal with the first answer and writes nothing', async () => {
      const { ctx } = use();
      const id = await insertCoupon(ctx);
      const preview = await ctx.ai.rewriteCoupon(id, { dry_run: true }, 'admin');
      const [a, b] = await Promise.all([
        ctx.ai.rewriteCoupon(id, { proposal_id: preview.proposal_id! }, 'admin'),
        ctx.ai.rewriteCoupon(id, { proposal_id: preview.proposal_id! }, 'admin'),
      ]);
      expect(b).toEqual(a);
      const after = await ctx.coupons.get(id);
      // An edit after the keep is not undone by a repeated keep.
      await ctx.coupons.update(id, { title: 'Edited after the keep' }, { actor: 'admin' });
      expect(await ctx.ai.rewriteCoupon(id, { proposal_id: preview.proposal_id! }, 'admin')).toEqual(a);
      expect((await ctx.coupons.get(id)).title).toBe('Edited after the keep');
      expect(after.updated_at).toBeTruthy();
      expect(fixture.requests).toHaveLength(1);
      expect(await calls(ctx, 'coupon', id)).toEqual([{ outcome: 'saved', total_tokens: 200 }]);
    });

    it('refuses to keep a proposal when the coupon text changed since it was made (409 svc_ai_proposal_stale)', async () => {
      const { ctx } = use();
      const id = await insertCoupon(ctx, { title: 'Before' });
      const preview = await ctx.ai.rewriteCoupon(id, { dry_run: true }, 'admin');
      await ctx.coupons.update(id, { description: "A colleague's edit" }, { actor: 'colleague' });
      await expect(ctx.ai.rewriteCoupon(id, { proposal_id: preview.proposal_id! }, 'admin')).rejects.toMatchObject({
        code: 'svc_ai_proposal_stale',
        status: 409,
        data: { proposal: preview.proposal_id, kind: 'coupon', id },
      });
      expect(await ctx.coupons.get(id)).toMatchObject({ title: 'Before', description: "A colleague's edit", ai_fields: [] });
      // A change to a field the proposal does not write is no conflict.
      const again = await ctx.ai.rewriteCoupon(id, { dry_run: true }, 'admin');
      await ctx.coupons.update(id, { terms: 'New terms' }, { actor: 'colleague' });
      expect(await ctx.ai.rewriteCoupon(id, { proposal_id: again.proposal_id! }, 'admin')).toMatchObject({ saved: true });
    });

    it('refuses unknown (404), expired (410) and other targets’ (409) proposals', async () => {
      const { ctx } = use();
      const id = await insertCoupon(ctx);
      const other = await insertCoupon(ctx);
      await expect(ctx.ai.rewriteCoupon(id, { proposal_id: '0'.repeat(32) }, 'admin')).rejects.toMatchObject({
        code: 'svc_ai_proposal_not_found',
        status: 404,
      });
      const preview = await ctx.ai.rewriteCoupon(id, { dry_run: true }, 'admin');
      await expect(ctx.ai.rewriteCoupon(other, { proposal_id: preview.proposal_id! }, 'admin')).rejects.toMatchObject({
        code: 'svc_ai_proposal_mismatch',
        status: 409,
        data: { kind: 'coupon', id },
      });
      const shopId = await shop(ctx);
      await expect(ctx.ai.generateShop(shopId, { proposal_id: preview.proposal_id! }, 'admin')).rejects.toMatchObject({ code: 'svc_ai_proposal_mismatch' });
      await ctx.db.execute('UPDATE ai_proposals SET expires_at = ? WHERE id = ?', [new Date(Date.now() - 1000), preview.proposal_id]);
      await expect(ctx.ai.rewriteCoupon(id, { proposal_id: preview.proposal_id! }, 'admin')).rejects.toMatchObject({
        code: 'svc_ai_proposal_expired',
        status: 410,
      });
      expect((await ctx.coupons.get(id)).ai_fields).toEqual([]);
      // The next proposal stored prunes the expired one.
      await ctx.ai.rewriteCoupon(other, { dry_run: true }, 'admin');
      await expect(ctx.ai.rewriteCoupon(id, { proposal_id: preview.proposal_id! }, 'admin')).rejects.toMatchObject({ code: 'svc_ai_proposal_not_found' });
    });

    it("keeps a shop's proposal: the page body and description it showed, revertable from the page", async () => {
      const { ctx } = use();
      const id = await shop(ctx, 'Shop text before');
      const shopRow = await ctx.advertisers.getById(id);
      const page = await ctx.pages.create(shopRow.module, shopRow.advertiser, { status: 'draft' }, 'admin');
      const bodyBefore = page.body;
      const preview = await ctx.ai.generateShop(id, { dry_run: true }, 'admin');
      expect(preview.proposal_id).toBeTruthy();
      expect((await ctx.pages.get(page.id)).body).toBe(bodyBefore);
      const kept = await ctx.ai.generateShop(id, { proposal_id: preview.proposal_id! }, 'admin');
      expect(kept).toMatchObject({ saved: true, page_id: page.id, proposal: preview.proposal });
      expect(fixture.requests).toHaveLength(1);
      expect((await ctx.pages.get(page.id)).body).toBe(preview.proposal.body);
      expect(await ctx.advertisers.getById(id)).toMatchObject({ description: preview.proposal.description, ai: { outcome: 'saved' } });
      expect(await calls(ctx, 'shop', id)).toEqual([{ outcome: 'saved', total_tokens: 200 }]);
      expect(await ctx.ai.generateShop(id, { proposal_id: preview.proposal_id! }, 'admin')).toEqual(kept);
      const reverted = await ctx.pages.revert(page.id, 'admin');
      expect(reverted).toMatchObject({ body: bodyBefore, original: null });
      expect((await ctx.advertisers.getById(id)).description).toBe('Shop text before');
    });

    it("refuses a shop's proposal when the page body was edited since (409), and keeps one for a shop without a page", async () => {
      const { ctx } = use();
      const id = await shop(ctx);
      const shopRow = await ctx.advertisers.getById(id);
      const page = await ctx.pages.create(shopRow.module, shopRow.advertiser, { status: 'draft' }, 'admin');
      const preview = await ctx.ai.generateShop(id, { dry_run: true }, 'admin');
      await ctx.pages.update(page.id, { body: '<p>A colleague wrote this</p>' }, 'colleague');
      await expect(ctx.ai.generateShop(id, { proposal_id: preview.proposal_id! }, 'admin')).rejects.toMatchObject({
        code: 'svc_ai_proposal_stale',
        status: 409,
      });
      expect((await ctx.pages.get(page.id)).body).toBe('<p>A colleague wrote this</p>');
      const bare = await shop(ctx, null);
      const fresh = await ctx.ai.generateShop(bare, { dry_run: true }, 'admin');
      const kept = await ctx.ai.generateShop(bare, { proposal_id: fresh.proposal_id! }, 'admin');
      expect(kept.page_id).not.toBeNull();
      expect((await ctx.pages.get(kept.page_id!)).body).toBe(fresh.proposal.body);
    });
  },
  fast,
);

describeEachDialect('page revert', (use) => {
  it('restores the body and description from before the first AI write, after later edits too, and refuses when there is none', async () => {
    const { ctx } = use();
    const id = await shop(ctx, 'Written by hand');
    const a = await ctx.advertisers.getById(id);
    const page = await ctx.pages.create(a.module, a.advertiser, { status: 'draft' }, 'admin');
    await expect(ctx.pages.revert(page.id, 'admin')).rejects.toMatchObject({ code: 'svc_nothing_to_revert', status: 409 });
    await ctx.pages.update(page.id, { body: '<p>Hand-written body</p>' }, 'admin');
    await ctx.pages.writeAiBody(page.id, '<p>AI body one</p>', { description: 'Written by hand' }, 'admin');
    await ctx.advertisers.setDescription(id, 'AI description one', 'admin');
    await ctx.pages.writeAiBody(page.id, '<p>AI body two</p>', { description: 'AI description one' }, 'admin');
    await ctx.advertisers.setDescription(id, 'AI description two', 'admin');
    await ctx.pages.update(page.id, { body: '<p>Edited over the AI</p>' }, 'admin');
    expect(await ctx.pages.get(page.id)).toMatchObject({ original: { body: '<p>Hand-written body</p>', description: 'Written by hand' } });
    const reverted = await ctx.pages.revert(page.id, 'admin');
    expect(reverted).toMatchObject({ body: '<p>Hand-written body</p>', original: null });
    expect((await ctx.advertisers.getById(id)).description).toBe('Written by hand');
    await expect(ctx.pages.revert(page.id, 'admin')).rejects.toMatchObject({ code: 'svc_nothing_to_revert' });
    await expect(ctx.pages.revert(99_999_999, 'admin')).rejects.toMatchObject({ code: 'svc_page_not_found', status: 404 });
  });
});
