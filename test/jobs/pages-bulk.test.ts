import { expect, it, vi } from 'vitest';
import type { JobHandle } from '../../src/services/jobs/index.js';
import { JobRunner } from '../../src/jobs/runner.js';
import { pagesBulk, PAGES_BATCH } from '../../src/jobs/types/pages-bulk.js';
import type { JobProgress } from '../../src/services/jobs/index.js';
import type { BulkInput } from '../../src/services/pages/index.js';
import { describeEachDialect } from '../helpers/context.js';
import { addShop, addShops } from '../helpers/pages.js';

type Json = Record<string, any>;

describeEachDialect('the pages.bulk job', (use) => {
  const runner = () => new JobRunner({ ctx: use().ctx, jobs: use().ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 20 });

  const count = async (sql: string, params: unknown[] = []) => Number((await use().ctx.db.select<{ n: unknown }>(sql, params))[0].n);

  it('makes a page for every active advertiser of the network without one, counting progress against a total', async () => {
    const { ctx } = use();
    await addShops(ctx, 'bulk', PAGES_BATCH + 20, (i) => (i % 3 === 0 ? 'Same Shop' : `Bulk Shop ${i}`));
    await addShop(ctx, 'bulk', 'gone', { status: 'inactive' });
    await addShop(ctx, 'bulk', 'has-page', { name: 'Has Page' });
    const existing = await ctx.pages.create('bulk', 'has-page', {}, 'cli');
    await addShop(ctx, 'other', '1', { name: 'Other Network' });
    const created = vi.fn();
    ctx.hooks.addAction('cashtrack.page.created', 'bulk-test', created);
    const queued = await ctx.pages.startBulk({ network: 'bulk', status: 'publish' }, 'test');
    const writes: JobProgress[] = [];
    const off = ctx.jobs.onProgress((u) => u.id === queued.id && writes.push(u.progress));
    await runner().runPending();
    off();
    ctx.hooks.wp.removeAction('cashtrack.page.created', 'bulk-test');
    const job = await ctx.jobs.get(queued.id);
    expect(job.status, job.error ?? '').toBe('done');
    expect(job.progress).toEqual({ total: PAGES_BATCH + 20, done: PAGES_BATCH + 20, failed: 0 });
    expect(writes.every((w) => w.total === PAGES_BATCH + 20)).toBe(true);
    expect(job.result).toEqual({ created: PAGES_BATCH + 20, skipped: 0, failed: 0, failures: [] });
    expect(created).toHaveBeenCalledTimes(PAGES_BATCH + 20);
    expect(await count("SELECT COUNT(*) AS n FROM pages WHERE module = 'bulk' AND status = 'publish' AND author = ?", [`job:${job.id}`])).toBe(
      PAGES_BATCH + 20,
    );
    expect(await count("SELECT COUNT(*) AS n FROM advertisers WHERE module = 'bulk' AND status = 'active' AND page_id IS NULL")).toBe(0);
    expect(await count("SELECT COUNT(*) AS n FROM advertisers WHERE module = 'bulk' AND advertiser = 'gone' AND page_id IS NULL")).toBe(1);
    expect(await count("SELECT COUNT(*) AS n FROM pages WHERE module = 'other'")).toBe(0);
    expect((await ctx.pages.get(existing.id)).author).toBe('cli');
    // The shared name got one slug each, across batches.
    const same = await ctx.db.select<{ slug: string }>("SELECT slug FROM pages WHERE module = 'bulk' AND title = 'Same Shop Cashback'");
    expect(new Set(same.map((r) => r.slug)).size).toBe(same.length);
    expect(same.map((r) => r.slug)).toContain('same-shop-2');
    const state = await ctx.pages.bulkState();
    expect(state.job).toMatchObject({ id: job.id, status: 'done' });
    expect(state.advertisers.without_page).toBe(state.advertisers.active - state.advertisers.with_page);
  });

  it('starts one job of two started at the same moment with different filters', async () => {
    const { ctx } = use();
    const outcomes = await Promise.allSettled([
      ctx.pages.startBulk({ network: 'race-a' }, 'test'),
      ctx.pages.startBulk({ network: 'race-b', status: 'publish' }, 'test'),
    ]);
    const started = outcomes.filter((o) => o.status === 'fulfilled');
    expect(started).toHaveLength(1);
    const refused = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected')!;
    expect(refused.reason).toMatchObject({ code: 'svc_job_already_running', message: expect.stringMatching(/^A pages\.bulk job is already queued/) });
    await ctx.pages.cancelBulk('test');
    // Once it is finished (cancelled here) another may start.
    const next = await ctx.pages.startBulk({ network: 'race-b' }, 'test');
    await ctx.jobs.cancel(next.id, 'test');
  });

  it('counts an advertiser it cannot make a page for as failed, and goes on with the others', async () => {
    const { ctx } = use();
    // The cashback rules refuse an id with a control character: that one advertiser cannot be priced.
    await addShop(ctx, 'faulty', 'bad\tid', { name: 'Unpriceable' });
    await addShop(ctx, 'faulty', '2', { name: 'Fine' });
    const queued = await ctx.pages.startBulk({ network: 'faulty' }, 'test');
    await runner().runPending();
    const job = await ctx.jobs.get(queued.id);
    expect(job.status).toBe('done');
    expect(job.progress).toMatchObject({ total: 2, done: 2, failed: 1 });
    expect(job.result).toMatchObject({
      created: 1,
      failed: 1,
      failures: [{ module: 'faulty', advertiser: 'bad\tid', error: expect.stringContaining('cashback rule') }],
    });
    expect(await count("SELECT COUNT(*) AS n FROM pages WHERE module = 'faulty'")).toBe(1);
    await ctx.logger.flush();
    const logs = await ctx.db.select<{ message: string }>("SELECT message FROM logs WHERE source = 'jobs' AND message LIKE ?", ['No page for faulty/%']);
    expect(logs.length).toBe(1);
  });

  it('skips an advertiser that got a page meanwhile instead of failing the batch', async () => {
    const { ctx } = use();
    await addShop(ctx, 'meanwhile', '1', { name: 'Racer One' });
    await addShop(ctx, 'meanwhile', '2', { name: 'Racer Two' });
    const sources = await ctx.advertisers.pageSources({ network: 'meanwhile', after: 0, limit: 10 });
    await ctx.pages.create('meanwhile', '2', {}, 'cli');
    const outcome = await ctx.pages.createBatch(sources, {}, 'test');
    expect(outcome).toEqual({ created: 1, skipped: 1, failed: [] });
    expect(await count("SELECT COUNT(*) AS n FROM pages WHERE module = 'meanwhile'")).toBe(2);
  });

  it('resumes after the advertiser id of its checkpoint, keeping the counts it had', async () => {
    const { ctx } = use();
    await addShops(ctx, 'resume', 30);
    const sources = await ctx.advertisers.pageSources({ network: 'resume', after: 0, limit: 100 });
    const after = sources[9].id;
    const saved: Json[] = [];
    let counts: JobProgress = { total: null, done: 10, failed: 0 };
    const handle: JobHandle<BulkInput> = {
      id: 0,
      type: 'pages.bulk',
      params: { network: 'resume' },
      checkpoint: { after, created: 10, skipped: 0, failed: 0, failures: [] },
      attempt: 2,
      signal: new AbortController().signal,
      isCancelled: () => false,
      throwIfStopped: () => {},
      setTotal: (total) => void (counts = { ...counts, total }),
      progress: (d) => void (counts = { ...counts, done: counts.done + (d.done ?? 0), failed: counts.failed + (d.failed ?? 0) }),
      counts: () => counts,
      flush: async () => {},
      saveCheckpoint: async (v) => void saved.push(v as Json),
      log: () => {},
    };
    const result = await pagesBulk.run(ctx, handle);
    expect(result).toMatchObject({ created: 30, skipped: 0, failed: 0 });
    expect(counts).toEqual({ total: 30, done: 30, failed: 0 });
    // Only those after the checkpoint were made now; the first ten are still without a page (made "before").
    expect(await count("SELECT COUNT(*) AS n FROM pages WHERE module = 'resume'")).toBe(20);
    expect(await count('SELECT COUNT(*) AS n FROM pages WHERE module = ? AND advertiser_id <= ?', ['resume', after])).toBe(0);
    expect(saved.at(-1)).toMatchObject({ after: sources[29].id, created: 30 });
  });

  it('stops at the checkpoint after a cancel, and a new run makes the rest', async () => {
    const { ctx } = use();
    const all = PAGES_BATCH * 3;
    await addShops(ctx, 'cancel', all);
    const queued = await ctx.pages.startBulk({ network: 'cancel' }, 'test');
    let asked = false;
    const off = ctx.jobs.onProgress((u) => {
      if (u.id !== queued.id || u.checkpoint === undefined || asked) return;
      asked = true;
      void ctx.pages.cancelBulk('test');
    });
    await runner().runPending();
    off();
    const job = await ctx.jobs.get(queued.id);
    expect(job.status).toBe('cancelled');
    const made = await count("SELECT COUNT(*) AS n FROM pages WHERE module = 'cancel'");
    expect(made).toBeGreaterThanOrEqual(PAGES_BATCH);
    expect(made).toBeLessThan(all);
    expect(made % PAGES_BATCH).toBe(0);
    const next = await ctx.pages.startBulk({ network: 'cancel' }, 'test');
    await runner().runPending();
    expect((await ctx.jobs.get(next.id)).result).toMatchObject({ created: all - made });
    expect(await count("SELECT COUNT(*) AS n FROM pages WHERE module = 'cancel'")).toBe(all);
  });
});
