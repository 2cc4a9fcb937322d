// The claims table as stored and as shown: row decoding, the API shape (decimal strings, the
// member, the receipt's description), the insert, locked reads, the filtered list and its counts
// per status, and the reads the arrival of an order and the poll start from.
import { Database } from '../../db/database.js';
import { countByStatus, ListWhere, orderClause, pageClause, type StatusCounts } from '../../db/lists.js';
import { replaceInColumns, walkRows, type Replacement } from '../../db/erasure.js';
import type { Transaction } from '../../db/transaction.js';
import { toDate, toInt, toIso } from '../../db/values.js';
import { formatAmount, toMinor } from '../../money.js';
import type { CashbackRule } from '../../cashback-rule.js';
import { decodeRule } from '../cashback/index.js';
import { CLAIM_ORDERBY, type ClaimFilters, type ClaimWhere } from './schemas.js';
import { CLAIM_STATUSES, type ClaimStatus } from './states.js';

export interface ClaimRow {
  id: number;
  member_id: number;
  network: string;
  advertiser: string;
  order_ref: string;
  purchased_at: Date;
  amount: number;
  currency: string;
  note: string | null;
  receipt: string | null;
  click_id: string | null;
  status: ClaimStatus;
  reason: string | null;
  order_id: number | null;
  channel: 'api' | 'file' | null;
  network_ref: string | null;
  network_status: string | null;
  export_file: string | null;
  deadline_at: Date | null;
  warned_at: Date | null;
  submitted_at: Date | null;
  resolved_at: Date | null;
  checked_at: Date | null;
  actor: string;
  created_at: Date;
  updated_at: Date;
}

/** A claim as the API and the CLI show it. */
export interface Claim {
  id: number;
  member: { id: number; login: string; display_name: string };
  network: string;
  advertiser: string;
  order_ref: string;
  purchased_at: string;
  amount: string;
  currency: string;
  note: string | null;
  /** Whether a receipt image is on file (GET /claims/{id}/receipt serves it). */
  receipt: boolean;
  click_id: string | null;
  /** The click as evidence: when the member clicked and the cashback rule shown then; null when there is none or it was pruned. */
  click: { id: string; created_at: string; cashback_rule: CashbackRule | null } | null;
  status: ClaimStatus;
  reason: string | null;
  order_id: number | null;
  channel: 'api' | 'file' | null;
  network_ref: string | null;
  network_status: string | null;
  export_file: string | null;
  deadline_at: string | null;
  warned_at: string | null;
  submitted_at: string | null;
  resolved_at: string | null;
  checked_at: string | null;
  actor: string;
  created_at: string;
  updated_at: string;
}

const COLUMNS =
  'c.id, c.member_id, c.network, c.advertiser, c.order_ref, c.purchased_at, c.amount, c.currency, c.note, c.receipt, c.click_id, c.status, c.reason, c.order_id, c.channel, c.network_ref, c.network_status, c.export_file, c.deadline_at, c.warned_at, c.submitted_at, c.resolved_at, c.checked_at, c.actor, c.created_at, c.updated_at';

/** The claim's click as evidence (read for display: the clicks domain writes them; a pruned click reads as none). */
const SHOWN = `${COLUMNS}, u.login AS member_login, u.display_name AS member_display_name, k.id AS click_found, k.created_at AS click_created_at, k.cashback_rule AS click_cashback_rule`;
const CLICK_JOIN = 'LEFT JOIN clicks k ON k.id = c.click_id';

const nullable = (v: unknown) => (v === null || v === undefined ? null : String(v));

export function toClaimRow(r: Record<string, unknown>): ClaimRow {
  return {
    id: toInt(r.id),
    member_id: toInt(r.member_id),
    network: String(r.network),
    advertiser: String(r.advertiser),
    order_ref: String(r.order_ref),
    purchased_at: toDate(r.purchased_at)!,
    amount: toMinor(r.amount),
    currency: String(r.currency),
    note: nullable(r.note),
    receipt: nullable(r.receipt),
    click_id: nullable(r.click_id),
    status: String(r.status) as ClaimStatus,
    reason: nullable(r.reason),
    order_id: r.order_id === null || r.order_id === undefined ? null : toInt(r.order_id),
    channel: nullable(r.channel) as ClaimRow['channel'],
    network_ref: nullable(r.network_ref),
    network_status: nullable(r.network_status),
    export_file: nullable(r.export_file),
    deadline_at: toDate(r.deadline_at),
    warned_at: toDate(r.warned_at),
    submitted_at: toDate(r.submitted_at),
    resolved_at: toDate(r.resolved_at),
    checked_at: toDate(r.checked_at),
    actor: String(r.actor),
    created_at: toDate(r.created_at)!,
    updated_at: toDate(r.updated_at)!,
  };
}

function shape(r: Record<string, unknown>): Claim {
  const c = toClaimRow(r);
  return {
    id: c.id,
    member: { id: c.member_id, login: String(r.member_login), display_name: String(r.member_display_name) },
    network: c.network,
    advertiser: c.advertiser,
    order_ref: c.order_ref,
    purchased_at: c.purchased_at.toISOString(),
    amount: formatAmount(c.amount, c.currency),
    currency: c.currency,
    note: c.note,
    receipt: c.receipt !== null,
    click_id: c.click_id,
    click:
      r.click_found === null || r.click_found === undefined
        ? null
        : { id: String(r.click_found), created_at: toDate(r.click_created_at)!.toISOString(), cashback_rule: decodeRule(nullable(r.click_cashback_rule)) },
    status: c.status,
    reason: c.reason,
    order_id: c.order_id,
    channel: c.channel,
    network_ref: c.network_ref,
    network_status: c.network_status,
    export_file: c.export_file,
    deadline_at: toIso(c.deadline_at),
    warned_at: toIso(c.warned_at),
    submitted_at: toIso(c.submitted_at),
    resolved_at: toIso(c.resolved_at),
    checked_at: toIso(c.checked_at),
    actor: c.actor,
    created_at: c.created_at.toISOString(),
    updated_at: c.updated_at.toISOString(),
  };
}

function claimWhere(f: ClaimWhere): ListWhere {
  const w = new ListWhere()
    .anyOf('c.status', f.status)
    .eq('c.member_id', f.member_id)
    .anyOf('c.network', f.network)
    .eq('c.advertiser', f.advertiser)
    .after('c.created_at', f.after)
    .before('c.created_at', f.before);
  if (f.search) {
    const like = Database.likePrefix(f.search.trim());
    w.add("(c.order_ref LIKE ? ESCAPE '!' OR c.network_ref LIKE ? ESCAPE '!')", like, like);
  }
  return w;
}

/** What a new claim is stored with. */
export type NewClaim = Omit<
  ClaimRow,
  'id' | 'order_id' | 'network_ref' | 'network_status' | 'export_file' | 'warned_at' | 'submitted_at' | 'resolved_at' | 'checked_at'
>;

/** Every SQL statement on the claims table. */
export class ClaimStore {
  constructor(private readonly db: Database) {}

  async insert(c: NewClaim, t: Transaction): Promise<number> {
    const { insertId } = await this.db.execute(
      `INSERT INTO claims (member_id, network, advertiser, order_ref, purchased_at, amount, currency, note, receipt, click_id, status, reason, channel, deadline_at, actor, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        c.member_id,
        c.network,
        c.advertiser,
        c.order_ref,
        c.purchased_at,
        c.amount,
        c.currency,
        c.note,
        c.receipt,
        c.click_id,
        c.status,
        c.reason,
        c.channel,
        c.deadline_at,
        c.actor,
        c.created_at,
        c.updated_at,
      ],
      t,
    );
    return insertId!;
  }

  /** The claim of this member for this shop's order, if there is one. */
  async findByOrderRef(memberId: number, network: string, advertiser: string, ref: string, t?: Transaction): Promise<ClaimRow | null> {
    const [row] = await this.db.select<Record<string, unknown>>(
      `SELECT ${COLUMNS} FROM claims c WHERE c.member_id = ? AND c.network = ? AND c.advertiser = ? AND c.order_ref = ?`,
      [memberId, network, advertiser, ref],
      t,
    );
    return row ? toClaimRow(row) : null;
  }

  async row(id: number, t?: Transaction): Promise<ClaimRow | null> {
    const [row] = await this.db.select<Record<string, unknown>>(`SELECT ${COLUMNS} FROM claims c WHERE c.id = ?`, [id], t);
    return row ? toClaimRow(row) : null;
  }

  /** One claim row, locked for the rest of the transaction on MariaDB. */
  async lock(id: number, t: Transaction): Promise<ClaimRow | null> {
    const [row] = await this.db.select<Record<string, unknown>>(`SELECT ${COLUMNS} FROM claims c WHERE c.id = ?${this.db.forUpdate()}`, [id], t);
    return row ? toClaimRow(row) : null;
  }

  async update(id: number, set: Record<string, unknown>, t: Transaction): Promise<void> {
    const columns = Object.keys(set);
    if (columns.length === 0) return;
    await this.db.execute(`UPDATE claims SET ${columns.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`, [...columns.map((c) => set[c]), id], t);
  }

  async byIds(ids: number[], t?: Transaction): Promise<Claim[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.select<Record<string, unknown>>(
      `SELECT ${SHOWN} FROM claims c JOIN users u ON u.id = c.member_id
       ${CLICK_JOIN} WHERE c.id IN (${ids.map(() => '?').join(', ')})`,
      ids,
      t,
    );
    const byId = new Map(rows.map((r) => [toInt(r.id), shape(r)]));
    return ids.map((i) => byId.get(i)).filter((c): c is Claim => c !== undefined);
  }

  /** Every claim of a member with its stored receipt's name, read page by page (their data export). */
  async *ofMember(memberId: number): AsyncGenerator<Claim & { receipt_file: string | null }> {
    const sql = `SELECT ${SHOWN} FROM claims c JOIN users u ON u.id = c.member_id ${CLICK_JOIN} WHERE c.member_id = ?`;
    for await (const row of walkRows(this.db, sql, [memberId], { column: 'c.id', field: 'id' })) yield { ...shape(row), receipt_file: nullable(row.receipt) };
  }

  /**
   * At a member's erasure, in `t`: the claims keep amounts, statuses and orders; the member's
   * free text (note) and receipt go, and the person's words are replaced in the reason and the
   * network's answer. Answers the receipts' file names that were referenced.
   */
  async eraseMember(memberId: number, replacements: readonly Replacement[], t: Transaction): Promise<{ changed: number; receipts: string[] }> {
    const rows = await this.db.select<{ receipt: unknown }>('SELECT DISTINCT receipt FROM claims WHERE member_id = ? AND receipt IS NOT NULL', [memberId], t);
    const { affected } = await this.db.execute(
      'UPDATE claims SET note = NULL, receipt = NULL WHERE member_id = ? AND (note IS NOT NULL OR receipt IS NOT NULL)',
      [memberId],
      t,
    );
    const replaced = await replaceInColumns(
      this.db,
      t,
      { table: 'claims', key: 'id', columns: ['reason', 'network_status', 'order_ref'], where: 'member_id = ?', params: [memberId] },
      replacements,
    );
    return { changed: affected + replaced, receipts: rows.map((r) => String(r.receipt)) };
  }

  /** Whether any claim still names this receipt file. */
  async receiptInUse(name: string, t: Transaction): Promise<boolean> {
    const [row] = await this.db.select('SELECT id FROM claims WHERE receipt = ? LIMIT 1', [name], t);
    return row !== undefined;
  }

  async list(f: ClaimFilters): Promise<{ items: Claim[]; total: number }> {
    const where = claimWhere(f);
    const [rows, count] = await Promise.all([
      this.db.select<Record<string, unknown>>(
        `SELECT ${SHOWN} FROM claims c JOIN users u ON u.id = c.member_id ${CLICK_JOIN}
         ${where.sql} ${orderClause(CLAIM_ORDERBY, f, 'c.id', { orderby: 'id', order: 'desc' })} ${pageClause(f)}`,
        where.params,
      ),
      this.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM claims c ${where.sql}`, where.params),
    ]);
    return { items: rows.map(shape), total: toInt(count[0].n) };
  }

  /** The next `limit` claims of the list's filters after id `afterId`, in id order (an export's keyset walk). */
  async listAfter(f: ClaimWhere, afterId: number, limit: number): Promise<Claim[]> {
    const where = claimWhere(f).add('c.id > ?', afterId);
    const rows = await this.db.select<Record<string, unknown>>(
      `SELECT ${SHOWN} FROM claims c JOIN users u ON u.id = c.member_id ${CLICK_JOIN} ${where.sql} ORDER BY c.id LIMIT ${Math.max(1, Math.floor(limit))}`,
      where.params,
    );
    return rows.map(shape);
  }

  counts(f: Omit<ClaimWhere, 'status'>): Promise<StatusCounts> {
    return countByStatus(this.db, 'claims c', 'c.status', claimWhere(f), CLAIM_STATUSES);
  }

  /**
   * Claims a newly arrived order could answer: of its shop, still live (or approved and waiting
   * for their order), without an order, with its reference or in its currency.
   */
  async candidatesFor(order: { network: string; advertiser: string; merchant_ref: string | null; currency: string }): Promise<number[]> {
    const rows = await this.db.select<{ id: unknown }>(
      `SELECT c.id FROM claims c WHERE c.network = ? AND c.advertiser = ? AND c.order_id IS NULL
       AND c.status IN ('open', 'submitted', 'expired', 'approved') AND (c.order_ref = ? OR c.currency = ?) ORDER BY c.id LIMIT 50`,
      [order.network, order.advertiser, order.merchant_ref ?? '', order.currency],
    );
    return rows.map((r) => toInt(r.id));
  }

  /** Claims in `statuses` of these networks (the poll's and the export's work), oldest first. */
  async inStatus(
    statuses: ClaimStatus[],
    where: { network?: string; channel?: 'api' | 'file'; unexported?: boolean; withoutOrder?: boolean } = {},
    limit = 500,
  ): Promise<ClaimRow[]> {
    const w = new ListWhere().anyOf('c.status', statuses).eq('c.network', where.network).eq('c.channel', where.channel);
    if (where.unexported) w.add('c.export_file IS NULL');
    if (where.withoutOrder) w.add('c.order_id IS NULL');
    const rows = await this.db.select<Record<string, unknown>>(`SELECT ${COLUMNS} FROM claims c ${w.sql} ORDER BY c.id LIMIT ${limit}`, w.params);
    return rows.map(toClaimRow);
  }

  /** Live claims whose deadline falls before `at`. */
  async dueBefore(at: Date, limit = 500): Promise<ClaimRow[]> {
    const rows = await this.db.select<Record<string, unknown>>(
      `SELECT ${COLUMNS} FROM claims c WHERE c.status IN ('open', 'submitted') AND c.deadline_at IS NOT NULL AND c.deadline_at < ? ORDER BY c.deadline_at, c.id LIMIT ${limit}`,
      [at],
    );
    return rows.map(toClaimRow);
  }
}
