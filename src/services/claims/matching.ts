// The matching rule: which order a claim is about, among the orders we already hold. One rule,
// run when a claim is made, when an order arrives, when a network approves a claim and when the
// poll runs, so that a claim and its order meet whichever comes first.
//
// 1. By the shop's order reference: an order of the same network and advertiser with the claim's
//    reference. The member's own order first, then one without a member, then another member's.
// 2. Else by amount: an order of the same shop without a member, whose sale is within the
//    tolerance (`claims.amount_tolerance_percent`) of the claimed amount, in the same currency, and
//    whose purchase time is within `claims.match_window_days` of the claimed one. Only a single
//    such order is a match: two or more are left to support (the claim says how many).
import type { OrderMatch, OrderMatches } from '../orders/index.js';
import type { ClaimRow } from './store.js';

export interface MatchSettings {
  /** Percent of the claimed amount an order's sale may differ by (e.g. 2). */
  tolerancePercent: number;
  /** Days either side of the claimed purchase time. */
  windowDays: number;
}

export type MatchResult =
  | { kind: 'own'; order: OrderMatch; by: 'order_ref' | 'amount' }
  | { kind: 'unmatched'; order: OrderMatch; by: 'order_ref' | 'amount' }
  | { kind: 'other_member'; order: OrderMatch; by: 'order_ref' }
  | { kind: 'ambiguous'; orders: OrderMatch[] }
  | { kind: 'none' };

const DAY = 86_400_000;

/** The order `claim` is about, by the rule above. */
export async function findMatch(claim: ClaimRow, orders: OrderMatches, settings: MatchSettings): Promise<MatchResult> {
  const byRef = await orders.byRef(claim.network, claim.advertiser, claim.order_ref);
  const own = byRef.find((o) => o.member_id === claim.member_id);
  if (own) return { kind: 'own', order: own, by: 'order_ref' };
  const free = byRef.find((o) => o.member_id === null);
  if (free) return { kind: 'unmatched', order: free, by: 'order_ref' };
  if (byRef.length > 0) return { kind: 'other_member', order: byRef[0], by: 'order_ref' };

  // Tolerance in minor units, rounded down (0 % is an exact match).
  const slack = Math.floor((claim.amount * Math.round(settings.tolerancePercent * 1000)) / 100_000);
  const window = settings.windowDays * DAY;
  const near = await orders.unmatchedByAmount({
    network: claim.network,
    advertiser: claim.advertiser,
    currency: claim.currency,
    min: claim.amount - slack,
    max: claim.amount + slack,
    from: new Date(claim.purchased_at.getTime() - window),
    to: new Date(claim.purchased_at.getTime() + window),
  });
  // An order that names another shop order reference is another purchase.
  const candidates = near.filter((o) => o.merchant_ref === null || o.merchant_ref === claim.order_ref);
  if (candidates.length === 1) return { kind: 'unmatched', order: candidates[0], by: 'amount' };
  if (candidates.length > 1) return { kind: 'ambiguous', orders: candidates };
  return { kind: 'none' };
}
