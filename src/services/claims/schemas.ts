// Input schemas of the claim routes, shared with `cashtrack claims ...`.
import Joi from 'joi';
import {
  advertiserId,
  amount,
  anyOf,
  anyOfPattern,
  currency,
  dateRange,
  dateTime,
  id,
  networkRef,
  paging,
  sorting,
  type ListQuery,
  lazySchemas,
} from '../../fields.js';
import { CLAIM_STATUSES, type ClaimStatus } from './states.js';

export { CLAIM_STATUSES };

/** The fields `GET /claims` sorts by, and the column each is. */
export const CLAIM_ORDERBY = {
  id: 'c.id',
  created_at: 'c.created_at',
  purchased_at: 'c.purchased_at',
  deadline_at: 'c.deadline_at',
  amount: 'c.amount',
  status: 'c.status',
} as const;
export type ClaimOrderby = keyof typeof CLAIM_ORDERBY;

/** A new claim, as the route and `cashtrack claims create` take it. */
export interface ClaimCreateInput {
  member_id: number;
  network: string;
  advertiser: string;
  order_ref: string;
  purchased_at: Date;
  amount: string;
  currency?: string;
  note?: string;
  /** The receipt image, base64 (a `data:` URL is accepted too). */
  receipt?: string;
  click_id?: string;
}

/** An administrator's change: the note, a decline with its reason, or a match to an order. */
export interface ClaimUpdateInput {
  note?: string;
  status?: 'declined';
  reason?: string;
  order_id?: number;
}

/** The list's filters other than the status ones (the counts per status take the same). */
export interface ClaimWhere {
  status?: ClaimStatus | ClaimStatus[];
  member_id?: number;
  network?: string | string[];
  advertiser?: string;
  search?: string;
  after?: Date;
  before?: Date;
}

export interface ClaimFilters extends ClaimWhere {
  orderby?: ClaimOrderby;
  order?: 'asc' | 'desc';
  page: number;
  per_page: number;
}

export type ClaimCountFilters = Omit<ClaimWhere, 'status'>;

/** 7 MB of base64 is about 5 MB of image: a phone photo of a receipt. */
const RECEIPT_MAX = 7_000_000;

const listFilters = {
  member_id: id().description("Only this member's claims."),
  network: anyOfPattern(networkRef()).description('Only claims on these networks (comma-separated or an array).'),
  advertiser: advertiserId().description('Only claims on this advertiser id.'),
  search: Joi.string().trim().min(1).max(191).description("Prefix of the shop's order reference or of the network's reference."),
  ...dateRange('claims made (created_at)'),
};

export const claimSchemas = lazySchemas(() => ({
  list: Joi.object<ListQuery<ClaimFilters>, true>({
    ...paging,
    ...sorting(Object.keys(CLAIM_ORDERBY) as ClaimOrderby[], 'id', 'desc'),
    status: anyOf(CLAIM_STATUSES).description('Only claims in one of these statuses (comma-separated or an array).'),
    ...listFilters,
  }),
  counts: Joi.object<ListQuery<ClaimCountFilters>, true>(listFilters),
  create: Joi.object<ClaimCreateInput, true>({
    member_id: id().required().description('The member who bought.'),
    network: networkRef().required(),
    advertiser: advertiserId().required().description("The shop: the network's advertiser id."),
    order_ref: Joi.string().trim().min(1).max(191).required().description("The shop's order reference, as on the member's confirmation e-mail."),
    purchased_at: dateTime().required().description('When the member bought (not in the future).'),
    amount: amount().required().description('What the member paid, a decimal string in `currency`.'),
    currency: currency(),
    note: Joi.string().trim().max(1000).description("The member's or support's words."),
    receipt: Joi.string().max(RECEIPT_MAX).description('The receipt image (PNG, JPEG, GIF or WebP), base64 or a data: URL. Shown to administrators only.'),
    click_id: Joi.string()
      .trim()
      .lowercase()
      .max(40)
      .pattern(/^c[0-9a-v]{18}$/, 'click id')
      .description(
        "The click the member came through, when known: a click of this member on this shop. Left out: the member's latest click on the shop within the network's cookie window before the purchase, if any.",
      ),
  }),
  update: Joi.object<ClaimUpdateInput, true>({
    note: Joi.string().trim().max(1000),
    status: Joi.string().valid('declined').description('declined: support refuses the claim (reason required).'),
    reason: Joi.string().trim().min(1).max(500).description('Why it is declined (shown to the member by the site).'),
    order_id: id().description('Match the claim to this order (assigned to the member when it has none).'),
  })
    .or('note', 'status', 'order_id')
    .with('status', 'reason')
    .oxor('status', 'order_id'),
  claimId: Joi.object<{ id: number }, true>({ id: id().required() }),
}));
