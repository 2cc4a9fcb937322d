// The back office at a glance: members, what the site owes them, recent orders (per status and
// per day) and the site's margin on them, pending payouts, unmatched and held orders, postbacks
// per network and outcome, the networks the intake watchdog finds stalled, what the networks still
// owe beside what members are owed (the orders' receivables read model) and their variances.
// Aggregate queries only, never rows;
// every total is summed and read exactly (src/db/values.ts exactSum), however large.
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { readSum, toInt } from '../../db/values.js';
import { formatAmount } from '../../money.js';
import type { AiOverviewBlock, AiUsage } from '../ai/index.js';
import type { LedgerLiabilities, Liability } from '../ledger/index.js';
import type { OrderReceivables, ReceivablesOverview } from '../orders/index.js';
import { POSTBACK_OUTCOMES, type PostbackOutcome } from '../postbacks/index.js';
import type { StalledNetwork, WatchdogStates } from '../watchdog/index.js';

export const ORDER_STATUSES_SHOWN = ['pending', 'approved', 'declined'] as const;

export interface OrderStatusSummary {
  status: string;
  currency: string;
  count: number;
  sale_amount: string;
  commission: string;
  /** Sum of the cashback stored on the orders. */
  cashback: string;
  /** Referral credits standing on the ledger for these orders (credits minus their reversals). */
  referral: string;
  /** commission − cashback − referral; null for declined orders (no commission is paid for them). */
  margin: string | null;
}

/** One day's orders in one currency (the same orders as `by_status`, grouped by the UTC day they were recorded). */
export interface OrderDaySummary {
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  currency: string;
  count: number;
  commission: string;
  cashback: string;
}

/** Postbacks one network sent in the window, real ones only (tests left out), per outcome. */
export interface PostbackNetworkSummary {
  network: string;
  accepted: number;
  duplicate: number;
  rejected: number;
  error: number;
}

export interface Overview {
  generated_at: string;
  currency: string;
  members: { total: number; with_balance: number };
  liabilities: Liability[];
  orders: { days: number; since: string; by_status: OrderStatusSummary[]; by_day: OrderDaySummary[] };
  payouts: { pending: { count: number; by_currency: { currency: string; count: number; amount: string }[] } };
  unmatched_orders: { count: number };
  /** Orders held for review (their claimed amounts are in no other total here). */
  held_orders: { count: number };
  /** Postbacks received in the window, per network (an aggregated refusal counts every postback it stands for). */
  postbacks: { by_network: PostbackNetworkSummary[] };
  /** Networks the intake watchdog finds stalled now (longest first), with why. */
  networks: { stalled: StalledNetwork[] };
  /** What each network still owes per currency and age (all time, not the window), beside the liabilities, and the variance counts. */
  receivables: ReceivablesOverview;
  /** AI generations in the window: calls by outcome, tokens (in all and per model), whether a provider is set. */
  ai?: AiOverviewBlock;
}

export interface OverviewServiceDeps {
  db: Database;
  clock: Clock;
  /** The site currency. */
  currency: string;
  /** The AI block over the same window: the AI domain's read model (the AI service owns its records). */
  ai: Pick<AiUsage, 'overview'>;
  /** The stalled networks: the watchdog's read model (the watchdog service owns its table). */
  watchdog: Pick<WatchdogStates, 'stalled'>;
  /** The members' balances per currency (the ledger's read model). */
  liabilities: Pick<LedgerLiabilities, 'byCurrency'>;
  /** What the networks still owe (the orders' read model). */
  receivables: Pick<OrderReceivables, 'overview'>;
}

const statusRank = (s: string) => {
  const i = (ORDER_STATUSES_SHOWN as readonly string[]).indexOf(s);
  return i < 0 ? ORDER_STATUSES_SHOWN.length : i;
};

interface OrderTotals {
  key: [string, string];
  count: number;
  sale: bigint;
  commission: bigint;
  cashback: bigint;
}

/** The order groups summed again under a coarser key (exactly: the sums are big integers). */
function totalsBy(rows: Record<string, unknown>[], keyOf: (r: Record<string, unknown>) => [string, string]): Map<string, OrderTotals> {
  const out = new Map<string, OrderTotals>();
  for (const r of rows) {
    const key = keyOf(r);
    const id = key.join('/');
    const t = out.get(id) ?? { key, count: 0, sale: 0n, commission: 0n, cashback: 0n };
    t.count += toInt(r.n);
    t.sale += readSum(r, 'sale_amount');
    t.commission += readSum(r, 'commission');
    t.cashback += readSum(r, 'cashback');
    out.set(id, t);
  }
  return out;
}

/** Computes the overview with one aggregate query per section. */
export class OverviewService {
  constructor(private readonly deps: OverviewServiceDeps) {}

  async get(options: { days?: number } = {}): Promise<Overview> {
    const db = this.deps.db;
    const now = this.deps.clock.now();
    const days = options.days ?? 30;
    const since = new Date(now.getTime() - days * 86_400_000);
    const sum = (expr: string, alias: string) => db.exactSum(expr, alias);
    const [members, liabilities, orders, referrals, payouts, unmatched, held, postbacks, receivables] = await Promise.all([
      db.select<Record<string, unknown>>(
        `SELECT (SELECT COUNT(*) FROM users WHERE role = 'member') AS total,
                (SELECT COUNT(DISTINCT b.member_id) FROM balances b JOIN users u ON u.id = b.member_id WHERE u.role = 'member' AND b.available <> 0) AS with_balance`,
      ),
      this.deps.liabilities.byCurrency(),
      db.select<Record<string, unknown>>(
        // One pass over the window's orders, grouped by day, status and currency; both views are
        // summed from it below, so the days add up to the statuses. Held orders are claims nobody
        // has accepted: they stay out of the margins.
        `SELECT ${db.dayOf('created_at')} AS day, status, currency, COUNT(*) AS n, ${sum('sale_amount', 'sale_amount')}, ${sum('commission', 'commission')}, ${sum('cashback', 'cashback')}
         FROM orders WHERE created_at >= ? AND (review IS NULL OR review <> 'held') GROUP BY ${db.dayOf('created_at')}, status, currency`,
        [since],
      ),
      db.select<Record<string, unknown>>(
        `SELECT o.status, o.currency, ${sum('e.amount', 'referral')}
         FROM orders o JOIN ledger_entries e ON e.order_id = o.id LEFT JOIN ledger_entries x ON x.id = e.reverses_id
         WHERE o.created_at >= ? AND e.currency = o.currency AND (e.type = 'referral' OR (e.type = 'reversal' AND x.type = 'referral'))
         GROUP BY o.status, o.currency`,
        [since],
      ),
      db.select<Record<string, unknown>>(
        `SELECT currency, COUNT(*) AS n, ${sum('amount', 'amount')} FROM payouts WHERE status = 'pending' GROUP BY currency ORDER BY currency`,
      ),
      db.select<Record<string, unknown>>('SELECT COUNT(*) AS n FROM orders WHERE member_id IS NULL'),
      db.select<Record<string, unknown>>("SELECT COUNT(*) AS n FROM orders WHERE review = 'held'"),
      db.select<Record<string, unknown>>(
        `SELECT network, outcome, SUM(repeat_count) AS n FROM postbacks WHERE received_at >= ? AND test = ? GROUP BY network, outcome`,
        [since, false],
      ),
      this.deps.receivables.overview(),
    ]);
    const ai = await this.deps.ai.overview(days);
    const stalled = await this.deps.watchdog.stalled();

    const referralBy = new Map(referrals.map((r) => [`${String(r.status)}/${String(r.currency)}`, readSum(r, 'referral')]));
    const perStatus = totalsBy(orders, (r) => [String(r.status), String(r.currency)]);
    const byStatus: OrderStatusSummary[] = [...perStatus.values()]
      .map(({ key: [status, currency], count, sale, commission, cashback }) => {
        const referral = referralBy.get(`${status}/${currency}`) ?? 0n;
        return {
          status,
          currency,
          count,
          sale_amount: formatAmount(sale, currency),
          commission: formatAmount(commission, currency),
          cashback: formatAmount(cashback, currency),
          referral: formatAmount(referral, currency),
          margin: status === 'declined' ? null : formatAmount(commission - cashback - referral, currency),
        };
      })
      .sort((a, b) => statusRank(a.status) - statusRank(b.status) || a.status.localeCompare(b.status) || a.currency.localeCompare(b.currency));

    const perDay = totalsBy(orders, (r) => [String(r.day), String(r.currency)]);
    const byDay: OrderDaySummary[] = [...perDay.values()]
      .map(({ key: [day, currency], count, commission, cashback }) => ({
        day,
        currency,
        count,
        commission: formatAmount(commission, currency),
        cashback: formatAmount(cashback, currency),
      }))
      .sort((a, b) => a.day.localeCompare(b.day) || a.currency.localeCompare(b.currency));

    const networks = new Map<string, PostbackNetworkSummary>();
    for (const r of postbacks) {
      const network = String(r.network);
      const row = networks.get(network) ?? { network, accepted: 0, duplicate: 0, rejected: 0, error: 0 };
      const outcome = String(r.outcome);
      if ((POSTBACK_OUTCOMES as readonly string[]).includes(outcome)) row[outcome as PostbackOutcome] += toInt(r.n);
      networks.set(network, row);
    }

    const pendingPayouts = payouts.map((r) => ({
      currency: String(r.currency),
      count: toInt(r.n),
      amount: formatAmount(readSum(r, 'amount'), String(r.currency)),
    }));
    return {
      generated_at: now.toISOString(),
      currency: this.deps.currency,
      members: { total: toInt(members[0].total), with_balance: toInt(members[0].with_balance) },
      liabilities,
      orders: { days, since: since.toISOString(), by_status: byStatus, by_day: byDay },
      payouts: { pending: { count: pendingPayouts.reduce((n, p) => n + p.count, 0), by_currency: pendingPayouts } },
      unmatched_orders: { count: toInt(unmatched[0].n) },
      held_orders: { count: toInt(held[0].n) },
      postbacks: { by_network: [...networks.values()].sort((a, b) => a.network.localeCompare(b.network)) },
      networks: { stalled },
      receivables,
      ...(ai ? { ai } : {}),
    };
  }
}
