// What the networks have paid: each payment line a network reports (a transaction paid under a
// payment id) is kept in `network_payments`, once per (network, payment, transaction), and stamps
// its order (`network_paid_at`, `network_payment_id`, `network_paid_amount`). Reading a line twice
// changes nothing; a line for a transaction we do not know is kept with no order and matched when
// the order arrives (`attach`, in the order's own recording transaction); a second payment id for
// an order already paid is kept and answered `conflict`, the order keeps its first payment. Under
// `cashback_payable: on_network_payment` the payment releases the order's cashback (effects.ts,
// `paid`), in the same transaction, with the order row locked: exactly once.
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { Transaction } from '../../db/transaction.js';
import { toDate, toInt, toIso } from '../../db/values.js';
import { ServiceError } from '../../errors.js';
import { HOOKS } from '../../hooks/index.js';
import { formatAmount, isCurrency, parseAmount, toMinor } from '../../money.js';
import type { NetworkPaymentLine } from '../../networks/types.js';
import type { LogService } from '../logs/index.js';
import type { WebhookEvents } from '../webhooks/index.js';
import type { OrderEffects } from './effects.js';
import { orderKey, type OrderReader, type OrderRow } from './store.js';

export const PAYMENT_SOURCES = ['poll', 'statement', 'feed', 'import'] as const;
export type PaymentSource = (typeof PAYMENT_SOURCES)[number];

/** One payment line as a source reads it: the network paid `transaction_id` under `payment_id`. */
export type PaymentLine = NetworkPaymentLine;

export type PaymentOutcome = 'recorded' | 'already' | 'unknown' | 'conflict' | 'invalid';

/** What one line did: `recorded` (stamped its order), `already` (read before), `unknown` (no such order yet: kept), `conflict` (the order was paid under another payment id: kept, not stamped), `invalid` (refused, with `error`). */
export interface PaymentResult {
  transaction_id: string;
  payment_id: string;
  result: PaymentOutcome;
  order_id: number | null;
  /** The order's cashback was released by this payment (`cashback_payable: on_network_payment`). */
  released?: boolean;
  error?: { code: string; message: string };
}

export interface PaymentSummary {
  recorded: number;
  already: number;
  unknown: number;
  conflict: number;
  invalid: number;
  released: number;
  results: PaymentResult[];
}

/** A stored payment line, as `GET /networks/{id}/payments` lists it. */
export interface NetworkPayment {
  id: number;
  network: string;
  payment_id: string;
  transaction_id: string;
  order_id: number | null;
  amount: string | null;
  currency: string | null;
  paid_at: string;
  source: PaymentSource;
  created_at: string;
}

export interface OrderPaymentsDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  events: WebhookEvents;
}

type Checked = { line: PaymentLine; amount: number | null; amountText: string | null; currency: string | null; paidAt: Date };

const BATCH = 200;
const MAX_ID = 191;
const idText = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v).trim() : '');

/** Records payment lines and matches them to orders. */
export class OrderPayments {
  constructor(
    private readonly deps: OrderPaymentsDeps,
    private readonly reader: OrderReader,
    private readonly effects: OrderEffects,
  ) {}

  /** Checks one line; an error answer for a line that cannot be recorded. */
  private check(line: PaymentLine): Checked | PaymentResult {
    const transactionId = idText(line?.transaction_id);
    const paymentId = idText(line?.payment_id);
    const refuse = (message: string, code = 'svc_invalid_payment'): PaymentResult => ({
      transaction_id: transactionId.slice(0, MAX_ID),
      payment_id: paymentId.slice(0, MAX_ID),
      result: 'invalid',
      order_id: null,
      error: { code, message },
    });
    if (!transactionId || transactionId.length > MAX_ID) return refuse(`transaction_id must be 1 to ${MAX_ID} characters.`);
    if (!paymentId || paymentId.length > MAX_ID) return refuse(`payment_id must be 1 to ${MAX_ID} characters.`);
    const currency = line.currency ? String(line.currency).trim().toUpperCase() : null;
    if (currency !== null && !isCurrency(currency)) return refuse(`currency "${currency.slice(0, 8)}" is not an ISO 4217 code.`);
    const amountText = line.amount !== null && line.amount !== undefined && String(line.amount).trim() !== '' ? String(line.amount).trim() : null;
    let amount: number | null = null;
    if (amountText !== null) {
      // Without a currency the amount is read in the order's, once the order is found.
      const parsed = readAmount(amountText, currency ?? 'USD');
      if (typeof parsed !== 'number') return refuse(parsed.message, parsed.code);
      if (currency !== null) amount = parsed;
    }
    const paidAt = line.paid_at ?? this.deps.clock.now();
    if (!(paidAt instanceof Date) || Number.isNaN(paidAt.getTime())) return refuse('paid_at must be a date.');
    return { line: { ...line, transaction_id: transactionId, payment_id: paymentId }, amount, amountText, currency, paidAt };
  }

  /**
   * Records a network's payment lines (idempotent; see the file header), in batches of one
   * transaction each, and answers each line's outcome and the counts.
   */
  async record(network: string, lines: PaymentLine[], source: PaymentSource, actor: string): Promise<PaymentSummary> {
    const summary: PaymentSummary = { recorded: 0, already: 0, unknown: 0, conflict: 0, invalid: 0, released: 0, results: [] };
    const results: PaymentResult[] = new Array(lines.length);
    const ready: { i: number; c: Checked }[] = [];
    lines.forEach((line, i) => {
      const c = this.check(line);
      if ('result' in c) results[i] = c;
      else ready.push({ i, c });
    });
    for (let b = 0; b < ready.length; b += BATCH) {
      const batch = ready.slice(b, b + BATCH);
      const answers = await this.retryOnDuplicateKey(() =>
        this.recordBatch(
          network,
          batch.map((x) => x.c),
          source,
          actor,
        ),
      );
      batch.forEach((x, k) => {
        results[x.i] = answers[k];
      });
    }
    for (const r of results) {
      summary[r.result]++;
      if (r.released) summary.released++;
    }
    summary.results = results;
    this.deps.logger.info('orders', 'Network payments recorded', {
      network,
      source,
      actor,
      recorded: summary.recorded,
      already: summary.already,
      unknown: summary.unknown,
      conflict: summary.conflict,
      invalid: summary.invalid,
      released: summary.released,
    });
    if (summary.conflict > 0)
      this.deps.logger.warning('orders', 'Network payment for an order paid under another payment id', {
        network,
        lines: results
          .filter((r) => r.result === 'conflict')
          .slice(0, 20)
          .map((r) => ({ transaction_id: r.transaction_id, payment_id: r.payment_id, order_id: r.order_id })),
      });
    return summary;
  }

  private async recordBatch(network: string, batch: Checked[], source: PaymentSource, actor: string): Promise<PaymentResult[]> {
    const { db } = this.deps;
    const hooks: [string, unknown][] = [];
    const out = await db.transaction(async (t) => {
      hooks.length = 0;
      const orders = await this.reader.lockByTransactions(
        batch.map((c) => ({ network, transactionId: c.line.transaction_id })),
        t,
      );
      const known = await this.linesOf(network, [...new Set(batch.map((c) => c.line.transaction_id))], t);
      const answers: PaymentResult[] = [];
      const now = this.deps.clock.now();
      for (const c of batch) {
        const { transaction_id, payment_id } = c.line;
        const key = `${payment_id}\0${transaction_id}`;
        const order = orders.get(orderKey(network, transaction_id)) ?? null;
        const base = { transaction_id, payment_id, order_id: order?.id ?? null };
        if (known.has(key)) {
          answers.push({ ...base, result: 'already' });
          continue;
        }
        // An amount in another currency than the order's is kept on the line, never stamped on the order.
        const currency = c.currency ?? order?.currency ?? null;
        let amount = c.amount;
        if (amount === null && c.amountText !== null && currency !== null) {
          const parsed = readAmount(c.amountText, currency);
          if (typeof parsed !== 'number') {
            answers.push({ ...base, result: 'invalid', error: parsed });
            continue;
          }
          amount = parsed;
        }
        known.add(key);
        await db.execute(
          'INSERT INTO network_payments (network, payment_id, transaction_id, order_id, amount, currency, paid_at, source, raw, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
          [network, payment_id, transaction_id, order?.id ?? null, amount, amount === null ? null : currency, c.paidAt, source, rawText(c.line.raw), now],
          t,
        );
        if (!order) {
          answers.push({ ...base, result: 'unknown' });
          continue;
        }
        if (order.network_paid_at !== null) {
          answers.push({ ...base, result: order.network_payment_id === payment_id ? 'already' : 'conflict' });
          continue;
        }
        const paidAmount = amount !== null && currency === order.currency ? amount : null;
        const stamped = await this.stamp(order, { payment_id, paidAt: c.paidAt, amount: paidAmount }, actor, t);
        orders.set(orderKey(network, transaction_id), stamped.row);
        hooks.push([HOOKS.orderNetworkPaid, stamped.context]);
        answers.push({ ...base, result: 'recorded', ...(stamped.released ? { released: true } : {}) });
      }
      await this.effects.settle(t);
      await this.deps.events.emitMany(t, hooks);
      return answers;
    });
    return out;
  }

  /** Stamps a locked order paid (its row before), releasing cashback awaiting the payment. */
  private async stamp(
    order: OrderRow,
    p: { payment_id: string; paidAt: Date; amount: number | null },
    actor: string,
    t: Transaction,
  ): Promise<{ row: OrderRow; released: boolean; context: Record<string, unknown> }> {
    const context: Record<string, unknown> = {
      order_id: order.id,
      network: order.network,
      transaction_id: order.transaction_id,
      payment_id: p.payment_id,
      paid_at: p.paidAt.toISOString(),
      amount: p.amount === null ? null : formatAmount(p.amount, order.currency),
      currency: order.currency,
      member_id: order.member_id,
      actor,
    };
    const released = await this.effects.paid(order, actor, `Order ${order.network}:${order.transaction_id} paid by the network (${p.payment_id})`, t, context);
    context.released = released;
    await this.deps.db.execute(
      'UPDATE orders SET network_paid_at = ?, network_payment_id = ?, network_paid_amount = ?, updated_at = ? WHERE id = ?',
      [p.paidAt, p.payment_id, p.amount, this.deps.clock.now(), order.id],
      t,
    );
    return { row: { ...order, network_paid_at: p.paidAt, network_payment_id: p.payment_id, network_paid_amount: p.amount }, released, context };
  }

  /**
   * New orders meet the payment lines that came before them: lines of their transactions with no
   * order get the order, and the earliest stamps it (before its ledger effects are entered, so an
   * approved order under `on_network_payment` is credited at once). One query per network.
   * Answers the rows, stamped where a line was waiting.
   */
  async attach(rows: OrderRow[], t: Transaction): Promise<OrderRow[]> {
    const byNetwork = new Map<string, OrderRow[]>();
    for (const r of rows) byNetwork.set(r.network, [...(byNetwork.get(r.network) ?? []), r]);
    const out = new Map<number, OrderRow>();
    for (const [network, list] of byNetwork) {
      const ids = list.map((r) => r.transaction_id);
      const waiting = await this.deps.db.select<Record<string, unknown>>(
        `SELECT id, payment_id, transaction_id, amount, currency, paid_at FROM network_payments
         WHERE network = ? AND order_id IS NULL AND transaction_id IN (${ids.map(() => '?').join(', ')}) ORDER BY paid_at, id`,
        [network, ...ids],
        t,
      );
      if (waiting.length === 0) continue;
      const rowOf = new Map(list.map((r) => [r.transaction_id, r]));
      for (const w of waiting) {
        const row = out.get(rowOf.get(String(w.transaction_id))!.id) ?? rowOf.get(String(w.transaction_id))!;
        await this.deps.db.execute('UPDATE network_payments SET order_id = ? WHERE id = ?', [row.id, toInt(w.id)], t);
        if (row.network_paid_at !== null) continue;
        const amount = w.amount === null || w.amount === undefined || String(w.currency) !== row.currency ? null : toMinor(w.amount);
        const paidAt = toDate(w.paid_at)!;
        await this.deps.db.execute(
          'UPDATE orders SET network_paid_at = ?, network_payment_id = ?, network_paid_amount = ? WHERE id = ?',
          [paidAt, String(w.payment_id), amount, row.id],
          t,
        );
        out.set(row.id, { ...row, network_paid_at: paidAt, network_payment_id: String(w.payment_id), network_paid_amount: amount });
      }
    }
    return rows.map((r) => out.get(r.id) ?? r);
  }

  /** The (payment, transaction) keys on file for these transactions of `network`. */
  private async linesOf(network: string, transactionIds: string[], t: Transaction): Promise<Set<string>> {
    const out = new Set<string>();
    for (let i = 0; i < transactionIds.length; i += 500) {
      const chunk = transactionIds.slice(i, i + 500);
      const rows = await this.deps.db.select<{ payment_id: unknown; transaction_id: unknown }>(
        `SELECT payment_id, transaction_id FROM network_payments WHERE network = ? AND transaction_id IN (${chunk.map(() => '?').join(', ')})`,
        [network, ...chunk],
        t,
      );
      for (const r of rows) out.add(`${String(r.payment_id)}\0${String(r.transaction_id)}`);
    }
    return out;
  }

  /** A network's payment lines, newest first; `unknown` lists only those with no order. */
  async list(network: string, f: { unknown?: boolean; page: number; per_page: number }): Promise<{ items: NetworkPayment[]; total: number }> {
    const where = `network = ?${f.unknown ? ' AND order_id IS NULL' : ''}`;
    const [count] = await this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM network_payments WHERE ${where}`, [network]);
    const rows = await this.deps.db.select<Record<string, unknown>>(
      `SELECT id, network, payment_id, transaction_id, order_id, amount, currency, paid_at, source, created_at FROM network_payments
       WHERE ${where} ORDER BY paid_at DESC, id DESC LIMIT ? OFFSET ?`,
      [network, f.per_page, (f.page - 1) * f.per_page],
    );
    return {
      total: toInt(count?.n ?? 0),
      items: rows.map((r) => ({
        id: toInt(r.id),
        network: String(r.network),
        payment_id: String(r.payment_id),
        transaction_id: String(r.transaction_id),
        order_id: r.order_id === null || r.order_id === undefined ? null : toInt(r.order_id),
        amount: r.amount === null || r.amount === undefined || r.currency === null ? null : formatAmount(toMinor(r.amount), String(r.currency)),
        currency: r.currency === null || r.currency === undefined ? null : String(r.currency),
        paid_at: toIso(r.paid_at)!,
        source: String(r.source) as PaymentSource,
        created_at: toIso(r.created_at)!,
      })),
    };
  }

  /** Two readings of a new line racing: the loser's INSERT hits the unique key; run it again (it then reads `already`). */
  private async retryOnDuplicateKey<T>(fn: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        if (attempt >= 3 || !isUniqueViolation(err)) throw err;
      }
    }
  }
}

function readAmount(text: string, currency: string): number | { code: string; message: string } {
  try {
    return parseAmount(text, currency, { allowZero: true, allowNegative: true, field: 'amount' });
  } catch (err) {
    if (err instanceof ServiceError) return { code: err.code, message: err.message };
    throw err;
  }
}

function rawText(raw: unknown): string | null {
  if (raw === undefined || raw === null) return null;
  const text = typeof raw === 'string' ? raw : JSON.stringify(raw);
  return text.slice(0, 60_000);
}
