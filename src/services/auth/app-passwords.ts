// Application passwords as the host platform does them: 24 random alphanumerics shown once in
// groups of four, stored as a keyed fast hash (they are high-entropy; a slow KDF per request
// would cap throughput), compared in constant time, named, revocable.
import { createHmac, randomInt, randomUUID, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../../clock.js';
import type { Database, Transaction } from '../../db/database.js';
import { isUniqueViolation } from '../../db/errors.js';
import { toDate, toIso } from '../../db/values.js';
import { ServiceError } from '../../errors.js';
import type { Keys } from '../../keys.js';
import type { LogService } from '../logs/index.js';
import type { SettingsService } from '../settings/index.js';
import { toUser, USER_COLUMNS, type User } from '../users/index.js';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const DAY_MS = 86_400_000;

export interface AppPassword {
  uuid: string;
  name: string;
  created: string;
  last_used: string | null;
  last_ip: string | null;
}

/** The create answer: the item and its password, shown this once in groups of four. */
export interface CreatedAppPassword extends AppPassword {
  password: string;
}

export interface AppPasswordPrincipal {
  user: User;
  uuid: string;
}

interface CacheEntry {
  principal: AppPasswordPrincipal;
  revision: string;
  lastUsed: number | null;
}

/** Groups of four separated by single spaces: "abcd EFGH ijkl MNOP qrst UVWX". */
export function chunkPassword(password: string): string {
  return password.replace(/[^A-Za-z0-9]/g, '').replace(/(.{4})(?=.)/g, '$1 ');
}

export interface AppPasswordServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  keys: Keys;
  settings: SettingsService;
  cacheSeconds: number;
}

/** Creates, lists, revokes and verifies application passwords. */
export class AppPasswordService {
  private readonly deps: AppPasswordServiceDeps;
  private readonly cache: LRUCache<string, CacheEntry>;
  private readonly writes = new Set<Promise<unknown>>();
  private readonly caching: boolean;

  constructor(deps: AppPasswordServiceDeps) {
    this.deps = deps;
    this.cache = new LRUCache({ max: 10_000, ttl: Math.max(1, deps.cacheSeconds) * 1000 });
    this.caching = deps.cacheSeconds > 0;
  }

  private hash(normalized: string): string {
    return createHmac('sha256', this.deps.keys.appPassword).update(normalized).digest('hex');
  }

  async create(user: User, name: string, actor = 'system'): Promise<CreatedAppPassword> {
    const clean = name.trim();
    const refuse = (err: ServiceError) => {
      this.deps.logger.warning('auth', 'Application password not created', { user_id: user.id, code: err.code, actor });
      return err;
    };
    if (!clean) throw refuse(new ServiceError('application_password_empty_name', 'An application name is required to create an application password.', 400));
    if (clean.length > 191) throw refuse(new ServiceError('application_password_invalid_name', 'The application name must be at most 191 characters.', 400));
    let password = '';
    for (let i = 0; i < 24; i++) password += ALPHABET[randomInt(ALPHABET.length)];
    const uuid = randomUUID();
    const now = this.deps.clock.now();
    try {
      await this.deps.db.execute('INSERT INTO app_passwords (uuid, user_id, name, hash, created_at) VALUES (?, ?, ?, ?, ?)', [
        uuid,
        user.id,
        clean,
        this.hash(password),
        now,
      ]);
    } catch (err) {
      if (isUniqueViolation(err)) throw refuse(new ServiceError('application_password_duplicate_name', 'Each application name should be unique.', 409));
      throw err;
    }
    this.deps.logger.info('auth', 'Application password created', { user_id: user.id, login: user.login, uuid, name: clean, actor });
    return { uuid, name: clean, password: chunkPassword(password), created: toIso(now)!, last_used: null, last_ip: null };
  }

  async list(user: User): Promise<AppPassword[]> {
    return this.read(user.id, null);
  }

  /** One of the user's application passwords (404 rest_application_password_not_found). */
  async get(user: User, uuid: string): Promise<AppPassword> {
    const [item] = await this.read(user.id, uuid);
    if (!item) throw new ServiceError('rest_application_password_not_found', 'Application password not found.', 404);
    return item;
  }

  private async read(userId: number, uuid: string | null): Promise<AppPassword[]> {
    const rows = await this.deps.db.select<Record<string, unknown>>(
      `SELECT uuid, name, created_at, last_used_at, last_ip FROM app_passwords WHERE user_id = ?${uuid === null ? '' : ' AND uuid = ?'} ORDER BY created_at, id`,
      uuid === null ? [userId] : [userId, uuid],
    );
    return rows.map((r) => ({
      uuid: String(r.uuid),
      name: String(r.name),
      created: toIso(r.created_at)!,
      last_used: toIso(r.last_used_at),
      last_ip: (r.last_ip as string) ?? null,
    }));
  }

  /** A member's application passwords as their data export shows them (names and dates, never hashes). */
  listOf(userId: number): Promise<AppPassword[]> {
    return this.read(userId, null);
  }

  /**
   * Deletes every application password of an erased member in `t` (their names and last addresses
   * go with them); every process sees it on its next request (the auth revision moves).
   */
  async eraseMember(userId: number, t: Transaction): Promise<number> {
    const { affected } = await this.deps.db.execute('DELETE FROM app_passwords WHERE user_id = ?', [userId], t);
    if (affected > 0) {
      await this.deps.settings.bumpAuthRevision(t);
      t.afterCommit(() => this.cache.clear());
    }
    return affected;
  }

  /** Deletes one; every process sees it on its next request (the auth revision moves). */
  async revoke(user: User, uuid: string, actor = 'system'): Promise<AppPassword> {
    const [previous] = await this.read(user.id, uuid);
    const affected = await this.deps.db.transaction(async (t) => {
      const { affected } = await this.deps.db.execute('DELETE FROM app_passwords WHERE user_id = ? AND uuid = ?', [user.id, uuid], t);
      if (affected > 0) await this.deps.settings.bumpAuthRevision(t);
      return affected;
    });
    if (affected === 0) {
      this.deps.logger.warning('auth', 'Application password not revoked: not found', { user_id: user.id, uuid, actor });
      throw new ServiceError('rest_application_password_not_found', 'Application password not found.', 404);
    }
    this.cache.clear();
    this.deps.logger.info('auth', 'Application password revoked', { user_id: user.id, login: user.login, uuid, actor });
    return previous;
  }

  /**
   * Verifies `username:password` from a Basic header. Verified credentials are cached briefly
   * under their keyed hash; the shared auth revision is read on every call, so a revoke made by
   * any process takes effect on the next request. `beforeLookup` runs only when the credentials
   * are not in the cache, before they are looked up (the throttle counts the attempt there).
   */
  async verify(username: string, password: string, ip: string | null, beforeLookup?: () => Promise<void>): Promise<AppPasswordPrincipal> {
    const normalized = password.replace(/[^A-Za-z0-9]/g, '');
    const key = this.hash(`${username.toLowerCase()}\u0000${normalized}`);
    const revision = await this.deps.settings.authRevision();
    const cached = this.cache.get(key);
    if (cached && cached.revision === revision) {
      this.recordUsage(cached, ip);
      return cached.principal;
    }
    await beforeLookup?.();
    const entry = await this.lookup(username, normalized, revision);
    if (this.caching) this.cache.set(key, entry);
    this.recordUsage(entry, ip);
    return entry.principal;
  }

  private async lookup(username: string, normalized: string, revision: string): Promise<CacheEntry> {
    const columns = USER_COLUMNS.split(', ')
      .map((c) => `u.${c}`)
      .join(', ');
    const byLogin = `SELECT ${columns}, ap.uuid AS ap_uuid, ap.hash AS ap_hash, ap.last_used_at AS ap_last_used FROM users u LEFT JOIN app_passwords ap ON ap.user_id = u.id`;
    let rows = await this.deps.db.select<Record<string, unknown>>(`${byLogin} WHERE u.login = ?`, [username]);
    if (rows.length === 0 && username.includes('@')) rows = await this.deps.db.select<Record<string, unknown>>(`${byLogin} WHERE u.email = ?`, [username]);
    if (rows.length === 0) {
      throw username.includes('@')
        ? new ServiceError('invalid_email', 'Unknown email address. Check again or try your username.', 401)
        : new ServiceError('invalid_username', 'Unknown username. Check again or try your email address.', 401);
    }
    const user = toUser(rows[0]);
    const supplied = Buffer.from(this.hash(normalized), 'utf8');
    let match: Record<string, unknown> | null = null;
    for (const row of rows) {
      if (typeof row.ap_hash !== 'string' || row.ap_hash.length !== supplied.length) continue;
      // Every stored hash is compared in full, whichever matches.
      if (timingSafeEqual(Buffer.from(row.ap_hash, 'utf8'), supplied) && !match) match = row;
    }
    if (!match || normalized.length !== 24) throw new ServiceError('incorrect_password', 'The provided password is an invalid application password.', 401);
    if (user.status !== 'active') throw new ServiceError('svc_user_disabled', 'This account is disabled.', 401);
    return { principal: { user, uuid: String(match.ap_uuid) }, revision, lastUsed: toDate(match.ap_last_used)?.getTime() ?? null };
  }

  /** last_used / last_ip at most once a day, off the request path. */
  private recordUsage(entry: CacheEntry, ip: string | null): void {
    const now = this.deps.clock.now();
    if (entry.lastUsed !== null && now.getTime() - entry.lastUsed < DAY_MS) return;
    entry.lastUsed = now.getTime();
    const cutoff = new Date(now.getTime() - DAY_MS);
    const write = this.deps.db
      .execute('UPDATE app_passwords SET last_used_at = ?, last_ip = ? WHERE uuid = ? AND (last_used_at IS NULL OR last_used_at < ?)', [
        now,
        ip,
        entry.principal.uuid,
        cutoff,
      ])
      .catch((err) => this.deps.logger.warning('auth', 'Could not record application password use', { error: (err as Error).message }))
      .finally(() => this.writes.delete(write));
    this.writes.add(write);
  }

  /** Waits for usage writes still in flight (before the database closes). */
  async drain(): Promise<void> {
    await Promise.all([...this.writes]);
  }

  /** Used by tests and the revoke path in this process. */
  clearCache(): void {
    this.cache.clear();
  }
}
