// Input schemas of the advertiser routes, shared with `cashtrack advertisers ...` (and the logo
// and page commands, which name an advertiser the same way).
import Joi from 'joi';
import { currency, flag, lookupPaging, networkId, paging, type Paging } from '../../fields.js';
import { CASHBACK_TYPES, type CashbackType } from '../../cashback-rule.js';
import type { AdvertiserFilters } from './listing.js';
import { ADVERTISER_STATUSES } from './rows.js';

export { ADVERTISER_STATUSES };

/** Input schemas, shared with `cashtrack advertisers ...`. */
export const advertiserSchemas = {
  list: Joi.object<AdvertiserFilters, true>({
    ...paging,
    network: networkId().description('Only this network.'),
    search: Joi.string().trim().max(191).allow('').description('Prefix of the name.'),
    status: Joi.string().valid(...ADVERTISER_STATUSES),
    has_page: flag().description('Only advertisers with (1) or without (0) a page.'),
    has_logo: flag().description('Only advertisers with (1) or without (0) a logo.'),
    orderby: Joi.string().valid('name', 'updated').default('name'),
    order: Joi.string().valid('asc', 'desc').default('asc'),
  }),
  key: Joi.object<{ module: string; advertiser: string }, true>({ module: networkId().required(), advertiser: Joi.string().max(128).required() }),
  link: Joi.object<{ member: string; url?: string }, true>({
    member: Joi.string().trim().min(1).max(191).required().description('The member credited: a user id, or a login or email.'),
    url: Joi.string()
      .trim()
      .max(2000)
      .description("Target page (http or https, on the advertiser's domain when it is known); default: the advertiser's home page."),
  }),
  sync: Joi.object<{ network?: string }, true>({ network: networkId().description('Only this network (default: every enabled, configured network).') }),
  lookup: Joi.object<Paging & { search: string }, true>({
    ...lookupPaging,
    search: Joi.string().allow('').max(191).default('').description('Prefix of the name.'),
  }),
  cashback: Joi.object<{ type: CashbackType; value: string; currency?: string | null }, true>({
    type: Joi.string()
      .valid(...CASHBACK_TYPES)
      .required(),
    value: Joi.string().max(32).required(),
    currency: currency().allow(null).description('The currency of a flat amount (a percent rule has none).'),
  }),
};
