// `logos.bulk`: fetches the logos of every advertiser in scope (a network, a status; without
// `force` only those with no logo), several hosts at once, at most `logos.per_host` requests to one
// host. Resumable: each batch of advertisers is a checkpoint. Failures are counted, not fatal.
import Joi from 'joi';
import { ADVERTISER_STATUSES } from '../../services/advertisers/index.js';
import { LOGOS_BULK_JOB, type LogoBulkParams } from '../../services/logos/index.js';
import type { JobType } from '../registry.js';
import { networkParam } from './per-network.js';

/** Fetches advertisers' logos in bulk. */
export const logosBulk: JobType<LogoBulkParams> = {
  type: LOGOS_BULK_JOB,
  description: 'Fetch the logos of advertisers (default: every advertiser without one), several hosts at once.',
  params: Joi.object({
    network: networkParam,
    status: Joi.string()
      .valid(...ADVERTISER_STATUSES)
      .description('Only advertisers with this status.'),
    force: Joi.boolean().default(false).description('Fetch again for advertisers that have a logo.'),
  }),
  run: (ctx, job) => ctx.logoBulk.run(job),
};
