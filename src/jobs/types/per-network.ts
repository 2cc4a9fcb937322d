// What the per-network jobs (advertiser sync, order polling) share: the `network` parameter, and a
// loop over one network or every enabled, configured one, with each finished network and the one
// in progress in the checkpoint, so a resumed job skips what is done.
import Joi from 'joi';
import type { Context } from '../../context.js';
import type { WalkTotal } from '../../services/jobs.js';
import type { JobHandle } from '../registry.js';

export const networkParam = Joi.string().max(64).pattern(/^[a-z0-9][a-z0-9_-]*$/).description('Only this network (default: every enabled, configured network).');

export interface NetworkCheckpoint<Done, Current> {
  /** Networks finished, with their result. */
  done: Record<string, Done>;
  /** The network in progress, where it stands. */
  current: Current | null;
}

/**
 * Runs `work` for each target network. One network failing does not stop the others; with a
 * single `network` parameter (or a stop request) the failure fails the job.
 *
 * `work` hands the service's `onTotal` to `total`: the job's total is known once the last network
 * to go tells the size of its list (the items of the networks before are counted in `done`), so a
 * one-network job knows it after that network's first page and a job for every network only in its
 * last one; before that it stays null rather than a guess.
 */
export async function forEachNetwork<P extends { network?: string }, Done, Current>(
  ctx: Context,
  job: JobHandle<P>,
  work: (network: string, state: NetworkCheckpoint<Done, Current>, total: (size: WalkTotal) => void) => Promise<Done>,
): Promise<{ networks: Record<string, Done>; failed?: Record<string, string> }> {
  const saved = job.checkpoint as NetworkCheckpoint<Done, Current> | null;
  const state: NetworkCheckpoint<Done, Current> = { done: { ...(saved?.done ?? {}) }, current: saved?.current ?? null };
  const targets = job.params.network ? [job.params.network] : (await ctx.networks.list()).filter((n) => n.enabled && n.configured).map((n) => n.id);
  const failed: Record<string, string> = {};
  const last = targets.filter((n) => !state.done[n]).at(-1);
  for (const network of targets) {
    if (state.done[network]) continue;
    job.throwIfStopped();
    const total = (size: WalkTotal) => {
      if (network === last) job.setTotal(job.counts().done - size.handled + size.total);
    };
    try {
      state.done[network] = await work(network, state, total);
    } catch (err) {
      if (job.signal.aborted || job.params.network) throw err;
      failed[network] = err instanceof Error ? err.message : String(err);
    }
    state.current = null;
    await job.saveCheckpoint(state);
  }
  return { networks: state.done, ...(Object.keys(failed).length ? { failed } : {}) };
}
