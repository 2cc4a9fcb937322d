import { afterAll, beforeAll, expect, it } from 'vitest';
import { JobRunner } from '../../src/jobs/runner.js';
import type { JobProgress } from '../../src/services/jobs/index.js';
import { startAdmitadFixture, type AdmitadFixture } from '../fixtures/networks/admitad.js';
import { startAwinFixture, type AwinFixture } from '../fixtures/networks/awin.js';
import { builtInModules } from '../../src/networks/index.js';
import { describeEachDialect } from '../helpers/context.js';
import { couponModule } from '../helpers/coupons.js';

describeEachDialect(
  'the coupons.refresh job',
  (use) => {
    let admitad: AdmitadFixture;
    let awin: AwinFixture;
    beforeAll(async () => {
      admitad = await startAdmitadFixture({ coupons: 1_200 });
      awin = await startAwinFixture({ promotions: 30, rateLimit: null });
      const { ctx } = use();
      await ctx.networks.configure('admitad', { ...admitad.settings } as Record<string, string>, 'test');
      await ctx.networks.configure('awin', { ...awin.settings } as Record<string, string>, 'test');
      await ctx.networks.configure('plain', { publisherId: '1' }, 'test');
    });
    afterAll(async () => {
      await admitad?.close();
      await awin?.close();
    });

    /** Runs a refresh job to its end; returns the job and every progress write it made. */
    const run = async (params: Record<string, unknown>) => {
      const { ctx } = use();
      const queued = await ctx.coupons.startRefresh(params, 'test');
      const writes: JobProgress[] = [];
      const off = ctx.jobs.onProgress((u) => u.id === queued.id && writes.push(u.progress));
      try {
        await new JobRunner({ ctx, jobs: ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 20 }).runPending();
      } finally {
        off();
      }
      return { job: await ctx.jobs.get(queued.id), writes };
    };

    it('refreshes one network with its total known from the first page and counts in the result', async () => {
      const { job, writes } = await run({ network: 'admitad' });
      expect(job.status, job.error ?? '').toBe('done');
      expect(writes[0]).toMatchObject({ total: 1_200 });
      expect(job.progress).toEqual({ total: 1_200, done: 1_200, failed: 0 });
      expect(job.result).toMatchObject({ networks: { admitad: { created: 1_200, pages: 3, removed: 0 } } });
      expect((await use().ctx.networks.get('admitad')).last_sync_result).toMatchObject({ coupons: { created: 1_200 } });
    });

    it('fails the network whose refresh would remove too many coupons, removes nothing, and goes on with the others', async () => {
      const { ctx } = use();
      for (const id of ['admitad', 'awin', 'plain']) await ctx.networks.enable(id, 'test');
      try {
        // Admitad drops nearly every coupon at once: an outage, most likely.
        admitad.setCouponCount(100);
        const { job } = await run({});
        expect(job.status, job.error ?? '').toBe('done');
        const result = job.result as { networks: Record<string, unknown>; failed: Record<string, string> };
        expect(result.failed.admitad).toContain('none were removed');
        expect(result.networks.awin).toMatchObject({ created: 30 });
        // A network whose module lists no coupons has nothing to refresh.
        expect(result.networks.plain).toEqual({ skipped: 'no coupon list' });
        expect((await ctx.coupons.list({ network: 'admitad', status: 'removed', page: 1, per_page: 1 })).total).toBe(0);

        // Forced, the refresh removes them; a single-network job fails outright when refused.
        admitad.setCouponCount(50);
        const refused = await run({ network: 'admitad' });
        expect(refused.job.status).toBe('failed');
        expect(refused.job.error).toContain('more than the allowed 50%');
        const forced = await run({ network: 'admitad', force: true });
        expect(forced.job.result).toMatchObject({ networks: { admitad: { removed: 1_150 } } });
      } finally {
        admitad.setCouponCount(1_200);
        for (const id of ['admitad', 'awin', 'plain']) await ctx.networks.disable(id, 'test');
      }
    });

    it('refuses a second refresh while one is queued', async () => {
      const { ctx } = use();
      const first = await ctx.coupons.startRefresh({ network: 'awin' }, 'test');
      await expect(ctx.coupons.startRefresh({ network: 'admitad', full: true }, 'test')).rejects.toMatchObject({
        code: 'svc_job_already_running',
        status: 409,
        data: { job: { id: first.id } },
      });
      await ctx.jobs.cancel(first.id, 'test');
    });
  },
  {},
  { networkModules: [...builtInModules, couponModule('plain', { pages: [], walks: [] }, { coupons: false })] },
);
