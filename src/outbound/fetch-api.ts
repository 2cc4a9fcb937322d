// The guard behind the WHATWG `fetch` signature, for a library that makes its own requests and
// takes a `fetch` to make them with (the openai SDK). Everything the guard does applies: the
// address checked when the socket is made, the allow list and its ports, the time and size caps
// enforced while reading. Redirects are not followed at all: a 3xx is answered as it is, so a
// provider's redirect can neither carry its bearer token nor turn a POST into a GET elsewhere.
import { dict } from '../objects.js';
import type { OutboundGuard } from './guard.js';

/** What the adapter needs of the guard. */
export type FetchingGuard = Pick<OutboundGuard, 'fetch'>;

export interface GuardedFetchOptions {
  /** The whole request, and the wait for the response headers (a model may think before it answers). */
  timeoutMs: number;
  /** Default: the guard's own cap (`outbound.max_bytes`). */
  maxBytes?: number;
}

/** Statuses a `Response` may not carry a body with. */
const NO_BODY = new Set([101, 204, 205, 304]);

function bodyOf(body: RequestInit['body']): string | Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (Buffer.isBuffer(body)) return body;
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof URLSearchParams) return body.toString();
  // Streams and forms are not sent through the guard (it sends a body whole and bounded).
  throw new TypeError('The outbound guard sends only string and byte bodies.');
}

/** A `fetch` whose every request goes through `guard`. */
export function guardedFetch(guard: FetchingGuard, options: GuardedFetchOptions): typeof fetch {
  return async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = typeof input === 'string' || input instanceof URL ? input : input.url;
    const method = (init.method ?? 'GET').toUpperCase();
    if (method !== 'GET' && method !== 'POST' && method !== 'HEAD') throw new TypeError(`The outbound guard does not send ${method.slice(0, 16)} requests.`);
    const headers = dict<string>();
    new Headers(init.headers).forEach((value, name) => {
      // The guard reads bodies as they come: ask for them uncompressed.
      if (name !== 'accept-encoding') headers[name] = value;
    });
    const res = await guard.fetch(url, {
      method,
      headers,
      body: bodyOf(init.body),
      maxRedirects: 0,
      timeoutMs: options.timeoutMs,
      connectTimeoutMs: options.timeoutMs,
      ...(options.maxBytes ? { maxBytes: options.maxBytes } : {}),
      signal: init.signal ?? undefined,
    });
    if (res.status < 200 || res.status > 599) throw new TypeError(`The server answered with the status ${res.status}.`);
    const body = NO_BODY.has(res.status) || method === 'HEAD' ? null : new Uint8Array(res.body);
    return new Response(body, { status: res.status, headers: res.headers });
  };
}
