// A member's ledger at their erasure and in their data export: every entry and amount stays (so
// `ledger verify` holds and totals do not move); a positive balance left when an administrator
// forces the erasure is written off by an `adjustment` whose source is `erasure`, and the person's
// words are replaced in the entries' notes.
import type { Database } from '../../db/database.js';
import { replaceInColumns, walkRows, type Replacement } from '../../db/erasure.js';
import type { Transaction } from '../../db/transaction.js';
import { toMinor } from '../../money.js';
import { BALANCE_COLUMNS, ENTRY_COLUMNS, ENTRY_FROM, shapeBalance, shapeEntry, toEntryRow, type Balance, type Entry, type PostInput } from './rows.js';

/** The note of a write-off entry: it says what it is, whatever the administrator wrote. */
export function writeOffNote(note: string): string {
  return `Written off at erasure: ${note}`.slice(0, 500);
}

/** The member's balance rows (every currency), inside `t` when given. */
export async function memberBalances(db: Database, memberId: number, t?: Transaction): Promise<Balance[]> {
  const rows = await db.select<Record<string, unknown>>(`SELECT ${BALANCE_COLUMNS} FROM balances b WHERE b.member_id = ? ORDER BY b.currency`, [memberId], t);
  return rows.map(shapeBalance);
}

/** The currencies in which the member's available balance is above zero, with that amount in minor units (locked in `t`). */
export async function positiveBalances(db: Database, memberId: number, t: Transaction): Promise<{ currency: string; available: number }[]> {
  const rows = await db.select<Record<string, unknown>>(
    `SELECT currency, available FROM balances WHERE member_id = ? AND available > 0 ORDER BY currency${db.forUpdate()}`,
    [memberId],
    t,
  );
  return rows.map((r) => ({ currency: String(r.currency), available: toMinor(r.available) }));
}

/** The write-off entries of a member's erasure, oldest first (what a repeated erase answers). */
export async function writeOffEntries(db: Database, memberId: number, t?: Transaction): Promise<Entry[]> {
  const rows = await db.select<Record<string, unknown>>(
    `SELECT ${ENTRY_COLUMNS} FROM ${ENTRY_FROM} WHERE e.member_id = ? AND e.source_type = 'erasure' ORDER BY e.id`,
    [memberId],
    t,
  );
  return rows.map((r) => shapeEntry(toEntryRow(r)));
}

/** Every entry of a member, oldest first, read page by page. */
export async function* memberEntries(db: Database, memberId: number): AsyncGenerator<Entry> {
  for await (const row of walkRows(db, `SELECT ${ENTRY_COLUMNS} FROM ${ENTRY_FROM} WHERE e.member_id = ?`, [memberId], { column: 'e.id', field: 'id' })) {
    yield shapeEntry(toEntryRow(row));
  }
}

/** The write-off entry for one currency's positive balance. */
export function writeOffInput(memberId: number, balance: { currency: string; available: number }, note: string, actor: string): PostInput {
  return {
    memberId,
    currency: balance.currency,
    type: 'adjustment',
    amount: -balance.available,
    sourceType: 'erasure',
    sourceId: memberId,
    note: writeOffNote(note),
    actor,
  };
}

/**
 * Replaces the member's words in the notes of their entries and of the entries of their orders
 * (a referrer's share quotes the order's note), in `t`; answers how many entries changed.
 */
export function eraseEntryNotes(db: Database, memberId: number, replacements: readonly Replacement[], t: Transaction): Promise<number> {
  return replaceInColumns(
    db,
    t,
    {
      table: 'ledger_entries',
      key: 'id',
      columns: ['note'],
      where: '(member_id = ? OR order_id IN (SELECT id FROM orders WHERE member_id = ?))',
      params: [memberId, memberId],
    },
    replacements,
  );
}
