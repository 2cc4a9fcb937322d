// `ai.bulk`: generates shop content or rewrites coupons in bulk with the configured AI provider
// (see services/ai/bulk.ts): resumable from its checkpoint, cancellable mid-call, bounded by the
// run's token budget.
import type Joi from 'joi';
import type { BulkInput } from '../../services/ai/index.js';
import type { JobType } from '../registry.js';
import { aiSchemas } from '../../services/ai/schemas.js';

/** Bulk AI generation over shops or coupons. */
export const aiBulk: JobType<BulkInput> = {
  type: 'ai.bulk',
  description: 'Generate shop content or rewrite coupons with the AI provider, skipping AI-written items unless overwrite.',
  params: aiSchemas.bulk as Joi.ObjectSchema,
  run: (ctx, job) => ctx.ai.runBulk(job),
};
