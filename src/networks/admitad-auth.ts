// Admitad's OAuth2 client-credentials tokens (reference/networks.md §2.1): POST /token/,
// form-encoded, with Basic base64(client_id:client_secret). A token is cached until shortly
// before `expires_in` runs out (by the runtime's clock), renewed with the refresh_token grant
// when it expires or a call answers 401, and fetched afresh with client credentials when the
// refresh is refused. One request at a time per account: concurrent callers share it.
import { createHash } from 'node:crypto';
import { type NetworkHttp, buildUrl } from './http.js';
import { NetworkError, isNetworkError } from './network-error.js';
import type { ModuleRuntime } from './types.js';
import { obj, text } from './values.js';

export interface AdmitadAccount {
  base: string;
  clientId: string;
  clientSecret: string;
  scope: string;
}

interface Token {
  access: string;
  refresh: string | null;
  /** Runtime-clock milliseconds after which the token is not used. */
  expiresAt: number;
  stale: boolean;
}

export class AdmitadTokens {
  private readonly cache = new Map<string, Token>();
  private readonly inflight = new Map<string, Promise<Token>>();

  constructor(private readonly http: NetworkHttp) {}

  /** The secrets a request must scrub: client secret, Basic credentials, live tokens. */
  secrets(a: AdmitadAccount): string[] {
    const t = this.cache.get(key(a));
    return [a.clientSecret, basic(a), ...(t ? [t.access, t.refresh ?? ''] : [])];
  }

  /** A usable access token, refreshing or fetching one when needed. */
  async token(rt: ModuleRuntime, a: AdmitadAccount): Promise<string> {
    const k = key(a);
    const cached = this.cache.get(k);
    if (cached && !cached.stale && rt.now().getTime() < cached.expiresAt) return cached.access;
    let pending = this.inflight.get(k);
    if (!pending) {
      pending = this.renew(rt, a, cached).finally(() => this.inflight.delete(k));
      this.inflight.set(k, pending);
    }
    return (await pending).access;
  }

  /** A call answered 401 with `access`: that token is not used again. */
  reject(a: AdmitadAccount, access: string): void {
    const cached = this.cache.get(key(a));
    if (cached && cached.access === access) cached.stale = true;
  }

  private async renew(rt: ModuleRuntime, a: AdmitadAccount, previous: Token | undefined): Promise<Token> {
    let token: Token | null = null;
    if (previous?.refresh) {
      try {
        token = await this.grant(
          rt,
          a,
          { grant_type: 'refresh_token', client_id: a.clientId, client_secret: a.clientSecret, refresh_token: previous.refresh },
          false,
        );
      } catch (err) {
        // A refused refresh token falls back to client credentials; anything else is a real failure.
        if (!isNetworkError(err, 'svc_network_unauthorized') && !isNetworkError(err, 'svc_network_bad_request')) throw err;
        rt.log('info', 'admitad: the refresh token was refused; requesting a new token', { network: 'admitad' });
      }
    }
    if (!token) {
      token = await this.grant(rt, a, { grant_type: 'client_credentials', client_id: a.clientId, scope: a.scope }, true);
    }
    this.cache.set(key(a), token);
    return token;
  }

  private async grant(rt: ModuleRuntime, a: AdmitadAccount, form: Record<string, string>, withBasic: boolean): Promise<Token> {
    const started = rt.now().getTime();
    if (withBasic) rt.addSecret?.(basic(a));
    const res = await this.http.json<unknown>(rt, {
      method: 'POST',
      url: buildUrl(a.base, '/token/'),
      headers: withBasic ? { Authorization: `Basic ${basic(a)}` } : {},
      form,
      secrets: [a.clientSecret, basic(a), form.refresh_token ?? ''],
    });
    const body = obj(res.data);
    const access = text(body.access_token);
    const expiresIn = Number(body.expires_in);
    if (!access || !Number.isFinite(expiresIn) || expiresIn <= 0) {
      throw new NetworkError('svc_network_bad_response', 'Admitad answered the token request without an access token and expiry.', {
        network: 'admitad',
        upstreamStatus: res.status,
      });
    }
    // Tokens are secrets like the credentials: the process scrubs them from whatever it logs or stores.
    rt.addSecret?.(access);
    const refresh = text(body.refresh_token);
    if (refresh) rt.addSecret?.(refresh);
    // Renew a little early (10% of the lifetime, at most a minute) so a token does not die in flight.
    const margin = Math.min(60_000, expiresIn * 100);
    return { access, refresh, expiresAt: started + expiresIn * 1000 - margin, stale: false };
  }
}

function basic(a: AdmitadAccount): string {
  return Buffer.from(`${a.clientId}:${a.clientSecret}`).toString('base64');
}

function key(a: AdmitadAccount): string {
  const secret = createHash('sha256').update(a.clientSecret).digest('hex').slice(0, 16);
  return [a.base, a.clientId, secret, a.scope].join('\u0000');
}
