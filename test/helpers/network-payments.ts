// Seeds what the networks paid straight into the tables (orders' network_paid_* columns and
// network_payments rows), as the orders service's payment import will write them. Kept in one
// place so the receivables tests can move to that write path once it exists.
import type { Context } from '../../src/context.js';

let txn = 0;

export interface SeedOrder {
  network: string;
  status: 'pending' | 'approved' | 'declined';
  currency: string;
  /** Minor units. */
  commission: number;
  /** When it reached its status (an approved order's approval time). */
  statusChangedAt: Date;
  transactionId?: string;
  review?: 'held' | null;
}

/** An order row written directly; returns its id and transaction id. */
export async function seedOrder(ctx: Context, o: SeedOrder): Promise<{ id: number; transactionId: string }> {
  const transactionId = o.transactionId ?? `RCV-${++txn}`;
  const at = o.statusChangedAt;
  const { insertId } = await ctx.db.execute(
    `INSERT INTO orders (network, transaction_id, member_id, sale_amount, commission, currency, cashback, status, source, review,
                         status_changed_at, created_at, updated_at)
     VALUES (?, ?, NULL, ?, ?, ?, ?, ?, 'manual', ?, ?, ?, ?)`,
    [o.network, transactionId, o.commission * 10, o.commission, o.currency, Math.floor(o.commission / 2), o.status, o.review ?? null, at, at, at],
  );
  return { id: insertId!, transactionId };
}

export interface SeedPayment {
  network: string;
  paymentId: string;
  transactionId: string;
  /** The order the line pays; null for a transaction we do not know. */
  orderId: number | null;
  /** Minor units; null when the network does not say. */
  amount: number | null;
  currency: string | null;
  paidAt: Date;
  source?: string;
}

/** One payment line, and (for a known order) the order marked paid by it. */
export async function seedPayment(ctx: Context, p: SeedPayment): Promise<number> {
  const { insertId } = await ctx.db.execute(
    `INSERT INTO network_payments (network, payment_id, transaction_id, order_id, amount, currency, paid_at, source, raw, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)`,
    [p.network, p.paymentId, p.transactionId, p.orderId, p.amount, p.currency, p.paidAt, p.source ?? 'import', p.paidAt],
  );
  if (p.orderId !== null)
    await ctx.db.execute('UPDATE orders SET network_paid_at = ?, network_payment_id = ?, network_paid_amount = ? WHERE id = ?', [
      p.paidAt,
      p.paymentId,
      p.amount,
      p.orderId,
    ]);
  return insertId!;
}
