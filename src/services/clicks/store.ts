// The clicks table: rows as stored and as shown, the grouped insert, the reads (one, a page, the
// recent clicks of a member, the clicks of a shop before a sale) and the prune. The only SQL of
// the clicks domain.
import type { CashbackRule } from '../../cashback-rule.js';
import type { Database } from '../../db/database.js';
import { ListWhere, orderClause, pageClause } from '../../db/lists.js';
import { walkRows } from '../../db/erasure.js';
import type { Transaction } from '../../db/transaction.js';
import { toDate, toInt } from '../../db/values.js';
import { decodeRule } from '../cashback/index.js';

export interface ClickRow {
  id: string;
  member_id: number;
  network: string;
  advertiser: string;
  coupon_id: number | null;
  url: string | null;
  cashback_rule: string;
  ip_prefix: string | null;
  ua_hash: string | null;
  created_at: Date;
}

/** A click as the API and CLI show it. */
export interface Click {
  id: string;
  member: { id: number; login: string; display_name: string } | null;
  network: string;
  advertiser: string;
  /** The advertiser's name (its override, else the network's), null when it is no longer on file. */
  advertiser_name: string | null;
  coupon_id: number | null;
  /** The deep link the member was sent to (null: the shop's home page). */
  url: string | null;
  /** The cashback rule shown at the click. */
  cashback_rule: CashbackRule | null;
  /** The client address reduced to its /24 (IPv4) or /48 (IPv6). */
  ip_prefix: string | null;
  /** A keyed hash of the user agent (the same browser gives the same hash). */
  ua_hash: string | null;
  created_at: string;
}

const COLUMNS = 'c.id, c.member_id, c.network, c.advertiser, c.coupon_id, c.url, c.cashback_rule, c.ip_prefix, c.ua_hash, c.created_at';
const SHOWN = `${COLUMNS}, u.login AS member_login, u.display_name AS member_display_name, COALESCE(a.name_override, a.name) AS advertiser_name`;
const JOINS = 'LEFT JOIN users u ON u.id = c.member_id LEFT JOIN advertisers a ON a.module = c.network AND a.advertiser = c.advertiser';

export const CLICK_ORDERBY = { created_at: 'c.created_at', id: 'c.id' } as const;
export type ClickOrderby = keyof typeof CLICK_ORDERBY;

/** The filters of the click list without paging and sort. */
export type ClickWhere = Omit<ClickFilters, 'orderby' | 'order' | 'page' | 'per_page'>;

function clickWhere(f: ClickWhere): ListWhere {
  return new ListWhere()
    .eq('c.member_id', f.member_id)
    .eq('c.network', f.network)
    .eq('c.advertiser', f.advertiser)
    .eq('c.coupon_id', f.coupon_id)
    .after('c.created_at', f.after)
    .before('c.created_at', f.before);
}

export interface ClickFilters {
  member_id?: number;
  network?: string;
  advertiser?: string;
  coupon_id?: number;
  after?: Date;
  before?: Date;
  orderby?: ClickOrderby;
  order?: 'asc' | 'desc';
  page: number;
  per_page: number;
}

export function toClickRow(r: Record<string, unknown>): ClickRow {
  const nullable = (v: unknown) => (v === null || v === undefined ? null : String(v));
  return {
    id: String(r.id),
    member_id: toInt(r.member_id),
    network: String(r.network),
    advertiser: String(r.advertiser),
    coupon_id: r.coupon_id === null || r.coupon_id === undefined ? null : toInt(r.coupon_id),
    url: nullable(r.url),
    cashback_rule: String(r.cashback_rule),
    ip_prefix: nullable(r.ip_prefix),
    ua_hash: nullable(r.ua_hash),
    created_at: toDate(r.created_at)!,
  };
}

function shape(r: Record<string, unknown>): Click {
  const c = toClickRow(r);
  return {
    id: c.id,
    member:
      r.member_login === null || r.member_login === undefined
        ? null
        : { id: c.member_id, login: String(r.member_login), display_name: String(r.member_display_name) },
    network: c.network,
    advertiser: c.advertiser,
    advertiser_name: r.advertiser_name === null || r.advertiser_name === undefined ? null : String(r.advertiser_name),
    coupon_id: c.coupon_id,
    url: c.url,
    cashback_rule: decodeRule(c.cashback_rule),
    ip_prefix: c.ip_prefix,
    ua_hash: c.ua_hash,
    created_at: c.created_at.toISOString(),
  };
}

export class ClickStore {
  constructor(private readonly db: Database) {}

  /** Inserts clicks (one statement per 200). */
  async insertMany(rows: ClickRow[], t: Transaction): Promise<void> {
    for (let i = 0; i < rows.length; i += 200) {
      const chunk = rows.slice(i, i + 200);
      await this.db.execute(
        `INSERT INTO clicks (id, member_id, network, advertiser, coupon_id, url, cashback_rule, ip_prefix, ua_hash, created_at) VALUES ${chunk
          .map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
          .join(', ')}`,
        chunk.flatMap((c) => [c.id, c.member_id, c.network, c.advertiser, c.coupon_id, c.url, c.cashback_rule, c.ip_prefix, c.ua_hash, c.created_at]),
        t,
      );
    }
  }

  /** The rows of these click ids (those on file), keyed by id. */
  async rowsByIds(ids: string[], t?: Transaction): Promise<Map<string, ClickRow>> {
    const out = new Map<string, ClickRow>();
    const list = [...new Set(ids)];
    for (let i = 0; i < list.length; i += 500) {
      const chunk = list.slice(i, i + 500);
      const rows = await this.db.select<Record<string, unknown>>(
        `SELECT ${COLUMNS} FROM clicks c WHERE c.id IN (${chunk.map(() => '?').join(', ')})`,
        chunk,
        t,
      );
      for (const r of rows.map(toClickRow)) out.set(r.id, r);
    }
    return out;
  }

  /** Every click of a member, read page by page by id (their data export). */
  async *ofMember(memberId: number): AsyncGenerator<Click> {
    for await (const row of walkRows(this.db, `SELECT ${SHOWN} FROM clicks c ${JOINS} WHERE c.member_id = ?`, [memberId], { column: 'c.id', field: 'id' })) {
      yield shape(row);
    }
  }

  /** Wipes the reduced address and the agent's hash of every click of a member, in `t`; answers how many. */
  async eraseMember(memberId: number, t: Transaction): Promise<number> {
    const { affected } = await this.db.execute(
      'UPDATE clicks SET ip_prefix = NULL, ua_hash = NULL WHERE member_id = ? AND (ip_prefix IS NOT NULL OR ua_hash IS NOT NULL)',
      [memberId],
      t,
    );
    return affected;
  }

  async get(id: string): Promise<Click | null> {
    const [row] = await this.db.select<Record<string, unknown>>(`SELECT ${SHOWN} FROM clicks c ${JOINS} WHERE c.id = ?`, [id]);
    return row ? shape(row) : null;
  }

  /** The orders that recorded this click (read for display: the orders domain writes them). */
  async orderIdsOf(id: string): Promise<number[]> {
    const rows = await this.db.select<{ id: unknown }>('SELECT id FROM orders WHERE click_id = ? ORDER BY id', [id]);
    return rows.map((r) => toInt(r.id));
  }

  async list(f: ClickFilters): Promise<{ items: Click[]; total: number }> {
    const w = clickWhere(f);
    const [rows, count] = await Promise.all([
      this.db.select<Record<string, unknown>>(
        `SELECT ${SHOWN} FROM clicks c ${JOINS} ${w.sql} ${orderClause(CLICK_ORDERBY, f, 'c.id', { orderby: 'created_at', order: 'desc' })} ${pageClause(f)}`,
        w.params,
      ),
      this.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM clicks c ${w.sql}`, w.params),
    ]);
    return { items: rows.map(shape), total: toInt(count[0].n) };
  }

  /** The next `limit` clicks of the list's filters after id `afterId` ('' for the first), in id order (an export's keyset walk). */
  async listAfter(f: ClickWhere, afterId: string, limit: number): Promise<Click[]> {
    const w = clickWhere(f).add('c.id > ?', afterId);
    const rows = await this.db.select<Record<string, unknown>>(
      `SELECT ${SHOWN} FROM clicks c ${JOINS} ${w.sql} ORDER BY c.id LIMIT ${Math.max(1, Math.floor(limit))}`,
      w.params,
    );
    return rows.map(shape);
  }

  /** The clicks on one shop between `from` and `to` (the candidates of an order), newest first, at most `limit`. */
  async ofShopBetween(network: string, advertiser: string, from: Date, to: Date, limit: number): Promise<Click[]> {
    const rows = await this.db.select<Record<string, unknown>>(
      `SELECT ${SHOWN} FROM clicks c ${JOINS} WHERE c.network = ? AND c.advertiser = ? AND c.created_at >= ? AND c.created_at <= ? ORDER BY c.created_at DESC, c.id DESC LIMIT ${Math.max(1, Math.floor(limit))}`,
      [network, advertiser, from, to],
    );
    return rows.map(shape);
  }

  /** A member's latest click on one shop between `from` and `to`, or null. */
  async latestOfMember(memberId: number, network: string, advertiser: string, from: Date, to: Date): Promise<ClickRow | null> {
    const [row] = await this.db.select<Record<string, unknown>>(
      `SELECT ${COLUMNS} FROM clicks c WHERE c.member_id = ? AND c.network = ? AND c.advertiser = ? AND c.created_at >= ? AND c.created_at <= ? ORDER BY c.created_at DESC, c.id DESC LIMIT 1`,
      [memberId, network, advertiser, from, to],
    );
    return row ? toClickRow(row) : null;
  }

  /** Deletes the clicks made before `before`; answers how many. */
  async pruneBefore(before: Date): Promise<number> {
    const { affected } = await this.db.execute('DELETE FROM clicks WHERE created_at < ?', [before]);
    return affected;
  }
}
