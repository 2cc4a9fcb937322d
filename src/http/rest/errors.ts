// The one translation point from anything thrown to the host platform's error JSON
// `{code, message, data: {status, ...}}`. Nothing internal (stack, SQL) reaches a client.
import type { Boom } from '@hapi/boom';
import type { ValidationError, ValidationErrorItem } from 'joi';
import { translateDbError } from '../../db/errors.js';
import { ServiceError } from '../../errors.js';
import { dict } from '../../objects.js';

export interface RestError {
  status: number;
  body: { code: string; message: string; data: Record<string, unknown> & { status: number } };
  headers: Record<string, string>;
}

export function restError(code: string, message: string, status: number, data: Record<string, unknown> = {}, headers: Record<string, string> = {}): RestError {
  // `status` last: a service's data field cannot overwrite the HTTP status.
  return { status, body: { code, message, data: { ...data, status } }, headers };
}

const DETAIL_CODES: Record<string, string> = {
  'number.base': 'rest_invalid_type',
  'number.unsafe': 'rest_out_of_bounds',
  'number.integer': 'rest_invalid_type',
  'number.min': 'rest_out_of_bounds',
  'number.max': 'rest_out_of_bounds',
  'number.greater': 'rest_out_of_bounds',
  'number.less': 'rest_out_of_bounds',
  'number.infinity': 'rest_out_of_bounds',
  'string.base': 'rest_invalid_type',
  'boolean.base': 'rest_invalid_type',
  'object.base': 'rest_invalid_type',
  'array.base': 'rest_invalid_type',
  'date.base': 'rest_invalid_date',
  'date.format': 'rest_invalid_date',
  'date.min': 'rest_invalid_date',
  'date.max': 'rest_invalid_date',
  'any.only': 'rest_not_in_enum',
  'string.min': 'rest_too_short',
  'string.empty': 'rest_too_short',
  'string.max': 'rest_too_long',
  'array.min': 'rest_too_few_items',
  'array.max': 'rest_too_many_items',
  'array.unique': 'rest_duplicate_items',
  'string.pattern.base': 'rest_invalid_pattern',
  'string.pattern.name': 'rest_invalid_pattern',
  'string.email': 'rest_invalid_email',
  'string.guid': 'rest_invalid_uuid',
  'string.ip': 'rest_invalid_ip',
  'string.isoDate': 'rest_invalid_date',
  'object.unknown': 'rest_additional_properties_forbidden',
  'any.required': 'rest_property_required',
};

/** `a.b.0` → `a[b][0]`, as the host names nested parameters. */
function paramName(path: (string | number)[]): string {
  const [head, ...rest] = path.map(String);
  return head + rest.map((p) => `[${p}]`).join('');
}

/** Joi → 400 `rest_missing_callback_param` (a required top-level param absent) or `rest_invalid_param`. */
export function fromJoi(error: ValidationError): RestError {
  const details: ValidationErrorItem[] = error.details ?? [];
  const missing = details.filter((d) => d.type === 'any.required' && d.path.length === 1).map((d) => String(d.path[0]));
  if (missing.length > 0) {
    const unique = [...new Set(missing)];
    return restError('rest_missing_callback_param', `Missing parameter(s): ${unique.join(', ')}`, 400, { params: unique });
  }
  // Keyed by the client's parameter names: objects without a prototype, so "__proto__" or
  // "constructor" is a name like any other.
  const params = dict<string>();
  const detailMap = dict<{ code: string; message: string; data: unknown }>();
  for (const d of details) {
    const top = d.path.length ? String(d.path[0]) : '(body)';
    const name = d.path.length ? paramName(d.path) : '(body)';
    const message = d.message.startsWith(name) || !d.path.length ? d.message : `${name}: ${d.message}`;
    params[top] = params[top] ? `${params[top]} ${message}` : message;
    const code = DETAIL_CODES[d.type] ?? 'rest_invalid_param';
    detailMap[top] ??= { code, message, data: code === 'rest_invalid_type' ? { param: name } : null };
  }
  const names = Object.keys(params);
  return restError('rest_invalid_param', `Invalid parameter(s): ${names.join(', ')}`, 400, { params, details: detailMap });
}

function isBoom(err: unknown): err is Boom {
  return typeof err === 'object' && err !== null && (err as Boom).isBoom === true;
}

/**
 * Maps a thrown value to the error JSON. Returns `internal: true` for faults the caller must log
 * with the request id (the client only sees `svc_internal_error`).
 */
export function toRestError(err: unknown, requestId: string): RestError & { internal: boolean } {
  if (err instanceof ServiceError) return { ...restError(err.code, err.message, err.status, err.data, err.headers), internal: false };
  const db = translateDbError(err);
  if (db) return { ...restError(db.code, db.message, db.status, db.data, db.headers), internal: false };
  if (isBoom(err)) {
    const joi = (err as unknown as { details?: unknown; isJoi?: boolean }).isJoi || (err as { name?: string }).name === 'ValidationError';
    if (joi) return { ...fromJoi(err as unknown as ValidationError), internal: false };
    const status = err.output.statusCode;
    const message = String(err.message ?? '');
    if (status === 404) return { ...restError('rest_no_route', 'No route was found matching the URL and request method.', 404), internal: false };
    if (status === 413) return { ...restError('rest_payload_too_large', 'The request body is larger than the server accepts.', 413), internal: false };
    if (status === 415) return { ...restError('rest_unsupported_media_type', 'The request body must be application/json or application/x-www-form-urlencoded.', 415), internal: false };
    if (status === 400 && /JSON/.test(message)) {
      return { ...restError('rest_invalid_json', 'Invalid JSON body passed.', 400, { json_error_code: 4, json_error_message: 'Syntax error' }), internal: false };
    }
    if (status === 400) return { ...restError('rest_invalid_request', 'The request could not be read.', 400), internal: false };
    if (status === 408) return { ...restError('rest_request_timeout', 'The request body was not received in time.', 408), internal: false };
    if (status < 500) return { ...restError(`rest_http_${status}`, err.output.payload.message || 'Request refused.', status), internal: false };
  }
  return { ...restError('svc_internal_error', `An internal error occurred. Quote request id ${requestId} when reporting it.`, 500, { request_id: requestId }), internal: true };
}
