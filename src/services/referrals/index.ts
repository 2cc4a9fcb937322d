// Referrals: who referred whom. A member has at most one live referrer, never themselves, and the
// live chain never loops. Ending a referral stops future referral credits; past credits stay.
import { walkPages } from '../../db/erasure.js';
import type { Transaction } from '../../db/transaction.js';
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { readSum, toInt, toIso } from '../../db/values.js';
import { ServiceError } from '../../errors.js';
import { formatAmount } from '../../money.js';
import type { Once } from '../idempotency/index.js';
import type { LogService } from '../logs/index.js';
import type { UserService } from '../users/index.js';

export interface ReferralMember {
  id: number;
  login: string;
  display_name: string;
}

/** A referral as the API and CLI show it. */
export interface Referral {
  id: number;
  referrer: ReferralMember;
  referee: ReferralMember;
  since: string;
  ended_at: string | null;
  active: boolean;
  /** Net referral credits earned through this referral (reversals included), per currency. */
  earned: { currency: string; amount: string }[];
  actor: string;
}

export interface ReferralFilters {
  referrer_id?: number;
  referee_id?: number;
  active?: boolean;
  page: number;
  per_page: number;
}

export interface ReferralServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  /** Referrers and referees are users: checked through their owner. */
  users: Pick<UserService, 'requireMemberId'>;
}

/** Longest live chain walked when checking for a cycle (the chain is acyclic; this guards bad data). */
const MAX_CHAIN = 100_000;

const COLUMNS = `r.id, r.referrer_id, r.referee_id, r.created_at, r.ended_at, r.actor,
  a.login AS referrer_login, a.display_name AS referrer_display_name, b.login AS referee_login, b.display_name AS referee_display_name`;
const FROM = 'referrals r JOIN users a ON a.id = r.referrer_id JOIN users b ON b.id = r.referee_id';

/** Creates, ends and lists referrals; tells the order service whose referrer earns. */
export class ReferralService {
  constructor(private readonly deps: ReferralServiceDeps) {}

  /** The referee's live referral, if any (read inside the caller's transaction when given). */
  async liveReferralOf(refereeId: number, t?: Transaction): Promise<{ id: number; referrer_id: number } | null> {
    const [row] = await this.deps.db.select<Record<string, unknown>>(
      'SELECT id, referrer_id FROM referrals WHERE referee_id = ? AND ended_at IS NULL ORDER BY id DESC LIMIT 1',
      [refereeId],
      t,
    );
    return row ? { id: toInt(row.id), referrer_id: toInt(row.referrer_id) } : null;
  }

  /** `liveReferralOf` for many referees at once, keyed by referee. */
  async liveReferralsOf(refereeIds: number[], t?: Transaction): Promise<Map<number, { id: number; referrer_id: number }>> {
    const out = new Map<number, { id: number; referrer_id: number }>();
    if (refereeIds.length === 0) return out;
    const rows = await this.deps.db.select<Record<string, unknown>>(
      `SELECT id, referee_id, referrer_id FROM referrals WHERE referee_id IN (${refereeIds.map(() => '?').join(', ')}) AND ended_at IS NULL ORDER BY id`,
      refereeIds,
      t,
    );
    // The newest live one wins, as in liveReferralOf.
    for (const r of rows) out.set(toInt(r.referee_id), { id: toInt(r.id), referrer_id: toInt(r.referrer_id) });
    return out;
  }

  /**
   * Serialises referral changes: the one-live-referrer rule and the cycle check read several rows
   * that no unique key covers, so every change takes this row's write lock first. (A SQLite write
   * transaction is exclusive already; the statement is harmless there.) Referral changes are rare.
   */
  private async lockChanges(t: Transaction): Promise<void> {
    await this.deps.db.execute(this.deps.db.upsert('counters', ['name', 'value'], ['name'], { value: 'value + 1' }), ['referral_changes', 1], t);
  }

  private async requireMember(id: number, t: Transaction): Promise<void> {
    await this.deps.users.requireMemberId(id, t);
  }

  /**
   * Makes `referrer_id` the referrer of `referee_id`. 400 svc_referral_self, 404
   * svc_member_not_found, 409 svc_referral_exists (the referee has a live referrer), 400
   * svc_referral_cycle (the referee is already up the referrer's live chain).
   */
  async add(input: { referrer_id: number; referee_id: number }, actor: string, once?: Once<Referral>): Promise<Referral> {
    const { referrer_id: referrerId, referee_id: refereeId } = input;
    try {
      for (const [field, id] of [
        ['referrer_id', referrerId],
        ['referee_id', refereeId],
      ] as const) {
        if (!Number.isSafeInteger(id) || id < 1) throw new ServiceError('svc_invalid_referral', `${field} must be a member id.`, 400, { field });
      }
      if (referrerId === refereeId) throw new ServiceError('svc_referral_self', 'A member cannot refer themselves.', 400);
      const result = await this.deps.db.transaction(async (t) => {
        await once?.claim?.(t);
        await this.lockChanges(t);
        await this.requireMember(referrerId, t);
        await this.requireMember(refereeId, t);
        const live = await this.liveReferralOf(refereeId, t);
        if (live) {
          throw new ServiceError(
            'svc_referral_exists',
            `Member ${refereeId} already has a referrer (member ${live.referrer_id}). Remove that referral first.`,
            409,
            { referral_id: live.id, referrer_id: live.referrer_id },
          );
        }
        // Walk up the referrer's live chain: meeting the referee there would close a loop.
        const seen = new Set<number>();
        for (let current: number | null = referrerId; current !== null; ) {
          if (current === refereeId)
            throw new ServiceError(
              'svc_referral_cycle',
              `Member ${refereeId} is already up member ${referrerId}'s referral chain; this referral would make a cycle.`,
              400,
              { chain: [...seen, current] },
            );
          if (seen.has(current) || seen.size >= MAX_CHAIN) break;
          seen.add(current);
          current = (await this.liveReferralOf(current, t))?.referrer_id ?? null;
        }
        const { insertId } = await this.deps.db.execute(
          'INSERT INTO referrals (referrer_id, referee_id, created_at, ended_at, actor) VALUES (?, ?, ?, NULL, ?)',
          [referrerId, refereeId, this.deps.clock.now(), actor],
          t,
        );
        const referral = (await this.byIds([insertId!], t))[0];
        await once?.record(referral, t);
        return referral;
      });
      this.deps.logger.info('referrals', 'Referral added', { referral_id: result.id, referrer_id: referrerId, referee_id: refereeId, actor });
      return result;
    } catch (err) {
      if (err instanceof ServiceError)
        this.deps.logger.warning('referrals', 'Referral refused', { code: err.code, referrer_id: referrerId, referee_id: refereeId, actor });
      throw err;
    }
  }

  /** Ends the referee's live referral (404 svc_referral_not_found): future cashback only, past credits stay. */
  async remove(refereeId: number, actor: string, once?: Once<Referral>): Promise<Referral> {
    try {
      const result = await this.deps.db.transaction(async (t) => {
        await once?.claim?.(t);
        await this.lockChanges(t);
        const live = await this.liveReferralOf(refereeId, t);
        if (!live) throw new ServiceError('svc_referral_not_found', `Member ${refereeId} has no live referral.`, 404, { referee_id: refereeId });
        await this.deps.db.execute('UPDATE referrals SET ended_at = ? WHERE id = ? AND ended_at IS NULL', [this.deps.clock.now(), live.id], t);
        const referral = (await this.byIds([live.id], t))[0];
        await once?.record(referral, t);
        return referral;
      });
      this.deps.logger.info('referrals', 'Referral ended', { referral_id: result.id, referrer_id: result.referrer.id, referee_id: refereeId, actor });
      return result;
    } catch (err) {
      if (err instanceof ServiceError) this.deps.logger.warning('referrals', 'Referral removal refused', { code: err.code, referee_id: refereeId, actor });
      throw err;
    }
  }

  /** The member's live referral (404 svc_referral_not_found when none): what POST /referrals made. */
  async liveOf(refereeId: number): Promise<Referral> {
    const live = await this.liveReferralOf(refereeId);
    if (!live) throw new ServiceError('svc_referral_not_found', `Member ${refereeId} has no live referral.`, 404, { referee_id: refereeId });
    return (await this.byIds([live.id]))[0];
  }

  async get(id: number): Promise<Referral> {
    const [referral] = await this.byIds([id]);
    if (!referral) throw new ServiceError('svc_referral_not_found', `Referral ${id} not found.`, 404);
    return referral;
  }

  /** Newest first, filtered and paged. */
  async list(filters: ReferralFilters): Promise<{ items: Referral[]; total: number }> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filters.referrer_id !== undefined) where.push('r.referrer_id = ?'), params.push(filters.referrer_id);
    if (filters.referee_id !== undefined) where.push('r.referee_id = ?'), params.push(filters.referee_id);
    if (filters.active !== undefined) where.push(filters.active ? 'r.ended_at IS NULL' : 'r.ended_at IS NOT NULL');
    const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const offset = (filters.page - 1) * filters.per_page;
    const [rows, count] = await Promise.all([
      this.deps.db.select<Record<string, unknown>>(
        `SELECT ${COLUMNS} FROM ${FROM} ${clause} ORDER BY r.id DESC LIMIT ${filters.per_page} OFFSET ${offset}`,
        params,
      ),
      this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM referrals r ${clause}`, params),
    ]);
    return { items: await this.shape(rows), total: toInt(count[0].n) };
  }

  /** Every referral a member is in, as referrer or as referee, oldest first, read page by page (their data export). */
  async *ofMember(memberId: number): AsyncGenerator<Referral> {
    const sql = `SELECT ${COLUMNS} FROM ${FROM} WHERE (r.referrer_id = ? OR r.referee_id = ?)`;
    for await (const page of walkPages(this.deps.db, sql, [memberId, memberId], { column: 'r.id', field: 'id' })) yield* await this.shape(page);
  }

  private async byIds(ids: number[], t?: Transaction): Promise<Referral[]> {
    if (ids.length === 0) return [];
    const rows = await this.deps.db.select<Record<string, unknown>>(`SELECT ${COLUMNS} FROM ${FROM} WHERE r.id IN (${ids.map(() => '?').join(', ')})`, ids, t);
    return this.shape(rows, t);
  }

  /** Adds `earned`: one grouped query over the page's referral credits and their reversals. */
  private async shape(rows: Record<string, unknown>[], t?: Transaction): Promise<Referral[]> {
    const earned = new Map<string, { currency: string; amount: string }[]>();
    if (rows.length > 0) {
      const ids = rows.map((r) => String(toInt(r.id)));
      const sums = await this.deps.db.select<Record<string, unknown>>(
        // A credit and its reversal (if any) summed together, exactly (exactSum).
        `SELECT e.source_id, e.currency, ${this.deps.db.exactSum('e.amount + COALESCE(x.amount, 0)', 'net')}
         FROM ledger_entries e LEFT JOIN ledger_entries x ON x.reverses_id = e.id
         WHERE e.source_type = 'referral' AND e.source_id IN (${ids.map(() => '?').join(', ')})
         GROUP BY e.source_id, e.currency ORDER BY e.currency`,
        ids,
        t,
      );
      for (const s of sums) {
        const key = String(s.source_id);
        const currency = String(s.currency);
        earned.set(key, [...(earned.get(key) ?? []), { currency, amount: formatAmount(readSum(s, 'net'), currency) }]);
      }
    }
    return rows.map((r) => ({
      id: toInt(r.id),
      referrer: { id: toInt(r.referrer_id), login: String(r.referrer_login), display_name: String(r.referrer_display_name) },
      referee: { id: toInt(r.referee_id), login: String(r.referee_login), display_name: String(r.referee_display_name) },
      since: toIso(r.created_at)!,
      ended_at: toIso(r.ended_at),
      active: r.ended_at === null || r.ended_at === undefined,
      earned: earned.get(String(toInt(r.id))) ?? [],
      actor: String(r.actor),
    }));
  }
}
