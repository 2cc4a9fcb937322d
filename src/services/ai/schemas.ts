// Input schemas of the AI routes, shared with `cashtrack ai ...` and the `ai.bulk` job's
// parameters (a job enqueued by hand is checked as a request is).
import Joi from 'joi';
import { id, networkId, lazySchemas } from '../../fields.js';
import { COUPON_TYPES } from '../coupons/schemas.js';
import type { BulkInput } from './index.js';
import { PROPOSAL_ID } from './proposals.js';

/** What a bulk run writes for. */
export const AI_BULK_KINDS = ['shops', 'coupons'] as const;

export const aiSchemas = lazySchemas(() => ({
  itemId: Joi.object<{ id: number }, true>({ id: id().required().description("The advertiser's number (shop) or the coupon's id.") }),
  generate: Joi.object<{ dry_run: boolean; proposal_id?: string }, true>({
    dry_run: Joi.boolean()
      .truthy('1')
      .falsy('0')
      .default(false)
      .description('Return the proposal without saving it (it is stored: keep it with `proposal_id`).'),
    proposal_id: Joi.string()
      .trim()
      .lowercase()
      .pattern(PROPOSAL_ID, '32 hex characters')
      .description("Keep this dry run's proposal: save exactly its text, without asking the provider again."),
  }).custom((value: { dry_run: boolean; proposal_id?: string }, helpers) =>
    value.dry_run && value.proposal_id !== undefined ? helpers.message({ custom: '"dry_run" and "proposal_id" cannot be given together' }) : value,
  ),
  bulk: Joi.object<BulkInput, true>({
    kind: Joi.string()
      .valid(...AI_BULK_KINDS)
      .required(),
    filter: Joi.object({
      network: networkId().description('Only this network.'),
      status: Joi.string().max(16).description('Shops: active or inactive; coupons: active, scheduled, expired or removed.'),
      advertiser: Joi.string().trim().max(128).description("Coupons only: the network's advertiser id."),
      type: Joi.string()
        .valid(...COUPON_TYPES)
        .description('Coupons only: with a code, or deals.'),
      search: Joi.string().trim().max(191).description('Shops only: prefix of the name.'),
    })
      .when('kind', {
        is: 'shops',
        then: Joi.object({ status: Joi.valid('active', 'inactive'), advertiser: Joi.forbidden(), type: Joi.forbidden() }),
        otherwise: Joi.object({ status: Joi.valid('active', 'scheduled', 'expired', 'removed'), search: Joi.forbidden() }),
      })
      .default({}),
    overwrite: Joi.boolean().default(false).description('Also items whose text the AI already wrote.'),
  }),
  /** Settings to store: each value a string or number, null (or "") to go back to the configuration's. */
  configure: Joi.object<Record<string, string | number | null>, true>()
    .pattern(/^[a-z_.]{1,64}$/, Joi.alternatives(Joi.string().max(20_000).allow(''), Joi.number(), Joi.valid(null)))
    .min(1)
    .description(
      'Settings by name: base_url, model, temperature, timeout_ms, concurrency, token_budget, daily_token_budget, answer_token_estimate, language, prompts.<task>.<system|user>, api_key (write-only).',
    ),
}));
