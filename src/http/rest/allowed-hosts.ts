// The Host headers the daemon answers. Without `server.public_url` the Host header becomes the
// site URL of index documents, `Link` headers and paging links, so a request naming another host
// could make us hand out links to it (and poison any cache keyed on the path alone). `public_url`
// is required in production, and `server.allowed_hosts` narrows the hosts answered at all.
import type { Config } from '../../config/index.js';

interface HostName {
  name: string;
  port: string | null;
}

function parse(host: string): HostName | null {
  const m = /^(\[[^\]]*\]|[^:[\]]*)(?::(\d+))?$/.exec(host.trim().toLowerCase());
  if (!m?.[1]) return null;
  return { name: m[1].replace(/\.$/, ''), port: m[2] ?? null };
}

/**
 * A test of a request's Host (`host[:port]`), or null when any host is answered: outside
 * production with `server.allowed_hosts` empty. An entry without a port allows every port. The
 * host of `public_url` is always allowed; in production it is the only one unless more are listed.
 */
export function hostCheck(config: Config): ((host: string) => boolean) | null {
  const listed = config.server.allowed_hosts;
  if (listed.length === 0 && config.env !== 'production') return null;
  const entries = listed.map(parse).filter((e): e is HostName => e !== null);
  if (config.server.public_url) {
    const url = new URL(config.server.public_url);
    entries.push({ name: url.hostname.toLowerCase().replace(/\.$/, ''), port: url.port || null });
  }
  return (host: string) => {
    const h = parse(host);
    if (!h) return false;
    return entries.some((e) => e.name === h.name && (e.port === null || e.port === h.port || (h.port === null && (e.port === '80' || e.port === '443'))));
  };
}
