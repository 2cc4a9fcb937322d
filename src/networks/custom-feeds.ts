// A custom network's feeds: one JSON or CSV document per request, fetched through the outbound
// guard (bounded size and time, no private address unless allowed, redirects within the feed's
// origin only), its records read through the definition's field mapping, in pages. Both formats
// are parsed as they stream in (a JSON feed by json-records.ts), so a feed never sits in memory
// whole, whatever its size, and the socket is read only as fast as the sync stores the pages.
import { parse } from 'csv-parse';
import { pipeline, type Readable } from 'node:stream';
import type { FeedDefinition } from './custom-definition.js';
import { fillTemplate, isLoopbackHost } from './custom-definition.js';
import { FeedFormatError, jsonRecords } from './json-records.js';
import { NetworkError, bodyExcerpt, scrubSecrets } from './network-error.js';
import type { ModuleRuntime } from './types.js';
import { isServiceError, type ServiceError } from '../errors.js';
import { dict, own } from '../objects.js';
import { OutboundGuard, fetchBlocked, type FetchBlockedReason, type OutboundStream } from '../outbound/index.js';

export const FEED_PAGE = 500;
const TIMEOUT_MS = 60_000;
const MAX_BYTES = 200 * 1024 * 1024;
/** Largest record of a feed (a CSV line, a JSON record or any one JSON value): nothing larger is held in memory. */
const MAX_RECORD_BYTES = 1024 * 1024;

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
  /** Largest feed document read (default 200 MB). */
  maxBytes?: number;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** For a runtime built without the context's guard: nothing private, default ports only. */
const STRICT = new OutboundGuard({ allow: [], ports: [80, 443] });
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
 * http to a loopback host or one on the outbound allow list only): a redirect to another origin
 * is refused, not followed, and no message names a secret (the feed is described by its
 * template, secret placeholders unfilled). A destination the guard refuses is 422
 * svc_fetch_blocked; its timeout, size cap and connection failures keep the network codes.
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
  const maxBytes = options.maxBytes ?? MAX_BYTES;
  let url: URL;
  try {
    url = new URL(fillTemplate(feed.url, values));
  } catch {
    throw new NetworkError('svc_network_not_configured', `${name}: the feed URL ${where} is not a URL once its settings are filled in.`, { network, secrets });
  }
  const headers: Record<string, string> = { 'User-Agent': 'cashtrack', Accept: feed.format === 'json' ? 'application/json' : 'text/csv, text/plain, */*' };
  for (const [k, v] of Object.entries(feed.headers ?? {})) headers[k] = fillTemplate(v, values, false);
  const carriesSecret =
    usesSecretSetting(feed, secretNames) ||
    secrets.some((s) => url.href.includes(s) || url.href.includes(encodeURIComponent(s)) || Object.values(headers).some((h) => h.includes(s)));
  const guard = rt.outbound ?? STRICT;
  if (carriesSecret && url.protocol !== 'https:' && !isLoopbackHost(url.hostname) && !guard.allows(url)) {
    throw new NetworkError(
      'svc_network_insecure_feed',
      `${name}: the feed ${where} sends a secret setting, so its URL must be https (plain http only to a loopback host or one on the outbound allow list).`,
      { network, secrets },
    );
  }
  // Each hop goes through the outbound guard on its own (address checked at connect time, time and
  // size bounded while reading); redirects are followed here, within the feed's origin only, so
  // its headers and the secrets in its URL never reach another origin.
  const deadline = performance.now() + timeoutMs;
  // What the guard refused, in the network's codes (the feed's own words for timeout, size and reach).
  const refusal = (err: unknown): unknown => {
    if (rt.signal?.aborted) return new NetworkError('svc_network_aborted', `${name}: the feed request was stopped`, { network });
    const reason = isServiceError(err) && err.code === 'svc_fetch_blocked' ? err.data.reason : null;
    if (reason === 'timeout')
      return new NetworkError('svc_network_timeout', `${name} did not answer ${where} within ${timeoutMs / 1000} s`, { network, secrets });
    if (reason === 'too_large')
      return new NetworkError('svc_network_bad_response', `${name}: the feed is larger than ${maxBytes} bytes`, { network, upstreamStatus: 200 });
    if (reason === 'connection_failed') return new NetworkError('svc_network_unavailable', `${name} could not be reached for ${where}`, { network, secrets });
    if (reason)
      return fetchBlocked(reason as FetchBlockedReason, `${name}: the feed ${where} was refused: ${(err as Error).message}`, {
        ...(err as ServiceError).data,
        network,
      });
    return err;
  };
  let res: OutboundStream;
  for (let hops = 0; ; hops++) {
    const left = Math.max(1, Math.round(deadline - performance.now()));
    try {
      // The time budget counts the server's time only: a reader writing a page to the database
      // while the rest of the feed waits in the socket spends none of it.
      res = await guard.stream(url, { headers, maxRedirects: 0, timeoutMs: left, connectTimeoutMs: left, maxBytes, signal: rt.signal });
    } catch (err) {
      throw refusal(err);
    }
    if (!REDIRECTS.has(res.status)) break;
    res.body.destroy();
    const location = res.headers.location;
    let next: URL | null = null;
    try {
      next = location ? new URL(location, url) : null;
    } catch {
      next = null;
    }
    if (!next)
      throw new NetworkError('svc_network_bad_response', `${name} redirected ${where} without a usable Location`, {
        network,
        upstreamStatus: res.status,
        secrets,
      });
    if (next.origin !== url.origin) {
      throw new NetworkError(
        'svc_network_redirect_refused',
        `${name} redirected ${where} to another origin (${next.origin}); a feed's headers and settings go to its own origin only: put the final URL in the definition.`,
        { network, upstreamStatus: res.status, secrets },
      );
    }
    if (hops >= MAX_REDIRECTS)
      throw new NetworkError('svc_network_bad_response', `${name} redirected ${where} more than ${MAX_REDIRECTS} times`, {
        network,
        upstreamStatus: res.status,
        secrets,
      });
    url = next;
  }
  const body = res.body;
  if (res.status !== 200) {
    // Enough of the answer for the message's excerpt; the rest is not read.
    const text = (await readUpTo(body, EXCERPT_BYTES).catch(() => Buffer.alloc(0))).toString('utf8');
    const code =
      res.status === 401 || res.status === 403
        ? 'svc_network_unauthorized'
        : res.status === 429
          ? 'svc_network_rate_limited'
          : res.status >= 500
            ? 'svc_network_unavailable'
            : 'svc_network_bad_request';
    throw new NetworkError(code, `${name} answered ${where} with HTTP ${res.status}`, {
      network,
      upstreamStatus: res.status,
      excerpt: bodyExcerpt(text, secrets),
      secrets,
    });
  }
  const bad = (what: string, text = '') =>
    new NetworkError('svc_network_bad_response', `${name} answered ${where} with ${what}`, {
      network,
      upstreamStatus: 200,
      excerpt: bodyExcerpt(text, secrets),
      secrets,
    });

  if (feed.format === 'json') {
    // Read as it streams, like a CSV feed: its size is known only at its end (no setTotal).
    try {
      yield* jsonRecords(body, feed.items, { pageSize: FEED_PAGE, maxRecordBytes: MAX_RECORD_BYTES, signal: rt.signal });
    } catch (err) {
      if (err instanceof FeedFormatError) throw bad(err.message, err.excerpt);
      // The body's failures are the guard's refusals (size, time) or the job's cancel.
      throw refusal(err);
    } finally {
      body.destroy();
    }
    return;
  }

  const parser = parse({
    columns: true,
    delimiter: feed.delimiter ?? ',',
    bom: true,
    trim: true,
    skip_empty_lines: true,
    relax_column_count: true,
    max_record_size: MAX_RECORD_BYTES,
  });
  // A refusal while reading (size, time, the job's cancel) reaches the parser, and so the loop; a
  // loop left early (the job stopped) destroys the body, which closes the connection.
  pipeline(body, parser, () => {
    // Its error is the loop's to report (below).
  });
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
    // The body's failures are the guard's refusals or the job's cancel; anything else is the CSV.
    if (rt.signal?.aborted || (isServiceError(err) && err.code === 'svc_fetch_blocked')) throw refusal(err);
    throw bad(`CSV that cannot be read (${String((err as Error).message).slice(0, 120)})`);
  } finally {
    body.destroy();
  }
  if (page.length) yield page;
}

/** What an error answer's excerpt needs, at most. */
const EXCERPT_BYTES = 64 * 1024;

/** Reads a stream into one buffer, stopping (and destroying it) once `limit` bytes are in. */
async function readUpTo(stream: Readable, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      if (size >= limit) break;
    }
  } finally {
    stream.destroy();
  }
  return Buffer.concat(chunks);
}
