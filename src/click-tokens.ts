// The `/go/{token}` tokens: made by the namespace (an advertiser's or a coupon's link for a
// member), checked by the public click endpoint. A token is `<payload>.<mac>`, both base64url
// without padding: the payload a JSON array [1, member id, network, advertiser, coupon id or null,
// deep link or null, expiry in unix seconds], the mac its HMAC-SHA256 (32 bytes) with the
// `click-token` key derived from the secret. Whoever does not hold the secret can make no token,
// so nobody can click in another member's name or send a visitor anywhere through us.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Clock } from './clock.js';
import type { SelfUrl } from './self-url.js';

/** What a token carries. */
export interface ClickGrant {
  member_id: number;
  network: string;
  advertiser: string;
  coupon_id: number | null;
  url: string | null;
  expires_at: Date;
}

/** A token's link, as the link routes answer it beside the direct link. */
export interface GoLink {
  go_token: string;
  /** `<base URL>/go/<token>`; null while the daemon's base URL is unknown (a CLI without `server.public_url`). */
  go_url: string | null;
  go_expires_at: string;
}

/** Why a token was refused (logged, never shown: the page says only that the link is not valid). */
export type TokenRefusal = 'malformed' | 'forged' | 'expired';

/** The longest token read (a 2,000-character deep link and the rest fit well below). */
export const MAX_TOKEN = 4096;

export class ClickTokens {
  constructor(private readonly deps: { key: Buffer; clock: Clock; selfUrl: Pick<SelfUrl, 'get'>; ttlSeconds: number }) {}

  private mac(payload: string): Buffer {
    return createHmac('sha256', this.deps.key).update(payload, 'ascii').digest();
  }

  /** A signed token for the grant, valid `clicks.token_ttl_seconds` from now. */
  link(grant: Omit<ClickGrant, 'expires_at'>): GoLink {
    const expires = Math.floor(this.deps.clock.now().getTime() / 1000) + this.deps.ttlSeconds;
    const payload = Buffer.from(JSON.stringify([1, grant.member_id, grant.network, grant.advertiser, grant.coupon_id, grant.url, expires]), 'utf8').toString(
      'base64url',
    );
    const token = `${payload}.${this.mac(payload).toString('base64url')}`;
    const base = this.deps.selfUrl.get();
    return { go_token: token, go_url: base ? `${base}/go/${token}` : null, go_expires_at: new Date(expires * 1000).toISOString() };
  }

  /** The grant of a token, or why it is refused. */
  read(token: string): ClickGrant | TokenRefusal {
    if (typeof token !== 'string' || token.length > MAX_TOKEN) return 'malformed';
    const dot = token.indexOf('.');
    if (dot <= 0 || token.indexOf('.', dot + 1) >= 0) return 'malformed';
    const payload = token.slice(0, dot);
    const mac = token.slice(dot + 1);
    if (!/^[A-Za-z0-9_-]+$/.test(payload) || !/^[A-Za-z0-9_-]{43}$/.test(mac)) return 'malformed';
    const given = Buffer.from(mac, 'base64url');
    if (given.length !== 32 || !timingSafeEqual(given, this.mac(payload))) return 'forged';
    let fields: unknown;
    try {
      fields = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return 'malformed';
    }
    if (!Array.isArray(fields) || fields.length !== 7 || fields[0] !== 1) return 'malformed';
    const [, member, network, advertiser, coupon, url, expires] = fields;
    if (
      !Number.isSafeInteger(member) ||
      typeof network !== 'string' ||
      typeof advertiser !== 'string' ||
      !(coupon === null || Number.isSafeInteger(coupon)) ||
      !(url === null || typeof url === 'string') ||
      !Number.isSafeInteger(expires)
    )
      return 'malformed';
    if (expires * 1000 <= this.deps.clock.now().getTime()) return 'expired';
    return { member_id: member, network, advertiser, coupon_id: coupon, url, expires_at: new Date(expires * 1000) };
  }
}
