// A custom network's feeds: one JSON or CSV document per request, fetched over HTTP (bounded size
// and time), its records read through the definition's field mapping, in pages.
import { parse } from 'csv-parse';
import { Readable } from 'node:stream';
import type { FeedDefinition } from './custom-definition.js';
import { fillTemplate } from './custom-definition.js';
import { NetworkError, bodyExcerpt, safePath } from './network-error.js';
import type { ModuleRuntime } from './types.js';
import { dict, own } from '../objects.js';

export const FEED_PAGE = 500;
const TIMEOUT_MS = 60_000;
const MAX_BYTES = 200 * 1024 * 1024;

export type FeedRecord = Record<string, unknown>;

/** `{settings.NAME}` values for a template, and the exact secret values to scrub from errors. */
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

/** Fetches a feed and yields its records in pages of FEED_PAGE. */
export async function* feedRecords(network: string, name: string, feed: FeedDefinition, rt: ModuleRuntime, vars: Record<string, string> = {}): AsyncIterable<FeedRecord[]> {
  const values = templateValues(rt.settings, vars);
  const secrets = Object.values(rt.settings).filter((v): v is string => typeof v === 'string' && v.length >= 4);
  const url = new URL(fillTemplate(feed.url, values));
  const headers: Record<string, string> = { 'User-Agent': 'cashtrack', Accept: feed.format === 'json' ? 'application/json' : 'text/csv, text/plain, */*' };
  for (const [k, v] of Object.entries(feed.headers ?? {})) headers[k] = fillTemplate(v, values, false);
  const where = `GET ${safePath(url)}`;
  const timeout = AbortSignal.timeout(TIMEOUT_MS);
  const signal = rt.signal ? AbortSignal.any([rt.signal, timeout]) : timeout;
  let res: Response;
  try {
    res = await fetch(url, { headers, signal, redirect: 'follow' });
  } catch (err) {
    if (rt.signal?.aborted) throw new NetworkError('svc_network_aborted', `${name}: the feed request was stopped`, { network });
    if (timeout.aborted) throw new NetworkError('svc_network_timeout', `${name} did not answer ${where} within ${TIMEOUT_MS / 1000} s`, { network });
    throw new NetworkError('svc_network_unavailable', `${name} could not be reached for ${where}`, { network });
  }
  if (res.status !== 200) {
    const text = await res.text().catch(() => '');
    const code = res.status === 401 || res.status === 403 ? 'svc_network_unauthorized' : res.status === 429 ? 'svc_network_rate_limited' : res.status >= 500 ? 'svc_network_unavailable' : 'svc_network_bad_request';
    throw new NetworkError(code, `${name} answered ${where} with HTTP ${res.status}`, { network, upstreamStatus: res.status, excerpt: bodyExcerpt(text, secrets) });
  }
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > MAX_BYTES) throw new NetworkError('svc_network_bad_response', `${name}: the feed is larger than ${MAX_BYTES} bytes`, { network, upstreamStatus: 200 });
  const bad = (what: string, text = '') => new NetworkError('svc_network_bad_response', `${name} answered ${where} with ${what}`, { network, upstreamStatus: 200, excerpt: bodyExcerpt(text, secrets) });

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
