// `claims.export`: writes the batch claims file of each network that takes claims as a file (Awin's
// transaction queries) under `<data_dir>/exports/`, for upload; its claims become `submitted`.
// Enqueued by the `claims_export` schedule. A claim goes into one file only.
import Joi from 'joi';
import type { JobType } from '../registry.js';

export const claimsExport: JobType<Record<string, never>> = {
  type: 'claims.export',
  description: 'Write the claims upload file of each network that takes claims as a batch file (Awin).',
  params: Joi.object({}),
  async run(ctx, job) {
    job.setTotal(1);
    const result = await ctx.claims.export(`job:${job.id}`);
    job.progress({ done: 1 });
    return result;
  },
};
