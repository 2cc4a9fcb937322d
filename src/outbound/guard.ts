// The outbound guard: the one way this service fetches a URL someone else chose (a network's logo,
// a shop's site icon, a custom network's feed, a webhook target). http and https only, default
// ports unless configured, the address checked when the connection is made (request-filtering-agent
// over node:http/https, fed only the addresses the guard resolved and checked itself, so DNS
// rebinding cannot swap them), redirects followed one checked hop at a time, and time and size
// bounds enforced while reading. A refusal is 422 svc_fetch_blocked with `data.reason`; it never
// carries what the remote answered.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { ServiceError } from '../errors.js';
import { dict } from '../objects.js';
import { AllowList, bareHost, refusedRange } from './addresses.js';
import { AddressRefused, GuardHttpAgent, GuardHttpsAgent } from './agents.js';
import { ResponseBody, WaitBudget, type Stop } from './body.js';
import { fetchBlocked, type FetchBlockedReason, type OutboundGuardOptions, type OutboundRequest, type OutboundResponse, type OutboundStream } from './types.js';

export const DEFAULT_MAX_BYTES = 2 * 1024 * 1024;
const CONNECT_TIMEOUT_MS = 5_000;
const TIMEOUT_MS = 15_000;
const MAX_REDIRECTS = 3;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Failures of a destination that was allowed: the caller reports them, so they are logged at debug only. */
const OPERATIONAL: ReadonlySet<FetchBlockedReason> = new Set(['timeout', 'connection_failed', 'too_large']);

/** Fetches administrator- and network-supplied URLs without letting them reach inside. */
export class OutboundGuard {
  private readonly allowList: AllowList;
  private readonly ports: ReadonlySet<number>;
  private readonly maxBytes: number;
  private readonly lookup: LookupFunction;
  private readonly logger: OutboundGuardOptions['logger'];

  constructor(options: OutboundGuardOptions) {
    this.allowList = new AllowList(options.allow, options.ports);
    this.ports = new Set(options.ports);
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.lookup = options.lookup ?? (dnsLookup as unknown as LookupFunction);
    this.logger = options.logger;
  }

  /** Whether a URL's host and port are on the allow list (by name, address or CIDR). */
  allows(url: string | URL): boolean {
    try {
      const parsed = new URL(url);
      return this.allowList.allowsHost(parsed.hostname, portOf(parsed));
    } catch {
      return false;
    }
  }

  /** Parses and checks a URL without fetching (scheme, port, literal addresses): for validating input early. */
  check(url: string | URL): URL {
    return this.checkHop(url, null);
  }

  /**
   * `check` for the first URL (`followed` null) or a redirect's target (`followed`: the redirects
   * followed before it): a redirect's refusal names neither its scheme nor its port, which came
   * from the remote's answer, not from the caller.
   */
  private checkHop(url: string | URL, followed: number | null): URL {
    const redirected = followed !== null;
    const extra = redirected ? { redirects: followed } : {};
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw this.refuse('invalid_url', 'The address is not a URL.', null);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      const scheme = parsed.protocol.replace(/:$/, '');
      throw this.refuse(
        'scheme',
        redirected ? 'The server redirected to a URL that is not http or https.' : `Only http and https URLs are fetched, not ${scheme}.`,
        parsed,
        extra,
        { scheme },
      );
    }
    const host = bareHost(parsed.hostname);
    if (!host) throw this.refuse('invalid_url', 'The URL has no host.', parsed, extra);
    const port = portOf(parsed);
    const allowed = this.allowList.allowsHost(host, port);
    if (isIP(host) && !allowed) {
      const range = refusedRange(host);
      if (range)
        throw this.refuse(
          'private_address',
          redirected
            ? 'The server redirected to a private or reserved address.'
            : `The URL points at a ${rangeName(range)} address.${allowHint(parsed, range)}`,
          parsed,
          extra,
          { range },
        );
    }
    if (!allowed && !this.ports.has(port)) {
      const ports = [...this.ports].join(', ') || 'none';
      throw this.refuse(
        'port',
        redirected
          ? `The server redirected to a port outbound requests may not use (${ports}).`
          : `Port ${port} is not one outbound requests may use (${ports}): add it to CASHTRACK_OUTBOUND_PORTS (outbound.ports), or allow this host on it with an entry ${hostEntry(parsed)}:${port} in CASHTRACK_OUTBOUND_ALLOW (outbound.allow).`,
        parsed,
        redirected ? extra : { port },
        { port },
      );
    }
    return parsed;
  }

  /**
   * Fetches a URL. A non-2xx status is returned, not refused: the caller decides. Refusals are
   * svc_fetch_blocked: invalid_url, scheme, port, private_address, too_many_redirects, too_large,
   * timeout, connection_failed. A caller's `signal` aborting rejects with the signal's reason.
   */
  async fetch(input: string | URL, request: OutboundRequest = {}): Promise<OutboundResponse> {
    const whole = new AbortController();
    const budget = new WaitBudget(request.timeoutMs ?? TIMEOUT_MS, () => whole.abort());
    budget.run();
    try {
      const { hop, url, redirects, method } = await this.follow(input, request, whole.signal);
      const read = method === 'HEAD' ? (hop.discard(), Buffer.alloc(0)) : await hop.read();
      return { status: hop.status, headers: hop.headers, body: read, ...(hop.truncated ? { truncated: true as const } : {}), url: url.href, redirects };
    } finally {
      budget.stop();
    }
  }

  /**
   * `fetch` with the body as a stream, for documents too large to hold (a custom network's feed):
   * the same checks, redirects and refusals up to the headers; then the size cap is enforced as the
   * body is read, and the timeout counts only the time the reader waits for the server (see
   * WaitBudget). A refusal while reading (too_large, timeout, connection_failed, the caller's
   * abort) destroys the stream with that error. A reader that stops early destroys it, which
   * closes the connection. `overflow: 'truncate'` does not apply (a stream is read as it comes).
   */
  async stream(input: string | URL, request: Omit<OutboundRequest, 'overflow'> = {}): Promise<OutboundStream> {
    const whole = new AbortController();
    const budget = new WaitBudget(request.timeoutMs ?? TIMEOUT_MS, () => whole.abort());
    budget.run();
    try {
      const { hop, url, redirects, method } = await this.follow(input, request, whole.signal, budget);
      budget.pause();
      const body = method === 'HEAD' ? (hop.discard(), budget.stop(), Readable.from([])) : hop.stream();
      return { status: hop.status, headers: hop.headers, body, url: url.href, redirects };
    } catch (err) {
      budget.stop();
      throw err;
    }
  }

  /** Sends the request and follows its redirects, each hop checked again: the final hop, unread. */
  private async follow(
    input: string | URL,
    request: OutboundRequest,
    whole: AbortSignal,
    budget?: WaitBudget,
  ): Promise<{ hop: ResponseBody; url: URL; redirects: string[]; method: string }> {
    const timeoutMs = request.timeoutMs ?? TIMEOUT_MS;
    const maxRedirects = request.maxRedirects ?? MAX_REDIRECTS;
    const maxBytes = request.maxBytes ?? this.maxBytes;
    let url = this.check(input);
    const origin = url.origin;
    let method = request.method ?? 'GET';
    let body = request.body;
    const redirects: string[] = [];
    const seen = new Set([url.href]);
    for (;;) {
      const sameOrigin = url.origin === origin;
      const headers = Object.assign(dict<string>(), { 'user-agent': 'cashtrack' }, sameOrigin ? lower(request.headers) : {});
      const hop = await this.hop(
        url,
        {
          method,
          headers,
          body,
          connectTimeoutMs: request.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
          timeoutMs,
          maxBytes,
          truncate: request.overflow === 'truncate',
          whole,
          caller: request.signal,
          budget,
        },
        redirects.length,
      );
      if (maxRedirects > 0 && REDIRECTS.has(hop.status) && hop.location !== null) {
        hop.discard();
        let next: URL;
        try {
          next = new URL(hop.location, url);
        } catch {
          throw this.refuse('invalid_url', 'The server redirected to an address that is not a URL.', url, { redirects: redirects.length });
        }
        if (redirects.length >= maxRedirects) {
          throw this.refuse('too_many_redirects', `The server redirected more than ${maxRedirects} times.`, url, { redirects: redirects.length });
        }
        if (seen.has(next.href)) {
          throw this.refuse('too_many_redirects', 'The server redirected in a loop.', url, { redirects: redirects.length });
        }
        url = this.checkHop(next, redirects.length);
        redirects.push(url.href);
        seen.add(url.href);
        // As browsers do: 303 (and 301/302 after a POST) become a GET without a body.
        if (hop.status === 303 || ((hop.status === 301 || hop.status === 302) && method === 'POST')) {
          method = method === 'HEAD' ? 'HEAD' : 'GET';
          body = undefined;
        }
        continue;
      }
      return { hop, url, redirects, method };
    }
  }

  /** One request: resolve and check the addresses, connect through a hop agent, wait for headers. */
  private async hop(
    url: URL,
    o: {
      method: string;
      headers: Record<string, string>;
      body: string | Buffer | undefined;
      connectTimeoutMs: number;
      timeoutMs: number;
      maxBytes: number;
      truncate?: boolean;
      whole: AbortSignal;
      caller?: AbortSignal;
      budget?: WaitBudget;
    },
    hopIndex: number,
  ): Promise<ResponseBody> {
    const host = bareHost(url.hostname);
    const port = portOf(url);
    const byName = !isIP(host) && this.allowList.allowsHost(host, port);
    let stop: Stop = null;
    const stopped = new AbortController();
    const halt = (why: Exclude<Stop, null>) => {
      if (!stop) stop = why;
      stopped.abort();
    };
    const onCaller = () => halt({ kind: 'caller' });
    const onWhole = () => halt({ kind: 'timeout', ms: o.timeoutMs, what: 'whole' });
    if (o.caller?.aborted) throw o.caller.reason ?? new Error('The request was aborted.');
    o.caller?.addEventListener('abort', onCaller, { once: true });
    if (o.whole.aborted) onWhole();
    o.whole.addEventListener('abort', onWhole, { once: true });
    const connectTimer = setTimeout(() => halt({ kind: 'timeout', ms: o.connectTimeoutMs, what: 'connect' }), o.connectTimeoutMs);
    const cleanup = () => {
      clearTimeout(connectTimer);
      o.caller?.removeEventListener('abort', onCaller);
      o.whole.removeEventListener('abort', onWhole);
    };
    const fail = (err: unknown): ServiceError | unknown => {
      const why = stop as Stop;
      if (why?.kind === 'caller') return o.caller?.reason ?? new Error('The request was aborted.');
      if (why?.kind === 'timeout') {
        return this.refuse(
          'timeout',
          why.what === 'connect' ? `The server did not answer within ${o.connectTimeoutMs} ms.` : `The request did not finish within ${o.timeoutMs} ms.`,
          url,
          { redirects: hopIndex },
        );
      }
      if (why?.kind === 'too_large')
        return this.refuse('too_large', `The response is larger than ${o.maxBytes} bytes.`, url, { max_bytes: o.maxBytes, redirects: hopIndex });
      if (err instanceof ServiceError) return err;
      if (err instanceof AddressRefused || /is not allowed\. Because/.test((err as Error)?.message ?? '')) {
        return this.refuse(
          'private_address',
          'The host resolves to a private or reserved address.',
          url,
          { redirects: hopIndex },
          { refused: (err as Error).message },
        );
      }
      const code = typeof (err as NodeJS.ErrnoException)?.code === 'string' ? (err as NodeJS.ErrnoException).code : null;
      return this.refuse('connection_failed', `The server could not be reached${code ? ` (${code})` : ''}.`, url, {
        redirects: hopIndex,
        ...(code ? { error: code } : {}),
      });
    };

    let addresses: LookupAddress[];
    try {
      addresses = await this.resolve(host, stopped.signal);
      this.admit(url, host, port, addresses, byName, hopIndex);
    } catch (err) {
      cleanup();
      throw fail(err);
    }
    // Addresses admitted although private (allow list): the hop agent lets exactly these through.
    const admitted = addresses.filter((a) => refusedRange(a.address) !== null).map((a) => a.address);
    const Agent = url.protocol === 'https:' ? GuardHttpsAgent : GuardHttpAgent;
    const agent = new Agent({ admitted });
    const pinned = (_name: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
      if (options?.all) callback(null, addresses);
      else callback(null, addresses[0].address, addresses[0].family);
    };
    const send = url.protocol === 'https:' ? https.request : http.request;

    return new Promise<ResponseBody>((resolve, reject) => {
      let settled = false;
      const done = (err: unknown) => {
        cleanup();
        agent.destroy();
        if (!settled) {
          settled = true;
          reject(fail(err));
        }
      };
      let req: http.ClientRequest;
      try {
        req = send({
          protocol: url.protocol,
          hostname: host,
          port: url.port || undefined,
          path: `${url.pathname}${url.search}`,
          method: o.method,
          headers: {
            ...o.headers,
            ...(url.username || url.password
              ? { authorization: `Basic ${Buffer.from(`${decoded(url.username)}:${decoded(url.password)}`).toString('base64')}` }
              : {}),
          },
          agent,
          lookup: pinned as unknown as LookupFunction,
          servername: isIP(host) ? undefined : host,
        });
      } catch (err) {
        // A header the caller built with a character HTTP forbids: the caller's mistake, not a refusal.
        cleanup();
        agent.destroy();
        settled = true;
        reject(err);
        return;
      }
      stopped.signal.addEventListener('abort', () => req.destroy(new Error('stopped')), { once: true });
      req.on('error', done);
      req.on('response', (res) => {
        clearTimeout(connectTimer);
        settled = true;
        const hop = new ResponseBody(res, {
          maxBytes: o.maxBytes,
          truncate: o.truncate ?? false,
          budget: o.budget,
          stopped: () => stop !== null,
          halt: () => halt({ kind: 'too_large' }),
          fail: (err) => fail(err),
          release: () => {
            cleanup();
            agent.destroy();
          },
        });
        resolve(hop);
      });
      req.end(o.body);
    });
  }

  /** The addresses a host stands for: the literal itself, or what the lookup answers (all of them). */
  private resolve(host: string, signal: AbortSignal): Promise<LookupAddress[]> {
    const family = isIP(host);
    if (family) return Promise.resolve([{ address: host, family }]);
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(new Error('stopped'));
      signal.addEventListener('abort', onAbort, { once: true });
      this.lookup(host, { all: true }, ((err: NodeJS.ErrnoException | null, addresses: LookupAddress[] | string) => {
        signal.removeEventListener('abort', onAbort);
        if (err) return reject(err);
        const list = Array.isArray(addresses) ? addresses : [{ address: addresses, family: isIP(addresses) }];
        if (!list.length) return reject(Object.assign(new Error('No address.'), { code: 'ENOTFOUND' }));
        resolve(list);
      }) as never);
    });
  }

  /** Every address must be public, or admitted by the allow list (the host by name, or the address). */
  private admit(url: URL, host: string, port: number, addresses: LookupAddress[], byName: boolean, hopIndex: number): void {
    if (byName) return;
    for (const { address } of addresses) {
      if (this.allowList.allowsAddress(address, port)) continue;
      const range = refusedRange(address);
      if (range) {
        const hint = hopIndex === 0 ? allowHint(url, range) : '';
        throw this.refuse(
          'private_address',
          isIP(host) ? `The URL points at a ${rangeName(range)} address.${hint}` : `The host resolves to a ${rangeName(range)} address.${hint}`,
          url,
          { redirects: hopIndex },
          { range, address },
        );
      }
    }
  }

  /**
   * Builds (and logs) a refusal. `data` goes to the caller; `logged` only to the log. Neither ever
   * holds what the remote answered; the URL is logged by host only (paths and queries may carry
   * a feed's credentials).
   */
  private refuse(
    reason: FetchBlockedReason,
    message: string,
    url: URL | null,
    data: Record<string, unknown> = {},
    logged: Record<string, unknown> = {},
  ): ServiceError {
    const level = OPERATIONAL.has(reason) ? 'debug' : 'warning';
    this.logger?.write(level, 'outbound', `Outbound request refused: ${message}`, { reason, host: url ? url.host : null, ...data, ...logged });
    return fetchBlocked(reason, message, data);
  }
}

/** The port a URL connects to. */
function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

/** How a refused range reads in a message: "loopback", "private", else "reserved (linkLocal)". */
function rangeName(range: string): string {
  return range === 'loopback' || range === 'private' ? range : `reserved (${range})`;
}

/** The allow entry that admits a URL's host, as an operator writes it (IPv6 in brackets). */
function hostEntry(url: URL): string {
  const host = bareHost(url.hostname);
  return isIP(host) === 6 ? `[${host}]` : host;
}

/**
 * How to let a refused destination through, for a loopback or private one (an intranet service an
 * operator may well mean to reach); nothing for the other reserved ranges (metadata services,
 * NAT64 and the like), which are not worth an invitation. Only for the caller's own URL (a
 * redirect's target came from the remote), and without the address itself (a name's resolved
 * address stays unsaid).
 */
function allowHint(url: URL, range: string): string {
  if (range !== 'loopback' && range !== 'private' && range !== 'uniqueLocal') return '';
  return ` To allow it, add the host to CASHTRACK_OUTBOUND_ALLOW (outbound.allow), as HOST:${portOf(url)} or as HOST alone for the ports of outbound.ports.`;
}

/** Percent-decoded user info; as written when it does not decode. */
function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function lower(headers: Record<string, string> | undefined): Record<string, string> {
  const out = dict<string>();
  for (const [k, v] of Object.entries(headers ?? {})) out[k.toLowerCase()] = v;
  return out;
}
