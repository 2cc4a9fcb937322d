// Batch balance moves: many (member, currency) rows moved at once, each once by the sum of its
// moves, in (member, currency) order so concurrent batches lock them in one order.
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { Transaction } from '../../db/transaction.js';
import { toInt } from '../../db/values.js';
import { ServiceError } from '../../errors.js';
import { HOOKS } from '../../hooks/index.js';
import type { WebhookEvents } from '../webhooks/index.js';
import { currencyExponent, MAX_BALANCE, toMinor } from '../../money.js';
import { EARNED, overflow, shapeEntry, type EntryRow, type PostInput } from './rows.js';

export interface CreditDeps {
  db: Database;
  clock: Clock;
  events: WebhookEvents;
}

/**
 * Appends many credits (a batch of orders' cashback and referral shares) inside the caller's
 * transaction: each (member, currency) balance moves once, by the sum of its entries, and the
 * entries are written with one statement, in order, each with the balance after it. Only
 * earned credits (cashback, referral): a debit needs the guarded UPDATE of `post`.
 */
export async function postCredits(deps: CreditDeps, inputs: PostInput[], t: Transaction): Promise<EntryRow[]> {
  if (inputs.length === 0) return [];
  const db = deps.db;
  const now = deps.clock.now();
  const groups = new Map<string, { memberId: number; currency: string; available: number; earned: number; entries: number[] }>();
  inputs.forEach((input, i) => {
    if (!Number.isSafeInteger(input.amount) || input.amount <= 0 || !EARNED.includes(input.type))
      throw new ServiceError('svc_invalid_amount', 'postMany takes cashback and referral credits only.', 400);
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
  await moveBalances(
    db,
    moves.map((m) => ({ memberId: m.memberId, currency: m.currency, add: { available: m.available, lifetime_earned: m.earned } })),
    { last_entry_at: now },
    t,
  );
  const memberIds = [...new Set(moves.map((m) => m.memberId))];
  const balances = await db.select<{ member_id: unknown; currency: string; available: unknown }>(
    `SELECT member_id, currency, available FROM balances WHERE member_id IN (${memberIds.map(() => '?').join(', ')})`,
    memberIds,
    t,
  );
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
  const rows = inputs.map(
    (input, i): EntryRow => ({
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
    }),
  );
  const ids = await db.insertMany(
    'ledger_entries',
    ['member_id', 'currency', 'type', 'amount', 'balance_after', 'source_type', 'source_id', 'order_id', 'reverses_id', 'note', 'actor', 'created_at'],
    rows.map((r) => [r.member_id, r.currency, r.type, r.amount, r.balance_after, r.source_type, r.source_id, r.order_id, null, r.note, r.actor, now]),
    t,
  );
  rows.forEach((r, i) => {
    r.id = ids[i];
  });
  await deps.events.emitMany(
    t,
    rows.map((r) => [HOOKS.ledgerEntryPosted, shapeEntry(r)]),
  );
  return rows;
}

/**
 * Moves many pending balances at once (a batch of orders), creating missing balance rows. The
 * rows are written in (member, currency) order, so concurrent batches lock them in one order.
 */
export async function movePending(db: Database, moves: { memberId: number; currency: string; delta: number }[], t: Transaction): Promise<void> {
  const sums = new Map<string, { memberId: number; currency: string; delta: number }>();
  for (const m of moves) {
    const key = `${m.memberId}\0${m.currency}`;
    const sum = sums.get(key);
    if (sum) sum.delta += m.delta;
    else sums.set(key, { ...m });
  }
  // A sum a JS number cannot hold exactly is past any balance anyway.
  for (const m of sums.values()) if (!Number.isSafeInteger(m.delta)) throw overflow(m.memberId, m.currency);
  await moveBalances(
    db,
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
async function moveBalances(
  db: Database,
  moves: { memberId: number; currency: string; add: Record<string, number> }[],
  set: Record<string, unknown>,
  t: Transaction,
): Promise<void> {
  if (moves.length === 0) return;
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
