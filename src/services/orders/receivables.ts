// A read model of the orders and network_payments tables: what each network still owes. Per
// currency, the commission of its approved orders it has not paid (no `network_paid_at`), in age
// buckets by approval time (an approved order's `status_changed_at`: the moment it became approved,
// which later corrections of its amounts leave alone), beside the members' liabilities in that
// currency; and the variances: paid commission that differs from the order's, payment lines for
// transactions we do not know, approved orders unpaid past the network's `payment_terms_days`.
// Held orders count too: what a network owes does not depend on our review of its report.
// Ages are whole days since approval (floor); "past the terms" means an age above them, so with 90
// days of terms the overdue orders are the "over 90" bucket. SQL reads only; the orders service
// stays the tables' only writer. The unpaid figures read the `orders_network_paid` index
// (network, status, network_paid_at) one network at a time, so the overview's share stays a range
// read per network; the mismatch count reads the network's payment lines with their orders.
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { readSum, toDate, toInt } from '../../db/values.js';
import { formatAmount, toExactMinor } from '../../money.js';
import type { LedgerLiabilities, Liability } from '../ledger/index.js';
import { PAYMENT_TERMS_DEFAULT_DAYS, PAYMENT_TERMS_SETTING, parsePaymentTerms, type NetworkService } from '../networks/index.js';

const DAY = 86_400_000;

/** The age buckets, in whole days since approval: 0-30, 31-60, 61-90, over 90. */
export const AGE_BUCKETS = ['0-30', '31-60', '61-90', 'over_90'] as const;
export type AgeBucket = (typeof AGE_BUCKETS)[number];
/** The last whole day of each bucket but the open one. */
const BUCKET_LAST_DAY = [30, 60, 90];

/** How many variance items a list shows at most (the counts are always complete). */
export const VARIANCE_LIMIT_MAX = 100;

export interface Figure {
  count: number;
  commission: string;
}

/** One network's unpaid commission in one currency. */
export interface UnpaidSummary {
  currency: string;
  /** Every approved order: paid + unpaid. */
  approved: Figure;
  /** Approved orders the network has paid (their commission, not the amount paid: see the mismatches). */
  paid: Figure;
  /** Approved orders the network has not paid: the sum of the buckets. */
  unpaid: Figure;
  buckets: ({ bucket: AgeBucket } & Figure)[];
  /** The unpaid ones past the network's payment terms. */
  overdue: Figure;
}

export interface NetworkCurrencyReceivables extends UnpaidSummary {
  /** What members are owed in this currency (every member, every network): null when no member has a balance in it. */
  liabilities: Liability | null;
}

/** An order whose paid lines (with an amount) differ from its commission, or were paid in another currency. */
export interface MismatchedPayment {
  order_id: number;
  transaction_id: string;
  status: string;
  currency: string;
  commission: string;
  /** The currency of the lines (the order's when the lines do not say). */
  paid_currency: string;
  /** The sum of the order's paid lines in `paid_currency`. */
  paid: string;
  /** paid − commission; null when paid in another currency. */
  difference: string | null;
  lines: number;
  last_paid_at: string;
}

/** A payment line for a transaction we hold no order for: kept, never dropped. */
export interface UnknownPayment {
  id: number;
  payment_id: string;
  transaction_id: string;
  /** Null when the network did not say the amount, or not its currency (then see `amount_minor`). */
  amount: string | null;
  /** The amount in minor units as stored, null when the network did not say it. */
  amount_minor: number | null;
  currency: string | null;
  paid_at: string;
  source: string;
}

export interface OverdueOrder {
  order_id: number;
  transaction_id: string;
  currency: string;
  commission: string;
  approved_at: string;
  age_days: number;
}

/** A capped list: `count` is every item there is, `items` the first `limit` of them. */
export interface VarianceList<T> {
  count: number;
  items: T[];
}

export interface NetworkReceivables {
  network: string;
  generated_at: string;
  payment_terms_days: number;
  currencies: NetworkCurrencyReceivables[];
  variances: {
    /** How many items each list shows at most. */
    limit: number;
    /** Newest order first. */
    mismatched: VarianceList<MismatchedPayment>;
    /** Newest payment first. */
    unknown: VarianceList<UnknownPayment>;
    /** Longest unpaid first. */
    overdue: VarianceList<OverdueOrder>;
  };
}

export interface ReceivablesOverview {
  /** Per network and currency, networks with unpaid approved orders only. */
  by_network: ({ network: string; payment_terms_days: number } & UnpaidSummary)[];
  /** The same summed per currency over the networks, beside the members' liabilities. */
  by_currency: { currency: string; unpaid: Figure; buckets: ({ bucket: AgeBucket } & Figure)[]; overdue: Figure; liabilities: Liability | null }[];
  /** Variance counts per network (networks with none left out). */
  variances: { network: string; mismatched: number; unknown: number; overdue: number }[];
}

export interface OrderReceivablesDeps {
  db: Database;
  clock: Clock;
  /** The networks service: a network's existence (404) and its stored `payment_terms_days`. */
  networks: Pick<NetworkService, 'module' | 'storedSetting'>;
  /** The members' balances (the ledger's read model). */
  liabilities: Pick<LedgerLiabilities, 'byCurrency'>;
  /** `networks` from the configuration (a `payment_terms_days` there counts under the stored setting). */
  configured?: Record<string, Record<string, string>>;
}

interface Totals {
  count: number;
  commission: bigint;
}

const zero = (): Totals => ({ count: 0, commission: 0n });
const figure = (t: Totals, currency: string): Figure => ({ count: t.count, commission: formatAmount(t.commission, currency) });

/** The unpaid figures of one network in one currency, in minor units. */
interface UnpaidTotals {
  currency: string;
  paid: Totals;
  buckets: Totals[];
  overdue: Totals;
}

/** Reads what the networks still owe. */
export class OrderReceivables {
  constructor(private readonly deps: OrderReceivablesDeps) {}

  /** One network's receivables and variances (404 svc_network_not_found); each variance list shows at most `limit` items. */
  async forNetwork(id: string, options: { limit?: number } = {}): Promise<NetworkReceivables> {
    const limit = Math.min(Math.max(options.limit ?? 20, 1), VARIANCE_LIMIT_MAX);
    await this.deps.networks.module(id);
    const now = this.deps.clock.now();
    const terms = (await this.termsOf([id])).get(id)!;
    const unpaid = await this.unpaid(id, terms, now);
    const [liabilities, mismatched, mismatchedCount, unknown, unknownCount, overdue] = await Promise.all([
      this.deps.liabilities.byCurrency(unpaid.map((u) => u.currency)),
      this.mismatched(id, limit),
      this.countMismatched(id),
      this.unknown(id, limit),
      this.countUnknown(id),
      this.overdue(id, terms, now, limit),
    ]);
    const owed = new Map(liabilities.map((l) => [l.currency, l]));
    return {
      network: id,
      generated_at: now.toISOString(),
      payment_terms_days: terms,
      currencies: unpaid.map((u) => ({ ...summary(u), liabilities: owed.get(u.currency) ?? null })),
      variances: {
        limit,
        mismatched: { count: mismatchedCount.get(id) ?? 0, items: mismatched },
        unknown: { count: unknownCount.get(id) ?? 0, items: unknown },
        overdue: { count: unpaid.reduce((n, u) => n + u.overdue.count, 0), items: overdue },
      },
    };
  }

  /** The overview's section: every network's unpaid figures and variance counts, and the totals per currency. */
  async overview(): Promise<ReceivablesOverview> {
    const now = this.deps.clock.now();
    const db = this.deps.db;
    // The networks with unpaid approved orders: a read of the index alone.
    const [owing, mismatched, unknown] = await Promise.all([
      db.select<{ network: unknown }>("SELECT DISTINCT network FROM orders WHERE status = 'approved' AND network_paid_at IS NULL"),
      this.countMismatched(),
      this.countUnknown(),
    ]);
    const ids = owing.map((r) => String(r.network)).sort();
    const terms = await this.termsOf(ids);
    const perNetwork = await Promise.all(ids.map(async (id) => ({ id, rows: await this.unpaid(id, terms.get(id)!, now) })));

    const byNetwork: ReceivablesOverview['by_network'] = [];
    const perCurrency = new Map<string, { unpaid: Totals; buckets: Totals[]; overdue: Totals }>();
    for (const { id, rows } of perNetwork) {
      for (const u of rows) {
        const s = summary(u);
        if (s.unpaid.count === 0) continue;
        byNetwork.push({ network: id, payment_terms_days: terms.get(id)!, ...s });
        const c = perCurrency.get(u.currency) ?? { unpaid: zero(), buckets: AGE_BUCKETS.map(zero), overdue: zero() };
        u.buckets.forEach((b, i) => {
          add(c.buckets[i], b);
          add(c.unpaid, b);
        });
        add(c.overdue, u.overdue);
        perCurrency.set(u.currency, c);
      }
    }
    const currencies = [...perCurrency.keys()].sort();
    const owed = new Map((await this.deps.liabilities.byCurrency(currencies)).map((l) => [l.currency, l]));
    const overdueBy = new Map(byNetwork.map((n) => [n.network, 0]));
    for (const n of byNetwork) overdueBy.set(n.network, overdueBy.get(n.network)! + n.overdue.count);
    const varianceIds = [...new Set([...overdueBy.keys(), ...mismatched.keys(), ...unknown.keys()])].sort();
    return {
      by_network: byNetwork,
      by_currency: currencies.map((currency) => {
        const c = perCurrency.get(currency)!;
        return {
          currency,
          unpaid: figure(c.unpaid, currency),
          buckets: c.buckets.map((b, i) => ({ bucket: AGE_BUCKETS[i], ...figure(b, currency) })),
          overdue: figure(c.overdue, currency),
          liabilities: owed.get(currency) ?? null,
        };
      }),
      variances: varianceIds
        .map((network) => ({
          network,
          mismatched: mismatched.get(network) ?? 0,
          unknown: unknown.get(network) ?? 0,
          overdue: overdueBy.get(network) ?? 0,
        }))
        .filter((v) => v.mismatched + v.unknown + v.overdue > 0),
    };
  }

  /** Each network's payment terms in days: its stored setting, else its configured one, else the default (one query). */
  private async termsOf(ids: string[]): Promise<Map<string, number>> {
    const stored = await this.deps.networks.storedSetting(ids, PAYMENT_TERMS_SETTING);
    const out = new Map<string, number>();
    for (const id of ids) {
      const text = stored.get(id) || this.deps.configured?.[id]?.[PAYMENT_TERMS_SETTING] || '';
      // Both were checked when set; one that no longer parses falls back to the default.
      out.set(id, (text && parsePaymentTerms(text)) || PAYMENT_TERMS_DEFAULT_DAYS);
    }
    return out;
  }

  /**
   * One network's approved orders per currency: the paid ones, and the unpaid ones per age bucket
   * and whether past the terms. Two range reads of `orders_network_paid`.
   */
  private async unpaid(network: string, terms: number, now: Date): Promise<UnpaidTotals[]> {
    const db = this.deps.db;
    // An order approved at t is d whole days old when now − (d+1) days < t ≤ now − d days.
    const cut = (days: number) => new Date(now.getTime() - (days + 1) * DAY);
    const bucketCase = `CASE ${BUCKET_LAST_DAY.map((_, i) => `WHEN status_changed_at > ? THEN ${i}`).join(' ')} ELSE ${BUCKET_LAST_DAY.length} END`;
    const [open, paid] = await Promise.all([
      db.select<Record<string, unknown>>(
        `SELECT currency, ${bucketCase} AS bucket, CASE WHEN status_changed_at <= ? THEN 1 ELSE 0 END AS overdue,
                COUNT(*) AS n, ${db.exactSum('commission', 'commission')}
         FROM orders WHERE network = ? AND status = 'approved' AND network_paid_at IS NULL
         GROUP BY currency, bucket, overdue`,
        [...BUCKET_LAST_DAY.map(cut), cut(terms), network],
      ),
      db.select<Record<string, unknown>>(
        `SELECT currency, COUNT(*) AS n, ${db.exactSum('commission', 'commission')}
         FROM orders WHERE network = ? AND status = 'approved' AND network_paid_at IS NOT NULL GROUP BY currency`,
        [network],
      ),
    ]);
    const out = new Map<string, UnpaidTotals>();
    const of = (currency: string) => {
      const t = out.get(currency) ?? { currency, paid: zero(), buckets: AGE_BUCKETS.map(zero), overdue: zero() };
      out.set(currency, t);
      return t;
    };
    for (const r of open) {
      const t = of(String(r.currency));
      const part = { count: toInt(r.n), commission: readSum(r, 'commission') };
      add(t.buckets[toInt(r.bucket)], part);
      if (toInt(r.overdue) === 1) add(t.overdue, part);
    }
    for (const r of paid) add(of(String(r.currency)).paid, { count: toInt(r.n), commission: readSum(r, 'commission') });
    return [...out.values()].sort((a, b) => a.currency.localeCompare(b.currency));
  }

  /**
   * The orders whose paid lines differ from their commission: the lines (those with an amount)
   * summed per order and line currency (a line without a currency is in the order's) first, then
   * each sum joined to its order by primary key, so the read is driven by the payment lines and
   * never scans the orders. `network` limits it to one network.
   */
  private mismatchSql(network?: string): { sql: string; params: unknown[] } {
    const db = this.deps.db;
    return {
      sql: `SELECT m.*, o.id AS order_id, o.transaction_id AS transaction_id, o.status AS status, o.currency AS currency, o.commission AS commission
            FROM (SELECT p.network AS network, p.order_id AS line_order,
                         COALESCE(p.currency, (SELECT x.currency FROM orders x WHERE x.id = p.order_id)) AS paid_currency,
                         SUM(p.amount) AS paid_total, ${db.exactSum('p.amount', 'paid')}, COUNT(*) AS line_count, MAX(p.paid_at) AS last_paid_at
                  FROM network_payments p
                  WHERE ${network === undefined ? '' : 'p.network = ? AND '}p.order_id IS NOT NULL AND p.amount IS NOT NULL
                  GROUP BY p.network, p.order_id, paid_currency) m
            JOIN orders o ON o.id = m.line_order
            WHERE m.paid_currency <> o.currency OR m.paid_total <> o.commission`,
      params: network === undefined ? [] : [network],
    };
  }

  private async mismatched(network: string, limit: number): Promise<MismatchedPayment[]> {
    const { sql, params } = this.mismatchSql(network);
    const rows = await this.deps.db.select<Record<string, unknown>>(`${sql} ORDER BY order_id DESC, paid_currency LIMIT ${limit}`, params);
    return rows.map((r) => {
      const currency = String(r.currency);
      const paidCurrency = String(r.paid_currency);
      const commission = toExactMinor(r.commission);
      const paid = readSum(r, 'paid');
      return {
        order_id: toInt(r.order_id),
        transaction_id: String(r.transaction_id),
        status: String(r.status),
        currency,
        commission: formatAmount(commission, currency),
        paid_currency: paidCurrency,
        paid: formatAmount(paid, paidCurrency),
        difference: paidCurrency === currency ? formatAmount(paid - commission, currency) : null,
        lines: toInt(r.line_count),
        last_paid_at: toDate(r.last_paid_at)!.toISOString(),
      };
    });
  }

  /** Mismatched orders per network (one network's only when given). */
  private async countMismatched(network?: string): Promise<Map<string, number>> {
    const { sql, params } = this.mismatchSql(network);
    const rows = await this.deps.db.select<{ network: unknown; n: unknown }>(`SELECT network, COUNT(*) AS n FROM (${sql}) v GROUP BY network`, params);
    return new Map(rows.map((r) => [String(r.network), toInt(r.n)]));
  }

  private async unknown(network: string, limit: number): Promise<UnknownPayment[]> {
    const rows = await this.deps.db.select<Record<string, unknown>>(
      `SELECT id, payment_id, transaction_id, amount, currency, paid_at, source FROM network_payments
       WHERE network = ? AND order_id IS NULL ORDER BY paid_at DESC, id DESC LIMIT ${limit}`,
      [network],
    );
    return rows.map((r) => {
      const currency = r.currency === null ? null : String(r.currency);
      return {
        id: toInt(r.id),
        payment_id: String(r.payment_id),
        transaction_id: String(r.transaction_id),
        amount: r.amount === null || currency === null ? null : formatAmount(toExactMinor(r.amount), currency),
        amount_minor: r.amount === null ? null : toInt(r.amount),
        currency,
        paid_at: toDate(r.paid_at)!.toISOString(),
        source: String(r.source),
      };
    });
  }

  /** Payment lines without an order per network (one network's only when given). */
  private async countUnknown(network?: string): Promise<Map<string, number>> {
    const rows = await this.deps.db.select<{ network: unknown; n: unknown }>(
      `SELECT network, COUNT(*) AS n FROM network_payments WHERE ${network === undefined ? '' : 'network = ? AND '}order_id IS NULL GROUP BY network`,
      network === undefined ? [] : [network],
    );
    return new Map(rows.map((r) => [String(r.network), toInt(r.n)]));
  }

  private async overdue(network: string, terms: number, now: Date, limit: number): Promise<OverdueOrder[]> {
    const rows = await this.deps.db.select<Record<string, unknown>>(
      `SELECT id, transaction_id, currency, commission, status_changed_at FROM orders
       WHERE network = ? AND status = 'approved' AND network_paid_at IS NULL AND status_changed_at <= ?
       ORDER BY status_changed_at, id LIMIT ${limit}`,
      [network, new Date(now.getTime() - (terms + 1) * DAY)],
    );
    return rows.map((r) => {
      const currency = String(r.currency);
      const approved = toDate(r.status_changed_at)!;
      return {
        order_id: toInt(r.id),
        transaction_id: String(r.transaction_id),
        currency,
        commission: formatAmount(toExactMinor(r.commission), currency),
        approved_at: approved.toISOString(),
        age_days: Math.floor((now.getTime() - approved.getTime()) / DAY),
      };
    });
  }
}

function add(into: Totals, part: Totals): void {
  into.count += part.count;
  into.commission += part.commission;
}

/** The decimal figures of one network's unpaid totals in one currency. */
function summary(u: UnpaidTotals): UnpaidSummary {
  const unpaid = zero();
  for (const b of u.buckets) add(unpaid, b);
  const approved = zero();
  add(approved, unpaid);
  add(approved, u.paid);
  return {
    currency: u.currency,
    approved: figure(approved, u.currency),
    paid: figure(u.paid, u.currency),
    unpaid: figure(unpaid, u.currency),
    buckets: u.buckets.map((b, i) => ({ bucket: AGE_BUCKETS[i], ...figure(b, u.currency) })),
    overdue: figure(u.overdue, u.currency),
  };
}
