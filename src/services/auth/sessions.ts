// Cookie sessions backed by revocable rows, and the REST nonce bound to user and session.
import { createHash, createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../clock.js';
import type { Database, Transaction } from '../../db/database.js';
import { toDate, toIso } from '../../db/values.js';
import { ServiceError } from '../../errors.js';
import type { Keys } from '../../keys.js';
import type { LogService } from '../logs/index.js';
import { toUser, USER_COLUMNS, type User } from '../users/index.js';

/** Half the nonce life: a nonce is valid in its tick and the one after (12 to 24 hours). */
export const NONCE_TICK_SECONDS = 43_200;

export interface Session {
  uuid: string;
  user: User;
  expires_at: Date;
}

export interface SessionServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  keys: Keys;
  ttlHours: number;
}

function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Creates, resolves and revokes login sessions; makes and checks REST nonces. */
export class SessionService {
  private readonly deps: SessionServiceDeps;

  constructor(deps: SessionServiceDeps) {
    this.deps = deps;
  }

  /** Returns the raw token for the cookie (only its hash is stored); `t`: inside that transaction. */
  async create(user: User, ip: string | null, userAgent: string | null, t?: Transaction): Promise<{ token: string; session: Session }> {
    const token = randomBytes(32).toString('base64url');
    const uuid = randomUUID();
    const now = this.deps.clock.now();
    const expires = new Date(now.getTime() + this.deps.ttlHours * 3_600_000);
    await this.deps.db.execute(
      'INSERT INTO sessions (uuid, token_hash, user_id, created_at, expires_at, ip, user_agent) VALUES (?, ?, ?, ?, ?, ?, ?)',
      [uuid, tokenHash(token), user.id, now, expires, ip, userAgent?.slice(0, 255) ?? null],
      t,
    );
    this.deps.logger.info('auth', 'Logged in', { user_id: user.id, login: user.login, session: uuid, ip });
    return { token, session: { uuid, user, expires_at: expires } };
  }

  /** The live session of a cookie token, or null when unknown, expired, revoked or its user disabled. */
  async resolve(token: string): Promise<Session | null> {
    if (!/^[\w-]{20,100}$/.test(token)) return null;
    const columns = USER_COLUMNS.split(', ')
      .map((c) => `u.${c}`)
      .join(', ');
    const rows = await this.deps.db.select<Record<string, unknown>>(
      `SELECT s.uuid AS s_uuid, s.expires_at AS s_expires, ${columns} FROM sessions s JOIN users u ON u.id = s.user_id
       WHERE s.token_hash = ? AND s.revoked_at IS NULL AND s.expires_at > ?`,
      [tokenHash(token), this.deps.clock.now()],
    );
    const row = rows[0];
    if (!row) return null;
    const user = toUser(row);
    if (user.status !== 'active') return null;
    return { uuid: String(row.s_uuid), user, expires_at: toDate(row.s_expires)! };
  }

  async revoke(token: string): Promise<boolean> {
    const { affected } = await this.deps.db.execute('UPDATE sessions SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL', [
      this.deps.clock.now(),
      tokenHash(token),
    ]);
    return affected > 0;
  }

  /** Revokes every session of a user (e.g. after a password change). */
  async revokeAll(userId: number): Promise<number> {
    const { affected } = await this.deps.db.execute('UPDATE sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL', [
      this.deps.clock.now(),
      userId,
    ]);
    return affected;
  }

  /** A member's sessions as their data export shows them: times, address and agent, never the token. */
  async listOf(
    userId: number,
  ): Promise<{ uuid: string; created_at: string; expires_at: string; revoked_at: string | null; ip: string | null; user_agent: string | null }[]> {
    const rows = await this.deps.db.select<Record<string, unknown>>(
      'SELECT uuid, created_at, expires_at, revoked_at, ip, user_agent FROM sessions WHERE user_id = ? ORDER BY id',
      [userId],
    );
    return rows.map((r) => ({
      uuid: String(r.uuid),
      created_at: toIso(r.created_at)!,
      expires_at: toIso(r.expires_at)!,
      revoked_at: toIso(r.revoked_at),
      ip: (r.ip as string | null) ?? null,
      user_agent: (r.user_agent as string | null) ?? null,
    }));
  }

  /** Deletes every session of an erased member in `t` (revoked, and their addresses and agents gone); answers how many. */
  async eraseMember(userId: number, t: Transaction): Promise<number> {
    const { affected } = await this.deps.db.execute('DELETE FROM sessions WHERE user_id = ?', [userId], t);
    return affected;
  }

  /** Deletes sessions that expired or were revoked more than a day ago. */
  async prune(): Promise<number> {
    const cutoff = new Date(this.deps.clock.now().getTime() - 86_400_000);
    const { affected } = await this.deps.db.execute('DELETE FROM sessions WHERE expires_at < ? OR revoked_at < ?', [cutoff, cutoff]);
    return affected;
  }

  private tick(offset = 0): number {
    return Math.ceil(this.deps.clock.now().getTime() / 1000 / NONCE_TICK_SECONDS) - offset;
  }

  private nonceFor(tick: number, userId: number, sessionUuid: string): string {
    const mac = createHmac('sha256', this.deps.keys.nonce).update(`${tick}|wp_rest|${userId}|${sessionUuid}`).digest('hex');
    return mac.slice(-12, -2);
  }

  /** 10 lowercase hex characters, bound to user and session. */
  createNonce(userId: number, sessionUuid: string): string {
    return this.nonceFor(this.tick(), userId, sessionUuid);
  }

  /** 1 when made in this tick (0-12 h old), 2 in the previous (12-24 h), false otherwise. */
  verifyNonce(nonce: string, userId: number, sessionUuid: string): 1 | 2 | false {
    if (!/^[0-9a-f]{10}$/.test(nonce)) return false;
    const given = Buffer.from(nonce);
    for (const age of [0, 1] as const) {
      if (timingSafeEqual(Buffer.from(this.nonceFor(this.tick(age), userId, sessionUuid)), given)) return (age + 1) as 1 | 2;
    }
    return false;
  }

  requireNonceable(session: Session | null): Session {
    if (!session) throw new ServiceError('rest_not_logged_in', 'You are not currently logged in.', 401);
    return session;
  }
}
