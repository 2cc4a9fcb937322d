// `networks.payments`: reads the payments statement of one network, or of every enabled and
// configured network that has one (Admitad), and records the actions each payment covers as paid
// (through the orders service; see services/orders/statements.ts). Reading a statement again
// changes nothing, so a run cut short is simply run again.
import Joi from 'joi';
import type { StatementCounts } from '../../services/orders/index.js';
import type { JobType } from '../registry.js';
import { forEachNetwork, networkParam } from './per-network.js';

type Params = { network?: string; since?: Date };

/** Reads the networks' payments statements into payment lines. */
export const networksPayments: JobType<Params> = {
  type: 'networks.payments',
  description: 'Read the payments statement of one network, or of every enabled and configured network that has one, and mark the orders it covers paid.',
  params: Joi.object({
    network: networkParam,
    since: Joi.date().iso().description('Payments made since then (default: 180 days ago).'),
  }),
  run(ctx, job) {
    return forEachNetwork<Params, (StatementCounts & { since: string }) | { statement: false }, { network: string }>(ctx, job, async (network, walk) => {
      if (!job.params.network && !(await ctx.orders.hasStatement(network))) return { statement: false };
      return ctx.orders.readStatement(network, { since: job.params.since, signal: walk.signal, actor: walk.actor, onProgress: walk.onProgress });
    });
  },
};
