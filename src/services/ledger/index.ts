// The member ledger: append-only entries and a balance row per member and currency, changed in
// one transaction by a guarded UPDATE, so balance == sum(entries) under any concurrency. Row
// shapes are in rows.ts, batch balance moves in balances.ts, the audit in verify.ts.
import { ListWhere, orderClause, pageClause, valuesOf, type OneOrMany } from '../../db/lists.js';
import type { Transaction } from '../../db/transaction.js';
import type { Clock } from '../../clock.js';
import { Database } from '../../db/database.js';
import { isUniqueViolation } from '../../db/errors.js';
import { toInt } from '../../db/values.js';
import { ServiceError } from '../../errors.js';
import { currencyExponent, formatAmount, parseAmount, toMinor } from '../../money.js';
import { HOOKS } from '../../hooks/index.js';
import type { WebhookEvents } from '../webhooks/index.js';
import type { Once } from '../idempotency/index.js';
import type { LogService } from '../logs/index.js';
import { postCredits, movePending } from './balances.js';
import {
  BALANCE_COLUMNS,
  RETURNED_BALANCE_COLUMNS,
  checkBounded,
  EARNED,
  ENTRY_COLUMNS,
  ENTRY_FROM,
  PAYOUT_OWNED,
  shapeBalance,
  shapeEntry,
  toEntryRow,
  type Balance,
  type Discrepancy,
  type Entry,
  type EntryRow,
  type EntryType,
  type MemberBalance,
  type PostInput,
} from './rows.js';
import { verifyLedger } from './verify.js';
import { eraseEntryNotes, memberBalances, memberEntries, positiveBalances, writeOffEntries, writeOffInput } from './erasure.js';
import type { Replacement } from '../../db/erasure.js';

export * from './rows.js';
export { LedgerLiabilities, type Liability } from './liabilities.js';

export interface LedgerServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  /** The outbox: entry_posted goes to webhooks in the entry's transaction, to hooks after commit. */
  events: WebhookEvents;
  currency: string;
}

/** The fields `GET /ledger/entries` sorts by, and the column each is. */
export const ENTRY_ORDERBY = { id: 'e.id', created_at: 'e.created_at', amount: 'e.amount', type: 'e.type' } as const;
export type EntryOrderby = keyof typeof ENTRY_ORDERBY;

/** What `GET /ledger/entries` and `cashtrack ledger entries` ask for: one member's entries. */
export interface EntryFilters {
  member_id: number;
  type?: OneOrMany<EntryType>;
  type_exclude?: OneOrMany<EntryType>;
  currency?: OneOrMany<string>;
  after?: Date;
  before?: Date;
  /** Default id (newest first). */
  orderby?: EntryOrderby;
  order?: 'asc' | 'desc';
  page: number;
  per_page: number;
}

/** The filters of the entry list without paging and sort; an export may leave out the member (every member's entries). */
export type EntryWhere = Omit<EntryFilters, 'member_id' | 'orderby' | 'order' | 'page' | 'per_page'> & { member_id?: number };

function entryWhere(filters: EntryWhere): ListWhere {
  for (const c of valuesOf(filters.currency)) currencyExponent(c);
  return new ListWhere()
    .eq('e.member_id', filters.member_id)
    .anyOf('e.type', filters.type)
    .noneOf('e.type', filters.type_exclude)
    .anyOf('e.currency', filters.currency)
    .after('e.created_at', filters.after)
    .before('e.created_at', filters.before);
}

export interface MemberFilters {
  member_id?: number;
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
      const rows = await this.deps.db.select<{ member_id: unknown; currency: unknown }>(
        `SELECT member_id, currency FROM balances WHERE member_id IN (${chunk.map(() => '?').join(', ')})`,
        chunk,
      );
      for (const r of rows) wanted.delete(`${toInt(r.member_id)}\0${String(r.currency)}`);
    }
    if (wanted.size === 0) return;
    // In (member, currency) order, as every writer of several rows takes them.
    const missing = [...wanted.values()].sort((a, b) => a.memberId - b.memberId || (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0));
    await this.deps.db.transaction(async (t) => {
      for (const m of missing) await this.ensureBalance(m.memberId, m.currency, t);
    });
  }

  /** The (member, currency) balance rows known to exist: a balance row is never deleted. At most this many are kept. */
  private readonly knownBalances = new Set<string>();
  private static readonly KNOWN_BALANCES_MAX = 100_000;

  /**
   * Before a write joins its group: checks the member and makes its balance row (ensureBalances),
   * unless this process has seen the row, which is what a busy member costs: nothing. Inside a
   * group on MariaDB, two first entries of a member in two groups would deadlock on the gap
   * locks (see ensureBalances).
   */
  private async prepareBalance(memberId: number, currency: string): Promise<void> {
    const key = `${memberId}\0${currency}`;
    if (this.knownBalances.has(key)) return;
    await this.requireMember(memberId);
    await this.ensureBalances([{ memberId, currency }]);
    if (this.knownBalances.size >= LedgerService.KNOWN_BALANCES_MAX) this.knownBalances.clear();
    this.knownBalances.add(key);
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
   * unless `allowNegative`; an unknown member is 404 svc_member_not_found.
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
    const update = `UPDATE ${balanceRow} SET available = available + ?, lifetime_earned = lifetime_earned + ?, lifetime_paid = lifetime_paid + ?, last_entry_at = ? WHERE member_id = ? AND currency = ?${guard}`;
    // The moved row comes back with the UPDATE where the database can say it (SQLite's RETURNING;
    // MariaDB 10.11 has none for UPDATE): on SQLite's one writer every statement is a round trip
    // through a driver thread and the event loop, so one fewer per entry is one fewer in the group's chain.
    const move = async (): Promise<{ affected: number; moved?: Record<string, unknown> }> => {
      if (db.dialect !== 'sqlite') return db.execute(update, params, t);
      const rows = await db.select<Record<string, unknown>>(`${update} RETURNING ${RETURNED_BALANCE_COLUMNS}`, params, t);
      return { affected: rows.length, moved: rows[0] };
    };
    // The guarded UPDATE first: on the usual path the row exists and this is the only lock taken.
    let { affected, moved } = await move();
    const readBalance = async () =>
      (
        await db.select<Record<string, unknown>>(
          `SELECT ${BALANCE_COLUMNS} FROM balances b WHERE b.member_id = ? AND b.currency = ?`,
          [input.memberId, input.currency],
          t,
        )
      )[0];
    let balance = moved ?? (await readBalance());
    // No row: first, is there such a member? (A balance row says so: its foreign key keeps the
    // member, which spares the callers that check inside the transaction a read per entry.)
    if (!balance) await this.requireMember(input.memberId, t);
    // No row: a guarded debit is refused below as it is (nothing to debit, and no empty row is
    // made for it). Otherwise the row is made here when the caller did not make it beforehand
    // (ensureBalances): correct, but prone to deadlock (retried) when first entries race.
    if (affected !== 1 && !balance && !guard) {
      await this.ensureBalance(input.memberId, input.currency, t);
      ({ affected, moved } = await move());
      balance = moved ?? (await readBalance());
    }
    if (balance) checkBounded(balance, input.memberId, input.currency);
    if (affected !== 1) {
      const available = toMinor(balance?.available);
      throw new ServiceError(
        'svc_insufficient_funds',
        `The member's available balance (${formatAmount(available, input.currency)} ${input.currency}) does not cover ${formatAmount(-input.amount, input.currency)}.`,
        409,
        {
          available: formatAmount(available, input.currency),
          currency: input.currency,
        },
      );
    }
    const balanceAfter = toMinor(balance.available);
    const sourceId = input.sourceId === null || input.sourceId === undefined ? null : String(input.sourceId);
    const { insertId } = await db.execute(
      'INSERT INTO ledger_entries (member_id, currency, type, amount, balance_after, source_type, source_id, order_id, reverses_id, note, actor, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [
        input.memberId,
        input.currency,
        input.type,
        input.amount,
        balanceAfter,
        input.sourceType,
        sourceId,
        input.orderId ?? null,
        input.reversesId ?? null,
        input.note ?? null,
        input.actor,
        now,
      ],
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
    // In the entry's transaction: its webhooks are sent, and its hook fires, only once the money has really moved.
    await this.deps.events.emit(t, HOOKS.ledgerEntryPosted, shapeEntry(row));
    return { row, balance: shapeBalance(balance) };
  }

  /**
   * Appends many credits (a batch of orders' cashback and referral shares) inside the caller's
   * transaction: each balance moves once, by the sum of its entries (see postCredits).
   */
  async postMany(inputs: PostInput[], t: Transaction): Promise<EntryRow[]> {
    return postCredits(this.deps, inputs, t);
  }

  /** Moves the pending balance (cashback of pending orders) inside the caller's transaction. */
  async addPending(memberId: number, currency: string, delta: number, t: Transaction): Promise<void> {
    await this.addPendingMany([{ memberId, currency, delta }], t);
  }

  /**
   * Moves many pending balances at once (a batch of orders), creating missing balance rows (see
   * movePending).
   */
  async addPendingMany(moves: { memberId: number; currency: string; delta: number }[], t: Transaction): Promise<void> {
    await movePending(this.deps.db, moves, t);
  }

  /** Reads one entry (locked on MariaDB when inside a transaction). */
  async entryRow(id: number, t?: Transaction): Promise<EntryRow | null> {
    const [row] = await this.deps.db.select<Record<string, unknown>>(
      `SELECT ${ENTRY_COLUMNS} FROM ${ENTRY_FROM} WHERE e.id = ?${t ? this.deps.db.forUpdate() : ''}`,
      [id],
      t,
    );
    return row ? toEntryRow(row) : null;
  }

  /**
   * Posts the reversal of entry `id` inside the caller's transaction: 404 unknown, 409 for a payout
   * entry, a reversal, or an entry already reversed. May take the balance negative (shown, not hidden).
   */
  async reverseWithin(id: number, note: string | null, actor: string, t: Transaction): Promise<{ reversal: EntryRow; original: EntryRow }> {
    const original = await this.entryRow(id, t);
    if (!original) throw new ServiceError('svc_entry_not_found', `Ledger entry ${id} not found.`, 404);
    if (PAYOUT_OWNED.includes(original.type))
      throw new ServiceError('svc_reverse_payout', 'A payout entry cannot be reversed; cancel the payout instead.', 409);
    if (original.type === 'reversal') throw new ServiceError('svc_reverse_reversal', 'A reversal cannot itself be reversed.', 409);
    if (original.reversed_by !== null)
      throw new ServiceError('svc_already_reversed', `Ledger entry ${id} was already reversed by entry ${original.reversed_by}.`, 409, {
        reversed_by: original.reversed_by,
      });
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
    const [row] = await this.deps.db.select<Record<string, unknown>>(
      `SELECT ${BALANCE_COLUMNS} FROM balances b WHERE b.member_id = ? AND b.currency = ?`,
      [memberId, currency],
      t,
    );
    return row
      ? shapeBalance(row)
      : shapeBalance({ member_id: memberId, currency, available: 0, pending: 0, lifetime_earned: 0, lifetime_paid: 0, last_entry_at: null });
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
      // A debit that cannot go negative needs no row: without one it is refused.
      if (input.type === 'credit' || input.allow_negative === true) await this.prepareBalance(input.member_id, currency);
      const result = await this.deps.db.grouped(async (t) => {
        await once?.claim?.(t);
        const { row, balance } = await this.postWithBalance(
          {
            memberId: input.member_id,
            currency,
            type: 'adjustment',
            amount: input.type === 'credit' ? minor : -minor,
            sourceType: 'adjustment',
            note,
            actor,
            allowNegative: input.allow_negative === true,
          },
          t,
        );
        const result = { entry: shapeEntry(row), balance };
        await once?.record(result, t);
        return result;
      });
      this.deps.logger.info('ledger', `Adjustment posted: ${input.type}`, {
        entry_id: result.entry.id,
        member_id: input.member_id,
        amount: result.entry.amount,
        currency,
        actor,
      });
      return result;
    } catch (err) {
      if (err instanceof ServiceError)
        this.deps.logger.warning('ledger', 'Adjustment refused', {
          code: err.code,
          member_id: input.member_id,
          type: input.type,
          amount: String(input.amount).slice(0, 40),
          currency,
          actor,
        });
      throw err;
    }
  }

  /** Reverses one entry (in a group of money writes, see src/db/group-commit.ts). */
  async reverse(
    id: number,
    note: string | null,
    actor: string,
    once?: Once<{ reversal: Entry; original: Entry }>,
  ): Promise<{ reversal: Entry; original: Entry }> {
    try {
      const result = await this.deps.db.grouped(async (t) => {
        await once?.claim?.(t);
        const { reversal, original } = await this.reverseWithin(id, note?.trim() || null, actor, t);
        const shaped = { reversal: shapeEntry(reversal), original: shapeEntry(original) };
        await once?.record(shaped, t);
        return shaped;
      });
      this.deps.logger.info('ledger', 'Entry reversed', {
        entry_id: id,
        reversal_id: result.reversal.id,
        member_id: result.original.member_id,
        amount: result.reversal.amount,
        actor,
      });
      return result;
    } catch (err) {
      if (err instanceof ServiceError) this.deps.logger.warning('ledger', 'Reversal refused', { code: err.code, entry_id: id, actor });
      throw err;
    }
  }

  /** 404 svc_member_not_found unless member `memberId` exists (inside `t` when given). */
  async requireMember(memberId: number, t?: Transaction): Promise<void> {
    const [row] = await this.deps.db.select('SELECT id FROM users WHERE id = ?', [memberId], t);
    if (!row) throw new ServiceError('svc_member_not_found', `Member ${memberId} not found.`, 404);
  }

  /** Balances per member and currency, with the member's names; filtered, ordered, paged. */
  async listMembers(filters: MemberFilters): Promise<{ items: MemberBalance[]; total: number }> {
    const { where, params } = this.balanceWhere(filters);
    const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const direction = (filters.order ?? (filters.orderby === 'name' ? 'asc' : 'desc')) === 'asc' ? 'ASC' : 'DESC';
    const orderColumn = { available: 'b.available', pending: 'b.pending', name: 'u.display_name', last_entry_at: 'b.last_entry_at' }[
      filters.orderby ?? 'available'
    ];
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

  /**
   * The next `limit` balances of the member list's filters after the key `after` (member id, then
   * currency), in key order: the keyset walk of an export, one chunk at a time.
   */
  async listMembersAfter(
    filters: Omit<MemberFilters, 'page' | 'per_page' | 'orderby' | 'order'>,
    after: { member_id: number; currency: string } | null,
    limit: number,
  ): Promise<MemberBalance[]> {
    const { where, params } = this.balanceWhere(filters);
    if (after) where.push('(b.member_id > ? OR (b.member_id = ? AND b.currency > ?))'), params.push(after.member_id, after.member_id, after.currency);
    const rows = await this.deps.db.select<Record<string, unknown>>(
      `SELECT ${BALANCE_COLUMNS}, u.login, u.display_name, u.email FROM balances b JOIN users u ON u.id = b.member_id
       ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY b.member_id, b.currency LIMIT ${Math.max(1, Math.floor(limit))}`,
      params,
    );
    return rows.map((r) => ({ ...shapeBalance(r), login: String(r.login), display_name: String(r.display_name), email: String(r.email) }));
  }

  private balanceWhere(filters: Omit<MemberFilters, 'page' | 'per_page' | 'orderby' | 'order'>): { where: string[]; params: unknown[] } {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filters.member_id !== undefined) where.push('b.member_id = ?'), params.push(filters.member_id);
    if (filters.currency) currencyExponent(filters.currency), where.push('b.currency = ?'), params.push(filters.currency);
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
    return { where, params };
  }

  /** One member's entries, newest first unless `orderby`/`order` say otherwise. */
  async listEntries(filters: EntryFilters): Promise<{ items: Entry[]; total: number }> {
    await this.requireMember(filters.member_id);
    const where = entryWhere(filters);
    const order = orderClause(ENTRY_ORDERBY, filters, 'e.id', { orderby: 'id', order: 'desc' });
    const [rows, count] = await Promise.all([
      this.deps.db.select<Record<string, unknown>>(`SELECT ${ENTRY_COLUMNS} FROM ${ENTRY_FROM} ${where.sql} ${order} ${pageClause(filters)}`, where.params),
      this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ledger_entries e ${where.sql}`, where.params),
    ]);
    return { items: rows.map((r) => shapeEntry(toEntryRow(r))), total: toInt(count[0].n) };
  }

  /**
   * The next `limit` entries of the entry list's filters after id `afterId`, in id order (every
   * member's when `member_id` is absent): the keyset walk of an export, one chunk at a time.
   */
  async listEntriesAfter(filters: EntryWhere, afterId: number, limit: number): Promise<Entry[]> {
    if (filters.member_id !== undefined && afterId === 0) await this.requireMember(filters.member_id);
    const where = entryWhere(filters).add('e.id > ?', afterId);
    const rows = await this.deps.db.select<Record<string, unknown>>(
      `SELECT ${ENTRY_COLUMNS} FROM ${ENTRY_FROM} ${where.sql} ORDER BY e.id LIMIT ${Math.max(1, Math.floor(limit))}`,
      where.params,
    );
    return rows.map((r) => shapeEntry(toEntryRow(r)));
  }

  async getEntry(id: number): Promise<Entry> {
    const row = await this.entryRow(id);
    if (!row) throw new ServiceError('svc_entry_not_found', `Ledger entry ${id} not found.`, 404);
    return shapeEntry(row);
  }

  /** A member's balance rows, every currency (their data export). */
  balancesOfMember(memberId: number, t?: Transaction): Promise<Balance[]> {
    return memberBalances(this.deps.db, memberId, t);
  }

  /** Every entry of a member, oldest first, read page by page (their data export). */
  entriesOfMember(memberId: number): AsyncGenerator<Entry> {
    return memberEntries(this.deps.db, memberId);
  }

  /** The currencies with a positive available balance for the member, locked in `t` (what an erasure refuses or writes off). */
  positiveBalances(memberId: number, t: Transaction): Promise<{ currency: string; available: number }[]> {
    return positiveBalances(this.deps.db, memberId, t);
  }

  /**
   * At a forced erasure: writes off every positive available balance of the member in `t`, each
   * by an `adjustment` entry with source `erasure` and a note starting "Written off at erasure".
   */
  async writeOffAtErasure(memberId: number, note: string, actor: string, t: Transaction): Promise<Entry[]> {
    const out: Entry[] = [];
    for (const balance of await positiveBalances(this.deps.db, memberId, t)) {
      const row = await this.post(writeOffInput(memberId, balance, note, actor), t);
      out.push(shapeEntry(row));
    }
    return out;
  }

  /** The write-off entries of a member's erasure (what a repeated erase answers). */
  writeOffsOf(memberId: number, t?: Transaction): Promise<Entry[]> {
    return writeOffEntries(this.deps.db, memberId, t);
  }

  /** At an erasure: the member's words replaced in their entries' notes (amounts untouched). */
  eraseMember(memberId: number, replacements: readonly Replacement[], t: Transaction): Promise<number> {
    return eraseEntryNotes(this.deps.db, memberId, replacements, t);
  }

  /**
   * Recomputes every balance from the entries (and pending from the orders) and checks every
   * invariant. Returns every discrepancy; an empty list means the ledger is sound.
   */
  async verify(): Promise<Discrepancy[]> {
    return verifyLedger(this.deps.db);
  }
}
