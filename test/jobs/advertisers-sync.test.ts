import { afterAll, beforeAll, expect, it } from 'vitest';
import { JobRunner } from '../../src/jobs/runner.js';
import type { JobProgress } from '../../src/services/jobs/index.js';
import { startAdmitadFixture, type AdmitadFixture } from '../fixtures/networks/admitad.js';
import { startAwinFixture, type AwinFixture } from '../fixtures/networks/awin.js';
import { startImpactFixture, type ImpactFixture } from '../fixtures/networks/impact.js';
import { describeEachDialect } from '../helpers/context.js';

describeEachDialect('the advertisers.sync job', (use) => {
  let admitad: AdmitadFixture;
  let awin: AwinFixture;
  let impact: ImpactFixture;
  beforeAll(async () => {
    // Admitad pages by 500 and tells `_meta.count`; Awin's list comes whole; impact.com pages by
    // `PageSize` (2 here, so 3 pages) and tells `@total`.
    admitad = await startAdmitadFixture({ campaigns: 1300 });
    awin = await startAwinFixture({ programmes: 30, rateLimit: null });
    impact = await startImpactFixture({ campaigns: 5, maxPageSize: 2 });
    const { ctx } = use();
    await ctx.networks.configure('admitad', { ...admitad.settings } as Record<string, string>, 'test');
    await ctx.networks.configure('awin', { ...awin.settings } as Record<string, string>, 'test');
    await ctx.networks.configure('impact', { ...impact.settings } as Record<string, string>, 'test');
  });
  afterAll(async () => {
    await admitad?.close();
    await awin?.close();
    await impact?.close();
  });

  /** Runs a sync job to its end; returns the job and every progress write it made, in order. */
  const sync = async (params: Record<string, unknown>) => {
    const { ctx } = use();
    const queued = await ctx.jobs.enqueue('advertisers.sync', params, 'test');
    const writes: JobProgress[] = [];
    const off = ctx.jobs.onProgress((u) => u.id === queued.id && writes.push(u.progress));
    try {
      await new JobRunner({ ctx, jobs: ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 20 }).runPending();
    } finally {
      off();
    }
    const job = await ctx.jobs.get(queued.id);
    expect(job.status, job.error ?? '').toBe('done');
    return { job, writes };
  };

  it('knows the total of a paged list from its first page, and counts advertisers up to it', async () => {
    const { job, writes } = await sync({ network: 'admitad' });
    // Told by the first page's `_meta.count`, and written before that page is even stored.
    expect(writes[0]).toEqual({ total: 1300, done: 0, failed: 0 });
    expect(writes.map((w) => w.done)).toContain(500);
    expect(writes.every((w) => w.total === 1300 && w.done <= 1300)).toBe(true);
    expect(job.progress).toEqual({ total: 1300, done: 1300, failed: 0 });
    expect((await use().ctx.jobs.get(job.id)).progress.total).toBe(1300);
  });

  it('knows the total of a list that comes whole from the list', async () => {
    const { job, writes } = await sync({ network: 'awin' });
    expect(writes.map((w) => w.total)).toEqual(writes.map(() => 30));
    expect(job.progress).toEqual({ total: 30, done: 30, failed: 0 });
  });

  it('takes the total of an impact.com list from @total', async () => {
    const { job, writes } = await sync({ network: 'impact' });
    // Known from the first page: the very first write has it (how far it got by then is timing).
    expect(writes[0]).toMatchObject({ total: 5, failed: 0 });
    expect(writes.every((w) => w.total === 5)).toBe(true);
    expect(job.progress).toEqual({ total: 5, done: 5, failed: 0 });
  });

  it('leaves the total of a job for every network unknown until the last network tells its size', async () => {
    const { ctx } = use();
    for (const id of ['admitad', 'awin']) await ctx.networks.enable(id, 'test');
    try {
      const { job, writes } = await sync({});
      const networks = Object.keys((job.result as { networks: Record<string, unknown> }).networks);
      expect(networks.sort()).toEqual(['admitad', 'awin']);
      const known = writes.findIndex((w) => w.total !== null);
      expect(known).toBeGreaterThan(0);
      // Before: the first network's advertisers, with no total; from then on the sum of both lists.
      expect(writes.slice(0, known).every((w) => w.total === null)).toBe(true);
      expect(writes.slice(known).every((w) => w.total === 1330)).toBe(true);
      expect(job.progress).toEqual({ total: 1330, done: 1330, failed: 0 });
    } finally {
      for (const id of ['admitad', 'awin']) await ctx.networks.disable(id, 'test');
    }
  });
});
