// `coupons.refresh`: refreshes the coupons of one network, or of every enabled and configured
// network whose module lists coupons, counting coupons (with a total once the network tells the
// list's size). Each stored page is a checkpoint, so a refresh whose process died resumes after
// it; a cancel stops it at the next page.
import Joi from 'joi';
import type { RefreshCounts, RefreshState } from '../../services/coupons/index.js';
import type { JobType } from '../registry.js';
import { forEachNetwork, networkParam } from './per-network.js';

export interface CouponsRefreshParams {
  network?: string;
  force?: boolean;
  full?: boolean;
}

/** Refreshes coupons from the networks' modules (merging, never replacing). */
export const couponsRefresh: JobType<CouponsRefreshParams> = {
  type: 'coupons.refresh',
  description: 'Refresh coupons from one network, or from every enabled and configured network that lists coupons.',
  params: Joi.object({
    network: networkParam,
    force: Joi.boolean().description('Mark removed what the network no longer lists even past coupons.max_removed_share.'),
    full: Joi.boolean().description('Read the whole list even where the network can list only what changed (Awin).'),
  }),
  async run(ctx, job) {
    // Without a network: those whose module has a coupon list (the others have nothing to refresh).
    const supported = async (network: string) => Boolean((await ctx.networks.module(network)).coupons);
    return forEachNetwork<CouponsRefreshParams, RefreshCounts | { skipped: string }, RefreshState>(ctx, job, async (network, walk) => {
      if (!job.params.network && !(await supported(network))) return { skipped: 'no coupon list' };
      return ctx.coupons.refresh(network, { ...walk, force: job.params.force === true, full: job.params.full === true });
    });
  },
};
