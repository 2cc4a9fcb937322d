// A custom network's feeds: one JSON or CSV document per request, fetched over HTTP (bounded size
// and time, redirects within the feed's origin only), its records read through the definition's
// field mapping, in pages.
import { parse } from 'csv-parse';
import { Readable } from 'node:stream';
import type { FeedDefinition } from './custom-definition.js';
import { fillTemplate, isLoopbackHost } from './custom-definition.js';
import { NetworkError, bodyExcerpt, scrubSecrets } from './network-error.js';
import type { ModuleRuntime } from './types.js';
import { dict, own } from '../objects.js';

export const FEED_PAGE = 500;
const TIMEOUT_MS = 60_000;
const MAX_BYTES = 200 * 1024 * 1024;

export type FeedRecord = Record<string, unknown>;

/** `{settings.NAME}` values for a template (with `extra`, e.g. `from` and `to`). */
export function templateValues(settings: Record<string, string | undefined>, extra: Record<string, string> = {}): Record<string, string> {
  const out = Object.assign(dict<string>(), extra);
  for (const [k, v] of Object.entries(settings)) if (v !== undefined) out[`settings.${k}`] = v;
  return out;
}

/** Reads `a.b.c` from a JSON value: own keys only (a path through `constructor` finds nothing). */
export function atPath(value: unknown, path: string | undefined): unknown {
  if (!path) return value;
  let cur = value;
  for (const part of path.split('.')) {
    cur = own(cur, part);
    if (cur === undefined) return undefined;
  }
  return cur;
}

export interface FeedOptions {
  /** Per request (default 60 s). */
  timeoutMs?: number;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Same-origin redirects followed, at most. */
const MAX_REDIRECTS = 5;

/** The path and query of a URL (or of a template whose origin is literal), for messages. */
function pathOf(url: string): string {
  return url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '') || '/';
}

/** Whether the feed's URL or headers use one of the secret settings. */
function usesSecretSetting(feed: FeedDefinition, secretNames: ReadonlySet<string>): boolean {
  return [feed.url, ...Object.values(feed.headers ?? {})].some((t) => [...t.matchAll(/\{settings\.([A-Za-z0-9_]+)\}/g)].some((m) => secretNames.has(m[1])));
}

/**
 * Fetches a feed and yields its records in pages of FEED_PAGE. The secret settings (`secretNames`,
 * and the runtime's `secrets`) travel only to the feed's own origin and only over https (plain
 * http to a loopback host only): a redirect to another origin is refused, not followed, and no
 * message names a secret (the feed is described by its template, secret placeholders unfilled).
 */
export async function* feedRecords(
  network: string,
  name: string,
  feed: FeedDefinition,
  rt: ModuleRuntime,
  vars: Record<string, string> = {},
  secretNames: ReadonlySet<string> = new Set(),
  options: FeedOptions = {},
): AsyncIterable<FeedRecord[]> {
  const values = templateValues(rt.settings, vars);
  const secrets = [...new Set([...(rt.secrets ?? []), ...[...secretNames].map((n) => rt.settings[n] ?? '')])].filter((v) => v.length >= 4);
  const shown = Object.fromEntries(Object.entries(values).filter(([k]) => !(k.startsWith('settings.') && secretNames.has(k.slice('settings.'.length)))));
  const where = `GET ${scrubSecrets(pathOf(fillTemplate(feed.url, shown)), secrets)}`;
  const timeoutMs = options.timeoutMs ?? TIMEOUT_MS;
  let url: URL;
  try {
    url = new URL(fillTemplate(feed.url, values));
  } catch {
    throw new NetworkError('svc_network_not_configured', `${name}: the feed URL ${where} is not a URL once its settings are filled in.`, { network, secrets });
  }
  const headers: Record<string, string> = { 'User-Agent': 'cashtrack', Accept: feed.format === 'json' ? 'application/json' : 'text/csv, text/plain, */*' };
  for (const [k, v] of Object.entries(feed.headers ?? {})) headers[k] = fillTemplate(v, values, false);
  const carriesSecret = usesSecretSetting(feed, secretNames) || secrets.some((s) => url.href.includes(s) || url.href.includes(encodeURIComponent(s)) || Object.values(headers).some((h) => h.includes(s)));
  if (carriesSecret && url.protocol !== 'https:' && !isLoopbackHost(url.hostname)) {
    throw new NetworkError('svc_network_insecure_feed', `${name}: the feed ${where} sends a secret setting, so its URL must be https (plain http only to a loopback host).`, { network, secrets });
  }
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = rt.signal ? AbortSignal.any([rt.signal, timeout]) : timeout;
  let res: Response;
  for (let hops = 0; ; hops++) {
    try {
      // Manual: fetch would carry the feed's headers (a secret among them) to wherever it is sent.
      res = await fetch(url, { headers, signal, redirect: 'manual' });
    } catch {
      if (rt.signal?.aborted) throw new NetworkError('svc_network_aborted', `${name}: the feed request was stopped`, { network });
      if (timeout.aborted) throw new NetworkError('svc_network_timeout', `${name} did not answer ${where} within ${timeoutMs / 1000} s`, { network, secrets });
      throw new NetworkError('svc_network_unavailable', `${name} could not be reached for ${where}`, { network, secrets });
    }
    if (!REDIRECTS.has(res.status)) break;
    await res.body?.cancel().catch(() => undefined);
    const location = res.headers.get('location');
    let next: URL | null = null;
    try {
      next = location ? new URL(location, url) : null;
    } catch {
      next = null;
    }
    if (!next) throw new NetworkError('svc_network_bad_response', `${name} redirected ${where} without a usable Location`, { network, upstreamStatus: res.status, secrets });
    if (next.origin !== url.origin) {
      throw new NetworkError('svc_network_redirect_refused', `${name} redirected ${where} to another origin (${next.origin}); a feed's headers and settings go to its own origin only: put the final URL in the definition.`, { network, upstreamStatus: res.status, secrets });
    }
    if (hops >= MAX_REDIRECTS) throw new NetworkError('svc_network_bad_response', `${name} redirected ${where} more than ${MAX_REDIRECTS} times`, { network, upstreamStatus: res.status, secrets });
    url = next;
  }
  if (res.status !== 200) {
    const text = await res.text().catch(() => '');
    const code = res.status === 401 || res.status === 403 ? 'svc_network_unauthorized' : res.status === 429 ? 'svc_network_rate_limited' : res.status >= 500 ? 'svc_network_unavailable' : 'svc_network_bad_request';
    throw new NetworkError(code, `${name} answered ${where} with HTTP ${res.status}`, { network, upstreamStatus: res.status, excerpt: bodyExcerpt(text, secrets), secrets });
  }
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > MAX_BYTES) throw new NetworkError('svc_network_bad_response', `${name}: the feed is larger than ${MAX_BYTES} bytes`, { network, upstreamStatus: 200 });
  const bad = (what: string, text = '') => new NetworkError('svc_network_bad_response', `${name} answered ${where} with ${what}`, { network, upstreamStatus: 200, excerpt: bodyExcerpt(text, secrets), secrets });

  if (feed.format === 'json') {
    const text = await res.text();
    if (text.length > MAX_BYTES) throw bad('a document that is too large');
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      throw bad('a body that is not JSON', text);
    }
    const items = atPath(doc, feed.items);
    if (!Array.isArray(items)) throw bad(feed.items ? `no array at "${feed.items}"` : 'a JSON document that is not an array', text);
    // A JSON feed comes whole; a CSV one is read as it streams, so its size is known only at its end.
    rt.setTotal?.(items.length);
    for (let i = 0; i < items.length; i += FEED_PAGE) {
      yield items.slice(i, i + FEED_PAGE).filter((r): r is FeedRecord => !!r && typeof r === 'object' && !Array.isArray(r));
    }
    return;
  }

  if (!res.body) return;
  const parser = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>).pipe(
    parse({ columns: true, delimiter: feed.delimiter ?? ',', bom: true, trim: true, skip_empty_lines: true, relax_column_count: true, max_record_size: 1024 * 1024 }),
  );
  let page: FeedRecord[] = [];
  try {
    for await (const record of parser) {
      page.push(record as FeedRecord);
      if (page.length >= FEED_PAGE) {
        yield page;
        page = [];
      }
    }
  } catch (err) {
    if (err instanceof NetworkError) throw err;
    throw bad(`CSV that cannot be read (${String((err as Error).message).slice(0, 120)})`);
  }
  if (page.length) yield page;
}
