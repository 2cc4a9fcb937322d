// The postback endpoint's own credentials, never the admin ones: a shared token (kept only as a
// keyed hash) or an HMAC-SHA256 signature over timestamp and raw request (the secret kept
// encrypted, since verifying needs it), plus an optional IP allowlist. Every comparison is
// constant-time over equal-length digests.
import { BlockList, isIP } from 'node:net';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { tokenHash, type PostbackTarget } from '../networks/index.js';
import type { ParamMap } from './input.js';

/** Header carrying the shared token (or the `token` query parameter). */
export const TOKEN_HEADER = 'x-postback-token';
/** Header carrying `t=<unix seconds>,v1=<hex>` (several v1 allowed). */
export const SIGNATURE_HEADER = 'x-postback-signature';

/** Constant-time equality of two strings of any length (both are hashed to 32 bytes first). */
export function safeEqual(a: string, b: string): boolean {
  const key = randomBytes(32);
  const ha = createHmac('sha256', key).update(a).digest();
  const hb = createHmac('sha256', key).update(b).digest();
  return timingSafeEqual(ha, hb);
}

/** The hex HMAC-SHA256 of `<t>.<payload>`. */
export function signPayload(secret: string | Buffer, t: number, payload: Buffer | string): string {
  return createHmac('sha256', secret).update(`${t}.`).update(payload).digest('hex');
}

export interface SignatureHeader {
  t: number;
  v1: string[];
  /** Signatures made with the daemon's own test key (test postbacks in token mode). */
  test: string[];
}

/** Reads `t=1700000000,v1=ab12...,v1=...`; null when it is not that shape. */
export function parseSignatureHeader(value: unknown): SignatureHeader | null {
  if (typeof value !== 'string' || value.length > 1024) return null;
  const out: SignatureHeader = { t: NaN, v1: [], test: [] };
  for (const part of value.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 1) return null;
    const k = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (k === 't') {
      if (!/^\d{1,12}$/.test(v) || !Number.isNaN(out.t)) return null;
      out.t = Number(v);
    } else if (k === 'v1' || k === 'test') {
      if (!/^[0-9a-f]{64}$/i.test(v)) return null;
      out[k === 'v1' ? 'v1' : 'test'].push(v.toLowerCase());
    }
  }
  return Number.isNaN(out.t) || out.v1.length + out.test.length === 0 ? null : out;
}

/** True when one of `candidates` is the signature of `payload` at `t` under `secret` (each compared in constant time). */
export function signatureMatches(secret: string | Buffer, t: number, payload: Buffer | string, candidates: string[]): string | null {
  const expected = Buffer.from(signPayload(secret, t, payload), 'hex');
  let match: string | null = null;
  for (const c of candidates.slice(0, 8)) {
    if (timingSafeEqual(expected, Buffer.from(c, 'hex')) && match === null) match = c;
  }
  return match;
}

/** The daemon's own key for signing test postbacks of one network (never leaves the process). */
export function testSigningKey(key: Buffer, network: string): Buffer {
  return createHmac('sha256', key).update(`postback-test\0${network}`).digest();
}

/** An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) as the IPv4 address it is. */
function plainAddress(ip: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return m ? m[1] : ip;
}

/** Whether `ip` falls in one of the (normalised) CIDRs. An empty list allows every address. */
export function ipAllowed(allowlist: string[], ip: string | null): boolean {
  if (allowlist.length === 0) return true;
  if (!ip) return false;
  const address = plainAddress(ip);
  const family = isIP(address);
  if (!family) return false;
  const list = new BlockList();
  for (const cidr of allowlist) {
    const [net, bits] = cidr.split('/');
    list.addSubnet(net, Number(bits), isIP(net) === 6 ? 'ipv6' : 'ipv4');
  }
  return list.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** A postback's authentication: the replay key of a signed request, or why it was refused; `presented` lists the credentials to redact. */
export type Auth = { ok: true; replayKey: string | null; presented: string[] } | { ok: false; reason: string; presented: string[] };

/** What `authenticate` reads of a postback request. */
export interface AuthRequest {
  method: 'GET' | 'POST';
  rawQuery: string;
  rawBody: Buffer | null;
  tokenHeader: string | null;
  signatureHeader: string | null;
  ip: string | null;
}

/** What `authenticate` needs besides the request: the time, the postback key, the window, and the network's sealed HMAC secret opened. */
export interface AuthEnv {
  now: Date;
  key: Buffer;
  toleranceSeconds: number;
  openSecret: (sealed: string) => string;
}

/**
 * Checks a postback against its network's credentials: the IP allowlist, then one token (kept
 * as a keyed hash) or an HMAC signature within the time window (the previous secret while it
 * is still valid after a rotation). A test postback in token mode is signed with the daemon's
 * own key and is good for a test record only.
 */
export function authenticate(target: PostbackTarget, req: AuthRequest, query: ParamMap, test: boolean, env: AuthEnv): Auth {
  const presented: string[] = [];
  if (!ipAllowed(target.ipAllowlist, req.ip)) return { ok: false, reason: 'ip_not_allowed', presented };
  const queryTokens = [...new Set(([] as string[]).concat(query.token ?? []))];
  const tokens = [...new Set([...queryTokens, ...(req.tokenHeader ? [req.tokenHeader] : [])])];
  presented.push(...tokens);
  const signature = req.signatureHeader ? parseSignatureHeader(req.signatureHeader) : null;
  if (req.signatureHeader) presented.push(req.signatureHeader);
  if (req.signatureHeader && !signature) return { ok: false, reason: 'malformed_signature', presented };
  if (!target.secret) return { ok: false, reason: 'no_secret_configured', presented };
  if (tokens.length > 1) return { ok: false, reason: 'ambiguous_token', presented };

  const now = env.now;
  const payload = req.method === 'GET' ? req.rawQuery : (req.rawBody ?? Buffer.alloc(0));
  const fresh = signature ? Math.abs(now.getTime() / 1000 - signature.t) <= env.toleranceSeconds : false;
  // A test postback in token mode: signed with the daemon's own key, good for a test record only.
  if (test && signature?.test.length) {
    if (!fresh) return { ok: false, reason: 'stale_signature', presented };
    return signatureMatches(testSigningKey(env.key, target.id), signature.t, payload, signature.test)
      ? { ok: true, replayKey: null, presented }
      : { ok: false, reason: 'bad_signature', presented };
  }
  const secrets = [target.secret, ...(target.previousSecret && target.previousUntil && target.previousUntil > now ? [target.previousSecret] : [])];
  let reason = tokens.length || signature ? 'bad_credentials' : 'missing_credentials';
  for (const stored of secrets) {
    if (stored.startsWith('h1:')) {
      if (tokens.length === 1 && safeEqual(tokenHash(env.key, target.id, tokens[0]), stored)) return { ok: true, replayKey: null, presented };
      if (tokens.length) reason = 'bad_token';
    } else if (signature?.v1.length) {
      if (!fresh) return { ok: false, reason: 'stale_signature', presented };
      // A POST's query string is not signed: it may carry nothing.
      if (req.method === 'POST' && req.rawQuery) return { ok: false, reason: 'unsigned_query', presented };
      const match = signatureMatches(env.openSecret(stored), signature.t, payload, signature.v1);
      if (match) return { ok: true, replayKey: createHash('sha256').update(`${target.id}:${match}`).digest('hex'), presented };
      reason = 'bad_signature';
    }
  }
  return { ok: false, reason, presented };
}
