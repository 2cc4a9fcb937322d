// `claims.poll`: reads the networks' answers to filed claims, files again the claims whose filing
// failed, warns of claims nearing their deadline and expires those past it (services/claims/follow.ts).
// Enqueued by the `claims_poll` schedule (src/jobs/schedules.ts). Safe to redo: each change is
// idempotent (a claim already at the status an answer gives is left as it is).
import Joi from 'joi';
import type { JobType } from '../registry.js';

export const claimsPoll: JobType<Record<string, never>> = {
  type: 'claims.poll',
  description: "Read the networks' answers to filed claims, and warn of and expire claims past their deadline.",
  params: Joi.object({}),
  async run(ctx, job) {
    job.setTotal(1);
    const counts = await ctx.claims.poll(`job:${job.id}`);
    job.progress({ done: 1 });
    return { ...counts };
  },
};
