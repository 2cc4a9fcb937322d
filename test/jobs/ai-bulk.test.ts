import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import type { Context } from '../../src/context.js';
import { JobRunner } from '../../src/jobs/runner.js';
import { describeEachDialect } from '../helpers/context.js';
import { insertCoupon } from '../helpers/coupons.js';
import { waitFor, waitForStatus } from '../helpers/jobs.js';
import { startOpenAiFixture, type OpenAiFixture } from '../fixtures/openai-server.js';

const fast = { 'ai.retry_base_ms': 5, 'ai.retry_max_ms': 20, 'ai.retry_after_max_seconds': 1, 'ai.timeout_ms': 5000, 'ai.max_attempts': 2 };

function runner(ctx: Context): JobRunner {
  return new JobRunner({ ctx, jobs: ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 20, progressIntervalMs: 20, shutdownGraceMs: 2_000 });
}

describeEachDialect(
  'the ai.bulk job',
  (use) => {
    let fixture: OpenAiFixture;
    let network = 0;
    /** Coupons of a network of their own, so each test's filter sees only its coupons. */
    const coupons = async (n: number, values: Record<string, unknown> = {}) => {
      const net = `bulk${++network}`;
      const ids: number[] = [];
      for (let i = 0; i < n; i++) ids.push(await insertCoupon(use().ctx, { network: net, title: `Offer ${i}`, ...values }));
      return { net, ids };
    };
    const run = async (params: Record<string, unknown>) => {
      const { ctx } = use();
      const job = await ctx.ai.startBulk(params as never, 'admin');
      await runner(ctx).runPending();
      return ctx.jobs.get(job.id);
    };

    beforeAll(async () => {
      fixture = await startOpenAiFixture();
    });
    afterAll(async () => {
      await fixture.close();
    });
    beforeEach(async () => {
      fixture.reset();
      await use().ctx.ai.configure(
        { base_url: fixture.baseUrl, model: 'fixture-model', api_key: 'sk-bulk-test-key-12', concurrency: 3, token_budget: 0 },
        'test',
      );
    });

    it('rewrites every coupon of the filter at the configured concurrency and sums the usage in the result', async () => {
      const { ctx } = use();
      const { net, ids } = await coupons(7);
      // The first three answers wait for each other: three at once is what the job must reach, whatever the load.
      fixture.meet = 3;
      fixture.delayMs = 30;
      const job = await run({ kind: 'coupons', filter: { network: net } });
      expect(job.status).toBe('done');
      expect(job.progress).toMatchObject({ total: 7, done: 7, failed: 0 });
      expect(job.result).toMatchObject({
        kind: 'coupons',
        saved: 7,
        skipped: 0,
        failed: 0,
        stopped: null,
        usage: { calls: 7, tokens: { total_tokens: 1400 }, models: ['fixture-model'] },
      });
      expect(fixture.maxInFlight).toBe(3);
      for (const id of ids) expect((await ctx.coupons.get(id)).ai_fields).toEqual(['title', 'description']);
    });

    it("takes only the coupons of the filter's advertiser, status and type", async () => {
      const { ctx } = use();
      const net = `bulkf${++network}`;
      const match = await insertCoupon(ctx, { network: net, advertiser: '7', code: 'CODE1' });
      await insertCoupon(ctx, { network: net, advertiser: '8', code: 'CODE2' });
      await insertCoupon(ctx, { network: net, advertiser: '7', code: '' });
      await insertCoupon(ctx, { network: net, advertiser: '7', code: 'OLD', ends_at: new Date(Date.now() - 86_400_000) });
      const job = await run({ kind: 'coupons', filter: { network: net, advertiser: '7', status: 'active', type: 'code' } });
      expect(job.progress).toMatchObject({ total: 1, done: 1 });
      expect(job.result).toMatchObject({ saved: 1 });
      expect((await ctx.coupons.get(match)).ai_fields).toEqual(['title', 'description']);
    });

    it('skips coupons the AI already wrote unless overwrite', async () => {
      const { ctx } = use();
      const { net, ids } = await coupons(3);
      await ctx.ai.rewriteCoupon(ids[1], {}, 'admin');
      fixture.reset();
      const skipping = await run({ kind: 'coupons', filter: { network: net } });
      expect(skipping.result).toMatchObject({ saved: 2, skipped: 1 });
      expect(fixture.requests).toHaveLength(2);
      const overwriting = await run({ kind: 'coupons', filter: { network: net }, overwrite: true });
      expect(overwriting.result).toMatchObject({ saved: 3, skipped: 0 });
    });

    it('reports per-item failures without failing the run', async () => {
      const { net } = await coupons(4);
      // The provider answers two bad items among good ones.
      await use().ctx.ai.configure({ concurrency: 1 }, 'test');
      fixture.script({ kind: 'good' }, { kind: 'malformed_json' }, { kind: 'refusal' }, { kind: 'good' });
      const job = await run({ kind: 'coupons', filter: { network: net } });
      expect(job.status).toBe('done');
      expect(job.progress).toMatchObject({ done: 4, failed: 2 });
      expect(job.result).toMatchObject({ saved: 2, failed: 2, usage: { calls: 4, tokens: { total_tokens: 800 } } });
      expect((job.result as { failures: { code: string; reason: string }[] }).failures.map((f) => [f.code, f.reason])).toEqual([
        ['svc_ai_bad_output', 'malformed_json'],
        ['svc_ai_bad_output', 'refusal'],
      ]);
    });

    it('stops taking items once the token budget is spent and says so', async () => {
      const { net } = await coupons(5);
      // Each call is reserved at its estimate first: short prompts and a small answer estimate keep it under the 200 a call costs.
      await use().ctx.ai.configure(
        {
          concurrency: 1,
          token_budget: 400,
          answer_token_estimate: 1,
          'prompts.coupon.system': 'JSON only.',
          'prompts.coupon.user': 'Rewrite %COUPON_TITLE%.',
        },
        'test',
      );
      const job = await run({ kind: 'coupons', filter: { network: net } });
      expect(job.status).toBe('done');
      expect(job.result).toMatchObject({ saved: 2, stopped: 'token_budget', token_budget: 400, usage: { tokens: { total_tokens: 400 } } });
      expect(fixture.requests).toHaveLength(2);
      // An item taken while the last call was in flight is left undone when that call spends the budget.
      const { net: tight } = await coupons(3);
      await use().ctx.ai.configure({ token_budget: 200 }, 'test');
      const tightRun = await run({ kind: 'coupons', filter: { network: tight } });
      expect(tightRun.result).toMatchObject({ saved: 1, stopped: 'token_budget' });
      expect(fixture.requests).toHaveLength(3);
      await use().ctx.ai.configure({ token_budget: 400 }, 'test');
      // A budget spent exactly on the last item does not say the run stopped early.
      const { net: exact } = await coupons(2);
      expect((await run({ kind: 'coupons', filter: { network: exact } })).result).toMatchObject({ saved: 2, stopped: null });
      await use().ctx.ai.configure({ answer_token_estimate: null, 'prompts.coupon.system': null, 'prompts.coupon.user': null }, 'test');
    });

    it('fails the run on a refused API key instead of failing every item', async () => {
      const { net } = await coupons(3);
      fixture.script({ kind: 'status', status: 401 }, { kind: 'status', status: 401 }, { kind: 'status', status: 401 });
      const job = await run({ kind: 'coupons', filter: { network: net } });
      expect(job.status).toBe('failed');
      expect(job.error).toContain('refused the API key');
      expect(job.error).not.toContain('sk-bulk-test-key-12');
    });

    it('fails the run on a base URL the outbound guard refuses instead of failing every item', async () => {
      const { ctx } = use();
      const { net } = await coupons(3);
      // A private address outside the test allow list: refused before any connection, so every item would fail alike.
      await ctx.ai.configure({ base_url: 'http://10.0.0.1:8080/v1', api_key: 'sk-bulk-test-key-12' }, 'test');
      const job = await run({ kind: 'coupons', filter: { network: net } });
      expect(job.status).toBe('failed');
      expect(job.progress).toMatchObject({ failed: 0 });
      expect(job.error).toContain('CASHTRACK_OUTBOUND_ALLOW');
      expect(fixture.requests).toHaveLength(0);
    });

    it('cancels mid-run: the calls in flight are aborted at once and what finished stays saved', async () => {
      const { ctx } = use();
      const { net, ids } = await coupons(6);
      await ctx.ai.configure({ concurrency: 2 }, 'test');
      fixture.script({ kind: 'good' }, { kind: 'good' }, { kind: 'hang' }, { kind: 'hang' });
      const job = await ctx.ai.startBulk({ kind: 'coupons', filter: { network: net }, overwrite: false }, 'admin');
      const r = runner(ctx);
      r.start();
      try {
        await waitFor(() => fixture.requests.length >= 4 && fixture.inFlight === 2, 15_000, 'two hanging calls');
        await ctx.jobs.cancel(job.id, 'admin');
        const stopped = await waitForStatus(ctx.jobs, job.id, ['cancelled', 'failed', 'done']);
        expect(stopped.status).toBe('cancelled');
        await waitFor(() => fixture.abandoned === 2, 5_000, 'the hanging calls to be aborted');
      } finally {
        await r.stop();
      }
      const written = await Promise.all(ids.map(async (id) => (await ctx.coupons.get(id)).ai_fields.length > 0));
      expect(written.filter(Boolean)).toHaveLength(2);
      expect(fixture.requests).toHaveLength(4);
    });

    it('cancels during a backoff without waiting out the Retry-After', async () => {
      const { ctx } = use();
      const { net } = await coupons(1);
      await ctx.ai.configure({ concurrency: 1 }, 'test');
      fixture.script({ kind: 'status', status: 429, retryAfter: '1' });
      const job = await ctx.ai.startBulk({ kind: 'coupons', filter: { network: net }, overwrite: false }, 'admin');
      const r = runner(ctx);
      r.start();
      try {
        await waitFor(() => fixture.requests.length === 1, 15_000, 'the rate-limited call');
        await ctx.jobs.cancel(job.id, 'admin');
        expect((await waitForStatus(ctx.jobs, job.id, ['cancelled', 'failed', 'done'])).status).toBe('cancelled');
      } finally {
        await r.stop();
      }
      expect(fixture.requests).toHaveLength(1);
    });

    it('resumes from its checkpoint without redoing finished items', async () => {
      const { ctx } = use();
      const { net, ids } = await coupons(4);
      await ctx.ai.configure({ concurrency: 1 }, 'test');
      // A first attempt that finished the first two coupons and checkpointed after them.
      for (const id of ids.slice(0, 2)) await ctx.ai.rewriteCoupon(id, {}, 'admin');
      const job = await ctx.ai.startBulk({ kind: 'coupons', filter: { network: net }, overwrite: true }, 'admin');
      await ctx.db.execute('UPDATE jobs SET checkpoint = ? WHERE id = ?', [
        JSON.stringify({
          value: { after: ids[1], saved: 2, skipped: 0, failed: 0, failures: [], tokens: { prompt_tokens: 240, completion_tokens: 160, total_tokens: 400 } },
          progress: { total: 4, done: 2, failed: 0 },
        }),
        job.id,
      ]);
      fixture.reset();
      await runner(ctx).runPending();
      const done = await ctx.jobs.get(job.id);
      expect(done.result).toMatchObject({ saved: 4, skipped: 0 });
      expect(done.progress).toMatchObject({ total: 4, done: 4 });
      expect(fixture.requests).toHaveLength(2);
    });

    it('refuses to start without a provider (503 svc_ai_not_configured) and refuses bad filters', async () => {
      const { ctx } = use();
      await ctx.ai.configure({ base_url: null, model: null, api_key: null }, 'test');
      await expect(ctx.ai.startBulk({ kind: 'coupons', filter: {}, overwrite: false }, 'admin')).rejects.toMatchObject({
        code: 'svc_ai_not_configured',
        status: 503,
        data: { missing: ['base_url', 'api_key', 'model'] },
      });
      await expect(ctx.jobs.enqueue('ai.bulk', { kind: 'shops', filter: { type: 'code' } }, 'admin')).rejects.toMatchObject({ code: 'svc_invalid_job_params' });
      await expect(ctx.jobs.enqueue('ai.bulk', { kind: 'coupons', filter: { status: 'inactive' } }, 'admin')).rejects.toMatchObject({
        code: 'svc_invalid_job_params',
      });
    });
  },
  fast,
);
