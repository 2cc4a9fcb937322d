// Reading postback parameters the same way for every built-in network. Names are matched
// case-insensitively (a publisher typing `transactionid=` instead of `transactionId=` still works),
// empty values and macros the network left unreplaced (`!!!clickRef!!!`, `[[[subid]]]`, `{SubId1}`)
// count as absent, a parameter repeated with the same value is that value, and a parameter the
// module reads that is repeated with *different* values is refused: guessing which one is the
// amount or the transaction id would be worse than rejecting the postback.
import { ServiceError } from '../errors.js';
import type { PostbackFields } from './types.js';
import { plainNumber } from './values.js';

export type PostbackQuery = Record<string, string | string[] | undefined>;

const MAX_VALUE_CHARS = 2048;
const UNREPLACED_MACRO = /^(?:!!!\w+!!!|\[\[\[\w+\]\]\]|\{\w+\})$/;

export class PostbackParams {
  private readonly values = new Map<string, Set<string>>();

  private constructor(private readonly documents: ReadonlySet<string>) {}

  /** Collects parameters from the query and from each body (object, form or JSON text, Buffer). */
  static read(query: PostbackQuery | null | undefined, ...bodies: unknown[]): PostbackParams {
    return PostbackParams.readWith({}, query, ...bodies);
  }

  /**
   * As `read`; `documents` names parameters that carry a whole document rather than one value
   * (Awin's `AwinTransactionPush`, a JSON object with the basket in it). Their length is bounded
   * by the endpoint's body limit, not by the limit on one value.
   */
  static readWith(options: { documents?: string[] }, query: PostbackQuery | null | undefined, ...bodies: unknown[]): PostbackParams {
    const params = new PostbackParams(new Set((options.documents ?? []).map((d) => d.toLowerCase())));
    for (const [k, v] of Object.entries(query ?? {})) params.add(k, v);
    for (const body of bodies) params.addBody(body);
    return params;
  }

  /** The value of `name` (any case), undefined when absent; 400 when repeated with different values. */
  get(name: string): string | undefined {
    const set = this.values.get(name.toLowerCase());
    if (!set || set.size === 0) return undefined;
    if (set.size > 1)
      throw new ServiceError('svc_postback_repeated_param', `The postback parameter "${name}" was sent more than once with different values.`, 400, {
        param: name,
      });
    const [value] = set;
    return value;
  }

  /** The first of `names` that is present. */
  first(...names: string[]): string | undefined {
    for (const name of names) {
      const v = this.get(name);
      if (v !== undefined) return v;
    }
    return undefined;
  }

  has(name: string): boolean {
    return this.values.has(name.toLowerCase());
  }

  private add(key: string, value: unknown): void {
    if (Array.isArray(value)) {
      for (const v of value) this.add(key, v);
      return;
    }
    let s: string | null = null;
    if (typeof value === 'string') s = value;
    else if (typeof value === 'number') s = plainNumber(value);
    else if (typeof value === 'boolean') s = String(value);
    if (s === null) return;
    s = s.trim();
    if (s === '' || UNREPLACED_MACRO.test(s)) return;
    if (s.length > MAX_VALUE_CHARS && !this.documents.has(key.toLowerCase()))
      throw new ServiceError('svc_postback_invalid_param', `The postback parameter "${key.slice(0, 64)}" is too long.`, 400, { param: key.slice(0, 64) });
    const k = key.toLowerCase();
    let set = this.values.get(k);
    if (!set) this.values.set(k, (set = new Set()));
    set.add(s);
  }

  private addBody(body: unknown): void {
    if (body === null || body === undefined) return;
    if (Buffer.isBuffer(body)) body = body.toString('utf8');
    if (typeof body === 'string') {
      const trimmed = body.trim();
      if (!trimmed) return;
      if (trimmed.startsWith('{')) {
        this.addBody(parsePostbackJson(trimmed));
        return;
      }
      for (const [k, v] of new URLSearchParams(trimmed)) this.add(k, v);
      return;
    }
    if (typeof body === 'object') for (const [k, v] of Object.entries(body as Record<string, unknown>)) this.add(k, v);
  }
}

/**
 * The first key named twice in one object of a JSON text that JSON.parse accepted, or null.
 * JSON.parse keeps the last of them, so a signed body `{"payout":"1","payout":"999"}` would be
 * read as 999 while a checker or log that keeps the first saw 1. Keys are compared decoded
 * (`"a"` and `"\u0061"` are one key).
 */
export function duplicateJsonKey(text: string): string | null {
  // One entry per open object (its keys so far) or array (null).
  const open: (Set<string> | null)[] = [];
  let keyNext = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const keys = open[open.length - 1];
      if (keyNext && keys) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (keys.has(key)) return key;
        keys.add(key);
        keyNext = false;
      }
      i = end;
    } else if (c === '{') {
      open.push(new Set());
      keyNext = true;
    } else if (c === '[') {
      open.push(null);
    } else if (c === '}' || c === ']') {
      open.pop();
    } else if (c === ',') {
      keyNext = open[open.length - 1] instanceof Set;
    }
  }
  return null;
}

/** JSON.parse, refusing a key named twice in one object as a repeated parameter is refused. */
export function parsePostbackJson(text: string, what = 'The postback body'): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ServiceError('svc_postback_invalid_body', `${what} is not valid JSON.`, 400);
  }
  const repeated = duplicateJsonKey(text);
  if (repeated !== null) {
    const name = repeated.slice(0, 64);
    throw new ServiceError('svc_postback_repeated_param', `${what} names "${name}" more than once.`, 400, { param: name });
  }
  return value;
}

/** Builds the fields object from parameter names, leaving out what is absent. */
export function pickFields(params: PostbackParams, names: { [K in keyof PostbackFields]?: string[] }): PostbackFields {
  const out: PostbackFields = {};
  for (const [field, candidates] of Object.entries(names) as [keyof PostbackFields, string[]][]) {
    const value = params.first(...candidates);
    if (value !== undefined) out[field] = value;
  }
  return out;
}
