// A network's postback credentials as the network stores them: the mode, a new secret, the keyed
// hash a token is kept as (bound to its network), and the IP allowlist in canonical form. The
// postback endpoint checks a request against them (services/postbacks/auth.ts).
import { isIP } from 'node:net';
import { createHmac, randomBytes } from 'node:crypto';
import { ServiceError } from '../../errors.js';

export const POSTBACK_MODES = ['token', 'hmac'] as const;
export type PostbackMode = (typeof POSTBACK_MODES)[number];

/** A new postback secret: 256 bits from the CSPRNG, URL-safe (43 characters). */
export function newPostbackSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** `h1:<hex>`: the keyed hash a token is stored as, bound to its network. */
export function tokenHash(key: Buffer, network: string, token: string): string {
  return `h1:${createHmac('sha256', key).update(`${network}\0${token}`).digest('hex')}`;
}

const MAX_ALLOWLIST = 100;

/** Validates CIDRs (or bare addresses) and returns them canonical; 400 svc_invalid_ip_allowlist. */
export function normaliseAllowlist(entries: unknown): string[] {
  if (!Array.isArray(entries)) throw new ServiceError('svc_invalid_ip_allowlist', 'The IP allowlist must be a list of addresses or CIDR ranges.', 400);
  if (entries.length > MAX_ALLOWLIST) throw new ServiceError('svc_invalid_ip_allowlist', `The IP allowlist holds at most ${MAX_ALLOWLIST} entries.`, 400);
  const out: string[] = [];
  for (const entry of entries) {
    const text = typeof entry === 'string' ? entry.trim() : '';
    const [address, prefix, extra] = text.split('/');
    const family = isIP(address ?? '');
    const max = family === 6 ? 128 : 32;
    const bits = prefix === undefined ? max : /^\d{1,3}$/.test(prefix) ? Number(prefix) : NaN;
    if (!family || extra !== undefined || !(bits >= 0 && bits <= max)) {
      throw new ServiceError(
        'svc_invalid_ip_allowlist',
        `"${String(entry).slice(0, 64)}" is not an IP address or CIDR range (e.g. 203.0.113.0/24 or 2001:db8::/32).`,
        400,
        { entry: String(entry).slice(0, 64) },
      );
    }
    out.push(`${address.toLowerCase()}/${bits}`);
  }
  return [...new Set(out)];
}
