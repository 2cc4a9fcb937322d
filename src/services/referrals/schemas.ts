// Input schemas of the referral routes, shared with `cashtrack referrals ...`.
import Joi from 'joi';
import { flag, id, paging, lazySchemas } from '../../fields.js';
import type { ReferralFilters } from './index.js';

const memberId = id();

/** Input schemas, shared with `cashtrack referrals ...`. */
export const referralSchemas = lazySchemas(() => ({
  list: Joi.object<ReferralFilters, true>({
    ...paging,
    referrer_id: memberId.description('Only referrals by this member.'),
    referee_id: memberId.description('Only referrals of this member.'),
    active: flag().description('true: only live referrals; false: only ended ones.'),
  }),
  create: Joi.object<{ referrer_id: number; referee_id: number }, true>({
    referrer_id: memberId.required().description('The member who referred.'),
    referee_id: memberId.required().description('The member who was referred.'),
  }),
  referee: Joi.object<{ referee_id: number }, true>({ referee_id: memberId.required() }),
}));
