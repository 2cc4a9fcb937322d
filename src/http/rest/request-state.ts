// What the REST host keeps and reads of each request: its state (set as the request arrives),
// the client's address, the site URL the client used, and the session cookie.
import { isIP } from 'node:net';
import type { Request } from '@hapi/hapi';
import type { Context } from '../../context.js';
import type { Principal } from '../../services/auth/index.js';
import type { RouteDef } from './types.js';

export const SESSION_COOKIE = 'cashtrack_session';

export interface RestState {
  rest: boolean;
  requestId: string;
  ip: string | null;
  principal: Principal | null;
  /** Original query string (global params included), kept for Link headers. */
  search: string;
  envelope: boolean;
  fields: string[] | null;
  links: string[];
  noCache: boolean;
  replayed?: boolean;
  /** The body limit for this request when it is lower than the route's (no credentials). */
  maxBodyBytes?: number;
}

declare module '@hapi/hapi' {
  interface RequestApplicationState {
    cashtrack?: RestState;
  }
  interface PluginSpecificConfiguration {
    cashtrack?: { def?: RouteDef; auth?: 'public' | 'manage_options' | 'signed_in' | 'session' };
  }
}

export function state(request: Request): RestState {
  return request.app.cashtrack!;
}

/**
 * An address as a proxy writes it in X-Forwarded-For: IPv4 or IPv6, bare, in brackets, or with a
 * port (`203.0.113.9:51000`, `[2001:db8::1]:443`); null for anything else (`unknown`, a name, junk).
 */
export function forwardedAddress(entry: string): string | null {
  let value = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(value);
  if (bracketed) value = bracketed[1];
  else if (/^[\d.]+:\d{1,5}$/.test(value)) value = value.slice(0, value.indexOf(':'));
  // A zone (`fe80::1%eth0`) names an interface of the proxy's host, not a client, and has no bound on its length.
  return value.length <= 45 && !value.includes('%') && isIP(value) ? value : null;
}

/**
 * The client address, from X-Forwarded-For only when a trusted proxy is configured. An entry that
 * is not an address is not a counter of its own (every made-up value would get fresh throttle
 * counters): the socket's address, the proxy's, is used, and `unusable` is told the value.
 */
export function clientIp(request: Request, trustProxy: boolean, unusable?: (value: string) => void): string | null {
  if (trustProxy) {
    const fwd = request.headers['x-forwarded-for'];
    // The rightmost entry is the one our own proxy appended; entries left of it are the client's word.
    if (typeof fwd === 'string' && fwd.trim()) {
      const last = fwd.split(',').pop()!;
      const address = forwardedAddress(last);
      if (address) return address;
      unusable?.(last.trim());
    }
  }
  return request.info.remoteAddress ?? null;
}

/** Scheme, host and port the client used (public_url when configured). */
export function siteUrl(request: Request, ctx: Context): string {
  if (ctx.config.server.public_url) return ctx.config.server.public_url.replace(/\/+$/, '');
  const proto =
    ctx.config.server.trust_proxy && typeof request.headers['x-forwarded-proto'] === 'string'
      ? request.headers['x-forwarded-proto'].split(',')[0].trim()
      : request.server.info.protocol;
  return `${proto === 'https' ? 'https' : 'http'}://${request.info.host}`;
}

export function isHttps(request: Request, ctx: Context): boolean {
  return siteUrl(request, ctx).startsWith('https:');
}

/** One cookie's value from a Cookie header. */
export function readCookie(header: string | undefined, name: string): string | null {
  if (typeof header !== 'string') return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || null;
  }
  return null;
}
