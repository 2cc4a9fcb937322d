// `advertisers.sync`: syncs the advertisers of one network, or of every enabled and configured
// network, counting advertisers (with a total once the network tells the list's size). Each
// stored page is a checkpoint, so a sync whose process died resumes after it.
import Joi from 'joi';
import type { SyncCounts, SyncState } from '../../services/advertisers/index.js';
import type { JobType } from '../registry.js';
import { forEachNetwork, networkParam } from './per-network.js';

/** Syncs advertisers from the networks' modules. */
export const advertisersSync: JobType<{ network?: string }> = {
  type: 'advertisers.sync',
  description: 'Sync advertisers from one network, or from every enabled and configured network.',
  params: Joi.object({
    network: networkParam,
  }),
  run(ctx, job) {
    return forEachNetwork<{ network?: string }, SyncCounts, SyncState>(ctx, job, (network, walk) => ctx.advertisers.sync(network, walk));
  },
};
