// The HTTP client network modules share, over the outbound guard (src/outbound): a timeout per
// attempt tied to the runtime's signal, retries with exponential backoff and jitter on 429, throttling 403s,
// 5xx, timeouts and connection failures (honouring Retry-After), a client-side call quota,
// bounded bodies, and JSON parsing that turns HTML or broken JSON into a typed NetworkError.
// Credentials travel only in headers the caller builds; nothing here logs a header, and every
// message, path and body excerpt is scrubbed of the secrets the caller and the runtime name.
import type { ModuleRuntime } from './types.js';
import { isServiceError, type ServiceError } from '../errors.js';
import { OutboundGuard, type OutboundResponse } from '../outbound/index.js';
import { NetworkError, bodyExcerpt, safePath, type NetworkErrorCode } from './network-error.js';
import { aborted, sleep, type CallQuota } from './rate-limit.js';

/** For a runtime built without the context's guard: nothing private, default ports only. */
const STRICT = new OutboundGuard({ allow: [], ports: [80, 443] });

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  attempts: number;
  /** First backoff; doubles per attempt, with jitter. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited out: the call fails as rate limited. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 4, baseDelayMs: 1_000, maxDelayMs: 30_000, maxRetryAfterMs: 120_000 };

export interface HttpClientOptions {
  /** Module id, for errors and logs. */
  network: string;
  /** Display name for messages ("Awin"). */
  name: string;
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  maxBodyBytes?: number;
}

export interface HttpRequest {
  method?: 'GET' | 'POST';
  url: URL;
  /** Caller headers (Authorization among them); never logged. */
  headers?: Record<string, string>;
  form?: Record<string, string>;
  json?: unknown;
  /** A multipart/form-data body: text fields, then files (a claim's receipt). */
  multipart?: { fields: Record<string, string>; files: { name: string; filename: string; type: string; data: Buffer }[] };
  /** The client-side quota this call spends from. */
  bucket?: CallQuota | null;
  /** Exact secret values to scrub from excerpts (tokens, client secrets, Basic credentials). */
  secrets?: readonly string[];
}

export interface HttpResponse<T> {
  status: number;
  headers: Headers;
  data: T;
}

type Attempt<T> = { ok: true; response: HttpResponse<T> } | { ok: false; error: NetworkError | ServiceError; retry: boolean; retryAfterMs: number | null };

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_BODY = 64 * 1024 * 1024;
const THROTTLE_WORDS = /rate.?limit|too many|exceeded|throttl|quota/i;

/** Builds `base` + `path` with the defined query values (base may carry a path prefix). */
export function buildUrl(base: string, path: string, query: Record<string, string | number | boolean | null | undefined> = {}): URL {
  const url = new URL(base.replace(/\/+$/, '') + path);
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, String(v));
  return url;
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, nowMs = Date.now()): number | null {
  if (value == null) return null;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/**
 * Parses a JSON body. Integers too long for a double (16+ digits, e.g. some ids) are read as
 * strings so they stay exact; everything else is plain JSON.parse (decimal amounts are exact
 * through String(number) up to 15 significant digits, which covers any money amount).
 */
export function parseJsonText(text: string): unknown {
  if (/\d{16}/.test(text)) text = text.replace(/"(?:[^"\\]|\\.)*"|(?<![\d.eE+-])(-?\d{16,})(?![\d.eE])/g, (m, big?: string) => (big ? `"${big}"` : m));
  return JSON.parse(text);
}

export class NetworkHttp {
  readonly network: string;
  readonly name: string;
  readonly retry: RetryPolicy;
  private readonly timeoutMs: number;
  private readonly maxBodyBytes: number;

  constructor(options: HttpClientOptions) {
    this.network = options.network;
    this.name = options.name;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY;
  }

  /** Sends the request (retrying as the policy allows) and returns its parsed JSON. */
  async json<T = unknown>(rt: ModuleRuntime, req: HttpRequest): Promise<HttpResponse<T>> {
    const { attempts } = this.retry;
    for (let attempt = 1; ; attempt++) {
      await req.bucket?.take(rt.signal, this.network);
      const outcome = await this.once<T>(rt, req, attempt);
      if (outcome.ok) return outcome.response;
      const { error, retryAfterMs } = outcome;
      if (outcome.retry && attempt > 1 && attempt >= attempts) error.message += ` (gave up after ${attempt} attempts)`;
      if (!outcome.retry || attempt >= attempts) throw error;
      if (retryAfterMs != null) {
        if (retryAfterMs > this.retry.maxRetryAfterMs) {
          error.message += ` and asked to wait ${Math.ceil(retryAfterMs / 1000)} s`;
          throw error;
        }
        req.bucket?.pause(retryAfterMs);
      }
      const delay = retryAfterMs ?? this.backoff(attempt);
      rt.log('warning', `${error.message}; retrying in ${(delay / 1000).toFixed(1)} s (attempt ${attempt + 1} of ${attempts})`, {
        network: this.network,
        code: error.code,
        upstream_status: error instanceof NetworkError ? error.upstreamStatus : null,
        path: safePath(req.url, [...(rt.secrets ?? []), ...(req.secrets ?? [])]),
        delay_ms: delay,
      });
      await sleep(delay, rt.signal, this.network);
    }
  }

  /** Exponential backoff with "equal jitter": half fixed, half random, capped. */
  backoff(attempt: number): number {
    const ceiling = Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** (attempt - 1));
    return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
  }

  private async once<T>(rt: ModuleRuntime, req: HttpRequest, attempt: number): Promise<Attempt<T>> {
    if (rt.signal?.aborted) return { ok: false, error: aborted(this.network), retry: false, retryAfterMs: null };
    const method = req.method ?? 'GET';
    const secrets = [...(rt.secrets ?? []), ...(req.secrets ?? [])];
    const where = `${method} ${safePath(req.url, secrets)}`;
    const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': 'cashtrack', ...req.headers };
    let body: string | Buffer | undefined;
    if (req.multipart) {
      const boundary = `cashtrack-${attempt}-${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
      headers['Content-Type'] = `multipart/form-data; boundary=${boundary}`;
      body = multipartBody(boundary, req.multipart);
    } else if (req.form) {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(req.form).toString();
    } else if (req.json !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(req.json);
    }
    const fail = (
      code: NetworkErrorCode,
      message: string,
      retry: boolean,
      extra: { status?: number; text?: string; retryAfterMs?: number | null } = {},
    ): Attempt<T> => ({
      ok: false,
      retry,
      retryAfterMs: extra.retryAfterMs ?? null,
      error: new NetworkError(code, message, {
        network: this.network,
        upstreamStatus: extra.status ?? null,
        excerpt: extra.text === undefined ? null : bodyExcerpt(extra.text, secrets),
        retryAfterMs: extra.retryAfterMs ?? null,
        attempts: attempt,
        secrets,
      }),
    });
    const started = performance.now();
    let res: OutboundResponse;
    try {
      // Through the outbound guard: a base URL is a setting an administrator chose. Redirects are
      // not followed (the credentials would travel with them); a 3xx is reported below.
      res = await (rt.outbound ?? STRICT).fetch(req.url, {
        method,
        headers,
        body,
        maxRedirects: 0,
        timeoutMs: this.timeoutMs,
        connectTimeoutMs: this.timeoutMs,
        maxBytes: this.maxBodyBytes,
        signal: rt.signal,
      });
    } catch (err) {
      if (rt.signal?.aborted) return { ok: false, error: aborted(this.network), retry: false, retryAfterMs: null };
      const reason = isServiceError(err) && err.code === 'svc_fetch_blocked' ? err.data.reason : null;
      if (reason === 'timeout') return fail('svc_network_timeout', `${this.name} did not answer ${where} within ${this.timeoutMs / 1000} s`, true);
      if (reason === 'too_large') return fail('svc_network_bad_response', `${this.name} answered ${where} with more than ${this.maxBodyBytes} bytes`, false);
      if (reason === 'connection_failed') {
        const cause = (err as ServiceError).data.error;
        return fail('svc_network_unavailable', `${this.name} could not be reached for ${where}${typeof cause === 'string' ? ` (${cause})` : ''}`, true);
      }
      // Refused by the guard (a base URL inside, another port): not worth retrying.
      if (reason) return { ok: false, error: err as ServiceError, retry: false, retryAfterMs: null };
      throw err;
    }
    const text = res.body.toString('utf8');
    const resHeaders = new Headers(Object.entries(res.headers));
    const status = res.status;
    rt.log('debug', `${this.name} ${where} → ${status}`, { network: this.network, status, ms: Math.round(performance.now() - started), bytes: text.length });
    const remaining = Number(resHeaders.get('x-ratelimit-remaining-hour') ?? resHeaders.get('x-ratelimit-remaining') ?? NaN);
    const resetSeconds = Number(resHeaders.get('ratelimit-reset') ?? NaN);
    if (Number.isFinite(remaining)) req.bucket?.observeRemaining(remaining, Number.isFinite(resetSeconds) ? resetSeconds * 1000 : null);
    const retryAfterMs = parseRetryAfter(resHeaders.get('retry-after'));

    if (status >= 200 && status < 300) {
      if (status === 204) return { ok: true, response: { status, headers: resHeaders, data: null as T } };
      const parsed = parseBody(text, resHeaders.get('content-type'));
      if (parsed.ok) return { ok: true, response: { status, headers: resHeaders, data: parsed.value as T } };
      return fail('svc_network_bad_response', `${this.name} answered ${where} with ${parsed.what}`, false, { status, text });
    }
    if (status >= 300 && status < 400) {
      const location = resHeaders.get('location');
      let host = '';
      try {
        host = location ? ` to ${new URL(location, req.url).host}` : '';
      } catch {
        host = '';
      }
      return fail('svc_network_bad_response', `${this.name} redirected ${where}${host}; check the base URL`, false, { status });
    }
    if (status === 429 || (status === 403 && (retryAfterMs != null || THROTTLE_WORDS.test(text)))) {
      return fail('svc_network_rate_limited', `${this.name} rate-limited ${where} (HTTP ${status})`, true, { status, text, retryAfterMs });
    }
    if (status === 401 || status === 403) {
      return fail('svc_network_unauthorized', `${this.name} refused the credentials for ${where} (HTTP ${status}); check the module settings`, false, {
        status,
        text,
      });
    }
    if (status === 404) return fail('svc_network_not_found', `${this.name} has no ${where} (HTTP 404)`, false, { status, text });
    if (status === 408) return fail('svc_network_timeout', `${this.name} timed out ${where} (HTTP 408)`, true, { status, text, retryAfterMs });
    if (status >= 500) return fail('svc_network_unavailable', `${this.name} failed ${where} (HTTP ${status})`, true, { status, text, retryAfterMs });
    return fail('svc_network_bad_request', `${this.name} refused ${where} (HTTP ${status})`, false, { status, text });
  }
}

type Parsed = { ok: true; value: unknown } | { ok: false; what: string };

function parseBody(text: string, contentType: string | null): Parsed {
  const trimmed = text.trimStart();
  if (!trimmed) return { ok: false, what: 'an empty body instead of JSON' };
  const type = (contentType ?? '').toLowerCase();
  if (type.includes('html') || /^<(!doctype|html)/i.test(trimmed)) return { ok: false, what: 'HTML instead of JSON' };
  if (type.includes('xml') || trimmed.startsWith('<')) return { ok: false, what: 'XML instead of JSON' };
  try {
    return { ok: true, value: parseJsonText(text) };
  } catch {
    return { ok: false, what: 'invalid or truncated JSON' };
  }
}

/** A multipart/form-data body (RFC 7578): each field, then each file, as its own part. */
export function multipartBody(boundary: string, input: NonNullable<HttpRequest['multipart']>): Buffer {
  const quote = (v: string) => v.replace(/[\r\n"]/g, '_');
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(input.fields))
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"\r\n\r\n${value}\r\n`));
  for (const f of input.files) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${quote(f.name)}"; filename="${quote(f.filename)}"\r\nContent-Type: ${f.type}\r\n\r\n`,
      ),
      f.data,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(parts);
}
