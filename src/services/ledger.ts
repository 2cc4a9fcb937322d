// The member ledger: append-only entries and a balance row per member and currency, changed in
// one transaction by a guarded UPDATE, so balance == sum(entries) under any concurrency.
import type { Transaction } from '../db/transaction.js';
import type { Clock } from '../clock.js';
import { Database } from '../db/database.js';
import { isUniqueViolation } from '../db/errors.js';
import { toDate, toInt, toIso } from '../db/values.js';
import { ServiceError } from '../errors.js';
import { currencyExponent, formatAmount, MAX_BALANCE, parseAmount, toExactMinor, toMinor } from '../money.js';
import { HOOKS, type HookBus } from '../hooks/index.js';
import type { Once } from './idempotency.js';
import type { LogService } from './logs.js';
import type { UserService } from './users.js';

export const ENTRY_TYPES = ['cashback', 'referral', 'adjustment', 'payout', 'payout_return', 'reversal'] as const;
export type EntryType = (typeof ENTRY_TYPES)[number];
export const SOURCE_TYPES = ['order', 'payout', 'referral', 'adjustment', 'reversal'] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

/** Entries whose amounts count as earned (and their reversals); payouts count as paid. */
const EARNED: readonly string[] = ['cashback', 'referral'];
/** Entries that only their payout may change. */
const PAYOUT_OWNED: readonly string[] = ['payout', 'payout_return'];

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

export interface LedgerServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  users: UserService;
  hooks: HookBus;
  currency: string;
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

function shapeBalance(row: Record<string, unknown>): Balance {
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

const BALANCE_COLUMNS = 'b.member_id, b.currency, b.available, b.pending, b.lifetime_earned, b.lifetime_paid, b.last_entry_at';

/** The balance columns a move may change; each stays within ±MAX_BALANCE. */
const BOUNDED = ['available', 'pending', 'lifetime_earned', 'lifetime_paid'] as const;

function overflow(memberId: number, currency: string): ServiceError {
  return new ServiceError('svc_amount_overflow', `The balance of member ${memberId} in ${currency} would pass the largest amount cashtrack keeps exactly; nothing was posted.`, 409, { member_id: memberId, currency });
}

/**
 * Refuses a balance row a move took out of range (the caller's transaction then rolls back). Read
 * exactly: past 2^53 a number is no longer exact, and SQLite turns a sum past 2^63 into a float.
 */
function checkBounded(row: Record<string, unknown>, memberId: number, currency: string): void {
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

export interface MemberFilters {
  search?: string;
  currency?: string;
  min_balance?: string;
  orderby?: 'available' | 'pending' | 'name' | 'last_entry_at';
  order?: 'asc' | 'desc';
  page: number;
  per_page: number;
}

/** Posts, reverses and reads ledger entries and balances. */
export class LedgerService {
  constructor(private readonly deps: LedgerServiceDeps) {}

  get currency(): string {
    return this.deps.currency;
  }

  /** Makes sure the (member, currency) balance row exists, counting the rows as they are made. */
  async ensureBalance(memberId: number, currency: string, t: Transaction): Promise<void> {
    const { affected } = await this.deps.db.execute(this.deps.db.insertIgnore('balances', ['member_id', 'currency']), [memberId, currency], t);
    if (affected === 1) await this.deps.db.execute("UPDATE counters SET value = value + 1 WHERE name = 'balances'", [], t);
  }

  /**
   * Makes the missing (member, currency) balance rows in a short transaction of their own, before
   * the transaction that moves them. Call it outside any transaction. Why: a member's first entry
   * made inside its own transaction finds no row (on MariaDB the guarded UPDATE then holds a gap
   * lock) and inserts one; two first entries at once each wait for the other's gap lock and
   * deadlock, again on every retry. With the row made beforehand they queue on its record lock.
   */
  async ensureBalances(pairs: { memberId: number; currency: string }[]): Promise<void> {
    const wanted = new Map(pairs.map((p) => [`${p.memberId}\0${p.currency}`, p]));
    if (wanted.size === 0) return;
    const memberIds = [...new Set(pairs.map((p) => p.memberId))];
    for (let i = 0; i < memberIds.length; i += 500) {
      const chunk = memberIds.slice(i, i + 500);
      const rows = await this.deps.db.select<{ member_id: unknown; currency: unknown }>(`SELECT member_id, currency FROM balances WHERE member_id IN (${chunk.map(() => '?').join(', ')})`, chunk);
      for (const r of rows) wanted.delete(`${toInt(r.member_id)}\0${String(r.currency)}`);
    }
    if (wanted.size === 0) return;
    // In (member, currency) order, as every writer of several rows takes them.
    const missing = [...wanted.values()].sort((a, b) => a.memberId - b.memberId || (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));
    await this.deps.db.transaction(async (t) => {
      for (const m of missing) await this.ensureBalance(m.memberId, m.currency, t);
    });
  }

  /**
   * Takes the (member, currency) balance row's write lock up front (MariaDB; a SQLite write
   * transaction is already exclusive). Callers that read other rows before posting use it so that
   * concurrent writers queue on the lock instead of deadlocking on ensureBalance's shared lock.
   */
  async lockBalance(memberId: number, currency: string, t: Transaction): Promise<void> {
    if (!this.deps.db.rowLocks) return;
    await this.deps.db.select(`SELECT available FROM balances WHERE member_id = ? AND currency = ?${this.deps.db.forUpdate()}`, [memberId, currency], t);
  }

  /**
   * Appends one entry and moves the balance with it, inside the caller's transaction. A debit that
   * would take `available` below zero is refused by the UPDATE itself (409 svc_insufficient_funds)
   * unless `allowNegative`.
   */
  async post(input: PostInput, t: Transaction): Promise<EntryRow> {
    return (await this.postWithBalance(input, t)).row;
  }

  /** `post`, also answering the balance row after the entry (one read fewer for callers that show it). */
  async postWithBalance(input: PostInput, t: Transaction): Promise<{ row: EntryRow; balance: Balance }> {
    const db = this.deps.db;
    if (!Number.isSafeInteger(input.amount) || input.amount === 0) throw new ServiceError('svc_invalid_amount', 'An entry needs a non-zero amount.', 400);
    currencyExponent(input.currency);
    const earned = EARNED.includes(input.type) || (input.type === 'reversal' && EARNED.includes(input.reversedType ?? '')) ? input.amount : 0;
    const paid = input.type === 'payout' || input.type === 'payout_return' ? -input.amount : 0;
    const now = this.deps.clock.now();
    const guard = input.amount < 0 && !input.allowNegative ? ' AND available + ? >= 0' : '';
    const params: unknown[] = [input.amount, earned, paid, now, input.memberId, input.currency];
    if (guard) params.push(input.amount);
    // The primary key, named: on a small table MariaDB reads (currency, available) instead, whose
    // gap locks make concurrent moves of one row deadlock (the first entries of a new site).
    const balanceRow = db.indexHint('balances', 'FORCE INDEX (PRIMARY)');
    const move = () =>
      db.execute(
        `UPDATE ${balanceRow} SET available = available + ?, lifetime_earned = lifetime_earned + ?, lifetime_paid = lifetime_paid + ?, last_entry_at = ? WHERE member_id = ? AND currency = ?${guard}`,
        params,
        t,
      );
    // The guarded UPDATE first: on the usual path the row exists and this is the only lock taken.
    let { affected } = await move();
    const readBalance = async () =>
      (await db.select<Record<string, unknown>>(`SELECT ${BALANCE_COLUMNS} FROM balances b WHERE b.member_id = ? AND b.currency = ?`, [input.memberId, input.currency], t))[0];
    let balance = await readBalance();
    // No row: a guarded debit is refused below as it is (nothing to debit, and no empty row is
    // made for it). Otherwise the row is made here when the caller did not make it beforehand
    // (ensureBalances): correct, but prone to deadlock (retried) when first entries race.
    if (affected !== 1 && !balance && !guard) {
      await this.ensureBalance(input.memberId, input.currency, t);
      ({ affected } = await move());
      balance = await readBalance();
    }
    if (balance) checkBounded(balance, input.memberId, input.currency);
    if (affected !== 1) {
      const available = toMinor(balance?.available);
      throw new ServiceError('svc_insufficient_funds', `The member's available balance (${formatAmount(available, input.currency)} ${input.currency}) does not cover ${formatAmount(-input.amount, input.currency)}.`, 409, {
        available: formatAmount(available, input.currency),
        currency: input.currency,
      });
    }
    const balanceAfter = toMinor(balance.available);
    const sourceId = input.sourceId === null || input.sourceId === undefined ? null : String(input.sourceId);
    const { insertId } = await db.execute(
      'INSERT INTO ledger_entries (member_id, currency, type, amount, balance_after, source_type, source_id, order_id, reverses_id, note, actor, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [input.memberId, input.currency, input.type, input.amount, balanceAfter, input.sourceType, sourceId, input.orderId ?? null, input.reversesId ?? null, input.note ?? null, input.actor, now],
      t,
    );
    const row: EntryRow = {
      id: insertId!,
      member_id: input.memberId,
      currency: input.currency,
      type: input.type,
      amount: input.amount,
      balance_after: balanceAfter,
      source_type: input.sourceType,
      source_id: sourceId,
      order_id: input.orderId ?? null,
      reverses_id: input.reversesId ?? null,
      reversed_by: null,
      note: input.note ?? null,
      actor: input.actor,
      created_at: now,
    };
    // Only once the money has really moved: never for a transaction that rolls back or is retried.
    t.afterCommit(() => this.deps.hooks.doAction(HOOKS.ledgerEntryPosted, shapeEntry(row)));
    return { row, balance: shapeBalance(balance) };
  }

  /**
   * Appends many credits (a batch of orders' cashback and referral shares) inside the caller's
   * transaction: each (member, currency) balance moves once, by the sum of its entries, and the
   * entries are written with one statement, in order, each with the balance after it. Only
   * earned credits (cashback, referral): a debit needs the guarded UPDATE of `post`.
   */
  async postMany(inputs: PostInput[], t: Transaction): Promise<EntryRow[]> {
    if (inputs.length === 0) return [];
    const db = this.deps.db;
    const now = this.deps.clock.now();
    const groups = new Map<string, { memberId: number; currency: string; available: number; earned: number; entries: number[] }>();
    inputs.forEach((input, i) => {
      if (!Number.isSafeInteger(input.amount) || input.amount <= 0 || !EARNED.includes(input.type)) throw new ServiceError('svc_invalid_amount', 'postMany takes cashback and referral credits only.', 400);
      currencyExponent(input.currency);
      const key = `${input.memberId}\0${input.currency}`;
      const group = groups.get(key) ?? { memberId: input.memberId, currency: input.currency, available: 0, earned: 0, entries: [] };
      group.available += input.amount;
      group.earned += input.amount;
      group.entries.push(i);
      groups.set(key, group);
    });
    const moves = [...groups.values()];
    for (const m of moves) if (!Number.isSafeInteger(m.available)) throw overflow(m.memberId, m.currency);
    await this.moveBalances(moves.map((m) => ({ memberId: m.memberId, currency: m.currency, add: { available: m.available, lifetime_earned: m.earned } })), { last_entry_at: now }, t);
    const memberIds = [...new Set(moves.map((m) => m.memberId))];
    const balances = await db.select<{ member_id: unknown; currency: string; available: unknown }>(`SELECT member_id, currency, available FROM balances WHERE member_id IN (${memberIds.map(() => '?').join(', ')})`, memberIds, t);
    // Each entry's balance after it: the balance now, less the entries after it.
    const after = new Array<number>(inputs.length);
    for (const b of balances) {
      const group = groups.get(`${toInt(b.member_id)}\0${String(b.currency)}`);
      if (!group) continue;
      let balance = toMinor(b.available);
      for (let k = group.entries.length - 1; k >= 0; k--) {
        after[group.entries[k]] = balance;
        balance -= inputs[group.entries[k]].amount;
      }
    }
    const rows = inputs.map((input, i): EntryRow => ({
      id: 0,
      member_id: input.memberId,
      currency: input.currency,
      type: input.type,
      amount: input.amount,
      balance_after: after[i],
      source_type: input.sourceType,
      source_id: input.sourceId === null || input.sourceId === undefined ? null : String(input.sourceId),
      order_id: input.orderId ?? null,
      reverses_id: null,
      reversed_by: null,
      note: input.note ?? null,
      actor: input.actor,
      created_at: now,
    }));
    const ids = await db.insertMany(
      'ledger_entries',
      ['member_id', 'currency', 'type', 'amount', 'balance_after', 'source_type', 'source_id', 'order_id', 'reverses_id', 'note', 'actor', 'created_at'],
      rows.map((r) => [r.member_id, r.currency, r.type, r.amount, r.balance_after, r.source_type, r.source_id, r.order_id, null, r.note, r.actor, now]),
      t,
    );
    rows.forEach((r, i) => (r.id = ids[i]));
    for (const r of rows) t.afterCommit(() => this.deps.hooks.doAction(HOOKS.ledgerEntryPosted, shapeEntry(r)));
    return rows;
  }

  /** Moves the pending balance (cashback of pending orders) inside the caller's transaction. */
  async addPending(memberId: number, currency: string, delta: number, t: Transaction): Promise<void> {
    await this.addPendingMany([{ memberId, currency, delta }], t);
  }

  /**
   * Moves many pending balances at once (a batch of orders), creating missing balance rows. The
   * rows are written in (member, currency) order, so concurrent batches lock them in one order.
   */
  async addPendingMany(moves: { memberId: number; currency: string; delta: number }[], t: Transaction): Promise<void> {
    const sums = new Map<string, { memberId: number; currency: string; delta: number }>();
    for (const m of moves) {
      const key = `${m.memberId}\0${m.currency}`;
      const sum = sums.get(key);
      if (sum) sum.delta += m.delta;
      else sums.set(key, { ...m });
    }
    // A sum a JS number cannot hold exactly is past any balance anyway.
    for (const m of sums.values()) if (!Number.isSafeInteger(m.delta)) throw overflow(m.memberId, m.currency);
    await this.moveBalances(
      [...sums.values()].filter((m) => m.delta !== 0).map((m) => ({ memberId: m.memberId, currency: m.currency, add: { pending: m.delta } })),
      {},
      t,
    );
  }

  /**
   * Adds to columns of many (member, currency) balance rows, creating the missing ones (and
   * counting them), in (member, currency) order so concurrent batches lock them in one order.
   * Every row must change (a non-zero amount to add): MariaDB's count of changed rows tells the
   * created ones apart.
   */
  private async moveBalances(moves: { memberId: number; currency: string; add: Record<string, number> }[], set: Record<string, unknown>, t: Transaction): Promise<void> {
    if (moves.length === 0) return;
    const db = this.deps.db;
    const sorted = [...moves].sort((a, b) => a.memberId - b.memberId || (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));
    const added = Object.keys(moves[0].add);
    const setColumns = Object.keys(set);
    for (let i = 0; i < sorted.length; i += 500) {
      const chunk = sorted.slice(i, i + 500);
      const created = await db.addToRows(
        'balances',
        ['member_id', 'currency'],
        added,
        setColumns,
        chunk.map((m) => ({ key: [m.memberId, m.currency], add: added.map((c) => m.add[c]), set: setColumns.map((c) => set[c]) })),
        t,
      );
      if (created > 0) await db.execute("UPDATE counters SET value = value + ? WHERE name = 'balances'", [created], t);
      // A row moved out of range refuses the whole move (the caller's transaction rolls back).
      const memberIds = [...new Set(chunk.map((m) => m.memberId))];
      const [out] = await db.select<Record<string, unknown>>(
        `SELECT member_id, currency FROM balances WHERE member_id IN (${memberIds.map(() => '?').join(', ')}) AND (${added.map((c) => `${c} > ? OR ${c} < ?`).join(' OR ')}) LIMIT 1`,
        [...memberIds, ...added.flatMap(() => [MAX_BALANCE, -MAX_BALANCE])],
        t,
      );
      if (out) throw overflow(toInt(out.member_id), String(out.currency));
    }
  }

  /** Reads one entry (locked on MariaDB when inside a transaction). */
  async entryRow(id: number, t?: Transaction): Promise<EntryRow | null> {
    const [row] = await this.deps.db.select<Record<string, unknown>>(`SELECT ${ENTRY_COLUMNS} FROM ${ENTRY_FROM} WHERE e.id = ?${t ? this.deps.db.forUpdate() : ''}`, [id], t);
    return row ? toEntryRow(row) : null;
  }

  /**
   * Posts the reversal of entry `id` inside the caller's transaction: 404 unknown, 409 for a payout
   * entry, a reversal, or an entry already reversed. May take the balance negative (shown, not hidden).
   */
  async reverseWithin(id: number, note: string | null, actor: string, t: Transaction): Promise<{ reversal: EntryRow; original: EntryRow }> {
    const original = await this.entryRow(id, t);
    if (!original) throw new ServiceError('svc_entry_not_found', `Ledger entry ${id} not found.`, 404);
    if (PAYOUT_OWNED.includes(original.type)) throw new ServiceError('svc_reverse_payout', 'A payout entry cannot be reversed; cancel the payout instead.', 409);
    if (original.type === 'reversal') throw new ServiceError('svc_reverse_reversal', 'A reversal cannot itself be reversed.', 409);
    if (original.reversed_by !== null) throw new ServiceError('svc_already_reversed', `Ledger entry ${id} was already reversed by entry ${original.reversed_by}.`, 409, { reversed_by: original.reversed_by });
    try {
      const reversal = await this.post(
        {
          memberId: original.member_id,
          currency: original.currency,
          type: 'reversal',
          amount: -original.amount,
          sourceType: 'reversal',
          sourceId: original.id,
          orderId: original.order_id,
          reversesId: original.id,
          reversedType: original.type,
          note,
          actor,
          allowNegative: true,
        },
        t,
      );
      return { reversal, original: { ...original, reversed_by: reversal.id } };
    } catch (err) {
      // The unique key on reverses_id is the last word when two reversals race.
      if (isUniqueViolation(err)) throw new ServiceError('svc_already_reversed', `Ledger entry ${id} was already reversed.`, 409);
      throw err;
    }
  }

  async balanceOf(memberId: number, currency: string, t?: Transaction): Promise<Balance> {
    const [row] = await this.deps.db.select<Record<string, unknown>>(`SELECT ${BALANCE_COLUMNS} FROM balances b WHERE b.member_id = ? AND b.currency = ?`, [memberId, currency], t);
    return row ? shapeBalance(row) : shapeBalance({ member_id: memberId, currency, available: 0, pending: 0, lifetime_earned: 0, lifetime_paid: 0, last_entry_at: null });
  }

  /** An administrator's credit or debit. The note (who and why) is required. */
  async adjust(
    input: { member_id: number; type: 'credit' | 'debit'; amount: string; currency?: string; note: string; allow_negative?: boolean },
    actor: string,
    once?: Once<{ entry: Entry; balance: Balance }>,
  ): Promise<{ entry: Entry; balance: Balance }> {
    const currency = input.currency ?? this.deps.currency;
    const note = typeof input.note === 'string' ? input.note.trim() : '';
    try {
      if (!note) throw new ServiceError('svc_note_required', 'An adjustment needs a note saying who asked for it and why.', 400);
      const minor = parseAmount(input.amount, currency);
      await this.requireMember(input.member_id);
      // A debit that cannot go negative needs no row: without one it is refused.
      if (input.type === 'credit' || input.allow_negative === true) await this.ensureBalances([{ memberId: input.member_id, currency }]);
      const result = await this.deps.db.transaction(async (t) => {
        await once?.claim?.(t);
        const { row, balance } = await this.postWithBalance(
          { memberId: input.member_id, currency, type: 'adjustment', amount: input.type === 'credit' ? minor : -minor, sourceType: 'adjustment', note, actor, allowNegative: input.allow_negative === true },
          t,
        );
        const result = { entry: shapeEntry(row), balance };
        await once?.record(result, t);
        return result;
      });
      this.deps.logger.info('ledger', `Adjustment posted: ${input.type}`, { entry_id: result.entry.id, member_id: input.member_id, amount: result.entry.amount, currency, actor });
      return result;
    } catch (err) {
      if (err instanceof ServiceError) this.deps.logger.warning('ledger', 'Adjustment refused', { code: err.code, member_id: input.member_id, type: input.type, amount: String(input.amount).slice(0, 40), currency, actor });
      throw err;
    }
  }

  /** Reverses one entry (its own transaction). */
  async reverse(id: number, note: string | null, actor: string, once?: Once<{ reversal: Entry; original: Entry }>): Promise<{ reversal: Entry; original: Entry }> {
    try {
      const result = await this.deps.db.transaction(async (t) => {
        await once?.claim?.(t);
        const { reversal, original } = await this.reverseWithin(id, note?.trim() || null, actor, t);
        const shaped = { reversal: shapeEntry(reversal), original: shapeEntry(original) };
        await once?.record(shaped, t);
        return shaped;
      });
      this.deps.logger.info('ledger', 'Entry reversed', { entry_id: id, reversal_id: result.reversal.id, member_id: result.original.member_id, amount: result.reversal.amount, actor });
      return result;
    } catch (err) {
      if (err instanceof ServiceError) this.deps.logger.warning('ledger', 'Reversal refused', { code: err.code, entry_id: id, actor });
      throw err;
    }
  }

  async requireMember(memberId: number): Promise<void> {
    if (!(await this.deps.users.get(memberId))) throw new ServiceError('svc_member_not_found', `Member ${memberId} not found.`, 404);
  }

  /** Balances per member and currency, with the member's names; filtered, ordered, paged. */
  async listMembers(filters: MemberFilters): Promise<{ items: MemberBalance[]; total: number }> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filters.currency) (currencyExponent(filters.currency), where.push('b.currency = ?'), params.push(filters.currency));
    if (filters.min_balance !== undefined) {
      const min = parseAmount(filters.min_balance, filters.currency ?? this.deps.currency, { allowNegative: true, allowZero: true, field: 'min_balance' });
      where.push('b.available >= ?');
      params.push(min);
    }
    if (filters.search) {
      const like = Database.likePrefix(filters.search.trim());
      // Matching users first (three index range scans), then their balances.
      where.push(
        `b.member_id IN (SELECT id FROM users WHERE login LIKE ? ESCAPE '!' UNION SELECT id FROM users WHERE email LIKE ? ESCAPE '!' UNION SELECT id FROM users WHERE display_name LIKE ? ESCAPE '!')`,
      );
      params.push(like, like, like);
    }
    const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const direction = (filters.order ?? (filters.orderby === 'name' ? 'asc' : 'desc')) === 'asc' ? 'ASC' : 'DESC';
    const orderColumn = { available: 'b.available', pending: 'b.pending', name: 'u.display_name', last_entry_at: 'b.last_entry_at' }[filters.orderby ?? 'available'];
    const offset = (filters.page - 1) * filters.per_page;
    const [rows, count] = await Promise.all([
      this.deps.db.select<Record<string, unknown>>(
        `SELECT ${BALANCE_COLUMNS}, u.login, u.display_name, u.email FROM balances b JOIN users u ON u.id = b.member_id ${clause}
         ORDER BY ${orderColumn} ${direction}, b.member_id ${direction}, b.currency ${direction} LIMIT ${filters.per_page} OFFSET ${offset}`,
        params,
      ),
      // Unfiltered, the running total of balance rows (kept by ensureBalance) instead of a count.
      where.length
        ? this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM balances b ${clause}`, params)
        : this.deps.db.select<{ n: unknown }>("SELECT value AS n FROM counters WHERE name = 'balances'"),
    ]);
    return {
      items: rows.map((r) => ({ ...shapeBalance(r), login: String(r.login), display_name: String(r.display_name), email: String(r.email) })),
      total: toInt(count[0].n),
    };
  }

  /** One member's entries, newest first. */
  async listEntries(filters: { member_id: number; type?: EntryType; currency?: string; page: number; per_page: number }): Promise<{ items: Entry[]; total: number }> {
    await this.requireMember(filters.member_id);
    const where = ['e.member_id = ?'];
    const params: unknown[] = [filters.member_id];
    if (filters.type) (where.push('e.type = ?'), params.push(filters.type));
    if (filters.currency) (where.push('e.currency = ?'), params.push(filters.currency));
    const clause = `WHERE ${where.join(' AND ')}`;
    const offset = (filters.page - 1) * filters.per_page;
    const [rows, count] = await Promise.all([
      this.deps.db.select<Record<string, unknown>>(`SELECT ${ENTRY_COLUMNS} FROM ${ENTRY_FROM} ${clause} ORDER BY e.id DESC LIMIT ${filters.per_page} OFFSET ${offset}`, params),
      this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ledger_entries e ${clause}`, params),
    ]);
    return { items: rows.map((r) => shapeEntry(toEntryRow(r))), total: toInt(count[0].n) };
  }

  async getEntry(id: number): Promise<Entry> {
    const row = await this.entryRow(id);
    if (!row) throw new ServiceError('svc_entry_not_found', `Ledger entry ${id} not found.`, 404);
    return shapeEntry(row);
  }

  /**
   * Recomputes every balance from the entries (and pending from the orders) and checks every
   * invariant. Returns every discrepancy; an empty list means the ledger is sound.
   */
  async verify(): Promise<Discrepancy[]> {
    const db = this.deps.db;
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
      if (!same(r.available, r.total)) out.push({ kind: 'balance_mismatch', ...base, expected: fmt(r.total, c), actual: fmt(r.available, c), detail: 'available differs from the sum of the entries' });
      if (!same(r.lifetime_earned, r.earned)) out.push({ kind: 'earned_mismatch', ...base, expected: fmt(r.earned, c), actual: fmt(r.lifetime_earned, c), detail: 'lifetime_earned differs from the entries' });
      if (!same(r.lifetime_paid, r.paid)) out.push({ kind: 'paid_mismatch', ...base, expected: fmt(r.paid, c), actual: fmt(r.lifetime_paid, c), detail: 'lifetime_paid differs from the entries' });
    }
    const orphans = await db.select<Record<string, unknown>>(
      'SELECT e.member_id, e.currency, SUM(e.amount) AS total FROM ledger_entries e LEFT JOIN balances b ON b.member_id = e.member_id AND b.currency = e.currency WHERE b.member_id IS NULL GROUP BY e.member_id, e.currency',
    );
    for (const r of orphans) out.push({ kind: 'missing_balance', member_id: toInt(r.member_id), currency: String(r.currency), expected: fmt(r.total, String(r.currency)), detail: 'entries without a balance row' });
    const chain = await db.select<Record<string, unknown>>(
      `SELECT id, member_id, currency, balance_after, running FROM (
         SELECT id, member_id, currency, balance_after, SUM(amount) OVER (PARTITION BY member_id, currency ORDER BY id) AS running FROM ledger_entries
       ) x WHERE balance_after <> running`,
    );
    for (const r of chain) out.push({ kind: 'balance_after_mismatch', entry_id: toInt(r.id), member_id: toInt(r.member_id), currency: String(r.currency), expected: fmt(r.running, String(r.currency)), actual: fmt(r.balance_after, String(r.currency)), detail: 'balance_after differs from the running sum' });
    const badReversals = await db.select<Record<string, unknown>>(
      `SELECT e.id, e.reverses_id, o.type AS original_type, e.amount, o.amount AS original_amount, e.member_id, o.member_id AS original_member, e.currency, o.currency AS original_currency
       FROM ledger_entries e LEFT JOIN ledger_entries o ON o.id = e.reverses_id
       WHERE e.type = 'reversal' AND (o.id IS NULL OR o.type IN ('payout', 'payout_return', 'reversal') OR e.amount <> -o.amount OR e.member_id <> o.member_id OR e.currency <> o.currency)`,
    );
    for (const r of badReversals) {
      const why = r.original_type === null || r.original_type === undefined ? 'reverses no existing entry' : PAYOUT_OWNED.includes(String(r.original_type)) ? 'reverses a payout entry' : r.original_type === 'reversal' ? 'reverses a reversal' : 'does not mirror the entry it reverses';
      out.push({ kind: 'invalid_reversal', entry_id: toInt(r.id), member_id: toInt(r.member_id), detail: `reversal ${why}` });
    }
    const twice = await db.select<Record<string, unknown>>("SELECT reverses_id, COUNT(*) AS n FROM ledger_entries WHERE reverses_id IS NOT NULL GROUP BY reverses_id HAVING COUNT(*) > 1");
    for (const r of twice) out.push({ kind: 'reversed_twice', entry_id: toInt(r.reverses_id), detail: `reversed ${toInt(r.n)} times` });
    const strayReversal = await db.select<Record<string, unknown>>("SELECT id FROM ledger_entries WHERE (type = 'reversal') <> (reverses_id IS NOT NULL)");
    for (const r of strayReversal) out.push({ kind: 'invalid_reversal', entry_id: toInt(r.id), detail: 'reversal type and reverses_id disagree' });
    const [counted] = await db.select<Record<string, unknown>>("SELECT (SELECT value FROM counters WHERE name = 'balances') AS kept, (SELECT COUNT(*) FROM balances) AS actual");
    if (toInt(counted.kept ?? 0) !== toInt(counted.actual)) out.push({ kind: 'balance_count_mismatch', expected: String(toInt(counted.actual)), actual: String(toInt(counted.kept ?? 0)), detail: 'the running count of balance rows differs from the table' });
    // Orders held for review count nowhere until they are released.
    const pending = await db.select<Record<string, unknown>>(
      `SELECT b.member_id, b.currency, b.pending, COALESCE(p.total, 0) AS total FROM balances b LEFT JOIN (
         SELECT member_id, currency, SUM(cashback) AS total FROM orders WHERE status = 'pending' AND member_id IS NOT NULL AND (review IS NULL OR review <> 'held') GROUP BY member_id, currency
       ) p ON p.member_id = b.member_id AND p.currency = b.currency WHERE b.pending <> COALESCE(p.total, 0)`,
    );
    for (const r of pending) out.push({ kind: 'pending_mismatch', member_id: toInt(r.member_id), currency: String(r.currency), expected: fmt(r.total, String(r.currency)), actual: fmt(r.pending, String(r.currency)), detail: 'pending differs from the cashback of pending orders' });
    return out;
  }
}
