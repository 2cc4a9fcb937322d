// What the per-network jobs (advertiser sync, order polling, coupon refresh) share: the `network`
// parameter; a loop over one network or every enabled, configured one, with each finished network
// and the one in progress in the checkpoint, so a resumed job skips what is done; and the options
// (resume point, stop signal, progress and checkpoint callbacks) each network's walk is given.
import type { Context } from '../../context.js';
import type { JobHandle, WalkTotal } from '../../services/jobs/index.js';
import { networkId } from '../../fields.js';

export const networkParam = networkId().description('Only this network (default: every enabled, configured network).');

export interface NetworkCheckpoint<Done, Current> {
  /** Networks finished, with their result. */
  done: Record<string, Done>;
  /** The network in progress, where it stands. */
  current: Current | null;
}

/**
 * What a per-network service walk takes from its job (the options of `advertisers.sync`,
 * `orders.poll` and `coupons.refresh` alike): where to resume, the job's stop signal and actor, and
 * the progress, total and checkpoint callbacks.
 */
export interface NetworkWalk<Current> {
  resume: Current | null;
  signal: AbortSignal;
  actor: string;
  onProgress: (delta: { done?: number; failed?: number }) => void;
  onTotal: (size: WalkTotal) => void;
  onPage: (state: Current) => Promise<void>;
}

/**
 * Runs `work` for each target network. One network failing does not stop the others; with a
 * single `network` parameter (or a stop request) the failure fails the job.
 *
 * `work` passes `walk` to the service. Its `onTotal` sets the job's total is known once the last network
 * to go tells the size of its list (the items of the networks before are counted in `done`), so a
 * one-network job knows it after that network's first page and a job for every network only in its
 * last one; before that it stays null rather than a guess.
 */
export async function forEachNetwork<P extends { network?: string }, Done, Current extends { network: string }>(
  ctx: Context,
  job: JobHandle<P>,
  work: (network: string, walk: NetworkWalk<Current>) => Promise<Done>,
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
    const walk: NetworkWalk<Current> = {
      resume: state.current?.network === network ? state.current : null,
      signal: job.signal,
      actor: `job:${job.id}`,
      onProgress: (delta) => job.progress(delta),
      onTotal: total,
      onPage: async (s) => {
        state.current = s;
        await job.saveCheckpoint(state);
      },
    };
    try {
      state.done[network] = await work(network, walk);
    } catch (err) {
      if (job.signal.aborted || job.params.network) throw err;
      failed[network] = err instanceof Error ? err.message : String(err);
    }
    state.current = null;
    await job.saveCheckpoint(state);
  }
  return { networks: state.done, ...(Object.keys(failed).length ? { failed } : {}) };
}
