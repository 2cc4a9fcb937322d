// What a click keeps of the client, never the raw values: the address reduced to its network
// (/24 for IPv4, /48 for IPv6) and a keyed hash of the user agent (HMAC-SHA256 with a key derived
// from the secret, 128 bits in hex), enough to tell whether two clicks came from the same browser
// and network, not who made them.
import { createHmac } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';

/** "203.0.113.0/24", "2001:db8:12::/48", or null for anything that is not an address. */
export function addressPrefix(ip: string | null | undefined): string | null {
  if (!ip) return null;
  let address = ip.trim();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) address = mapped[1];
  if (isIPv4(address)) {
    const [a, b, c] = address.split('.');
    return `${Number(a)}.${Number(b)}.${Number(c)}.0/24`;
  }
  if (isIPv6(address)) {
    const groups = expandIPv6(address.split('%')[0]);
    if (!groups) return null;
    const head = groups.slice(0, 3).map((g) => g.toString(16));
    return `${head.join(':')}::/48`;
  }
  return null;
}

function expandIPv6(address: string): number[] | null {
  let text = address.toLowerCase();
  // A trailing IPv4 part counts as two groups.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1].split('.').map(Number);
    text = `${text.slice(0, -v4[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [left, right] = text.split('::');
  const part = (s: string | undefined) => (s ? s.split(':').filter((g) => g !== '') : []);
  const l = part(left);
  const r = part(right);
  const fill = text.includes('::') ? 8 - l.length - r.length : 0;
  if (fill < 0) return null;
  const groups = [...l, ...Array.from({ length: fill }, () => '0'), ...r].map((g) => Number.parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

/** The keyed hash of a user agent (32 hex characters), or null when none was sent. */
export function userAgentHash(key: Buffer, userAgent: string | null | undefined): string | null {
  if (!userAgent) return null;
  return createHmac('sha256', key).update(userAgent.slice(0, 1024), 'utf8').digest('hex').slice(0, 32);
}
