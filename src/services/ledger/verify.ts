// The ledger's audit: every balance recomputed from the entries (and pending from the orders), and
// every invariant of entries and reversals checked, read exactly whatever the tables hold.
import type { Database } from '../../db/database.js';
import { toInt } from '../../db/values.js';
import { formatAmount, toExactMinor } from '../../money.js';
import { PAYOUT_OWNED, type Discrepancy } from './rows.js';

/**
 * Recomputes every balance from the entries (and pending from the orders) and checks every
 * invariant. Returns every discrepancy; an empty list means the ledger is sound.
 */
export async function verifyLedger(db: Database): Promise<Discrepancy[]> {
  const out: Discrepancy[] = [];
  // Exact reads: a broken ledger may hold anything, and the report must still say what.
  const fmt = (v: unknown, currency: string) => formatAmount(toExactMinor(v), currency);
  const same = (a: unknown, b: unknown) => toExactMinor(a) === toExactMinor(b);
  const sums = await db.select<Record<string, unknown>>(
    `SELECT b.member_id, b.currency, b.available, b.lifetime_earned, b.lifetime_paid,
            COALESCE(s.total, 0) AS total, COALESCE(s.earned, 0) AS earned, COALESCE(s.paid, 0) AS paid
     FROM balances b LEFT JOIN (
       SELECT e.member_id, e.currency, SUM(e.amount) AS total,
              SUM(CASE WHEN e.type IN ('cashback', 'referral') OR (e.type = 'reversal' AND o.type IN ('cashback', 'referral')) THEN e.amount ELSE 0 END) AS earned,
              SUM(CASE WHEN e.type IN ('payout', 'payout_return') THEN -e.amount ELSE 0 END) AS paid
       FROM ledger_entries e LEFT JOIN ledger_entries o ON o.id = e.reverses_id
       GROUP BY e.member_id, e.currency
     ) s ON s.member_id = b.member_id AND s.currency = b.currency
     WHERE b.available <> COALESCE(s.total, 0) OR b.lifetime_earned <> COALESCE(s.earned, 0) OR b.lifetime_paid <> COALESCE(s.paid, 0)`,
  );
  for (const r of sums) {
    const c = String(r.currency);
    const base = { member_id: toInt(r.member_id), currency: c };
    if (!same(r.available, r.total))
      out.push({
        kind: 'balance_mismatch',
        ...base,
        expected: fmt(r.total, c),
        actual: fmt(r.available, c),
        detail: 'available differs from the sum of the entries',
      });
    if (!same(r.lifetime_earned, r.earned))
      out.push({
        kind: 'earned_mismatch',
        ...base,
        expected: fmt(r.earned, c),
        actual: fmt(r.lifetime_earned, c),
        detail: 'lifetime_earned differs from the entries',
      });
    if (!same(r.lifetime_paid, r.paid))
      out.push({ kind: 'paid_mismatch', ...base, expected: fmt(r.paid, c), actual: fmt(r.lifetime_paid, c), detail: 'lifetime_paid differs from the entries' });
  }
  const orphans = await db.select<Record<string, unknown>>(
    'SELECT e.member_id, e.currency, SUM(e.amount) AS total FROM ledger_entries e LEFT JOIN balances b ON b.member_id = e.member_id AND b.currency = e.currency WHERE b.member_id IS NULL GROUP BY e.member_id, e.currency',
  );
  for (const r of orphans)
    out.push({
      kind: 'missing_balance',
      member_id: toInt(r.member_id),
      currency: String(r.currency),
      expected: fmt(r.total, String(r.currency)),
      detail: 'entries without a balance row',
    });
  const chain = await db.select<Record<string, unknown>>(
    `SELECT id, member_id, currency, balance_after, running FROM (
       SELECT id, member_id, currency, balance_after, SUM(amount) OVER (PARTITION BY member_id, currency ORDER BY id) AS running FROM ledger_entries
     ) x WHERE balance_after <> running`,
  );
  for (const r of chain)
    out.push({
      kind: 'balance_after_mismatch',
      entry_id: toInt(r.id),
      member_id: toInt(r.member_id),
      currency: String(r.currency),
      expected: fmt(r.running, String(r.currency)),
      actual: fmt(r.balance_after, String(r.currency)),
      detail: 'balance_after differs from the running sum',
    });
  const badReversals = await db.select<Record<string, unknown>>(
    `SELECT e.id, e.reverses_id, o.type AS original_type, e.amount, o.amount AS original_amount, e.member_id, o.member_id AS original_member, e.currency, o.currency AS original_currency
     FROM ledger_entries e LEFT JOIN ledger_entries o ON o.id = e.reverses_id
     WHERE e.type = 'reversal' AND (o.id IS NULL OR o.type IN ('payout', 'payout_return', 'reversal') OR e.amount <> -o.amount OR e.member_id <> o.member_id OR e.currency <> o.currency)`,
  );
  for (const r of badReversals) {
    const why =
      r.original_type === null || r.original_type === undefined
        ? 'reverses no existing entry'
        : PAYOUT_OWNED.includes(String(r.original_type))
          ? 'reverses a payout entry'
          : r.original_type === 'reversal'
            ? 'reverses a reversal'
            : 'does not mirror the entry it reverses';
    out.push({ kind: 'invalid_reversal', entry_id: toInt(r.id), member_id: toInt(r.member_id), detail: `reversal ${why}` });
  }
  const twice = await db.select<Record<string, unknown>>(
    'SELECT reverses_id, COUNT(*) AS n FROM ledger_entries WHERE reverses_id IS NOT NULL GROUP BY reverses_id HAVING COUNT(*) > 1',
  );
  for (const r of twice) out.push({ kind: 'reversed_twice', entry_id: toInt(r.reverses_id), detail: `reversed ${toInt(r.n)} times` });
  const strayReversal = await db.select<Record<string, unknown>>("SELECT id FROM ledger_entries WHERE (type = 'reversal') <> (reverses_id IS NOT NULL)");
  for (const r of strayReversal) out.push({ kind: 'invalid_reversal', entry_id: toInt(r.id), detail: 'reversal type and reverses_id disagree' });
  const [counted] = await db.select<Record<string, unknown>>(
    "SELECT (SELECT value FROM counters WHERE name = 'balances') AS kept, (SELECT COUNT(*) FROM balances) AS actual",
  );
  if (toInt(counted.kept ?? 0) !== toInt(counted.actual))
    out.push({
      kind: 'balance_count_mismatch',
      expected: String(toInt(counted.actual)),
      actual: String(toInt(counted.kept ?? 0)),
      detail: 'the running count of balance rows differs from the table',
    });
  // Orders held for review count nowhere until they are released.
  const pending = await db.select<Record<string, unknown>>(
    `SELECT b.member_id, b.currency, b.pending, COALESCE(p.total, 0) AS total FROM balances b LEFT JOIN (
       SELECT member_id, currency, SUM(cashback) AS total FROM orders WHERE status = 'pending' AND member_id IS NOT NULL AND (review IS NULL OR review <> 'held') GROUP BY member_id, currency
     ) p ON p.member_id = b.member_id AND p.currency = b.currency WHERE b.pending <> COALESCE(p.total, 0)`,
  );
  for (const r of pending)
    out.push({
      kind: 'pending_mismatch',
      member_id: toInt(r.member_id),
      currency: String(r.currency),
      expected: fmt(r.total, String(r.currency)),
      actual: fmt(r.pending, String(r.currency)),
      detail: 'pending differs from the cashback of pending orders',
    });
  return out;
}
