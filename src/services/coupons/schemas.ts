// Input schemas of the coupon routes, shared with `cashtrack coupons ...` and with the AI's
// answers (src/ai/outputs.ts holds a rewritten title and description to what an edit may be).
import Joi from 'joi';
import { DISCOUNT_TYPES, type DiscountType } from '../../networks/types.js';
import { advertiserId, anyOf, anyOfPattern, dateRange, dateTime, flag, id, networkId, paging, sorting, type ListQuery, lazySchemas } from '../../fields.js';
import type { CouponCountFilters, CouponFilters } from './index.js';
import { COUPON_FIELDS, COUPON_ORDERBY, COUPON_STATUSES, type CouponField } from './rows.js';

export { COUPON_FIELDS, COUPON_ORDERBY, COUPON_STATUSES, DISCOUNT_TYPES };

/** `code`: a code to type; `deal`: none. */
export const COUPON_TYPES = ['code', 'deal'] as const;

/** An edit as `POST /coupons/{id}` and `cashtrack coupons update` take it. */
export interface CouponEdit {
  code?: string;
  title?: string;
  description?: string | null;
  terms?: string | null;
  discount_type?: DiscountType;
  discount_value?: string | null;
  discount_currency?: string | null;
  discount_text?: string | null;
  landing_url?: string | null;
  starts_at?: string | null;
  ends_at?: string | null;
  exclusive?: boolean;
  regions?: string[];
  reset?: CouponField[];
}

const instant = () =>
  Joi.string()
    .trim()
    .max(40)
    .pattern(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})$/i, 'ISO 8601 date-time with a zone')
    .allow(null)
    .description('ISO 8601 with a zone, e.g. 2026-12-31T23:59:59Z; null for none.');

/** The list's filters other than the status ones: the counts per status take the same. */
const listFilters = {
  network: anyOfPattern(networkId()).description('Only these networks (comma-separated or an array).'),
  advertiser: advertiserId().description("Only this advertiser (the network's advertiser id)."),
  type: Joi.string()
    .valid(...COUPON_TYPES)
    .description('`code`: a code to type; `deal`: none.'),
  search: Joi.string().trim().max(191).allow('').description('Part of the title, or the start of the code.'),
  expires_before: dateTime().description('Only coupons ending before this instant.'),
  ai: flag().description('Only coupons with (1) or without (0) AI-written text.'),
  edited: flag().description("Only coupons with (1) or without (0) an administrator's edits."),
  ...dateRange('coupons first imported (created_at)'),
};

/** Input schemas, shared with `cashtrack coupons ...`. */
export const couponSchemas = lazySchemas(() => ({
  list: Joi.object<ListQuery<CouponFilters>, true>({
    ...paging,
    ...sorting(COUPON_ORDERBY, 'id', 'desc'),
    status: anyOf(COUPON_STATUSES).description('As of now, computed from the dates: one of these statuses (comma-separated or an array).'),
    status_exclude: anyOf(COUPON_STATUSES).description('None of these statuses (as of now).'),
    ...listFilters,
  }),
  counts: Joi.object<ListQuery<CouponCountFilters>, true>(listFilters),
  id: Joi.object<{ id: number }, true>({ id: id().required() }),
  edit: Joi.object<CouponEdit, true>({
    code: Joi.string().max(191).allow('').description('"" makes it a deal.'),
    title: Joi.string().max(500),
    description: Joi.string().max(20_000).allow('', null),
    terms: Joi.string().max(20_000).allow('', null),
    discount_type: Joi.string().valid(...DISCOUNT_TYPES),
    discount_value: Joi.string().max(32).allow(null).description('Decimal string: the percent, or the amount.'),
    discount_currency: Joi.string()
      .pattern(/^[A-Za-z]{3}$/, 'ISO 4217 code')
      .allow(null),
    discount_text: Joi.string().max(191).allow('', null),
    landing_url: Joi.string().max(2000).allow('', null).description('The page at the advertiser members land on (http or https).'),
    starts_at: instant(),
    ends_at: instant(),
    exclusive: Joi.boolean(),
    regions: Joi.array()
      .items(Joi.string().pattern(/^[A-Za-z]{2}$/, 'country code'))
      .max(300)
      .description('ISO 3166 alpha-2 codes; [] for everywhere.'),
    reset: Joi.array()
      .items(Joi.string().valid(...COUPON_FIELDS))
      .max(COUPON_FIELDS.length)
      .unique()
      .description('Fields given back to the network (its latest value).'),
  })
    .min(1)
    .description('Only the fields to change; each becomes an edit a refresh keeps.'),
  link: Joi.object<{ member: string }, true>({
    member: Joi.string().trim().min(1).max(191).required().description('The member credited: a user id, or a login or email.'),
  }),
  refresh: Joi.object<{ network?: string; force?: boolean; full?: boolean }, true>({
    network: networkId().description('Only this network (default: every enabled, configured network with coupons).'),
    force: Joi.boolean().description('Mark removed what the network no longer lists even past coupons.max_removed_share.'),
    full: Joi.boolean().description('Read the whole list where the network could list only changes (Awin).'),
  }),
}));
