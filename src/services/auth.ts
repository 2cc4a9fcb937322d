// Who is calling: application passwords over Basic, cookie sessions with the REST nonce, the login
// form; and the throttle on repeated failures per address and per login.
import { LRUCache } from 'lru-cache';
import type { Clock } from '../clock.js';
import { ServiceError } from '../errors.js';
import { HOOKS, type HookBus } from '../hooks/index.js';
import type { AppPasswordService } from './app-passwords.js';
import type { LogService } from './logs.js';
import type { Session, SessionService } from './sessions.js';
import { roleCan, verifyPassword, type User, type UserService } from './users.js';

export interface Principal {
  user: User;
  via: 'app_password' | 'cookie';
  appPasswordUuid?: string;
  session?: Session;
}

export interface ThrottleSettings {
  window_seconds: number;
  max_failures_per_address: number;
  max_failures_per_login: number;
}

interface Counter {
  failures: number;
  resetAt: number;
}

export interface AuthServiceDeps {
  clock: Clock;
  logger: LogService;
  users: UserService;
  appPasswords: AppPasswordService;
  sessions: SessionService;
  hooks: HookBus;
  throttle: ThrottleSettings;
}

export function can(principal: Principal | null, capability: string): boolean {
  return principal !== null && roleCan(principal.user.role, capability);
}

/** Authenticates requests and throttles repeated failures. */
export class AuthService {
  private readonly deps: AuthServiceDeps;
  // Per process: each daemon throttles what it sees. Bounded so a flood of addresses cannot grow it.
  private readonly byAddress = new LRUCache<string, Counter>({ max: 20_000 });
  private readonly byLogin = new LRUCache<string, Counter>({ max: 20_000 });

  constructor(deps: AuthServiceDeps) {
    this.deps = deps;
  }

  /** `Authorization: Basic ...` with an application password. */
  async authenticateBasic(header: string, ip: string | null): Promise<Principal> {
    const encoded = header.slice(6).trim();
    let decoded = '';
    if (/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) && encoded.length % 4 === 0) decoded = Buffer.from(encoded, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 1 || decoded.includes('\uFFFD')) {
      this.fail(ip, null, 'rest_invalid_authorization', {});
      throw new ServiceError('rest_invalid_authorization', 'The Authorization header is not valid Basic credentials (base64 of login:application-password).', 401);
    }
    const login = decoded.slice(0, colon);
    const password = decoded.slice(colon + 1);
    this.checkThrottle(ip, login);
    try {
      const { user, uuid } = await this.deps.appPasswords.verify(login, password, ip);
      this.byLogin.delete(login.toLowerCase());
      return { user, via: 'app_password', appPasswordUuid: uuid };
    } catch (err) {
      if (err instanceof ServiceError && err.status === 401) this.fail(ip, login, err.code, { method: 'application_password' });
      throw err;
    }
  }

  /**
   * A session cookie. No nonce: anonymous (null). A wrong nonce: 403. A dead session: anonymous.
   */
  async authenticateCookie(token: string, nonce: string | null, ip: string | null): Promise<Principal | null> {
    if (nonce === null || nonce === '') return null;
    const session = await this.deps.sessions.resolve(token);
    if (!session) return null;
    if (!this.deps.sessions.verifyNonce(nonce, session.user.id, session.uuid)) {
      this.fail(ip, session.user.login, 'rest_cookie_invalid_nonce', { method: 'cookie', session: session.uuid });
      throw new ServiceError('rest_cookie_invalid_nonce', 'Cookie check failed', 403);
    }
    return { user: session.user, via: 'cookie', session };
  }

  /** The login form: password check, then a new session. */
  async login(login: string, password: string, ip: string | null, userAgent: string | null): Promise<{ token: string; session: Session; nonce: string }> {
    this.checkThrottle(ip, login);
    const found = await this.deps.users.credentialsOf(login);
    const ok = await verifyPassword(password, found?.passwordHash ?? null);
    if (!found || !ok) {
      const code = !found ? (login.includes('@') ? 'invalid_email' : 'invalid_username') : 'incorrect_password';
      this.fail(ip, login, code, { method: 'login' });
      // One answer for both so the form does not reveal which logins exist.
      throw new ServiceError('svc_invalid_credentials', 'The login or password is incorrect.', 401);
    }
    if (found.user.status !== 'active') {
      this.fail(ip, login, 'svc_user_disabled', { method: 'login' });
      throw new ServiceError('svc_user_disabled', 'This account is disabled.', 401);
    }
    this.byLogin.delete(login.toLowerCase());
    const { token, session } = await this.deps.sessions.create(found.user, ip, userAgent);
    return { token, session, nonce: this.deps.sessions.createNonce(found.user.id, session.uuid) };
  }

  private checkThrottle(ip: string | null, login: string | null): void {
    const now = this.deps.clock.now().getTime();
    const { max_failures_per_address: perAddress, max_failures_per_login: perLogin } = this.deps.throttle;
    const blocked = [ip ? [this.byAddress.get(ip), perAddress] : null, login ? [this.byLogin.get(login.toLowerCase()), perLogin] : null] as const;
    for (const pair of blocked) {
      if (!pair) continue;
      const [counter, max] = pair as [Counter | undefined, number];
      if (counter && counter.resetAt > now && counter.failures >= max) {
        const retry = Math.max(1, Math.ceil((counter.resetAt - now) / 1000));
        this.deps.logger.warning('auth', 'Authentication throttled', { ip, login, retry_after: retry });
        throw new ServiceError('svc_too_many_attempts', `Too many failed authentication attempts. Try again in ${retry} seconds.`, 429, { retry_after: retry }, { 'Retry-After': String(retry) });
      }
    }
  }

  /** Counts and logs one failure (never the secret that failed). */
  private fail(ip: string | null, login: string | null, code: string, context: Record<string, unknown>): void {
    const now = this.deps.clock.now().getTime();
    const windowMs = this.deps.throttle.window_seconds * 1000;
    const bump = (cache: LRUCache<string, Counter>, key: string) => {
      const c = cache.get(key);
      if (!c || c.resetAt <= now) cache.set(key, { failures: 1, resetAt: now + windowMs });
      else c.failures++;
    };
    if (ip) bump(this.byAddress, ip);
    if (login) bump(this.byLogin, login.toLowerCase());
    this.deps.logger.warning('auth', 'Authentication failed', { ...context, code, ip, login });
    this.deps.hooks.doAction(HOOKS.authFailed, { ...context, code, ip, login });
  }
}
