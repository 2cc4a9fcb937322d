// What an order's status means for its member's ledger: pending cashback counts in `pending`,
// approval posts the cashback credit and the referrer's share, a decline after approval reverses
// them. An order held for review means nothing at all until it is released (then `enter`).
// Under a network's `cashback_payable: on_network_payment` an approved order the network has not
// paid yet keeps its cashback in `pending` ("awaiting payment"); the network's payment
// (payments.ts, `paid`) then posts the credits. Whether an approved order is awaiting payment is
// read from the ledger, not from the policy (which may change meanwhile): an approved order with
// cashback and a member that never had a cashback entry. So the credit is posted exactly once,
// whichever comes first and whatever the policy says by then.
// Always inside the caller's transaction, with the order row locked.
import type { Transaction } from '../../db/transaction.js';
import type { Database } from '../../db/database.js';
import { toInt } from '../../db/values.js';
import { ServiceError } from '../../errors.js';
import { applyRate, parsePercent, type Rate } from '../../money.js';
import type { LedgerService, PostInput } from '../ledger/index.js';
import type { OrderRow } from './store.js';
import type { OrderStatus } from './states.js';
import type { ReferralService } from '../referrals/index.js';
import { PAYABLE_SETTING, type NetworkService, type PayablePolicy } from '../networks/index.js';

export const orderLabel = (row: { network: string; transaction_id: string }) => `${row.network}:${row.transaction_id}`;
export const withNote = (text: string, note: string | null | undefined) => (note ? `${text}: ${note}` : text).slice(0, 500);

export interface OrderEffectsDeps {
  db: Database;
  ledger: LedgerService;
  referrals: ReferralService;
  /** `referrals.share_percent`. */
  referralShare: string;
  /** The networks' stored `cashback_payable`. */
  networks: Pick<NetworkService, 'storedSetting'>;
  /** `networks` from the configuration (their `cashback_payable`, under the stored setting). */
  configured?: Record<string, Record<string, string>>;
}

/**
 * Posts and reverses an order's credits and moves its pending cashback. Pending moves are
 * gathered per transaction and written together by `settle` (a batch of orders moves each
 * member's pending balance once); the caller settles before its transaction ends.
 */
export class OrderEffects {
  private share: Rate | null = null;
  private readonly credits = new WeakMap<Transaction, { row: OrderRow; actor: string; note: string | null; into: Record<string, unknown> }[]>();
  private readonly pendingMoves = new WeakMap<Transaction, { memberId: number; currency: string; delta: number }[]>();
  /** Each network's policy, read once per transaction. */
  private readonly policies = new WeakMap<Transaction, Map<string, PayablePolicy>>();

  constructor(private readonly deps: OrderEffectsDeps) {}

  private referralRate(): Rate {
    if (!this.share) {
      try {
        this.share = parsePercent(this.deps.referralShare, 'referrals.share_percent');
      } catch {
        throw new ServiceError(
          'svc_invalid_config',
          `Invalid configuration CASHTRACK_REFERRAL_SHARE_PERCENT (referrals.share_percent): must be a percentage from 0 to 100.`,
          500,
          { key: 'referrals.share_percent' },
        );
      }
    }
    return this.share;
  }

  /** Writes the pending moves gathered in `t` (call once every change of the transaction is applied). */
  async settle(t: Transaction): Promise<void> {
    await this.postCredits(t);
    const moves = this.pendingMoves.get(t);
    if (!moves) return;
    this.pendingMoves.delete(t);
    await this.deps.ledger.addPendingMany(moves, t);
  }

  private addPending(memberId: number, currency: string, delta: number, t: Transaction): void {
    if (delta === 0) return;
    const moves = this.pendingMoves.get(t);
    if (moves) moves.push({ memberId, currency, delta });
    else this.pendingMoves.set(t, [{ memberId, currency, delta }]);
  }

  /**
   * The ledger effects of an order's current status for its member: pending counts as pending,
   * approved is credited (when the transaction settles). What was posted is written into `into`.
   */
  async enter(row: OrderRow, actor: string, note: string | null, t: Transaction, into: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    if (row.member_id === null || row.review === 'held') return into;
    if (row.status === 'pending') this.addPending(row.member_id, row.currency, row.cashback, t);
    if (row.status === 'approved') await this.credit(row, actor, note, t, into);
    return into;
  }

  /** A pending order's cashback (or currency) was corrected: its member's `pending` follows. */
  async reprice(row: OrderRow, currency: string, cashback: number, t: Transaction): Promise<void> {
    if (row.member_id === null || row.review === 'held') return;
    if (currency === row.currency) return this.addPending(row.member_id, currency, cashback - row.cashback, t);
    this.addPending(row.member_id, row.currency, -row.cashback, t);
    this.addPending(row.member_id, currency, cashback, t);
  }

  /**
   * A pending order is being held for review: its cashback leaves its member's `pending` (the
   * only effect a pending order has; a settled order's amounts never change, so it is never held).
   */
  withdraw(row: OrderRow, t: Transaction): void {
    if (row.member_id === null || row.review === 'held' || row.status !== 'pending') return;
    this.addPending(row.member_id, row.currency, -row.cashback, t);
  }

  /** The ledger side of a status move (the caller checked that the rules allow it); effects go into `into`. */
  async move(
    row: OrderRow,
    from: OrderStatus,
    to: OrderStatus,
    actor: string,
    note: string | null,
    t: Transaction,
    into: Record<string, unknown> = {},
  ): Promise<Record<string, unknown>> {
    if (row.member_id === null || row.review === 'held') return into;
    if (from === 'pending') this.addPending(row.member_id, row.currency, -row.cashback, t);
    if (from === 'approved') {
      // Declined while awaiting the network's payment: its cashback leaves `pending`; nothing was credited.
      if (await this.awaitingPayment(row, t)) this.addPending(row.member_id, row.currency, -row.cashback, t);
      else into.reversed = await this.reverseCredits(row, actor, withNote(`Order ${orderLabel(row)} declined`, note), t);
    }
    if (to === 'approved') await this.credit(row, actor, note, t, into);
    return into;
  }

  /** The network's `cashback_payable` policy: stored setting, else configured, else on_approval. */
  async policy(network: string, t: Transaction): Promise<PayablePolicy> {
    let known = this.policies.get(t);
    if (!known) this.policies.set(t, (known = new Map()));
    let policy = known.get(network);
    if (!policy) {
      const text = (await this.deps.networks.storedSetting([network], PAYABLE_SETTING, t)).get(network) ?? this.deps.configured?.[network]?.[PAYABLE_SETTING];
      policy = text === 'on_network_payment' ? 'on_network_payment' : 'on_approval';
      known.set(network, policy);
    }
    return policy;
  }

  /**
   * An approved order whose cashback waits in `pending` for the network's payment: a member, not
   * held, cashback above 0, and no cashback entry ever posted for it (a locking read on MariaDB).
   */
  async awaitingPayment(row: OrderRow, t: Transaction): Promise<boolean> {
    if (row.status !== 'approved' || row.member_id === null || row.review === 'held' || row.cashback <= 0) return false;
    await this.postCredits(t);
    const [entry] = await this.deps.db.select<{ id: unknown }>(
      `SELECT id FROM ledger_entries WHERE order_id = ? AND type = 'cashback' ORDER BY id LIMIT 1${this.deps.db.forUpdate()}`,
      [row.id],
      t,
    );
    return entry === undefined;
  }

  /**
   * The network paid an order (its row as it was before the payment was stamped): an approved
   * order awaiting payment has its cashback leave `pending` and its credits posted, once. Any
   * other order is unaffected (a pending one is credited on approval, as paid).
   */
  async paid(row: OrderRow, actor: string, note: string, t: Transaction, into: Record<string, unknown> = {}): Promise<boolean> {
    if (!(await this.awaitingPayment(row, t))) return false;
    this.addPending(row.member_id!, row.currency, -row.cashback, t);
    this.queueCredit(row, actor, note, t, into);
    return true;
  }

  /**
   * Queues the cashback credit and, for a member with a live referrer, the referral credit; they
   * are posted together by `settle` (or before any reversal in the same transaction), and their
   * entry ids written into `into` (`cashback_entry_id`, `referral_entry_id`).
   */
  private async credit(row: OrderRow, actor: string, note: string | null, t: Transaction, into: Record<string, unknown>): Promise<void> {
    if (row.member_id === null || row.cashback <= 0) return;
    if (row.network_paid_at === null && (await this.policy(row.network, t)) === 'on_network_payment') {
      // Approved, not paid by the network yet: the cashback stays pending until `paid`.
      this.addPending(row.member_id, row.currency, row.cashback, t);
      into.awaiting_network_payment = true;
      return;
    }
    this.queueCredit(row, actor, note, t, into);
  }

  private queueCredit(row: OrderRow, actor: string, note: string | null, t: Transaction, into: Record<string, unknown>): void {
    const credits = this.credits.get(t);
    if (credits) credits.push({ row, actor, note, into });
    else this.credits.set(t, [{ row, actor, note, into }]);
  }

  /** Posts the queued credits of `t`: one batch for every order and referrer. */
  private async postCredits(t: Transaction): Promise<void> {
    const credits = this.credits.get(t);
    if (!credits?.length) return;
    this.credits.delete(t);
    const referrals = await this.deps.referrals.liveReferralsOf([...new Set(credits.map((c) => c.row.member_id!))], t);
    const entries: PostInput[] = [];
    const owners: [Record<string, unknown>, string][] = [];
    for (const { row, actor, note, into } of credits) {
      entries.push({
        memberId: row.member_id!,
        currency: row.currency,
        type: 'cashback',
        amount: row.cashback,
        sourceType: 'order',
        sourceId: row.id,
        orderId: row.id,
        note: withNote(`Cashback for order ${orderLabel(row)}`, note),
        actor,
      });
      owners.push([into, 'cashback_entry_id']);
      const referral = referrals.get(row.member_id!);
      // The referrer's share comes out of the site's margin and never exceeds it.
      const share = referral ? Math.min(applyRate(row.cashback, this.referralRate()), Math.max(0, row.commission - row.cashback)) : 0;
      if (!referral || share <= 0) continue;
      entries.push({
        memberId: referral.referrer_id,
        currency: row.currency,
        type: 'referral',
        amount: share,
        sourceType: 'referral',
        sourceId: referral.id,
        orderId: row.id,
        note: withNote(`Referral share of order ${orderLabel(row)} of member ${row.member_id}`, note),
        actor,
      });
      owners.push([into, 'referral_entry_id']);
    }
    const posted = await this.deps.ledger.postMany(entries, t);
    posted.forEach((entry, i) => {
      owners[i][0][owners[i][1]] = entry.id;
    });
  }

  /**
   * Reverses the order's standing cashback and referral credits (those not reversed already, e.g.
   * by an administrator). A locking read on MariaDB, so a reversal committed meanwhile is seen.
   */
  async reverseCredits(row: OrderRow, actor: string, note: string, t: Transaction): Promise<number[]> {
    await this.postCredits(t);
    const standing = await this.deps.db.select<{ id: unknown }>(
      `SELECT e.id FROM ledger_entries e LEFT JOIN ledger_entries x ON x.reverses_id = e.id
       WHERE e.order_id = ? AND e.type IN ('cashback', 'referral') AND x.id IS NULL ORDER BY e.id${this.deps.db.forUpdate()}`,
      [row.id],
      t,
    );
    const reversed: number[] = [];
    for (const s of standing) reversed.push((await this.deps.ledger.reverseWithin(toInt(s.id), note, actor, t)).reversal.id);
    return reversed;
  }
}
