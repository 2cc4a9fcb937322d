// What the outbound guard takes and gives (src/outbound/guard.ts), and its one error, which callers
// also raise when they refuse what it fetched (a logo that is not an image).
import type { LookupFunction } from 'node:net';
import { ServiceError } from '../errors.js';

export type FetchBlockedReason =
  | 'invalid_url'
  | 'scheme'
  | 'port'
  | 'private_address'
  | 'too_many_redirects'
  | 'too_large'
  | 'timeout'
  | 'connection_failed'
  | 'not_an_image'
  | 'unsupported_type'
  | 'http_status';

export interface OutboundRequest {
  method?: 'GET' | 'POST' | 'HEAD';
  /** Sent to the first URL's origin only: dropped on a redirect to another origin. */
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Default `outbound.max_bytes` (2 MB); enforced while reading. */
  maxBytes?: number;
  /**
   * Past `maxBytes`: `refuse` (default) fails with `too_large`; `truncate` stops reading there and
   * answers what was read with `truncated: true` (for callers that need only the status, such as a
   * webhook delivery).
   */
  overflow?: 'refuse' | 'truncate';
  /** Default 5000: DNS, connect and response headers, per hop. */
  connectTimeoutMs?: number;
  /** Default 15000: the whole request, redirects and body included. */
  timeoutMs?: number;
  /** Default 3; 0 = do not follow (a 3xx is returned as is). */
  maxRedirects?: number;
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  /** Set when `overflow: 'truncate'` cut the body off at `maxBytes`. */
  truncated?: true;
  /** The final URL, after redirects. */
  url: string;
  /** Every URL redirected to, in order. */
  redirects: string[];
}

/** What `OutboundGuard.stream` answers: the response with its body still to be read. */
export interface OutboundStream extends Omit<OutboundResponse, 'body' | 'truncated'> {
  /** Bounded as it is read; destroyed with svc_fetch_blocked on a refusal. Destroy it to stop early. */
  body: import('node:stream').Readable;
}

export interface OutboundGuardOptions {
  /**
   * Host names, addresses and CIDRs that may be reached although private, each with the port it
   * opens (`host:8080`, `[fd00::1]:8443`, `host:*` for every port); an entry without a port opens
   * the ports of `ports` only.
   */
  allow: string[];
  /** Ports any public destination may use (and a port-less allow entry). */
  ports: number[];
  maxBytes?: number;
  /** DNS lookup (tests resolve names of their own); default node:dns. */
  lookup?: LookupFunction;
  /**
   * Where refusals are logged (source `outbound`): a refused destination at `warning`; a timeout, a
   * body over the cap or a connection failure at `debug`, since the caller reports those in its own
   * terms (a network's sync error, a logo's attempts, a webhook delivery's `last_error`).
   */
  logger?: { write(level: 'warning' | 'debug', source: string, message: string, context?: Record<string, unknown>): void };
}

/** 422 svc_fetch_blocked with `data.reason`: the one error of the guard, and of callers refusing what it fetched. */
export function fetchBlocked(reason: FetchBlockedReason, message: string, data: object = {}): ServiceError {
  return new ServiceError('svc_fetch_blocked', message, 422, { ...data, reason });
}
