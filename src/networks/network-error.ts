// The error a network module throws when a network's API fails it. It is a ServiceError, so the
// REST host and the CLI report it like any other; `status` is what *our* API answers (a failing
// upstream is a 502/503/504 for us, never the upstream's 401, which would read as "you are not
// logged in"), and the upstream's own HTTP status rides along as `upstreamStatus`.
import { ServiceError } from '../errors.js';

export type NetworkErrorCode =
  /** HTML, XML, truncated or otherwise unreadable JSON, an unexpected shape, a redirect. */
  | 'svc_network_bad_response'
  /** 401, or a 403 that is not a throttle: the credentials or ids are wrong. */
  | 'svc_network_unauthorized'
  /** 429 (or a throttling 403) that outlasted the retries or asked for too long a wait. */
  | 'svc_network_rate_limited'
  /** 5xx or a connection failure that outlasted the retries. */
  | 'svc_network_unavailable'
  /** No answer within the per-request timeout, after the retries. */
  | 'svc_network_timeout'
  /** Another 4xx: the network refused the request itself (e.g. a date window too wide). */
  | 'svc_network_bad_request'
  /** 404 for something the module expected to exist. */
  | 'svc_network_not_found'
  /** The runtime's signal was aborted (job cancelled, daemon stopping). */
  | 'svc_network_aborted'
  /** A required setting (credential, id) is missing or malformed. */
  | 'svc_network_not_configured'
  /** A custom feed redirected to another origin: its headers and settings are not sent there. */
  | 'svc_network_redirect_refused'
  /** A custom feed would send a secret setting over plain http to a host that is not loopback. */
  | 'svc_network_insecure_feed';

const OUR_STATUS: Record<NetworkErrorCode, number> = {
  svc_network_bad_response: 502,
  svc_network_unauthorized: 502,
  svc_network_rate_limited: 503,
  svc_network_unavailable: 502,
  svc_network_timeout: 504,
  svc_network_bad_request: 502,
  svc_network_not_found: 502,
  svc_network_aborted: 503,
  svc_network_not_configured: 409,
  svc_network_redirect_refused: 502,
  svc_network_insecure_feed: 409,
};

export interface NetworkErrorDetails {
  network: string;
  /** The upstream HTTP status, when there was a response. */
  upstreamStatus?: number | null;
  /** A short, secret-scrubbed start of the upstream body. */
  excerpt?: string | null;
  /** How long the network asked us to wait, when it said. */
  retryAfterMs?: number | null;
  attempts?: number;
  /**
   * The exact secret values of the call (the network's secret settings, tokens): scrubbed from
   * the message and the excerpt here, so whatever shows or stores the error cannot leak them.
   */
  secrets?: readonly string[];
}

export class NetworkError extends ServiceError {
  declare readonly code: NetworkErrorCode;
  readonly network: string;
  readonly upstreamStatus: number | null;
  readonly excerpt: string | null;
  readonly retryAfterMs: number | null;
  readonly attempts: number;

  constructor(code: NetworkErrorCode, message: string, details: NetworkErrorDetails) {
    const retryAfterMs = details.retryAfterMs ?? null;
    const secrets = details.secrets ?? [];
    const excerpt = details.excerpt ? scrubSecrets(details.excerpt, secrets) : null;
    const data: Record<string, unknown> = { network: details.network };
    if (details.upstreamStatus != null) data.upstream_status = details.upstreamStatus;
    if (excerpt) data.excerpt = excerpt;
    if (details.attempts) data.attempts = details.attempts;
    const headers: Record<string, string> = {};
    if (code === 'svc_network_rate_limited' && retryAfterMs != null) headers['Retry-After'] = String(Math.max(1, Math.ceil(retryAfterMs / 1000)));
    super(code, scrubSecrets(message, secrets), OUR_STATUS[code], data, headers);
    this.name = 'NetworkError';
    this.network = details.network;
    this.upstreamStatus = details.upstreamStatus ?? null;
    this.excerpt = excerpt;
    this.retryAfterMs = retryAfterMs;
    this.attempts = details.attempts ?? 0;
  }
}

export function isNetworkError(err: unknown, code?: NetworkErrorCode): err is NetworkError {
  return err instanceof NetworkError && (code === undefined || err.code === code);
}

const EXCERPT_CHARS = 200;
// Credentials in common shapes: auth schemes, JSON members, form/query pairs.
const SCHEME = /\b(Bearer|Basic|Token)(\s+(?:token=)?)[A-Za-z0-9._~+/=-]{4,}/gi;
const PAIR =
  /("?(?:access[_-]?token|refresh[_-]?token|client[_-]?secret|auth[_-]?token|accessToken|token|password|secret|authorization|api[_-]?key|signature)"?\s*[:=]\s*"?)([^"&\s,;}]+)/gi;

/**
 * Removes every known secret (and anything shaped like a credential) from `text`. `secrets` are
 * the exact values the caller sent (token, client secret, encoded Basic credentials); values
 * shorter than 4 characters are ignored, since replacing them would shred the text and they
 * cannot be real credentials.
 */
export function scrubSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) {
    if (!secret || secret.length < 4) continue;
    for (const form of new Set([secret, encodeURIComponent(secret), new URLSearchParams({ v: secret }).toString().slice(2)]))
      out = out.split(form).join('[redacted]');
  }
  return out.replace(SCHEME, '$1$2[redacted]').replace(PAIR, '$1[redacted]');
}

/** A one-line, bounded, scrubbed excerpt of an upstream body for an error or a log line. */
export function bodyExcerpt(text: string, secrets: readonly string[] = []): string | null {
  const flat = text
    .slice(0, 4 * EXCERPT_CHARS)
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (!flat) return null;
  const scrubbed = scrubSecrets(flat, secrets);
  return scrubbed.length > EXCERPT_CHARS ? `${scrubbed.slice(0, EXCERPT_CHARS)}…` : scrubbed;
}

/**
 * A path for messages and logs: its query's secret-looking values blanked, and the exact `secrets`
 * removed wherever they are (a path segment, a parameter with an innocent name).
 */
export function safePath(url: URL, secrets: readonly string[] = []): string {
  const params = new URLSearchParams(url.search);
  for (const key of [...params.keys()]) if (/token|secret|password|key|signature|auth/i.test(key)) params.set(key, '[redacted]');
  const query = params.toString();
  return scrubSecrets(query ? `${url.pathname}?${query}` : url.pathname, secrets);
}
