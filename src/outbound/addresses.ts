// Which destinations an outbound request may reach: the address rules (everything ipaddr.js does
// not call unicast, plus IPv4-compatible IPv6, which it does) and the configured allow list of
// host names, addresses and CIDRs. Shared by the guard's early check and its connect-time agents.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** A URL's hostname without IPv6 brackets or a trailing dot, lower-case. */
export function bareHost(hostname: string): string {
  return hostname
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}

/**
 * Why an address may not be dialled (the ipaddr.js range name, e.g. `loopback`, `private`,
 * `linkLocal`, `carrierGradeNat`, `ipv4Mapped`, `rfc6052` for NAT64, `6to4`, `teredo`), or null
 * for a public unicast address. Anything that does not parse as an address is refused.
 */
export function refusedRange(address: string): string | null {
  let parsed: Address;
  try {
    parsed = ipaddr.parse(bareHost(address));
  } catch {
    return 'invalid';
  }
  const range = parsed.range();
  if (range !== 'unicast') return range;
  // ::a.b.c.d (::/96, deprecated IPv4-compatible addresses) is "unicast" to ipaddr.js, but a stack
  // that still maps it would reach the embedded IPv4 address (::7f00:1 is 127.0.0.1).
  if (parsed.kind() === 'ipv6' && parsed.match(IPV4_COMPATIBLE)) return 'ipv4Compatible';
  return null;
}

const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

/** One entry of `outbound.allow`, as the configuration check reads it: a host name, an address or a CIDR. */
export function isAllowEntry(entry: string): boolean {
  const text = bareHost(entry.trim());
  if (!text) return false;
  if (isIP(text)) return true;
  if (text.includes('/')) {
    try {
      ipaddr.parseCIDR(text);
      return true;
    } catch {
      return false;
    }
  }
  return /^[a-z0-9](?:[a-z0-9-]{0,62})(?:\.[a-z0-9](?:[a-z0-9-]{0,62}))*$/.test(text) && text.length <= 253;
}

/**
 * The allow list: destinations that may be reached although private, on any port. Host names
 * match exactly (no wildcard); addresses and CIDRs match an address of their own family only (an
 * IPv4 entry does not admit the IPv4-mapped form of the same address).
 */
export class AllowList {
  private readonly names = new Set<string>();
  private readonly ranges: { v4: [ipaddr.IPv4, number][]; v6: [ipaddr.IPv6, number][] } = { v4: [], v6: [] };

  constructor(entries: readonly string[]) {
    for (const raw of entries) {
      const entry = bareHost(raw.trim());
      if (!entry) continue;
      if (entry.includes('/') || isIP(entry)) {
        const [address, bits] = entry.includes('/') ? ipaddr.parseCIDR(entry) : [ipaddr.parse(entry), entry.includes(':') ? 128 : 32];
        if (address.kind() === 'ipv4') this.ranges.v4.push([address as ipaddr.IPv4, bits]);
        else this.ranges.v6.push([address as ipaddr.IPv6, bits]);
      } else {
        this.names.add(entry);
      }
    }
  }

  get empty(): boolean {
    return this.names.size === 0 && this.ranges.v4.length === 0 && this.ranges.v6.length === 0;
  }

  /** Whether a URL's host (a name or an address literal) is on the list. */
  allowsHost(hostname: string): boolean {
    const host = bareHost(hostname);
    return isIP(host) ? this.allowsAddress(host) : this.names.has(host);
  }

  /** Whether an address is on the list (by address or CIDR of its own family). */
  allowsAddress(address: string): boolean {
    let parsed: Address;
    try {
      parsed = ipaddr.parse(bareHost(address));
    } catch {
      return false;
    }
    if (parsed.kind() === 'ipv4') return this.ranges.v4.some((range) => (parsed as ipaddr.IPv4).match(range));
    return this.ranges.v6.some((range) => (parsed as ipaddr.IPv6).match(range));
  }
}
