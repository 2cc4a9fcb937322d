// The secret values this process knows: networks' secret settings as they are opened, opened
// postback secrets, tokens a module obtains at run time. A secret can reach text by many roads
// (a feed URL's path or an innocently named query parameter, an upstream's echo, a stack), so
// instead of guarding each road, every place that turns something into stored or printed text
// (the log and its stdout lines, a job's error and result, a network's last error) scrubs it here.
// Per process: a process only ever writes the secrets it opened itself.

import { isServiceError, ServiceError } from './errors.js';

export const REDACTED = '[redacted]';
/** Shorter values are not secrets worth the name, and replacing them would shred ordinary text. */
export const MIN_SECRET_LENGTH = 6;
/** Bounded: a long-running daemon collects a new Admitad token every hour; the oldest go first. */
const MAX_VALUES = 4096;
const MAX_DEPTH = 8;

/** The forms a secret takes on its way into text: as is, URL-encoded (path or form), Base64, JSON-escaped. */
function formsOf(secret: string): string[] {
  const forms = new Set([secret, encodeURIComponent(secret), new URLSearchParams({ v: secret }).toString().slice(2), JSON.stringify(secret).slice(1, -1)]);
  const bytes = Buffer.from(secret, 'utf8');
  forms.add(bytes.toString('base64'));
  forms.add(bytes.toString('base64').replace(/=+$/, ''));
  forms.add(bytes.toString('base64url'));
  return [...forms].filter((f) => f.length >= MIN_SECRET_LENGTH);
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Known secret values, and scrubbing of text and values with them. */
export class SecretValues {
  private readonly values = new Set<string>();
  private pattern: RegExp | null = null;

  /** Adds secret values (empty and short ones are ignored). */
  add(...values: (string | null | undefined)[]): void {
    for (const value of values) {
      if (typeof value !== 'string' || value.length < MIN_SECRET_LENGTH || this.values.has(value)) continue;
      if (this.values.size >= MAX_VALUES) this.values.delete(this.values.values().next().value!);
      this.values.add(value);
      this.pattern = null;
    }
  }

  get size(): number {
    return this.values.size;
  }

  /** `text` with every known secret, in each of its forms, replaced by "[redacted]". */
  scrub(text: string): string {
    if (this.values.size === 0 || !text) return text;
    if (!this.pattern) {
      // Longest first, so a secret's encoded form is replaced whole rather than in part.
      const forms = [...new Set([...this.values].flatMap(formsOf))].sort((a, b) => b.length - a.length);
      this.pattern = new RegExp(forms.map(escapeRegExp).join('|'), 'g');
    }
    return text.replace(this.pattern, REDACTED);
  }

  /**
   * An error as it may be answered or printed: a ServiceError copied with its message and data
   * scrubbed; another error scrubbed in place (message and stack). Anything else as it is.
   */
  scrubError<E>(err: E): E {
    if (this.values.size === 0) return err;
    if (isServiceError(err)) return new ServiceError(err.code, this.scrub(err.message), err.status, this.scrubDeep(err.data), err.headers) as E;
    if (err instanceof Error) {
      err.message = this.scrub(err.message);
      if (err.stack) err.stack = this.scrub(err.stack);
    }
    return err;
  }

  /** A copy of `value` with every string in it (keys too) scrubbed. */
  scrubDeep<T>(value: T, depth = 0): T {
    if (this.values.size === 0) return value;
    if (typeof value === 'string') return this.scrub(value) as T;
    if (!value || typeof value !== 'object' || depth > MAX_DEPTH) return value;
    if (value instanceof Date) return value;
    if (Array.isArray(value)) return value.map((v) => this.scrubDeep(v, depth + 1)) as T;
    if (value instanceof Error) return { name: value.name, message: this.scrub(value.message) } as T;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [this.scrub(k), this.scrubDeep(v, depth + 1)])) as T;
  }
}
