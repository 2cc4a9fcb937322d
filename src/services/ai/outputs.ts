// What each AI task must answer: the Joi schema that validates it (the domains' schemas of the
// fields it fills) and the JSON Schema asked of the provider (strict mode: every property
// required, nothing else allowed).
import { lazySchemas } from '../../fields.js';
import Joi from 'joi';
import { couponSchemas } from '../coupons/schemas.js';
import { pageSchemas } from '../pages/schemas.js';

export interface ShopOutput {
  /** Plain text: the advertiser's description. */
  description: string;
  /** HTML: the shop page's body. */
  body: string;
}

export interface CouponOutput {
  title: string;
  description: string;
}

/**
 * The routes' own field schemas (`POST /coupons/{id}` for a coupon's title and description,
 * `POST /pages/{id}` for a page body), made required and non-empty: an AI answer is held to what an
 * administrator's edit is. A shop's description has no edit route of its own: plain text, at most
 * 2000 characters.
 */
const required = (schema: Joi.Schema) => (schema as Joi.StringSchema).invalid('', null).trim().min(1).required();

export const AI_LIMITS = { shop_description: 2000 } as const;

export const aiOutputSchemas = lazySchemas(() => ({
  shop: Joi.object<ShopOutput, true>({
    description: Joi.string().trim().min(1).max(AI_LIMITS.shop_description).required(),
    body: required(pageSchemas.update.extract('body')),
  }),
  coupon: Joi.object<CouponOutput, true>({
    title: required(couponSchemas.edit.extract('title')),
    description: required(couponSchemas.edit.extract('description')),
  }),
}));

const str = (description: string) => ({ type: 'string', description });

export const aiJsonSchemas = {
  shop: {
    type: 'object',
    properties: {
      description: str('One or two sentences of plain text about the shop.'),
      body: str('The shop page body in HTML (h2, p, ul, li, strong, em, a).'),
    },
    required: ['description', 'body'],
    additionalProperties: false,
  },
  coupon: {
    type: 'object',
    properties: {
      title: str('The coupon title, plain text.'),
      description: str('The coupon description, plain text.'),
    },
    required: ['title', 'description'],
    additionalProperties: false,
  },
} as const;
