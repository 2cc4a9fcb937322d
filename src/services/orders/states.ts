// What an order can be: its statuses, the sources of its reports, its review states and the reasons
// it was held. The store (store.ts) and the report checks (reports.ts) both use
// them; kept apart from either, so that the two do not import each other.
export const ORDER_STATUSES = ['pending', 'approved', 'declined'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];
export const ORDER_SOURCES = ['postback', 'poll', 'manual'] as const;
export type OrderSource = (typeof ORDER_SOURCES)[number];
/** An order held for review, and what an administrator decided. */
export const REVIEW_STATES = ['held', 'released', 'declined'] as const;
export type ReviewState = (typeof REVIEW_STATES)[number];
/** Why an order was held: its commission above the ceiling, in a currency the ceiling does not name, or above the sale. */
export const REVIEW_REASONS = ['above_ceiling', 'currency_not_covered', 'commission_exceeds_sale'] as const;
export type ReviewReason = (typeof REVIEW_REASONS)[number];
