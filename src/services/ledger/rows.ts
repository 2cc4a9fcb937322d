// The ledger's rows and their shapes: entry and balance types, the columns they are read with, and
// the bounds a balance move must stay within.
import { toDate, toInt, toIso } from '../../db/values.js';
import { ServiceError } from '../../errors.js';
import { formatAmount, MAX_BALANCE, toExactMinor, toMinor } from '../../money.js';

export const ENTRY_TYPES = ['cashback', 'referral', 'adjustment', 'payout', 'payout_return', 'reversal'] as const;
export type EntryType = (typeof ENTRY_TYPES)[number];
export const SOURCE_TYPES = ['order', 'payout', 'referral', 'adjustment', 'reversal', 'erasure'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

/** Entries whose amounts count as earned (and their reversals); payouts count as paid. */
export const EARNED: readonly string[] = ['cashback', 'referral'];
/** Entries that only their payout may change. */
export const PAYOUT_OWNED: readonly string[] = ['payout', 'payout_return'];

export interface PostInput {
  memberId: number;
  currency: string;
  type: EntryType;
  /** Signed, in minor units. */
  amount: number;
  sourceType: SourceType;
  sourceId?: string | number | null;
  orderId?: number | null;
  reversesId?: number | null;
  /** For a reversal: the type of the entry it cancels (for the lifetime totals). */
  reversedType?: EntryType;
  note?: string | null;
  actor: string;
  /** A debit may take the balance below zero (reversals, administrators who say so). */
  allowNegative?: boolean;
}

export interface EntryRow {
  id: number;
  member_id: number;
  currency: string;
  type: EntryType;
  amount: number;
  balance_after: number;
  source_type: SourceType;
  source_id: string | null;
  order_id: number | null;
  reverses_id: number | null;
  reversed_by: number | null;
  note: string | null;
  actor: string;
  created_at: Date;
}

/** An entry as the API and CLI show it (decimal strings). */
export interface Entry {
  id: number;
  member_id: number;
  currency: string;
  type: EntryType;
  amount: string;
  balance_after: string;
  source: { type: SourceType; id: string | null };
  order_id: number | null;
  reverses_id: number | null;
  reversed_by: number | null;
  note: string | null;
  actor: string;
  created_at: string;
}

export interface Balance {
  member_id: number;
  currency: string;
  available: string;
  pending: string;
  lifetime_earned: string;
  lifetime_paid: string;
  last_entry_at: string | null;
}

export interface MemberBalance extends Balance {
  login: string;
  display_name: string;
  email: string;
}

export interface Discrepancy {
  kind: string;
  member_id?: number;
  currency?: string;
  entry_id?: number;
  expected?: string;
  actual?: string;
  detail: string;
}

export const ENTRY_COLUMNS =
  'e.id, e.member_id, e.currency, e.type, e.amount, e.balance_after, e.source_type, e.source_id, e.order_id, e.reverses_id, e.note, e.actor, e.created_at, r.id AS reversed_by';
export const ENTRY_FROM = 'ledger_entries e LEFT JOIN ledger_entries r ON r.reverses_id = e.id';

export function toEntryRow(row: Record<string, unknown>): EntryRow {
  return {
    id: toInt(row.id),
    member_id: toInt(row.member_id),
    currency: String(row.currency),
    type: row.type as EntryType,
    amount: toMinor(row.amount),
    balance_after: toMinor(row.balance_after),
    source_type: row.source_type as SourceType,
    source_id: row.source_id === null || row.source_id === undefined ? null : String(row.source_id),
    order_id: row.order_id === null || row.order_id === undefined ? null : toInt(row.order_id),
    reverses_id: row.reverses_id === null || row.reverses_id === undefined ? null : toInt(row.reverses_id),
    reversed_by: row.reversed_by === null || row.reversed_by === undefined ? null : toInt(row.reversed_by),
    note: (row.note as string | null) ?? null,
    actor: String(row.actor),
    created_at: toDate(row.created_at)!,
  };
}

export function shapeEntry(e: EntryRow): Entry {
  return {
    id: e.id,
    member_id: e.member_id,
    currency: e.currency,
    type: e.type,
    amount: formatAmount(e.amount, e.currency),
    balance_after: formatAmount(e.balance_after, e.currency),
    source: { type: e.source_type, id: e.source_id },
    order_id: e.order_id,
    reverses_id: e.reverses_id,
    reversed_by: e.reversed_by,
    note: e.note,
    actor: e.actor,
    created_at: e.created_at.toISOString(),
  };
}

export function shapeBalance(row: Record<string, unknown>): Balance {
  const currency = String(row.currency);
  return {
    member_id: toInt(row.member_id),
    currency,
    available: formatAmount(toMinor(row.available), currency),
    pending: formatAmount(toMinor(row.pending), currency),
    lifetime_earned: formatAmount(toMinor(row.lifetime_earned), currency),
    lifetime_paid: formatAmount(toMinor(row.lifetime_paid), currency),
    last_entry_at: toIso(row.last_entry_at),
  };
}

export const BALANCE_COLUMNS = 'b.member_id, b.currency, b.available, b.pending, b.lifetime_earned, b.lifetime_paid, b.last_entry_at';

/** The same columns as an UPDATE's RETURNING names them (SQLite allows no alias there). */
export const RETURNED_BALANCE_COLUMNS = BALANCE_COLUMNS.replaceAll('b.', '');

/** The balance columns a move may change; each stays within ±MAX_BALANCE. */
const BOUNDED = ['available', 'pending', 'lifetime_earned', 'lifetime_paid'] as const;

export function overflow(memberId: number, currency: string): ServiceError {
  return new ServiceError(
    'svc_amount_overflow',
    `The balance of member ${memberId} in ${currency} would pass the largest amount cashtrack keeps exactly; nothing was posted.`,
    409,
    { member_id: memberId, currency },
  );
}

/**
 * Refuses a balance row a move took out of range (the caller's transaction then rolls back). Read
 * exactly: past 2^53 a number is no longer exact, and SQLite turns a sum past 2^63 into a float.
 */
export function checkBounded(row: Record<string, unknown>, memberId: number, currency: string): void {
  for (const column of BOUNDED) {
    const value = row[column];
    if (value === undefined) continue;
    let exact: bigint;
    try {
      exact = toExactMinor(value);
    } catch {
      throw overflow(memberId, currency);
    }
    if (exact > BigInt(MAX_BALANCE) || exact < -BigInt(MAX_BALANCE)) throw overflow(memberId, currency);
  }
}
