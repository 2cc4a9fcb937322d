// Input schemas of the advertiser routes, shared with `cashtrack advertisers ...` (and the logo
// and page commands, which name an advertiser the same way).
import Joi from 'joi';
import { anyOf, anyOfPattern, currency, flag, lookupPaging, networkId, paging, sorting, type ListQuery, type Paging, lazySchemas } from '../../fields.js';
import { CASHBACK_TYPES, type CashbackType } from '../../cashback-rule.js';
import { ADVERTISER_ORDERBY, type AdvertiserCountFilters, type AdvertiserFilters, type AdvertiserOrderby } from './listing.js';
import { ADVERTISER_STATUSES } from './rows.js';

export { ADVERTISER_ORDERBY, ADVERTISER_STATUSES };

/** The list's filters other than the status ones: the counts per status take the same. */
const listFilters = {
  network: anyOfPattern(networkId()).description('Only these networks (comma-separated or an array).'),
  search: Joi.string().trim().max(191).allow('').description('Prefix of the name.'),
  has_page: flag().description('Only advertisers with (1) or without (0) a page.'),
  has_logo: flag().description('Only advertisers with (1) or without (0) a logo.'),
};

/** Input schemas, shared with `cashtrack advertisers ...`. */
export const advertiserSchemas = lazySchemas(() => ({
  list: Joi.object<ListQuery<AdvertiserFilters>, true>({
    ...paging,
    ...sorting(Object.keys(ADVERTISER_ORDERBY) as AdvertiserOrderby[], 'name', 'asc'),
    status: anyOf(ADVERTISER_STATUSES).description('Only advertisers in one of these statuses (comma-separated or an array).'),
    status_exclude: anyOf(ADVERTISER_STATUSES).description('Only advertisers in none of these statuses.'),
    ...listFilters,
  }),
  counts: Joi.object<ListQuery<AdvertiserCountFilters>, true>(listFilters),
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
}));
