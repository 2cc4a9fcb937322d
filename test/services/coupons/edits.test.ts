import { expect, it } from 'vitest';
import { ServiceError } from '../../../src/errors.js';
import { HOOKS } from '../../../src/hooks/index.js';
import { describeEachDialect } from '../../helpers/context.js';
import { plainText } from '../../../src/services/coupons/text.js';
import { insertCoupon } from '../../helpers/coupons.js';
import { ENCODED_MARKUP, expectPlain } from '../../helpers/markup.js';

const actor = { actor: 'admin' };

describeEachDialect('coupon edits, AI rewrites and revert', (use) => {
  it('records the edited fields and keeps the network value so a reset gives it back', async () => {
    const { ctx } = use();
    const id = await insertCoupon(ctx);
    const edited = await ctx.coupons.update(id, { title: 'Our <b>own</b> title', ends_at: '2030-01-01T00:00:00+02:00' }, actor);
    expect(edited).toMatchObject({ title: 'Our own title', ends_at: '2029-12-31T22:00:00.000Z', edited_fields: ['title', 'ends_at'] });
    expect(edited.network_values).toEqual({ title: 'Ten percent off', ends_at: null });

    const reset = await ctx.coupons.update(id, { reset: ['title'] }, actor);
    expect(reset).toMatchObject({ title: 'Ten percent off', edited_fields: ['ends_at'] });
    expect(reset.network_values).toEqual({ ends_at: null });
  });

  it('stores no markup from an entity-encoded edit (encoded, double-encoded, mixed), and cleaning it again changes nothing', async () => {
    const { ctx } = use();
    for (const p of Object.values(ENCODED_MARKUP)) {
      const id = await insertCoupon(ctx);
      const edited = await ctx.coupons.update(id, { title: p, description: p, terms: p }, actor);
      const stored = await ctx.coupons.get(id);
      for (const c of [edited, stored]) {
        expectPlain(c.title, (t) => plainText(t, false));
        expectPlain(c.description, (t) => plainText(t, true));
        expectPlain(c.terms, (t) => plainText(t, true));
      }
    }
  });

  it('changes nothing and fires no hook when an edit repeats the current value', async () => {
    const { ctx } = use();
    const id = await insertCoupon(ctx);
    const fired: unknown[] = [];
    ctx.hooks.addAction(HOOKS.couponUpdated, 'test-same', (c) => fired.push(c));
    const same = await ctx.coupons.update(id, { title: 'Ten percent off', code: 'SAVE10' }, actor);
    expect(same.edited_fields).toEqual([]);
    expect(fired).toHaveLength(0);
    await ctx.coupons.update(id, { code: '' }, actor);
    expect(fired).toHaveLength(1);
    expect((await ctx.coupons.get(id)).type).toBe('deal');
    ctx.hooks.wp.removeAction(HOOKS.couponUpdated, 'test-same');
  });

  it('refuses a field both set and reset, an unknown reset field and bad values with svc_invalid_coupon', async () => {
    const { ctx } = use();
    const id = await insertCoupon(ctx);
    for (const patch of [
      { title: 'x', reset: ['title'] },
      { reset: ['nope'] },
      { title: '   ' },
      { title: 5 },
      { discount_value: '-1' },
      { discount_type: 'gift' },
      { starts_at: '2026-01-01 10:00' },
      { landing_url: 'javascript:alert(1)' },
      { regions: ['GBR'] },
      { exclusive: 'yes' },
      { discount_currency: 'EU' },
      { description: 7 },
    ]) {
      await expect(ctx.coupons.update(id, patch as never, actor)).rejects.toMatchObject({ code: 'svc_invalid_coupon', status: 400 });
    }
    expect((await ctx.coupons.get(id)).edited_fields).toEqual([]);
  });

  it('answers svc_coupon_not_found for an unknown or malformed id', async () => {
    const { ctx } = use();
    await expect(ctx.coupons.get(99_999_999)).rejects.toMatchObject({ code: 'svc_coupon_not_found', status: 404 });
    await expect(ctx.coupons.get(0)).rejects.toBeInstanceOf(ServiceError);
    await expect(ctx.coupons.update(99_999_999, { title: 'x' }, actor)).rejects.toMatchObject({ code: 'svc_coupon_not_found' });
    await expect(ctx.coupons.revert(99_999_999, actor)).rejects.toMatchObject({ code: 'svc_coupon_not_found' });
  });

  it('keeps the text from before the first AI rewrite and restores it on revert', async () => {
    const { ctx } = use();
    const id = await insertCoupon(ctx, { description: null });
    const first = await ctx.coupons.applyRewrite(id, { title: 'AI title', description: 'AI <script>x()</script>words' }, { actor: 'ai', model: 'm1' });
    expect(first).toMatchObject({
      title: 'AI title',
      description: 'AI words',
      ai_fields: ['title', 'description'],
      edited_fields: [],
      original: { title: 'Ten percent off', description: null },
    });
    const second = await ctx.coupons.applyRewrite(id, { title: 'AI title two' }, { actor: 'ai' });
    expect(second.original).toEqual({ title: 'Ten percent off', description: null });

    const reverted = await ctx.coupons.revert(id, actor);
    expect(reverted).toMatchObject({ title: 'Ten percent off', description: null, ai_fields: [], edited_fields: [], original: null });
    expect(reverted.network_values).toEqual({});
    await expect(ctx.coupons.revert(id, actor)).rejects.toMatchObject({ code: 'svc_nothing_to_revert', status: 409 });
  });

  it('reverts after the AI text was edited, and gives an administrator back the text they wrote before the rewrite', async () => {
    const { ctx } = use();
    const id = await insertCoupon(ctx);
    await ctx.coupons.update(id, { description: 'Written by the admin' }, actor);
    await ctx.coupons.applyRewrite(id, { title: 'AI title', description: 'AI description' }, { actor: 'ai' });
    const edited = await ctx.coupons.update(id, { title: 'Admin fixed the AI title' }, actor);
    expect(edited).toMatchObject({ ai_fields: ['description'], edited_fields: ['title'] });

    const reverted = await ctx.coupons.revert(id, actor);
    expect(reverted).toMatchObject({
      title: 'Ten percent off',
      description: 'Written by the admin',
      edited_fields: ['description'],
      ai_fields: [],
      original: null,
    });
    expect(reverted.network_values).toEqual({ description: 'On everything' });
  });

  it('gives an AI-written field back to the network on reset and forgets its original', async () => {
    const { ctx } = use();
    const id = await insertCoupon(ctx);
    await ctx.coupons.applyRewrite(id, { title: 'AI title' }, { actor: 'ai' });
    const reset = await ctx.coupons.update(id, { reset: ['title'] }, actor);
    expect(reset).toMatchObject({ title: 'Ten percent off', ai_fields: [], original: null });
    await expect(ctx.coupons.revert(id, actor)).rejects.toMatchObject({ code: 'svc_nothing_to_revert' });
  });

  it('refuses an empty or invalid rewrite and stores nothing', async () => {
    const { ctx } = use();
    const id = await insertCoupon(ctx);
    await expect(ctx.coupons.applyRewrite(id, {}, { actor: 'ai' })).rejects.toMatchObject({ code: 'svc_invalid_coupon' });
    await expect(ctx.coupons.applyRewrite(id, { title: '<p></p>' }, { actor: 'ai' })).rejects.toMatchObject({ code: 'svc_invalid_coupon' });
    expect((await ctx.coupons.get(id)).original).toBeNull();
  });
});
