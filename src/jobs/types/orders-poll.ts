// `orders.poll`: polls the transactions of one network, or of every enabled and configured
// network, through the orders service (src/services/order-poll.ts holds the window, the batches
// and the retry one by one). Each page is a checkpoint, so a poll whose process died resumes
// after it.
import Joi from 'joi';
import type { PollCounts, PollState } from '../../services/orders/index.js';
import type { JobType } from '../registry.js';
import { forEachNetwork, networkParam } from './per-network.js';

/** Polls transactions from the networks' modules. */
export const ordersPoll: JobType<{ network?: string; since?: Date }> = {
  type: 'orders.poll',
  description: 'Poll transactions from one network, or from every enabled and configured network, and record them as orders.',
  params: Joi.object({
    network: networkParam,
    since: Joi.date().iso().description('Start of the window (default: the oldest pending order minus 7 days, else 30 days ago).'),
  }),
  run(ctx, job) {
    return forEachNetwork<{ network?: string; since?: Date }, PollCounts & { from: string; to: string }, PollState>(ctx, job, (network, walk) =>
      ctx.orders.poll(network, {
        ...walk,
        since: job.params.since,
        onRefused: (context) => job.log('warning', 'Polled transaction refused', context),
      }),
    );
  },
};
