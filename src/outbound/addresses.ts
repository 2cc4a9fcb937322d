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

/** Which ports an allow entry opens: those of `outbound.ports` (no port named), one port, or every port (`:*`). */
export type EntryPorts = 'default' | '*' | number;

/**
 * One `outbound.allow` entry split into its destination and ports: `host`, `host:port`, `host:*`,
 * an IPv4 address or CIDR with or without `:port`, `[v6]`, `[v6]:port`, `[v6/len]:port`, or a bare
 * IPv6 address or CIDR (no port: its colons are the address's). Null when it is none of these.
 */
export function parseAllowEntry(entry: string): { target: string; ports: EntryPorts } | null {
  const text = entry.trim().toLowerCase();
  if (!text) return null;
  let target = text;
  let port: string | null = null;
  const bracketed = /^\[([^\]]+)\](?::(\d+|\*))?$/.exec(text);
  if (bracketed) [, target, port = null] = bracketed;
  else if (text.split(':').length === 2) [target, port] = text.split(':');
  target = target.replace(/\.$/, '');
  if (port !== null && port !== '*' && !(/^\d{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65535)) return null;
  if (!target) return null;
  const valid =
    isIP(target) !== 0 ||
    (target.includes('/') ? isCidr(target) : /^[a-z0-9](?:[a-z0-9-]{0,62})(?:\.[a-z0-9](?:[a-z0-9-]{0,62}))*$/.test(target) && target.length <= 253);
  if (!valid) return null;
  return { target, ports: port === null ? 'default' : port === '*' ? '*' : Number(port) };
}

function isCidr(text: string): boolean {
  try {
    ipaddr.parseCIDR(text);
    return true;
  } catch {
    return false;
  }
}

/** One entry of `outbound.allow`, as the configuration check reads it (see parseAllowEntry). */
export function isAllowEntry(entry: string): boolean {
  return parseAllowEntry(entry) !== null;
}

type Entry<T> = [T, EntryPorts];

/**
 * The allow list: destinations that may be reached although private. Host names match exactly
 * (no wildcard); addresses and CIDRs match an address of their own family only (an IPv4 entry
 * does not admit the IPv4-mapped form of the same address). An entry opens the ports it names;
 * one that names none opens only `outbound.ports` (`defaultPorts`), so allowing an internal host
 * for its web server does not open its database or admin ports; `host:*` opens every port.
 */
export class AllowList {
  private readonly names: Entry<string>[] = [];
  private readonly v4: Entry<[ipaddr.IPv4, number]>[] = [];
  private readonly v6: Entry<[ipaddr.IPv6, number]>[] = [];
  private readonly defaultPorts: ReadonlySet<number>;

  constructor(entries: readonly string[], defaultPorts: Iterable<number> = [80, 443]) {
    this.defaultPorts = new Set(defaultPorts);
    for (const raw of entries) {
      const entry = parseAllowEntry(raw);
      if (!entry) continue;
      const { target, ports } = entry;
      if (target.includes('/') || isIP(target)) {
        const [address, bits] = target.includes('/') ? ipaddr.parseCIDR(target) : [ipaddr.parse(target), target.includes(':') ? 128 : 32];
        if (address.kind() === 'ipv4') this.v4.push([[address as ipaddr.IPv4, bits], ports]);
        else this.v6.push([[address as ipaddr.IPv6, bits], ports]);
      } else {
        this.names.push([target, ports]);
      }
    }
  }

  get empty(): boolean {
    return this.names.length === 0 && this.v4.length === 0 && this.v6.length === 0;
  }

  private opens(ports: EntryPorts, port: number): boolean {
    return ports === '*' || ports === port || (ports === 'default' && this.defaultPorts.has(port));
  }

  /** Whether a URL's host (a name or an address literal) is on the list for `port`. */
  allowsHost(hostname: string, port: number): boolean {
    const host = bareHost(hostname);
    return isIP(host) ? this.allowsAddress(host, port) : this.names.some(([name, ports]) => name === host && this.opens(ports, port));
  }

  /** Whether an address is on the list for `port` (by address or CIDR of its own family). */
  allowsAddress(address: string, port: number): boolean {
    let parsed: Address;
    try {
      parsed = ipaddr.parse(bareHost(address));
    } catch {
      return false;
    }
    if (parsed.kind() === 'ipv4') return this.v4.some(([range, ports]) => (parsed as ipaddr.IPv4).match(range) && this.opens(ports, port));
    return this.v6.some(([range, ports]) => (parsed as ipaddr.IPv6).match(range) && this.opens(ports, port));
  }
}
