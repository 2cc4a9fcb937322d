import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { buildContext, type Context } from '../../../src/context.js';
import { JobRunner } from '../../../src/jobs/runner.js';
import { estimateTokens } from '../../../src/services/ai/budget.js';
import { describeEachDialect } from '../../helpers/context.js';
import { insertCoupon } from '../../helpers/coupons.js';
import { adminClient } from '../../helpers/http.js';
import { startOpenAiFixture, type OpenAiFixture, type RecordedRequest } from '../../fixtures/openai-server.js';

type Json = Record<string, any>;
const fast = { 'ai.retry_base_ms': 5, 'ai.retry_max_ms': 20, 'ai.retry_after_max_seconds': 1, 'ai.timeout_ms': 5000, 'ai.max_attempts': 2 };
/** Short prompts keep the estimate below the fixture's 200 tokens a call when the answer is estimated low. */
const SHORT = { 'prompts.coupon.system': 'JSON only.', 'prompts.coupon.user': 'Rewrite the coupon of %NAME%: %COUPON_TITLE%.' };

function runner(ctx: Context): JobRunner {
  return new JobRunner({ ctx, jobs: ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 20, progressIntervalMs: 20, shutdownGraceMs: 2_000 });
}

/** The estimate a recorded call was reserved at (the same function the service uses, on what was sent). */
const estimateOf = (r: RecordedRequest, answerTokens: number) => estimateTokens(r.body.messages, r.body.response_format.json_schema.schema, answerTokens);

describeEachDialect(
  'the AI token budgets',
  (use) => {
    const api = adminClient(use);
    let fixture: OpenAiFixture;
    let network = 0;
    const coupons = async (n: number) => {
      const net = `budget${++network}`;
      for (let i = 0; i < n; i++) await insertCoupon(use().ctx, { network: net, title: `Offer ${i}` });
      return net;
    };
    const run = async (net: string) => {
      const { ctx } = use();
      const job = await ctx.ai.startBulk({ kind: 'coupons', filter: { network: net }, overwrite: false }, 'admin');
      await runner(ctx).runPending();
      return ctx.jobs.get(job.id);
    };
    /** Today's counted tokens so far (the daily budget's row), to measure one test's spend. */
    const spentToday = async () => (await use().ctx.ai.settings()).today.spent;

    beforeAll(async () => {
      fixture = await startOpenAiFixture();
    });
    afterAll(async () => {
      await fixture.close();
    });
    beforeEach(async () => {
      fixture.reset();
      await use().ctx.ai.configure(
        {
          base_url: fixture.baseUrl,
          model: 'fixture-model',
          api_key: 'sk-budget-test-key-31',
          concurrency: 3,
          token_budget: 0,
          daily_token_budget: 0,
          answer_token_estimate: null,
          'prompts.coupon.system': null,
          'prompts.coupon.user': null,
        },
        'test',
      );
    });

    it('keeps a bulk run of budget 300 within it while three calls could run at once', async () => {
      // Each call costs 200; the estimate (answer counted at 200) is above that, so a second call
      // never starts beside the first, and none after it: 200 + estimate > 300.
      await use().ctx.ai.configure({ ...SHORT, token_budget: 300, answer_token_estimate: 200 }, 'test');
      const net = await coupons(6);
      fixture.delayMs = 30;
      const job = await run(net);
      const result = job.result as Json;
      expect(result.usage.tokens.total_tokens).toBeLessThanOrEqual(300);
      expect(result).toMatchObject({ saved: 1, stopped: 'token_budget', token_budget: 300, counted_tokens: 200 });
      expect(fixture.requests).toHaveLength(1);
      expect(fixture.maxInFlight).toBe(1);
    });

    it('overspends a budget of 300 by at most what the calls in flight at once spent over their estimates', async () => {
      // An estimate below the real cost: the bound is budget + sum over the calls in flight at the
      // last start of (real - estimate). One call at a time, that is one estimate's error.
      await use().ctx.ai.configure({ ...SHORT, token_budget: 300, concurrency: 1, answer_token_estimate: 1 }, 'test');
      const net = await coupons(6);
      const job = await run(net);
      const result = job.result as Json;
      const estimate = estimateOf(fixture.requests[0], 1);
      expect(estimate).toBeLessThan(150);
      // Started while counted + reserved + estimate <= 300: 0 + e, then 200 + e; not 400 + e.
      expect(fixture.requests).toHaveLength(2);
      expect(result).toMatchObject({ saved: 2, stopped: 'token_budget', counted_tokens: 400 });
      expect(result.counted_tokens).toBeLessThanOrEqual(300 + (200 - estimate));
    });

    it('stops a provider that reports no usage, counting each answer at its estimate', async () => {
      fixture.usage = { prompt_tokens: 0, completion_tokens: 0 };
      await use().ctx.ai.configure({ token_budget: 3000, concurrency: 2 }, 'test');
      const net = await coupons(8);
      const before = await spentToday();
      const job = await run(net);
      const result = job.result as Json;
      const estimates = fixture.requests.map((r) => estimateOf(r, 1000));
      const counted = estimates.reduce((a, b) => a + b, 0);
      expect(fixture.requests.length).toBeLessThan(8);
      expect(fixture.requests.length).toBe(Math.floor(3000 / Math.max(...estimates)));
      expect(result).toMatchObject({ stopped: 'token_budget', counted_tokens: counted, usage: { tokens: { total_tokens: 0 } } });
      expect(counted).toBeLessThanOrEqual(3000);
      // The daily count takes the same estimates.
      expect((await spentToday()) - before).toBe(counted);
    });

    it('answers 429 svc_ai_budget_exhausted on a single-item route once the daily budget is spent, and shows the spend in the settings', async () => {
      const { ctx } = use();
      const before = await spentToday();
      await ctx.ai.configure({ ...SHORT, answer_token_estimate: 100, daily_token_budget: before + 500 }, 'test');
      const net = await coupons(4);
      const ids = (await ctx.db.select<{ id: number }>('SELECT id FROM coupons WHERE network = ? ORDER BY id', [net])).map((r) => Number(r.id));
      // 200 a call, each reserved at its estimate (under 200) first: two fit in 500, a third does not.
      expect((await api.post(`/ai/coupon/${ids[0]}`, {})).statusCode).toBe(200);
      expect((await api.post(`/ai/coupon/${ids[1]}`, { dry_run: true })).statusCode).toBe(200);
      const refused = await api.post(`/ai/coupon/${ids[2]}`, {});
      expect(refused.statusCode).toBe(429);
      expect(refused.result).toMatchObject({
        code: 'svc_ai_budget_exhausted',
        data: { budget: 'daily', limit: before + 500, spent: before + 400, reserved: 0 },
      });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(fixture.requests).toHaveLength(2);
      // A bulk run takes from the same budget: it stops at its first call, which is never sent.
      const job = await run(net);
      expect(job.status).toBe('done');
      expect(job.result).toMatchObject({ saved: 0, stopped: 'daily_token_budget' });
      expect(fixture.requests).toHaveLength(2);
      const shown = await api.get('/ai/settings');
      expect(shown.result).toMatchObject({
        daily_token_budget: before + 500,
        today: { day: new Date().toISOString().slice(0, 10), spent: before + 400, reserved: 0, remaining: 100 },
      });
      // Nothing left at all: a bulk run is refused before it starts.
      await ctx.ai.configure({ daily_token_budget: before + 400 }, 'test');
      await expect(ctx.ai.startBulk({ kind: 'coupons', filter: { network: net }, overwrite: false }, 'admin')).rejects.toMatchObject({
        code: 'svc_ai_budget_exhausted',
        status: 429,
      });
      await ctx.ai.configure({ daily_token_budget: 0 }, 'test');
      expect((await api.get('/ai/settings')).result).toMatchObject({ today: { remaining: null } });
    });

    it('holds the daily budget across daemons reserving at once on one database', async () => {
      const { ctx, config } = use();
      // A second daemon: its own context and connections on the same database.
      const other = buildContext(config, { logStream: null });
      try {
        const { spent } = await ctx.ai.deps.budget.today(0);
        const limit = spent + 1000;
        const attempts = Array.from({ length: 24 }, (_, i) => (i % 2 ? other : ctx).ai.deps.budget.reserve(100, limit, 60_000, null));
        const outcomes = await Promise.allSettled(attempts);
        const held = outcomes
          .filter((o) => o.status === 'fulfilled')
          .map((o) => (o as PromiseFulfilledResult<{ id: number; day: string; tokens: number }>).value);
        const refused = outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason);
        expect(held).toHaveLength(10);
        for (const err of refused) expect(err).toMatchObject({ code: 'svc_ai_budget_exhausted', status: 429 });
        expect(await ctx.ai.deps.budget.today(limit)).toMatchObject({ spent, reserved: 1000, remaining: 0 });
        // Settled below their estimates, the calls give back what they did not spend.
        for (const r of held) await other.ai.deps.budget.settle(r, 50);
        expect(await ctx.ai.deps.budget.today(limit)).toMatchObject({ spent: spent + 500, reserved: 0, remaining: 500 });
      } finally {
        await other.close();
      }
    });
  },
  fast,
);
