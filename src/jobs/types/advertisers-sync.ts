// `advertisers.sync`: syncs the advertisers of one network, or of every enabled and configured
// network. Each stored page is a checkpoint, so a sync whose process died resumes after it.
import Joi from 'joi';
import type { SyncCounts, SyncState } from '../../services/advertisers.js';
import type { JobType } from '../registry.js';

interface Checkpoint {
  /** Networks finished, with their counts. */
  done: Record<string, SyncCounts>;
  /** The network being synced, where it stands. */
  current: SyncState | null;
}

/** Syncs advertisers from the networks' modules. */
export const advertisersSync: JobType<{ network?: string }> = {
  type: 'advertisers.sync',
  description: 'Sync advertisers from one network, or from every enabled and configured network.',
  params: Joi.object({
    network: Joi.string().max(64).pattern(/^[a-z0-9][a-z0-9_-]*$/).description('Only this network (default: every enabled, configured network).'),
  }),
  async run(ctx, job) {
    const saved = job.checkpoint as Checkpoint | null;
    const state: Checkpoint = { done: { ...(saved?.done ?? {}) }, current: saved?.current ?? null };
    const targets = job.params.network ? [job.params.network] : (await ctx.networks.list()).filter((n) => n.enabled && n.configured).map((n) => n.id);
    const failed: Record<string, string> = {};
    for (const network of targets) {
      if (state.done[network]) continue;
      job.throwIfStopped();
      try {
        state.done[network] = await ctx.advertisers.sync(network, {
          resume: state.current?.network === network ? state.current : null,
          signal: job.signal,
          actor: `job:${job.id}`,
          onPage: async (s) => {
            state.current = s;
            job.progress({ done: 1 });
            await job.saveCheckpoint(state);
          },
        });
      } catch (err) {
        // One network failing does not stop the others; a single-network sync fails the job.
        if (job.signal.aborted || job.params.network) throw err;
        failed[network] = err instanceof Error ? err.message : String(err);
      }
      state.current = null;
      await job.saveCheckpoint(state);
    }
    return { networks: state.done, ...(Object.keys(failed).length ? { failed } : {}) };
  },
};
