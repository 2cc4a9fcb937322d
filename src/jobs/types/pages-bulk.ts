// `pages.bulk`: a page for every active advertiser without one (of one network, or of all), in
// batches by advertiser id. Each batch is one transaction and then a checkpoint (the last
// advertiser id), so a resumed job goes on after it; advertisers that got a page meanwhile are
// not selected again. One advertiser failing is counted and logged, not fatal.
import Joi from 'joi';
import { PAGE_STATUSES, type BatchOutcome, type BulkInput } from '../../services/pages/index.js';
import type { JobType } from '../registry.js';
import { networkParam } from './per-network.js';

/** Advertisers per batch: one read, one multi-row insert and one update each. */
export const PAGES_BATCH = 250;
/** Failures kept in the checkpoint and the result (all are logged). */
const FAILURES_KEPT = 50;

interface Checkpoint {
  after: number;
  created: number;
  skipped: number;
  failed: number;
  failures: BatchOutcome['failed'];
}

/** Makes shop pages for the active advertisers that have none. */
export const pagesBulk: JobType<BulkInput> = {
  type: 'pages.bulk',
  description: 'Make a shop page for every active advertiser without one (optionally of one network), as draft or publish.',
  params: Joi.object({
    network: networkParam.description('Only advertisers of this network (default: all).'),
    status: Joi.string()
      .valid(...PAGE_STATUSES)
      .description('Status of the pages made (default: pages.default_status).'),
    template: Joi.string().max(64).description('Template name (default: pages.default_template).'),
  }),
  async run(ctx, job) {
    const saved = job.checkpoint as Checkpoint | null;
    const state: Checkpoint = saved ?? { after: 0, created: 0, skipped: 0, failed: 0, failures: [] };
    const { network, status, template } = job.params;
    job.setTotal(job.counts().done + (await ctx.advertisers.countPageSources({ network, after: state.after })));
    for (;;) {
      job.throwIfStopped();
      const sources = await ctx.advertisers.pageSources({ network, after: state.after, limit: PAGES_BATCH });
      if (sources.length === 0) break;
      const outcome = await ctx.pages.createBatch(sources, { status, template }, `job:${job.id}`);
      for (const f of outcome.failed) job.log('warning', `No page for ${f.module}/${f.advertiser}: ${f.error}`, { module: f.module, advertiser: f.advertiser });
      state.after = sources[sources.length - 1].id;
      state.created += outcome.created;
      state.skipped += outcome.skipped;
      state.failed += outcome.failed.length;
      state.failures = [...state.failures, ...outcome.failed].slice(0, FAILURES_KEPT);
      job.progress({ done: sources.length, failed: outcome.failed.length });
      await job.saveCheckpoint(state);
    }
    return { created: state.created, skipped: state.skipped, failed: state.failed, failures: state.failures };
  },
};
