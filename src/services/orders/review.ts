// Which reports from a network are held for review instead of moving money: a commission above
// the ceiling (the network's `review_above` setting, else the site's `orders.review_above`), in
// a currency the ceiling does not name, or above the sale it was paid on. Reports are claims a
// token holder can make up, so the rule is checked on every report that brings amounts (a new
// order, a correction while pending), for postbacks and polls alike; an administrator's own
// entries and corrections are never held (they are the review).
import { REVIEW_SETTING, type NetworkService } from '../networks/index.js';
import { HOOKS } from '../../hooks/index.js';
import { ceilingIn, formatAmount, parseCeiling, type Ceiling } from '../../money.js';
import type { LogService } from '../logs/index.js';
import type { Amounts } from './reports.js';
import type { OrderRow } from './store.js';
import type { ReviewReason } from './states.js';
import type { LogEvent } from './types.js';

export interface OrderReviewDeps {
  /** The networks service, which owns their stored settings. */
  networks: Pick<NetworkService, 'storedSetting'>;
  logger: LogService;
  /** `orders.review_above`: the site's ceiling; null or "none": none. */
  siteCeiling: string | null;
  /** `networks` from the configuration (a `review_above` there counts under the stored setting). */
  configured?: Record<string, Record<string, string>>;
}

/** Why a report with these amounts is held under `ceiling` (null: no ceiling), or null when it is not. */
export function reviewReason(amounts: Amounts, ceiling: Ceiling | null): ReviewReason | null {
  // Nothing to credit, nothing to hold (a decline with its commission zeroed).
  if (amounts.commission <= 0) return null;
  // A sale of 0 is a sale the network did not report (leads, postbacks without the amount).
  if (amounts.sale > 0 && amounts.commission > amounts.sale) return 'commission_exceeds_sale';
  if (ceiling === null) return null;
  const limit = ceilingIn(ceiling, amounts.currency);
  if (limit === null) return 'currency_not_covered';
  return amounts.commission > limit ? 'above_ceiling' : null;
}

/** Reads the ceilings the reports of each network answer to. */
export class OrderReview {
  private readonly site: Ceiling | null;

  constructor(private readonly deps: OrderReviewDeps) {
    this.site = parseCeiling(deps.siteCeiling, 'orders.review_above');
  }

  /** Each network's ceiling: its stored setting, else its configured one, else the site's ("none": no ceiling). One query. */
  async ceilings(networks: string[]): Promise<Map<string, Ceiling | null>> {
    const ids = [...new Set(networks)];
    const out = new Map<string, Ceiling | null>();
    if (ids.length === 0) return out;
    const stored = await this.deps.networks.storedSetting(ids, REVIEW_SETTING);
    for (const id of ids) {
      const text = stored.get(id) ?? this.deps.configured?.[id]?.[REVIEW_SETTING];
      out.set(id, text === undefined || text === '' ? this.site : this.parse(id, text));
    }
    return out;
  }

  /** A stored setting was checked when it was set; one that no longer parses holds every order (fail closed). */
  private parse(network: string, text: string): Ceiling | null {
    try {
      return parseCeiling(text, REVIEW_SETTING);
    } catch {
      this.deps.logger.warning('orders', 'Invalid review_above setting: every order of the network is held', { network });
      return { text, any: '0', byCurrency: new Map() };
    }
  }
}

/** The log line and `cashtrack.order.held` of an order just held for review. */
export function heldEvent(row: OrderRow, actor: string): LogEvent {
  return {
    level: 'warning',
    message: 'Order held for review',
    hook: HOOKS.orderHeld,
    context: {
      order_id: row.id,
      network: row.network,
      transaction_id: row.transaction_id,
      reason: row.review_reason,
      status: row.status,
      member_id: row.member_id,
      sale_amount: formatAmount(row.sale_amount, row.currency),
      commission: formatAmount(row.commission, row.currency),
      cashback: formatAmount(row.cashback, row.currency),
      currency: row.currency,
      actor,
    },
  };
}

/**
 * An administrator's decision on a held order the caller has locked: the columns to write, the
 * order after it, what changed and what to log (the first event's context takes the entries the
 * caller posts). Released, the order's current status is to be entered by the caller; declined,
 * nothing is undone (nothing was applied while it was held): it only becomes declined.
 */
export function decideHeld(
  row: OrderRow,
  decision: 'released' | 'declined',
  actor: string,
  note: string | null,
  now: Date,
): { set: Record<string, unknown>; row: OrderRow; changes: string[]; events: LogEvent[] } {
  const set: Record<string, unknown> = { review: decision, reviewed_by: actor, reviewed_at: now, updated_at: now };
  if (note !== null) set.note = note;
  let decided: OrderRow = { ...row, review: decision, reviewed_by: actor, reviewed_at: now, updated_at: now, note: note ?? row.note };
  const context: Record<string, unknown> = {
    order_id: row.id,
    network: row.network,
    transaction_id: row.transaction_id,
    decision,
    reason: row.review_reason,
    status: row.status,
    member_id: row.member_id,
    actor,
  };
  const events: LogEvent[] = [
    { level: 'info', message: decision === 'released' ? 'Held order released' : 'Held order declined', hook: HOOKS.orderReviewed, context },
  ];
  if (decision === 'released' || row.status === 'declined') return { set, row: decided, changes: ['review'], events };
  Object.assign(set, { status: 'declined', status_changed_at: now });
  decided = { ...decided, status: 'declined', status_changed_at: now };
  events.push({
    level: 'info',
    message: 'Order status changed',
    hook: HOOKS.orderStatusChanged,
    context: { order_id: row.id, network: row.network, transaction_id: row.transaction_id, from: row.status, to: 'declined', member_id: row.member_id, actor },
  });
  return { set, row: decided, changes: ['review', 'status'], events };
}
