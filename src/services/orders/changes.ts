// One change to locked orders, from its rules to what follows it: a new order's effects, another
// report of a known order, amounts and a status applied as the transitions allow; then each change
// answered as it left the order, its webhooks put in the outbox and its log lines written after commit.
import { HOOKS } from '../../hooks/index.js';
import type { Transaction } from '../../db/transaction.js';
import { ServiceError } from '../../errors.js';
import { formatAmount } from '../../money.js';
import { decodeRule } from '../cashback/index.js';
import type { OrderEffects } from './effects.js';
import type { Amounts, OrderReport } from './reports.js';
import { atRow, type OrderReader, type OrderRow } from './store.js';
import { heldEvent } from './review.js';
import type { OrderStatus, ReviewReason } from './states.js';
import type { Applied, LogEvent, OrderChange, OrderServiceDeps } from './types.js';

/** Which status moves the rules allow. Nothing returns to pending. */
const TRANSITIONS: Record<OrderStatus, readonly OrderStatus[]> = {
  pending: ['approved', 'declined'],
  approved: ['declined'],
  declined: ['approved'],
};

/** Applies reports and administrators' changes to locked orders, in the caller's transaction, and answers and announces them. */
export class OrderChanges {
  constructor(
    private readonly deps: Pick<OrderServiceDeps, 'db' | 'clock' | 'cashback' | 'events' | 'logger'>,
    private readonly reader: OrderReader,
    private readonly effects: OrderEffects,
  ) {}

  /** A new order's ledger effects (its row was just inserted). */
  async enterNew(row: OrderRow, r: OrderReport, actor: string, t: Transaction): Promise<Applied> {
    const context: Record<string, unknown> = {
      order_id: row.id,
      ...r.about,
      status: row.status,
      member_id: row.member_id,
      sub_id: row.sub_id,
      cashback: formatAmount(row.cashback, row.currency),
      currency: row.currency,
      rule: row.cashback_rule,
    };
    if (row.review === 'held') context.review = 'held';
    await this.effects.enter(row, actor, r.note, t, context);
    const events: LogEvent[] = [{ level: 'info', message: 'Order recorded', hook: HOOKS.orderRecorded, context }];
    if (row.review === 'held') events.push(heldEvent(row, actor));
    return { row, changes: ['created'], ignored: [], events };
  }

  /** Another report of a known order: amounts while pending, the status as the rules allow. */
  async applyReport(existing: OrderRow, r: OrderReport, memberId: number | null, hold: ReviewReason | null, actor: string, t: Transaction): Promise<Applied> {
    const ignored: string[] = [];
    let target: Amounts | undefined = r.amounts;
    let status: OrderStatus | undefined = r.status;
    // A decline often comes with the amounts zeroed: they never overwrite the order's.
    if (r.status === 'declined' && this.amountsDiffer(existing, r.amounts)) ignored.push('amounts'), (target = undefined);
    // Declined after review: what the network says of it no longer changes anything.
    if (existing.review === 'declined' && r.source !== 'manual') {
      if (target && this.amountsDiffer(existing, target)) ignored.push('amounts');
      if (status !== existing.status) ignored.push('status');
      target = undefined;
      status = undefined;
    }
    if (memberId !== null && memberId !== existing.member_id) ignored.push('member');
    const applied = await this.apply(existing, { amounts: target, status, raw: r.raw, hold }, r.source === 'manual' ? 'strict' : 'lenient', actor, null, t);
    applied.ignored.unshift(...ignored);
    if (applied.ignored.length > 0)
      applied.events.push({
        level: 'warning',
        message: 'Order report partly ignored',
        context: {
          order_id: existing.id,
          ...r.about,
          ignored: applied.ignored,
          order_status: applied.row.status,
          reported_status: r.status,
          ...(existing.review ? { review: existing.review } : {}),
        },
      });
    if (applied.changes.length === 0)
      applied.events.push({ level: 'debug', message: 'Order unchanged (duplicate report)', context: { order_id: existing.id, ...r.about, status: r.status } });
    return applied;
  }

  private amountsDiffer(row: OrderRow, a: Amounts): boolean {
    return row.sale_amount !== a.sale || row.commission !== a.commission || row.currency !== a.currency;
  }

  /**
   * Applies amounts and a status to a locked order. `strict` refuses what the rules forbid;
   * `lenient` (network reports) skips it and says so in `ignored`.
   */
  async apply(
    row: OrderRow,
    target: { amounts?: Amounts; status?: OrderStatus; raw?: string | null; hold?: ReviewReason | null },
    mode: 'strict' | 'lenient',
    actor: string,
    note: string | null,
    t: Transaction,
  ): Promise<Applied> {
    const out: Applied = { row, changes: [], ignored: [], events: [] };
    const now = this.deps.clock.now();
    // Every change of the order goes into one UPDATE, written once the effects are applied.
    const set: Record<string, unknown> = {};
    if (target.amounts && this.amountsDiffer(row, target.amounts)) {
      if (row.status !== 'pending') {
        if (mode === 'strict')
          // `data.status` is the HTTP status in every error answer: the order's goes beside it.
          throw new ServiceError('svc_order_not_pending', `Order ${row.id} is ${row.status}: amounts can only be corrected while it is pending.`, 409, {
            order_id: row.id,
            order_status: row.status,
          });
        out.ignored.push('amounts');
      } else {
        const a = target.amounts;
        const rule = decodeRule(row.cashback_rule) ?? (await this.deps.cashback.resolve(row.network, row.advertiser, t));
        const cashback = this.deps.cashback.compute(rule, a);
        // A correction past the review rule holds the order, whatever was decided before (these amounts were not reviewed).
        const hold = row.review !== 'held' && target.hold ? target.hold : null;
        if (hold) this.effects.withdraw(row, t);
        else await this.effects.reprice(row, a.currency, cashback, t);
        Object.assign(set, { sale_amount: a.sale, commission: a.commission, currency: a.currency, cashback, updated_at: now });
        if (hold) Object.assign(set, { review: 'held', review_reason: hold, reviewed_by: null, reviewed_at: null });
        out.events.push({
          level: 'info',
          message: 'Order amounts corrected',
          context: {
            order_id: row.id,
            from: {
              sale_amount: formatAmount(row.sale_amount, row.currency),
              commission: formatAmount(row.commission, row.currency),
              cashback: formatAmount(row.cashback, row.currency),
              currency: row.currency,
            },
            to: {
              sale_amount: formatAmount(a.sale, a.currency),
              commission: formatAmount(a.commission, a.currency),
              cashback: formatAmount(cashback, a.currency),
              currency: a.currency,
            },
            actor,
          },
        });
        out.row = {
          ...row,
          sale_amount: a.sale,
          commission: a.commission,
          currency: a.currency,
          cashback,
          updated_at: now,
          ...(hold ? { review: 'held' as const, review_reason: hold, reviewed_by: null, reviewed_at: null } : {}),
        };
        out.changes.push('amounts');
        if (hold) out.changes.push('review'), out.events.push(heldEvent(out.row, actor));
      }
    }
    const to = target.status;
    if (to !== undefined && to !== out.row.status) {
      const from = out.row.status;
      if (!TRANSITIONS[from].includes(to)) {
        if (mode === 'strict')
          throw new ServiceError('svc_invalid_transition', `Order ${row.id} cannot move from ${from} to ${to}.`, 409, { from, to, allowed: TRANSITIONS[from] });
        out.ignored.push('status');
      } else if (mode === 'strict' && out.row.review === 'held') {
        // An administrator decides a held order by releasing or declining it, not by moving its status.
        throw new ServiceError('svc_order_held', `Order ${row.id} is held for review: release it (its ${from} status then applies) or decline it first.`, 409, {
          reason: out.row.review_reason,
        });
      } else {
        const current = out.row;
        // Held: the move is recorded on the order and applies its effects only once released.
        const context: Record<string, unknown> = {
          order_id: row.id,
          network: row.network,
          transaction_id: row.transaction_id,
          from,
          to,
          member_id: current.member_id,
          actor,
          ...(current.review === 'held' ? { review: 'held' } : {}),
        };
        await this.effects.move(current, from, to, actor, note, t, context);
        Object.assign(set, { status: to, status_changed_at: now, updated_at: now });
        out.row = { ...current, status: to, status_changed_at: now, updated_at: now };
        out.changes.push('status');
        out.events.push({ level: 'info', message: 'Order status changed', hook: HOOKS.orderStatusChanged, context });
      }
    }
    if (out.changes.length > 0) {
      // The network's record of the report that changed the order.
      if (target.raw !== undefined && target.raw !== null) set.raw = target.raw;
      const columns = Object.keys(set);
      await this.deps.db.execute(`UPDATE orders SET ${columns.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`, [...columns.map((c) => set[c]), row.id], t);
    }
    return out;
  }

  /** Each change as its report left the order (one read for all the orders of the batch). */
  async results(applied: Applied[], t: Transaction): Promise<OrderChange[]> {
    const orders = await this.reader.byIds([...new Set(applied.map((a) => a.row.id))], { raw: true, t });
    const byId = new Map(orders.map((o) => [o.id, o]));
    const last = new Map(applied.map((a, i) => [a.row.id, i]));
    return applied.map((a, i) => {
      const order = byId.get(a.row.id)!;
      // An order the batch changed again later: as this report left it.
      const shown = last.get(a.row.id) === i ? order : atRow(order, a.row);
      return { ...shown, duplicate: a.changes.length === 0, changes: a.changes, ignored: a.ignored };
    });
  }

  /** The events' webhooks go to the outbox in `t`; their hooks fire once `t` has committed. */
  announce(events: LogEvent[], t: Transaction): Promise<void> {
    return this.deps.events.emitMany(
      t,
      events.flatMap((e): [string, unknown][] => (e.hook ? [[e.hook, e.context]] : [])),
    );
  }

  /** Logs once the transaction has committed (a retried transaction logs once). */
  emit(events: LogEvent[]): void {
    for (const e of events) this.deps.logger[e.level]('orders', e.message, e.context);
  }
}
