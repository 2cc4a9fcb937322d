// Reading a postback: the raw query string and body decoded strictly (percent-escapes that are
// not UTF-8 are refused, not replaced), then the network's fields checked one by one, so every bad
// value has its own stable code and nothing odd reaches the orders service.
import { ServiceError } from '../../errors.js';
import { currencyExponent, isCurrency } from '../../money.js';
import { lookupStatus } from '../../networks/custom.js';
import { parsePostbackJson } from '../../networks/postback.js';
import type { NetworkModule, PostbackFields } from '../../networks/types.js';
import { roundDecimal } from '../../networks/values.js';
import type { OrderStatus } from '../orders/index.js';

export type ParamMap = Record<string, string | string[]>;

const utf8 = new TextDecoder('utf-8', { fatal: true });
const lenientUtf8 = new TextDecoder('utf-8');

export class EncodingError extends Error {}

function decodeComponent(text: string, strict: boolean): string {
  const plus = text.replace(/\+/g, ' ');
  if (!/[%\u0080-\uffff]/.test(plus)) return plus;
  const bytes: number[] = [];
  for (let i = 0; i < plus.length; i++) {
    const c = plus.charCodeAt(i);
    if (c === 0x25) {
      const hex = plus.slice(i + 1, i + 3);
      if (/^[0-9a-fA-F]{2}$/.test(hex)) {
        bytes.push(parseInt(hex, 16));
        i += 2;
        continue;
      }
      if (strict) throw new EncodingError('a % not followed by two hex digits');
    }
    // Raw bytes arrive as latin1 characters (Node reads the request line and a form body so).
    if (c <= 0xff) bytes.push(c);
    else bytes.push(...Buffer.from(plus[i], 'utf8'));
  }
  try {
    return (strict ? utf8 : lenientUtf8).decode(Uint8Array.from(bytes));
  } catch {
    throw new EncodingError('bytes that are not UTF-8');
  }
}

/**
 * `a=1&b=2&a=3` → `{a: ['1', '3'], b: '2'}`. Strict: a bad escape or non-UTF-8 bytes throw
 * EncodingError; lenient (for the stored record of a refused request): replaced by U+FFFD.
 */
export function decodeParams(raw: string, strict: boolean): ParamMap {
  const out: ParamMap = Object.create(null) as ParamMap;
  if (!raw) return out;
  for (const pair of raw.split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const key = decodeComponent(eq < 0 ? pair : pair.slice(0, eq), strict);
    const value = decodeComponent(eq < 0 ? '' : pair.slice(eq + 1), strict);
    if (key === '__proto__') continue;
    const prev = out[key];
    out[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

/** The body of a POST: a form, a JSON object, or nothing. 415 for anything else. */
export function decodeBody(raw: Buffer | null, contentType: string | null, strict: boolean): Record<string, unknown> | null {
  if (!raw || raw.length === 0) return null;
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded') return decodeParams(raw.toString('latin1'), strict);
  if (type === 'application/json' || type.endsWith('+json')) {
    let text: string;
    try {
      text = (strict ? utf8 : lenientUtf8).decode(raw);
    } catch {
      throw new EncodingError('bytes that are not UTF-8');
    }
    let value: unknown;
    if (strict) value = parsePostbackJson(text);
    else {
      // The record of a refused request shows what could be read; the refusal itself is strict.
      try {
        value = JSON.parse(text);
      } catch {
        return { body: `[unreadable JSON, ${raw.length} bytes]` };
      }
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      if (!strict) return { body: '[JSON that is not an object]' };
      throw new ServiceError('svc_postback_invalid_body', 'The postback body must be a JSON object.', 400);
    }
    return value as Record<string, unknown>;
  }
  if (!strict) return { body: `[${type || 'untyped'} body, ${raw.length} bytes]` };
  throw new ServiceError('svc_postback_unsupported_media_type', 'A postback body must be application/x-www-form-urlencoded or application/json.', 415);
}

/** Network and transaction ids: no spaces, quotes, angle brackets, semicolons or backslashes. */
const TRANSACTION_ID = /^[A-Za-z0-9][A-Za-z0-9._:/+=@~-]{0,190}$/;
const SUB_ID = /^[A-Za-z0-9._@+:~=/-]{1,191}$/;
const ADVERTISER_ID = /^[A-Za-z0-9][A-Za-z0-9 ._:/+=@~-]{0,127}$/;
const MERCHANT_REF = /^[A-Za-z0-9#][A-Za-z0-9 #._:/+=@~-]{0,190}$/;
const AMOUNT = /^\d{1,15}(\.\d{1,12})?$/;
const DATE = /^\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

export interface PostbackValues {
  transaction_id: string;
  status: OrderStatus;
  sale_amount: string;
  commission: string;
  currency: string;
  sub_id: string | null;
  /** The member fallback field, when it is a member id (digits); anything else there is ignored, never refused. */
  member_ref: string | null;
  advertiser: string | null;
  merchant_ref: string | null;
  event_at: Date | null;
}

const shown = (v: string) => (v.length > 64 ? `${v.slice(0, 64)}…` : v);

type Mapping = Partial<Record<keyof PostbackFields, string>>;

/** The `data` of a refusal about `field`: the field, and the parameter that carries it when the mapping is known. */
export function fieldData(field: string, params: Mapping): { field: string; param?: string } {
  const param = Object.hasOwn(params, field) ? params[field as keyof PostbackFields] : undefined;
  return param ? { field, param } : { field };
}

/** A decimal amount, rounded half away from zero to the currency's places (as polling rounds it). */
function amount(field: keyof PostbackFields, value: string, currency: string, params: Mapping): string {
  if (!AMOUNT.test(value)) {
    throw new ServiceError(
      'svc_postback_invalid_amount',
      `${field} must be a plain decimal number such as 12.50, without currency symbols, thousands separators or signs (got "${shown(value)}").`,
      400,
      fieldData(field, params),
    );
  }
  return roundDecimal(value, currencyExponent(currency))!;
}

function eventTime(value: string, invalid: (field: string, message: string) => ServiceError): Date {
  let d: Date | null = null;
  if (/^\d{9,11}$/.test(value)) d = new Date(Number(value) * 1000);
  else if (/^\d{12,13}$/.test(value)) d = new Date(Number(value));
  else if (DATE.test(value)) {
    const zoned = /(Z|[+-]\d{2}:?\d{2})$/.test(value) || value.length === 10;
    d = new Date(zoned ? value : `${value.replace(' ', 'T')}Z`);
  }
  if (!d || Number.isNaN(d.getTime()))
    throw invalid('event_time', `event_time must be an ISO 8601 time, "YYYY-MM-DD HH:MM:SS" (UTC) or Unix seconds (got "${shown(value)}").`);
  return d;
}

/**
 * Checks the fields a module read from a postback. `params` names the parameter of each field,
 * when the network's mapping is known (custom networks), for the error messages and `data.param`.
 */
export function checkFields(fields: PostbackFields, module: NetworkModule, params: Mapping = {}): PostbackValues {
  // Every refusal names the field, and the parameter that carried it on a custom network (docs/api.md).
  const invalid = (field: string, message: string) => new ServiceError('svc_postback_invalid_param', message, 400, fieldData(field, params));
  const missing = (field: string) => {
    const data = fieldData(field, params);
    return new ServiceError('svc_postback_missing_param', `The postback carries no ${field}${data.param ? ` (parameter "${data.param}")` : ''}.`, 400, data);
  };
  const get = (k: keyof PostbackFields): string | null => {
    const v = fields[k];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'string') throw invalid(k, `${k} must be text.`);
    const t = v.trim();
    return t === '' ? null : t;
  };
  const transactionId = get('transaction_id');
  if (transactionId === null) throw missing('transaction_id');
  if (!TRANSACTION_ID.test(transactionId))
    throw invalid('transaction_id', `transaction_id must be 1 to 191 letters, digits and . _ : / + = @ ~ - (got "${shown(transactionId)}").`);

  const word = get('status');
  let status: OrderStatus = 'pending';
  if (word !== null) {
    const mapped = lookupStatus(module.statusMap, word);
    if (!mapped) {
      throw new ServiceError(
        'svc_postback_unknown_status',
        `The status "${shown(word)}" is not in the network's status mapping (${Object.keys(module.statusMap).slice(0, 20).join(', ')}).`,
        400,
        { ...fieldData('status', params), word: shown(word) },
      );
    }
    status = mapped;
  }

  const code = (get('currency') ?? module.defaultCurrency).toUpperCase();
  if (!/^[A-Z]{3}$/.test(code) || !isCurrency(code)) {
    throw new ServiceError(
      'svc_postback_invalid_currency',
      `currency must be an ISO 4217 code such as EUR (got "${shown(code)}").`,
      400,
      fieldData('currency', params),
    );
  }
  const sale = get('sale_amount');
  const commission = get('commission');
  // A decline may come without a commission; anything else must say what the site earns.
  if (commission === null && status !== 'declined') throw missing('commission');

  const subId = get('sub_id');
  if (subId !== null && !SUB_ID.test(subId)) throw invalid('sub_id', `sub_id must be 1 to 191 letters, digits and . _ @ + : ~ = / - (got "${shown(subId)}").`);
  const memberRef = typeof fields.member_ref === 'string' ? fields.member_ref.trim() || null : null;
  const advertiser = get('advertiser_id');
  if (advertiser !== null && !ADVERTISER_ID.test(advertiser))
    throw invalid('advertiser_id', `advertiser_id must be 1 to 128 letters, digits, spaces and . _ : / + = @ ~ - (got "${shown(advertiser)}").`);
  const ref = get('merchant_ref');
  if (ref !== null && !MERCHANT_REF.test(ref))
    throw invalid('merchant_ref', `merchant_ref must be 1 to 191 letters, digits, spaces and # . _ : / + = @ ~ - (got "${shown(ref)}").`);
  const time = get('event_time');

  return {
    transaction_id: transactionId,
    status,
    sale_amount: sale === null ? roundDecimal('0', currencyExponent(code))! : amount('sale_amount', sale, code, params),
    commission: commission === null ? roundDecimal('0', currencyExponent(code))! : amount('commission', commission, code, params),
    currency: code,
    sub_id: subId,
    member_ref: memberRef !== null && /^\d{1,15}$/.test(memberRef) ? memberRef : null,
    advertiser,
    merchant_ref: ref,
    event_at: time === null ? null : eventTime(time, invalid),
  };
}
