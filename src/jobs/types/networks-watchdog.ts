// `networks.watchdog`: checks every enabled network's intake, polls and logins against what is
// normal for it and raises `network.stalled` / `network.recovered` on a change (services/watchdog/).
// Enqueued every few minutes by the `networks_watchdog` schedule (src/jobs/schedules.ts), claimed
// per slot so it runs once across daemons. Safe to redo: the state is kept per network and an
// alarm is raised only on the change into `stalled`.
import Joi from 'joi';
import type { JobType } from '../registry.js';

export const networksWatchdog: JobType<Record<string, never>> = {
  type: 'networks.watchdog',
  description: "Check each enabled network's intake, syncs, polls and logins, and alarm once when one falls silent.",
  params: Joi.object({}),
  async run(ctx, job) {
    job.setTotal(1);
    const result = await ctx.watchdog.check(`job:${job.id}`);
    job.progress({ done: 1 });
    return { ...result };
  },
};
