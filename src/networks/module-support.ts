// What the built-in modules share besides HTTP: options for tests and benchmarks, settings
// checks, status mapping of polled records, and tracking-link argument checks.
import { ServiceError } from '../errors.js';
import type { RetryPolicy } from './http.js';
import { NetworkError } from './network-error.js';
import type { RateLimit } from './rate-limit.js';
import type { ModuleRuntime, ModuleSettings, NetworkClaim, TransactionStatus } from './types.js';

/** Knobs a factory takes; production uses the defaults (documented limits, 1 s backoff). */
export interface ModuleOptions {
  retry?: Partial<RetryPolicy>;
  timeoutMs?: number;
  maxBodyBytes?: number;
  /** Per endpoint group (`default`, and `actions` for impact.com); null turns throttling off. */
  rateLimits?: Record<string, RateLimit | null>;
}

/** The named settings, trimmed; NetworkError `svc_network_not_configured` naming what is missing. */
export function requireSettings<K extends string>(settings: ModuleSettings, keys: readonly K[], network: string, name: string): Record<K, string> {
  const out = {} as Record<K, string>;
  const missing: string[] = [];
  for (const key of keys) {
    const value = settings[key]?.trim();
    if (value) out[key] = value;
    else missing.push(key);
  }
  if (missing.length) throw new NetworkError('svc_network_not_configured', `${name} is not configured: set ${missing.join(', ')}.`, { network });
  return out;
}

export function hasSettings(settings: ModuleSettings, keys: readonly string[]): boolean {
  return keys.every((k) => Boolean(settings[k]?.trim()));
}

/** The `base_url` setting (http or https, no trailing slash), or the network's real host. */
export function baseUrl(settings: ModuleSettings, fallback: string, network: string, key = 'base_url'): string {
  const value = settings[key]?.trim() || fallback;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new NetworkError('svc_network_not_configured', `The ${network} setting ${key} is not a URL.`, { network });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new NetworkError('svc_network_not_configured', `The ${network} setting ${key} must be an http(s) URL.`, { network });
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/**
 * A polled record's status through the module's map. An unknown word is not guessed: the record
 * is left out and logged as an error naming the transaction, so it is noticed and not mis-paid
 * (the next poll picks it up once the word is mapped).
 */
export function mapStatus(rt: ModuleRuntime, network: string, map: Record<string, TransactionStatus>, word: unknown, id: string): TransactionStatus | null {
  const key = typeof word === 'string' ? word.trim() : '';
  const status = map[key] ?? map[key.toLowerCase()] ?? map[key.toUpperCase()];
  if (status) return status;
  rt.log('error', `${network}: transaction ${id} has the unknown status "${key.slice(0, 40)}"; skipped`, {
    network,
    transaction_id: id,
    status: key.slice(0, 40),
  });
  return null;
}

/**
 * The free-text words of a claim as a network's claim form takes them: the note (else `fallback`)
 * and, when the claim has its click, the click time and id. None of the claim formats (Admitad
 * lost orders, impact.com action inquiries, Awin transaction queries) has a field of its own for
 * the click time, so it goes with the words the network's reviewer reads. At most `max` characters.
 */
export function claimWords(claim: NetworkClaim, fallback: string | null, max: number): string | null {
  const note = claim.note?.trim() || fallback;
  const click = claim.clicked_at
    ? `Clicked through our link at ${claim.clicked_at.toISOString().slice(0, 19)}Z${claim.click_ref ? ` (click ${claim.click_ref})` : ''}.`
    : null;
  const text = [note, click].filter(Boolean).join(' ');
  if (!text) return null;
  // The click sentence is the evidence: the note gives way to it when both do not fit.
  if (text.length <= max || !click || !note) return text.slice(0, max);
  return `${note.slice(0, Math.max(0, max - click.length - 2))}… ${click}`.slice(0, max);
}

/** Checks a tracking-link sub id: required, and no longer than the network keeps. */
export function checkSubId(subId: string, max: number, name: string): string {
  const value = String(subId ?? '').trim();
  if (!value) throw new ServiceError('svc_invalid_sub_id', 'A tracking link needs a sub id.', 400);
  if (value.length > max) throw new ServiceError('svc_invalid_sub_id', `${name} keeps at most ${max} characters of a sub id.`, 400, { max });
  return value;
}

/** An http(s) target URL for a deep link, or null. */
export function checkTarget(url: string | null): string | null {
  if (url === null || url === undefined || url.trim() === '') return null;
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    throw new ServiceError('svc_invalid_url', 'The target URL is not a valid URL.', 400);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new ServiceError('svc_invalid_url', 'The target URL must be http or https.', 400);
  return parsed.toString();
}
