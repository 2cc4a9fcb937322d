// The one error type services throw. `code` is stable (clients branch on it), `message` is for
// people, `status` is the HTTP status the REST host answers with, `data` adds fields to `data`.
// Invalid input is one of them too, named the same at every door (invalidInput).
import type { ValidationError, ValidationErrorItem } from 'joi';
import { dict } from './objects.js';

export class ServiceError extends Error {
  readonly code: string;
  readonly status: number;
  readonly data: Record<string, unknown>;
  /** Extra response headers, e.g. Retry-After. */
  readonly headers: Record<string, string>;

  constructor(code: string, message: string, status = 400, data: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'ServiceError';
    this.code = code;
    this.status = status;
    this.data = data;
    this.headers = headers;
  }
}

export function isServiceError(err: unknown): err is ServiceError {
  return err instanceof ServiceError;
}

/** The stable code of a thrown ServiceError (a network module's refusal among them), else null. */
export function errorCode(err: unknown): string | null {
  return err instanceof ServiceError ? err.code : null;
}

export const notFound = (code: string, what: string): ServiceError => new ServiceError(code, `${what} not found.`, 404);

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

/**
 * Joi's verdict on an input as the one error every door reports: 400 `rest_missing_callback_param`
 * (a required top-level param absent) or `rest_invalid_param`, with `data.params` (the names, or a
 * message per name) and `data.details`.
 */
export function invalidInput(error: ValidationError): ServiceError {
  const details: ValidationErrorItem[] = error.details ?? [];
  const missing = details.filter((d) => d.type === 'any.required' && d.path.length === 1).map((d) => String(d.path[0]));
  if (missing.length > 0) {
    const unique = [...new Set(missing)];
    return new ServiceError('rest_missing_callback_param', `Missing parameter(s): ${unique.join(', ')}`, 400, { params: unique });
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
  return new ServiceError('rest_invalid_param', `Invalid parameter(s): ${names.join(', ')}`, 400, { params, details: detailMap });
}
