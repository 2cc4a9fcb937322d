import { afterAll, beforeAll, expect, it } from 'vitest';
import { ServiceError } from '../../../src/errors.js';
import type { JobHandle } from '../../../src/services/jobs/index.js';
import { JobRunner } from '../../../src/jobs/runner.js';
import { LogoBulkService, type LogoBulkParams } from '../../../src/services/logos/bulk.js';
import type { LogoService } from '../../../src/services/logos/index.js';
import { describeEachDialect } from '../../helpers/context.js';
import { image } from '../../helpers/images.js';
import { waitFor, waitForStatus } from '../../helpers/jobs.js';
import { shopnetDefinition } from '../../helpers/networks.js';
import { addAdvertiser, site, type Site } from '../../helpers/web.js';

describeEachDialect(
  'bulk logo runs',
  (use) => {
    const sites: Site[] = [];
    const global = { active: 0, peak: 0 };
    beforeAll(async () => {
      const png = await image('png', 40, 40);
      for (let i = 0; i < 3; i++) {
        const s = await site();
        // Each answer takes a while, so that fetches overlap and the limits can be seen.
        s.routes.set('/logo.png', async (_req, res) => {
          global.active++;
          global.peak = Math.max(global.peak, global.active);
          await new Promise((r) => setTimeout(r, 40));
          global.active--;
          res.writeHead(200, { 'content-type': 'image/png' }).end(png);
        });
        sites.push(s);
      }
    });
    afterAll(async () => {
      await Promise.all(sites.map((s) => s.close()));
    });

    /** A job handle that runs the work inline (no runner), starting from `checkpoint`. */
    const handle = (params: LogoBulkParams, checkpoint: unknown): JobHandle<LogoBulkParams> => ({
      id: 999,
      type: 'logos.bulk',
      params,
      checkpoint,
      attempt: checkpoint ? 2 : 1,
      signal: new AbortController().signal,
      isCancelled: () => false,
      throwIfStopped: () => {},
      setTotal: () => {},
      progress: () => {},
      counts: () => ({ total: null, done: 0, failed: 0 }),
      flush: async () => {},
      saveCheckpoint: async () => {},
      log: () => {},
    });
    const network = (id: string) => use().ctx.networks.saveCustom(id, shopnetDefinition(), 'test');
    const runner = () => new JobRunner({ ctx: use().ctx, jobs: use().ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 20 });

    it('fetches every logo of a network, several hosts at once but at most two requests per host, counting failures', async () => {
      const { ctx } = use();
      await network('bulkone');
      for (let i = 0; i < 30; i++) await addAdvertiser(ctx, 'bulkone', `a${i}`, { logo_url: `${sites[i % 3].origin}/logo.png` });
      await addAdvertiser(ctx, 'bulkone', 'broken', { logo_url: `${sites[0].origin}/missing.png` });
      await addAdvertiser(ctx, 'bulkother', 'x', { logo_url: `${sites[0].origin}/logo.png` });
      const job = await ctx.logoBulk.start({ network: 'bulkone', force: false }, 'test');
      expect(job).toMatchObject({ type: 'logos.bulk', status: 'queued', params: { network: 'bulkone', force: false } });
      await runner().runPending();
      const done = await ctx.jobs.get(job.id);
      expect(done).toMatchObject({ status: 'done', progress: { total: 31, done: 31, failed: 1 } });
      expect(done.result).toMatchObject({
        fetched: 30,
        unchanged: 0,
        failed: 1,
        failures: [{ module: 'bulkone', advertiser: 'broken', code: 'svc_logo_not_found' }],
      });
      for (const s of sites) expect(s.peak).toBeLessThanOrEqual(2);
      expect(Math.max(...sites.map((s) => s.peak))).toBe(2);
      expect(global.peak).toBeGreaterThan(2);
      expect(await ctx.advertisers.logoCounts({ network: 'bulkone' })).toEqual({ total: 31, with_logo: 30, without_logo: 1 });
      expect(await ctx.advertisers.logoCounts({ network: 'bulkother' })).toMatchObject({ with_logo: 0 });
    });

    it('skips advertisers that have a logo unless forced', async () => {
      const { ctx } = use();
      await network('bulktwo');
      const shop = await site({ '/logo.png': { body: await image('png', 24, 24), type: 'image/png' } });
      try {
        for (let i = 0; i < 4; i++) await addAdvertiser(ctx, 'bulktwo', `k${i}`, { logo_url: `${shop.origin}/logo.png` });
        await ctx.logos.fetch('bulktwo', 'k0', { actor: 'test' });
        const missing = await ctx.logoBulk.start({ network: 'bulktwo', force: false }, 'test');
        await runner().runPending();
        expect(await ctx.jobs.get(missing.id)).toMatchObject({ progress: { total: 3, done: 3 }, result: { fetched: 3, failed: 0 } });
        expect(shop.requests).toHaveLength(4);
        const forced = await ctx.logoBulk.start({ network: 'bulktwo', force: true }, 'test');
        await runner().runPending();
        expect((await ctx.jobs.get(forced.id)).result).toMatchObject({ fetched: 4, failed: 0 });
        expect(shop.requests).toHaveLength(8);
      } finally {
        await shop.close();
      }
    });

    it('resumes after the checkpoint: advertisers of finished batches are not fetched again', async () => {
      const { ctx } = use();
      for (let i = 0; i < 5; i++) await addAdvertiser(ctx, 'resumenet', `r${i}`, { logo_url: `${sites[1].origin}/logo.png` });
      const rows = await ctx.db.select<{ id: unknown }>("SELECT id FROM advertisers WHERE module = 'resumenet' ORDER BY id");
      const after = Number(rows[2].id);
      const progress: { done?: number; failed?: number }[] = [];
      const h = {
        ...handle({ network: 'resumenet', force: false }, { after, fetched: 3, unchanged: 0, failed: 0, failures: [] }),
        progress: (d: { done?: number; failed?: number }) => void progress.push(d),
      };
      const result = await ctx.logoBulk.run(h);
      expect(result).toMatchObject({ fetched: 5, failed: 0 });
      expect(progress).toHaveLength(2);
      expect(await ctx.advertisers.logoCounts({ network: 'resumenet' })).toEqual({ total: 5, with_logo: 2, without_logo: 3 });
    });

    it('shows only a service error its own message: anything else is logged and reported as svc_internal_error', async () => {
      const { ctx } = use();
      await addAdvertiser(ctx, 'oddnet', 'o1', { logo_url: `${sites[0].origin}/logo.png` });
      await addAdvertiser(ctx, 'oddnet', 'o2', { logo_url: `${sites[0].origin}/logo.png` });
      const logged: unknown[] = [];
      const broken = {
        fetch: async (_m: string, advertiser: string) =>
          Promise.reject(
            advertiser === 'o1'
              ? new Error('ER_PARSE_ERROR near SELECT password FROM users')
              : new ServiceError('svc_logo_not_found', 'No logo found for oddnet/o2.', 422),
          ),
      };
      const bulk = new LogoBulkService({
        logos: broken as unknown as LogoService,
        advertisers: ctx.advertisers,
        media: ctx.media,
        jobs: ctx.jobs,
        networks: ctx.networks,
        limits: ctx.config.logos,
      });
      const result = await bulk.run({ ...handle({ network: 'oddnet', force: false }, null), log: (...args: unknown[]) => logged.push(args) });
      expect(result).toMatchObject({ fetched: 0, failed: 2 });
      expect(result.failures).toEqual([
        { module: 'oddnet', advertiser: 'o1', code: 'svc_internal_error', message: 'The logo fetch stopped on an internal error; the log has the details.' },
        { module: 'oddnet', advertiser: 'o2', code: 'svc_logo_not_found', message: 'No logo found for oddnet/o2.' },
      ]);
      expect(JSON.stringify(logged)).toContain('ER_PARSE_ERROR');
    });

    it('refuses a second run while one is queued, and an unknown network', async () => {
      const { ctx } = use();
      await network('bulkthree');
      const first = await ctx.logoBulk.start({ force: false }, 'test');
      const second = await ctx.logoBulk.start({ network: 'bulkthree', force: true }, 'test').catch((e: unknown) => e);
      expect(second).toBeInstanceOf(ServiceError);
      expect(second).toMatchObject({ code: 'svc_job_already_running', status: 409, data: { job: { id: first.id } } });
      expect((await ctx.logoBulk.cancel('test')).status).toBe('cancelled');
      expect(await ctx.logoBulk.start({ network: 'no-such-net', force: false }, 'test').catch((e: unknown) => e)).toMatchObject({
        code: 'svc_network_not_found',
        status: 404,
      });
    });

    it('cancels a running run: fetches under way stop and the job ends cancelled', async () => {
      const { ctx } = use();
      const slow = await site();
      try {
        slow.routes.set('/logo.png', async (_req, res) => {
          await new Promise((r) => setTimeout(r, 200));
          res.writeHead(200, { 'content-type': 'image/png' }).end(await image('png', 8, 8));
        });
        await network('bulkslow');
        for (let i = 0; i < 40; i++) await addAdvertiser(ctx, 'bulkslow', `s${i}`, { logo_url: `${slow.origin}/logo.png` });
        const job = await ctx.logoBulk.start({ network: 'bulkslow', force: false }, 'test');
        const running = runner().runPending();
        await waitFor(async () => (await ctx.jobs.get(job.id)).status === 'running' && slow.requests.length > 0);
        const cancelling = await ctx.logoBulk.cancel('test');
        expect(['cancelling', 'cancelled']).toContain(cancelling.status);
        await running;
        const final = await waitForStatus(ctx.jobs, job.id, ['cancelled']);
        expect(final.progress.done).toBeLessThan(40);
        expect((await ctx.advertisers.logoCounts({ network: 'bulkslow' })).with_logo).toBeLessThan(40);
        expect(await ctx.logoBulk.cancel('test').catch((e: unknown) => e)).toMatchObject({ code: 'svc_job_not_running', status: 409 });
      } finally {
        await slow.close();
      }
    });

    it('shows the latest run and the active advertisers with and without a logo', async () => {
      const { ctx } = use();
      await addAdvertiser(ctx, 'statenet', 'with', { logo_url: `${sites[2].origin}/logo.png` });
      await addAdvertiser(ctx, 'statenet', 'without');
      await addAdvertiser(ctx, 'statenet', 'gone', { status: 'inactive' });
      await ctx.logos.fetch('statenet', 'with', { actor: 'test' });
      const job = await ctx.logoBulk.start({ status: 'active', force: false }, 'test');
      const state = await ctx.logoBulk.state();
      expect(state.job).toMatchObject({ id: job.id, type: 'logos.bulk', status: 'queued', params: { status: 'active' } });
      const all = await ctx.advertisers.logoCounts({});
      const active = await ctx.advertisers.logoCounts({ status: 'active' });
      expect(state.advertisers).toEqual(active);
      expect(all.total).toBe(active.total + (await ctx.advertisers.logoCounts({ status: 'inactive' })).total);
      expect(active.total).toBe(active.with_logo + active.without_logo);
      expect(state.media.files).toBeGreaterThanOrEqual(1);
      expect(state.media.bytes).toBeGreaterThan(0);
      expect((await ctx.logoBulk.cancel('test')).status).toBe('cancelled');
    });
  },
  { 'logos.concurrency': 8, 'logos.per_host': 2 },
);
