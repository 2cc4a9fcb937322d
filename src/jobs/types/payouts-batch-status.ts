// `payouts.batch_status`: reads sent API payout batches (PayPal) back from their provider and applies
// each item's result through PayoutBatchService.followUp: paid with the provider's reference, refused
// ones cancelled with the provider's reason and their amount returned, once each however often it
// runs. Queued by `send` for its batch (`batch_id`); without one, every sent API batch still waiting
// for results, as the `payouts_batch_status` schedule runs it (every 10 minutes), so a batch whose
// items PayPal has not settled yet, or whose job a restart lost, is read again until it is finished.
import Joi from 'joi';
import { isServiceError } from '../../errors.js';
import type { JobType } from '../registry.js';

export const payoutsBatchStatus: JobType<{ batch_id?: number }> = {
  type: 'payouts.batch_status',
  description: "Read sent PayPal payout batches back and apply each item's result (paid, or refused and returned), until every item is final.",
  params: Joi.object({
    batch_id: Joi.number().integer().min(1).description('One batch (default: every sent batch still waiting for results).'),
  }),
  async run(ctx, job) {
    const ids = job.params.batch_id ? [job.params.batch_id] : await ctx.payoutBatches.followed();
    job.setTotal(ids.length);
    const counts = { batches: ids.length, finished: 0, waiting: 0, failed: 0, applied: 0 };
    for (const id of ids) {
      job.throwIfStopped();
      try {
        const outcome = await ctx.payoutBatches.followUp(id, `job:${job.id}`);
        counts.applied += outcome.results.filter((r) => r.effect === 'applied').length;
        if (outcome.done) counts.finished++;
        else counts.waiting++;
        job.progress({ done: 1 });
      } catch (err) {
        // One batch's provider failure does not stop the others; the next run reads it again.
        if (!isServiceError(err) || job.params.batch_id) throw err;
        counts.failed++;
        ctx.logger.warning('payouts', 'Payout batch status not read', { batch_id: id, code: err.code, job_id: job.id });
        job.progress({ done: 1, failed: 1 });
      }
    }
    return counts;
  },
};
