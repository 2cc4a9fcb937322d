import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { HOOKS } from '../../../src/hooks/index.js';
import type { ServiceError } from '../../../src/errors.js';
import { describeEachDialect } from '../../helpers/context.js';
import { plainText } from '../../../src/services/coupons/text.js';
import { insertCoupon } from '../../helpers/coupons.js';
import { ENCODED_MARKUP, expectPlain } from '../../helpers/markup.js';
import { startOpenAiFixture, type OpenAiFixture } from '../../fixtures/openai-server.js';

const fast = { 'ai.retry_base_ms': 5, 'ai.retry_max_ms': 20, 'ai.retry_after_max_seconds': 1, 'ai.timeout_ms': 1000, 'ai.max_attempts': 2 };

const refusal = async (promise: Promise<unknown>): Promise<ServiceError> => {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeTruthy();
  return err as ServiceError;
};

describeEachDialect(
  'AI coupon rewrites',
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
      await use().ctx.ai.configure({ base_url: fixture.baseUrl, model: 'fixture-model', api_key: 'sk-coupon-test-key-1' }, 'test');
    });

    it('rewrites title and description, keeps the original for revert, and records the usage on the coupon', async () => {
      const { ctx } = use();
      const id = await insertCoupon(ctx, { title: 'Ten percent off', description: 'On everything' });
      const fired: unknown[] = [];
      ctx.hooks.addAction(HOOKS.aiGenerated, 'test-generated', (e) => fired.push(e));
      const out = await ctx.ai.rewriteCoupon(id, {}, 'admin');
      ctx.hooks.wp.removeAction(HOOKS.aiGenerated, 'test-generated');
      expect(out).toMatchObject({
        kind: 'coupon',
        id,
        dry_run: false,
        saved: true,
        generation: { model: 'fixture-model', tokens: { total_tokens: 200 }, format: 'json_schema' },
      });
      const coupon = await ctx.coupons.get(id);
      expect(coupon.title).toBe(out.proposal.title);
      expect(coupon).toMatchObject({
        ai_fields: ['title', 'description'],
        original: { title: 'Ten percent off', description: 'On everything' },
        ai: { model: 'fixture-model', outcome: 'saved', tokens: { total_tokens: 200 } },
      });
      expect(out.coupon).toMatchObject({ ai: { model: 'fixture-model', outcome: 'saved' } });
      expect(fired).toEqual([expect.objectContaining({ kind: 'coupon', id, saved: true, dry_run: false, model: 'fixture-model' })]);
      expect((await ctx.ai.lastCouponGenerations([id])).get(id)).toMatchObject({ model: 'fixture-model', outcome: 'saved', tokens: { total_tokens: 200 } });
      // The prompt carried the coupon's facts through the template tags.
      expect(fixture.requests[0].body.messages[1].content).toContain('Code: SAVE10');
      const reverted = await ctx.coupons.revert(id, { actor: 'admin' });
      expect(reverted).toMatchObject({ title: 'Ten percent off', description: 'On everything', ai_fields: [] });
    });

    it('returns a proposal on a dry run and changes nothing but the usage record', async () => {
      const { ctx } = use();
      const id = await insertCoupon(ctx);
      const { ai: _none, ...before } = await ctx.coupons.get(id);
      const out = await ctx.ai.rewriteCoupon(id, { dry_run: true }, 'admin');
      expect(out).toMatchObject({ dry_run: true, saved: false, coupon: null });
      expect(out.proposal.title).toBeTruthy();
      const { ai, ...after } = await ctx.coupons.get(id);
      expect(after).toEqual(before);
      expect(ai).toMatchObject({ outcome: 'dry_run', model: 'fixture-model' });
      expect((await ctx.ai.lastCouponGenerations([id])).get(id)).toMatchObject({ outcome: 'dry_run' });
    });

    it.each([
      ['empty_choice', 'empty'],
      ['malformed_json', 'malformed_json'],
      ['wrong_shape', 'wrong_shape'],
      ['refusal', 'refusal'],
      ['truncated', 'truncated'],
    ] as const)('refuses a %s answer with svc_ai_bad_output (%s), leaves the coupon untouched and records the failure', async (kind, reason) => {
      const { ctx } = use();
      const id = await insertCoupon(ctx);
      const { ai: _none, ...before } = await ctx.coupons.get(id);
      fixture.script({ kind });
      const err = await refusal(ctx.ai.rewriteCoupon(id, {}, 'admin'));
      expect(err).toMatchObject({ code: 'svc_ai_bad_output', status: 502, data: { reason } });
      const { ai, ...after } = await ctx.coupons.get(id);
      expect(after).toEqual(before);
      expect(ai).toMatchObject({ outcome: 'failed', tokens: { total_tokens: 200 } });
      expect((await ctx.ai.lastCouponGenerations([id])).get(id)).toMatchObject({ outcome: 'failed', tokens: { total_tokens: 200 } });
    });

    it("describes the discount from its type and value when the network gave no text, and a deal's missing code", async () => {
      const { ctx } = use();
      await ctx.ai.rewriteCoupon(
        await insertCoupon(ctx, { discount_type: 'amount', discount_value: '5', discount_currency: 'EUR', discount_text: null, code: '' }),
        { dry_run: true },
        'admin',
      );
      const amount = fixture.requests.at(-1)!.body.messages[1].content as string;
      expect(amount).toContain('Discount: 5 EUR');
      expect(amount).toContain('Code: none (a deal)');
      await ctx.ai.rewriteCoupon(await insertCoupon(ctx, { discount_type: 'percent', discount_value: '15', discount_text: null }), { dry_run: true }, 'admin');
      expect(fixture.requests.at(-1)!.body.messages[1].content).toContain('Discount: 15%');
      await ctx.ai.rewriteCoupon(
        await insertCoupon(ctx, { discount_type: 'free_shipping', discount_value: null, discount_text: null }),
        { dry_run: true },
        'admin',
      );
      expect(fixture.requests.at(-1)!.body.messages[1].content).toContain('Discount: free_shipping');
    });

    it('strips script and markup from an answer before saving it', async () => {
      const { ctx } = use();
      const id = await insertCoupon(ctx);
      fixture.script({ kind: 'script_html' });
      const out = await ctx.ai.rewriteCoupon(id, {}, 'admin');
      const coupon = await ctx.coupons.get(id);
      for (const text of [out.proposal.title, out.proposal.description, coupon.title, coupon.description ?? '']) {
        expect(text).not.toMatch(/<|script|onerror|alert/i);
      }
      expect(coupon.title).toBe('Deal of the day');
    });

    it('stores no markup from an answer that hides it behind entities (encoded, double-encoded, mixed)', async () => {
      const { ctx } = use();
      for (const p of Object.values(ENCODED_MARKUP)) {
        const id = await insertCoupon(ctx);
        fixture.script({ kind: 'good', content: { title: p, description: p } });
        const out = await ctx.ai.rewriteCoupon(id, {}, 'admin');
        const coupon = await ctx.coupons.get(id);
        expectPlain(out.proposal.title, (t) => plainText(t, false));
        expectPlain(coupon.title, (t) => plainText(t, false));
        expectPlain(coupon.description, (t) => plainText(t, true));
      }
    });

    it('retries a 429 and a 500 and then saves', async () => {
      const { ctx } = use();
      const id = await insertCoupon(ctx);
      fixture.script({ kind: 'status', status: 429, retryAfter: '0' });
      const out = await ctx.ai.rewriteCoupon(id, {}, 'admin');
      expect(out.generation.attempts).toBe(2);
      fixture.script({ kind: 'status', status: 500 }, { kind: 'status', status: 500 });
      const err = await refusal(ctx.ai.rewriteCoupon(id, {}, 'admin'));
      expect(err).toMatchObject({ code: 'svc_ai_provider_error', data: { reason: 'server_error', attempts: 2 } });
    });

    it('times out a provider that does not answer', async () => {
      const { ctx } = use();
      const id = await insertCoupon(ctx);
      fixture.script({ kind: 'hang' }, { kind: 'hang' });
      const err = await refusal(ctx.ai.rewriteCoupon(id, {}, 'admin'));
      expect(err).toMatchObject({ code: 'svc_ai_provider_error', data: { reason: 'timeout' } });
    });

    it('falls back to json_object for a provider without json_schema', async () => {
      const { ctx } = use();
      fixture.rejectJsonSchema = true;
      // A model of its own: the fallback is remembered per provider and model.
      await ctx.ai.configure({ model: 'legacy-model' }, 'test');
      const id = await insertCoupon(ctx);
      const out = await ctx.ai.rewriteCoupon(id, {}, 'admin');
      expect(out.generation.format).toBe('json_object');
      expect(fixture.requests.map((r) => r.format)).toEqual(['json_schema', 'json_object']);
    });

    it('lets filters change the prompt and the result, and checks the filtered result again', async () => {
      const { ctx } = use();
      const id = await insertCoupon(ctx);
      ctx.hooks.addFilter(HOOKS.aiPrompt, 'test-prompt', (messages: { role: string; content: string }[]) => [
        ...messages,
        { role: 'user', content: 'Mention free shipping.' },
      ]);
      ctx.hooks.addFilter(HOOKS.aiResult, 'test-result', (result: { title: string; description: string }) => ({
        ...result,
        title: `<i>${result.title}</i> (checked)`,
      }));
      try {
        const out = await ctx.ai.rewriteCoupon(id, {}, 'admin');
        expect(fixture.requests[0].body.messages.at(-1)).toEqual({ role: 'user', content: 'Mention free shipping.' });
        expect(out.proposal.title).toMatch(/^[^<]+ \(checked\)$/);
        ctx.hooks.addFilter(HOOKS.aiResult, 'test-result', () => ({ title: '', description: 'x' }));
        const err = await refusal(ctx.ai.rewriteCoupon(id, {}, 'admin'));
        expect(err).toMatchObject({ code: 'svc_ai_bad_output', data: { reason: 'empty' } });
        ctx.hooks.addFilter(HOOKS.aiResult, 'test-result', () => ({ title: 42, description: 'x' }));
        expect(await refusal(ctx.ai.rewriteCoupon(id, {}, 'admin'))).toMatchObject({ code: 'svc_ai_bad_output', data: { reason: 'wrong_shape' } });
        ctx.hooks.addFilter(HOOKS.aiResult, 'test-result', () => null);
        expect(await refusal(ctx.ai.rewriteCoupon(id, {}, 'admin'))).toMatchObject({ code: 'svc_ai_bad_output', data: { reason: 'wrong_shape' } });
      } finally {
        ctx.hooks.wp.removeFilter(HOOKS.aiPrompt, 'test-prompt');
        ctx.hooks.wp.removeFilter(HOOKS.aiResult, 'test-result');
      }
    });

    it('sends the rendered prompt when a prompt filter answers something that is not messages', async () => {
      const { ctx } = use();
      const id = await insertCoupon(ctx);
      ctx.hooks.addFilter(HOOKS.aiPrompt, 'test-junk', () => 'not messages');
      try {
        await ctx.ai.rewriteCoupon(id, { dry_run: true }, 'admin');
        expect(fixture.requests[0].body.messages.map((m: { role: string }) => m.role)).toEqual(['system', 'user']);
      } finally {
        ctx.hooks.wp.removeFilter(HOOKS.aiPrompt, 'test-junk');
      }
    });

    it('answers 404 svc_coupon_not_found for an unknown coupon without calling the provider', async () => {
      const err = await refusal(use().ctx.ai.rewriteCoupon(987654, {}, 'admin'));
      expect(err).toMatchObject({ code: 'svc_coupon_not_found', status: 404 });
      expect(fixture.requests).toHaveLength(0);
    });
  },
  fast,
);
