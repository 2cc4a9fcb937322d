// Who is calling: application passwords over Basic, cookie sessions with the REST nonce, the login
// form. Failures are throttled in the database (throttle.ts): per client address for every
// kind of credential, and per user (growing delays) for the login form only, since application
// passwords are 24 random alphanumerics (~143 bits) that no rate of guessing can find, so a correct
// one is never refused because of what others did. Login-form checks (scrypt) are also bounded in
// number per process (password-checks.ts).
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { ServiceError } from '../../errors.js';
import { HOOKS, type HookBus } from '../../hooks/index.js';
import type { AppPasswordService } from './app-passwords.js';
import { addressKey, type AuthThrottle } from './throttle.js';
import type { LogService } from '../logs/index.js';
import type { PasswordCheckGate } from './password-checks.js';
import type { Session, SessionService } from './sessions.js';
import { roleCan, type User, type UserService } from '../users/index.js';

export { AppPasswordService } from './app-passwords.js';
export { PasswordCheckGate } from './password-checks.js';
export { SessionService } from './sessions.js';
export { AuthThrottle } from './throttle.js';

export interface Principal {
  user: User;
  via: 'app_password' | 'cookie';
  appPasswordUuid?: string;
  session?: Session;
}

export interface AuthServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  users: UserService;
  appPasswords: AppPasswordService;
  sessions: SessionService;
  hooks: HookBus;
  throttle: AuthThrottle;
  passwordChecks: PasswordCheckGate;
}

export function can(principal: Principal | null, capability: string): boolean {
  return principal !== null && roleCan(principal.user.role, capability);
}

/** Authenticates requests and throttles repeated failures. */
export class AuthService {
  private readonly deps: AuthServiceDeps;
  /** Basic checks under way, by address and credentials (see `authenticateBasic`). */
  private readonly basicInFlight = new Map<string, Promise<Principal>>();

  constructor(deps: AuthServiceDeps) {
    this.deps = deps;
  }

  /**
   * `Authorization: Basic ...` with an application password. Only the caller's address is
   * throttled; credentials verified within `auth.credential_cache_seconds` are accepted from the
   * cache without touching the counters.
   */
  async authenticateBasic(header: string, ip: string | null): Promise<Principal> {
    const address = addressKey(ip);
    const encoded = header.slice(6).trim();
    let decoded = '';
    if (/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) && encoded.length % 4 === 0) decoded = Buffer.from(encoded, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 1 || decoded.includes('\uFFFD')) {
      await this.throttled(() => this.deps.throttle.claimAddress(address), ip, null, null);
      this.fail(ip, null, null, 'rest_invalid_authorization', {});
      throw new ServiceError(
        'rest_invalid_authorization',
        'The Authorization header is not valid Basic credentials (base64 of login:application-password).',
        401,
      );
    }
    // Concurrent requests with the same credentials from the same address share one check: a
    // client's first burst (before its credential is cached) would otherwise take one throttle
    // slot each and be refused past the per-address limit although every one of them is right.
    const flightKey = `${address} ${encoded}`;
    let flight = this.basicInFlight.get(flightKey);
    if (!flight) {
      flight = this.checkBasic(decoded.slice(0, colon), decoded.slice(colon + 1), ip, address).finally(() => this.basicInFlight.delete(flightKey));
      this.basicInFlight.set(flightKey, flight);
    }
    return { ...(await flight) };
  }

  private async checkBasic(login: string, password: string, ip: string | null, address: string): Promise<Principal> {
    let claimed = false;
    try {
      const { user, uuid } = await this.deps.appPasswords.verify(login, password, ip, async () => {
        await this.throttled(() => this.deps.throttle.claimAddress(address), ip, login, null);
        claimed = true;
      });
      if (claimed) await this.deps.throttle.releaseAddress(address);
      return { user, via: 'app_password', appPasswordUuid: uuid };
    } catch (err) {
      if (err instanceof ServiceError && err.status === 401) this.fail(ip, login, null, err.code, { method: 'application_password' });
      throw err;
    }
  }

  /**
   * A shared bearer token (the metrics' `Authorization: Bearer`), checked by `matches`. Counted for
   * the address before the check, as every credential is, so that guessing it is throttled like
   * guessing an application password (429 `svc_too_many_attempts` once the address has used up its
   * window, whatever it sends); a match gives the count back. False for a wrong token, which is
   * logged and fires `cashtrack.auth.failed` with `code` (the refusal the caller answers) and `method`.
   */
  async checkBearer(matches: () => boolean, ip: string | null, method: string, code: string): Promise<boolean> {
    const address = addressKey(ip);
    await this.throttled(() => this.deps.throttle.claimAddress(address), ip, null, null);
    if (matches()) {
      await this.deps.throttle.releaseAddress(address);
      return true;
    }
    this.fail(ip, null, null, code, { method });
    return false;
  }

  /**
   * A session cookie. No nonce: anonymous (null). A wrong nonce: 403. A dead session: anonymous.
   */
  async authenticateCookie(token: string, nonce: string | null, ip: string | null): Promise<Principal | null> {
    if (nonce === null || nonce === '') return null;
    const session = await this.deps.sessions.resolve(token);
    if (!session) return null;
    await this.requireNonce(session, nonce, ip);
    return { user: session.user, via: 'cookie', session };
  }

  /**
   * Ends the session of a cookie. A live session must come with its REST nonce, so that another
   * site cannot log an administrator out; a dead one only has its cookie cleared.
   */
  async logout(token: string | null, nonce: string | null, ip: string | null): Promise<boolean> {
    const session = token ? await this.deps.sessions.resolve(token) : null;
    if (!session || !token) return false;
    await this.requireNonce(session, nonce ?? '', ip);
    const revoked = await this.deps.sessions.revoke(token);
    if (revoked) this.deps.logger.info('auth', 'Logged out', { user_id: session.user.id, session: session.uuid, ip });
    return revoked;
  }

  /**
   * The login form: password check, then a new session. The attempt is counted for the address
   * and for the user it names before the (slow) check, and given back when it succeeds.
   */
  async login(login: string, password: string, ip: string | null, userAgent: string | null): Promise<{ token: string; session: Session; nonce: string }> {
    const address = addressKey(ip);
    const release = this.busy(() => this.deps.passwordChecks.enter(address), ip, login);
    try {
      await this.throttled(() => this.deps.throttle.claimAddress(address), ip, login, null);
      const found = await this.deps.users.credentialsOf(login);
      if (found) {
        try {
          await this.throttled(() => this.deps.throttle.claimUser(found.user.id), ip, login, found.user.id);
        } catch (err) {
          // Nothing was checked: the address keeps its count.
          await this.deps.throttle.releaseAddress(address);
          throw err;
        }
      }
      const ok = await this.deps.users.checkPassword(password, found?.passwordHash ?? null);
      if (!found || !ok) {
        const code = !found ? (login.includes('@') ? 'invalid_email' : 'invalid_username') : 'incorrect_password';
        this.fail(ip, login, found?.user.id ?? null, code, { method: 'login' });
        // One answer for both so the form does not reveal which logins exist.
        throw new ServiceError('svc_invalid_credentials', 'The login or password is incorrect.', 401);
      }
      if (found.user.status !== 'active') {
        this.fail(ip, login, found.user.id, 'svc_user_disabled', { method: 'login' });
        throw new ServiceError('svc_user_disabled', 'This account is disabled.', 401);
      }
      // A hash made at a lower cost is replaced now that the password is known, with the session.
      const stored = found.passwordHash!;
      const rehashed = this.deps.users.needsRehash(stored) ? await this.deps.users.hashPassword(password) : null;
      const { token, session } = await this.deps.db.transaction(async (t) => {
        if (rehashed) await this.deps.users.upgradePasswordHash(found.user.id, stored, rehashed, t);
        return this.deps.sessions.create(found.user, ip, userAgent, t);
      });
      await this.deps.throttle.releaseAddress(address);
      await this.deps.throttle.clearUser(found.user.id);
      return { token, session, nonce: this.deps.sessions.createNonce(found.user.id, session.uuid) };
    } finally {
      release();
    }
  }

  /**
   * Sets a user's login password and revokes every session they have, so whoever knew the old
   * one is signed out: the one way `cashtrack users set-password` and `POST /users/{id}` do it.
   */
  async setPassword(userId: number, password: string, actor = 'system'): Promise<{ sessions_revoked: number }> {
    await this.deps.users.require(userId);
    await this.deps.users.setPassword(userId, password);
    const revoked = await this.deps.sessions.revokeAll(userId);
    this.deps.logger.info('auth', 'Login password set; sessions revoked', { user_id: userId, sessions_revoked: revoked, actor });
    return { sessions_revoked: revoked };
  }

  /**
   * The user whose application passwords `principal` asks for: `me` or their own id for anyone
   * signed in, another user's id only with `manage_options` (403 rest_forbidden otherwise, before
   * the user is looked up, so ids cannot be probed), 404 svc_user_not_found for no such user.
   */
  async appPasswordOwner(principal: Principal | null, id: number | 'me'): Promise<User> {
    if (!principal) throw new ServiceError('rest_not_logged_in', 'You are not currently logged in.', 401);
    const own = id === 'me' || id === principal.user.id;
    if (!own && !can(principal, 'manage_options')) {
      this.deps.logger.warning('auth', 'Forbidden: application passwords of another user', { user_id: principal.user.id, target: id });
      throw new ServiceError('rest_forbidden', 'Sorry, you are not allowed to do that.', 403);
    }
    return this.deps.users.require(own ? principal.user.id : id);
  }

  private async requireNonce(session: Session, nonce: string, ip: string | null): Promise<void> {
    if (this.deps.sessions.verifyNonce(nonce, session.user.id, session.uuid)) return;
    // Counted for the address only: the session token is itself a 256-bit secret.
    await this.deps.throttle.claimAddress(addressKey(ip), false);
    this.fail(ip, session.user.login, session.user.id, 'rest_cookie_invalid_nonce', { method: 'cookie', session: session.uuid });
    throw new ServiceError('rest_cookie_invalid_nonce', 'Cookie check failed', 403);
  }

  /** Runs a throttle claim; logs its refusal. */
  private async throttled(claim: () => Promise<void>, ip: string | null, login: string | null, userId: number | null): Promise<void> {
    try {
      await claim();
    } catch (err) {
      if (err instanceof ServiceError && err.status === 429) {
        this.deps.logger.warning('auth', 'Authentication throttled', { ip, login, user_id: userId, retry_after: err.data.retry_after });
      }
      throw err;
    }
  }

  private busy(enter: () => () => void, ip: string | null, login: string): () => void {
    try {
      return enter();
    } catch (err) {
      this.deps.logger.warning('auth', 'Login refused: too many password checks running', { ip, login });
      throw err;
    }
  }

  /** Logs one failure and fires the hook (never the secret that failed). */
  private fail(ip: string | null, login: string | null, userId: number | null, code: string, context: Record<string, unknown>): void {
    const details = { ...context, code, ip, login, ...(userId !== null ? { user_id: userId } : {}) };
    this.deps.logger.warning('auth', 'Authentication failed', details);
    this.deps.hooks.doAction(HOOKS.authFailed, details);
  }
}
