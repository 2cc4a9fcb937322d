// The one translation point from anything thrown to the host platform's error JSON
// `{code, message, data: {status, ...}}`. Nothing internal (stack, SQL) reaches a client.
import type { Boom } from '@hapi/boom';
import type { ValidationError } from 'joi';
import { translateDbError } from '../../db/errors.js';
import { invalidInput, ServiceError } from '../../errors.js';
import type { SecretValues } from '../../secret-values.js';

export interface RestError {
  status: number;
  body: { code: string; message: string; data: Record<string, unknown> & { status: number } };
  headers: Record<string, string>;
}

export function restError(code: string, message: string, status: number, data: Record<string, unknown> = {}, headers: Record<string, string> = {}): RestError {
  // `status` last: a service's data field cannot overwrite the HTTP status.
  return { status, body: { code, message, data: { ...data, status } }, headers };
}

/** Joi → 400 `rest_missing_callback_param` (a required top-level param absent) or `rest_invalid_param`. */
export function fromJoi(error: ValidationError): RestError {
  const e = invalidInput(error);
  return restError(e.code, e.message, e.status, e.data);
}

function isBoom(err: unknown): err is Boom {
  return typeof err === 'object' && err !== null && (err as Boom).isBoom === true;
}

/**
 * Maps a thrown value to the error JSON, scrubbed of every secret the process knows like the log
 * is (an upstream's message may echo a key it was sent). Returns `internal: true` for faults the
 * caller must log with the request id (the client only sees `svc_internal_error`).
 */
export function toRestError(err: unknown, requestId: string, secrets?: Pick<SecretValues, 'scrubError'>): RestError & { internal: boolean } {
  return translate(secrets ? secrets.scrubError(err) : err, requestId);
}

function translate(err: unknown, requestId: string): RestError & { internal: boolean } {
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
    if (status === 415)
      return {
        ...restError('rest_unsupported_media_type', 'The request body must be application/json or application/x-www-form-urlencoded.', 415),
        internal: false,
      };
    if (status === 400 && /JSON/.test(message)) {
      return {
        ...restError('rest_invalid_json', 'Invalid JSON body passed.', 400, { json_error_code: 4, json_error_message: 'Syntax error' }),
        internal: false,
      };
    }
    if (status === 400) return { ...restError('rest_invalid_request', 'The request could not be read.', 400), internal: false };
    if (status === 408) return { ...restError('rest_request_timeout', 'The request body was not received in time.', 408), internal: false };
    if (status < 500) return { ...restError(`rest_http_${status}`, err.output.payload.message || 'Request refused.', status), internal: false };
  }
  return {
    ...restError('svc_internal_error', `An internal error occurred. Quote request id ${requestId} when reporting it.`, 500, { request_id: requestId }),
    internal: true,
  };
}
