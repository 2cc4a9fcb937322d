// The translation of validation failures and hapi's own refusals into the error JSON, checked
// against the tables of docs/errors.md (read at test time, so the document is the expectation).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Boom from '@hapi/boom';
import Joi from 'joi';
import { describe, expect, it } from 'vitest';
import { fromJoi, toRestError } from '../../../src/http/rest/errors.js';

const doc = readFileSync(join(import.meta.dirname, '..', '..', '..', 'docs', 'errors.md'), 'utf8');

/** Joi error type → detail code, from the "Detail codes" table. */
function documentedDetailCodes(): Map<string, string> {
  const section = doc.slice(doc.indexOf('## Detail codes'), doc.indexOf('## On the command line'));
  const map = new Map<string, string>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const code = /^`(rest_[a-z_]+)`$/.exec(cells[1] ?? '')?.[1];
    if (!code) continue;
    for (const m of (cells[2] ?? '').matchAll(/`([a-z]+\.[a-zA-Z.]+)`/g)) map.set(m[1], code);
  }
  return map;
}

/** A schema and a value that make Joi fail with exactly that error type. */
const FAILURES: Record<string, [Joi.Schema, unknown]> = {
  'number.base': [Joi.number(), 'abc'],
  'number.integer': [Joi.number().integer(), 1.5],
  'string.base': [Joi.string(), 5],
  'boolean.base': [Joi.boolean(), 'maybe'],
  'object.base': [Joi.object(), 5],
  'array.base': [Joi.array(), 5],
  'number.min': [Joi.number().min(1), 0],
  'number.max': [Joi.number().max(100), 101],
  'number.greater': [Joi.number().greater(1), 1],
  'number.less': [Joi.number().less(1), 1],
  'number.infinity': [Joi.number(), Infinity],
  'number.unsafe': [Joi.number(), '99999999999999999999999'],
  'date.base': [Joi.date(), 'yesterday'],
  'date.format': [Joi.date().iso(), '11/24/2026'],
  'date.min': [Joi.date().min('2026-01-01'), '2025-01-01'],
  'date.max': [Joi.date().max('2026-01-01'), '2027-01-01'],
  'string.isoDate': [Joi.string().isoDate(), 'yesterday'],
  'any.only': [Joi.string().valid('debug', 'info'), 'loud'],
  'string.min': [Joi.string().min(3), 'ab'],
  'string.empty': [Joi.string(), ''],
  'string.max': [Joi.string().max(3), 'abcd'],
  'array.min': [Joi.array().min(1), []],
  'array.max': [Joi.array().max(1), [1, 2]],
  'array.unique': [Joi.array().unique(), [1, 1]],
  'string.pattern.base': [Joi.string().pattern(/^[A-Z]{3}$/), 'usd'],
  'string.pattern.name': [Joi.string().pattern(/^[A-Z]{3}$/, 'currency'), 'usd'],
  'string.email': [Joi.string().email(), 'not-an-email'],
  'string.guid': [Joi.string().guid(), 'not-a-uuid'],
  'string.ip': [Joi.string().ip(), '300.1.1.1'],
};

function failWith(type: string, schema: Joi.Schema, value: unknown) {
  const { error } = Joi.object({ p: schema }).validate({ p: value }, { abortEarly: false });
  expect(error?.details.map((d) => d.type)).toEqual([type]);
  return fromJoi(error!);
}

describe('validation errors', () => {
  const documented = documentedDetailCodes();

  it('reads the detail code of every Joi error type the document lists', () => {
    // Guards the parser: every type this file can provoke must be in the table, and vice versa.
    expect([...documented.keys()].sort()).toEqual([...Object.keys(FAILURES), 'object.unknown', 'any.required'].sort());
  });

  it.each(Object.entries(FAILURES))('reports a %s failure with the documented detail code', (type, [schema, value]) => {
    const err = failWith(type, schema, value);
    const code = documented.get(type)!;
    expect(err.status).toBe(400);
    expect(err.body.code).toBe('rest_invalid_param');
    expect(err.body.data.params).toEqual({ p: expect.stringContaining('p') });
    // docs: `data` is {"param": name} for rest_invalid_type and null otherwise.
    expect(err.body.data.details).toEqual({ p: { code, message: expect.any(String), data: code === 'rest_invalid_type' ? { param: 'p' } : null } });
  });

  it.each([
    ['array.min', 'rest_too_few_items'],
    ['array.max', 'rest_too_many_items'],
    ['array.unique', 'rest_duplicate_items'],
    ['string.email', 'rest_invalid_email'],
    ['string.guid', 'rest_invalid_uuid'],
    ['string.ip', 'rest_invalid_ip'],
  ])('keeps the documented %s detail code (%s) ready for the first route that uses it', (type, code) => {
    expect(documented.get(type)).toBe(code);
    const [schema, value] = FAILURES[type];
    expect(failWith(type, schema, value).body.data.details).toEqual({ p: { code, message: expect.any(String), data: null } });
  });

  it('reports an unknown parameter as rest_additional_properties_forbidden', () => {
    const { error } = Joi.object({ p: Joi.string() }).validate({ foo: 1 });
    const err = fromJoi(error!);
    expect(err.body.data.details).toEqual({ foo: { code: documented.get('object.unknown'), message: expect.any(String), data: null } });
    expect(documented.get('object.unknown')).toBe('rest_additional_properties_forbidden');
  });

  it('reports a missing nested property as rest_property_required under the host-style name', () => {
    const { error } = Joi.object({ a: Joi.object({ b: Joi.string().required() }) }).validate({ a: {} });
    const err = fromJoi(error!);
    expect(err.body.code).toBe('rest_invalid_param');
    expect(err.body.data.details).toEqual({ a: { code: 'rest_property_required', message: expect.stringContaining('a[b]'), data: null } });
    expect(documented.get('any.required')).toBe('rest_property_required');
  });

  it('reports a missing top-level parameter as rest_missing_callback_param with the names', () => {
    const { error } = Joi.object({ a: Joi.string().required(), b: Joi.string().required() }).validate({}, { abortEarly: false });
    expect(fromJoi(error!).body).toEqual({ code: 'rest_missing_callback_param', message: expect.any(String), data: { status: 400, params: ['a', 'b'] } });
  });

  it('falls back to rest_invalid_param for an error type the table does not list', () => {
    const err = failWith('string.alphanum', Joi.string().alphanum(), 'a-b');
    expect(err.body.data.details).toEqual({ p: { code: 'rest_invalid_param', message: expect.any(String), data: null } });
  });

  it('reports a body that is not an object under (body)', () => {
    const { error } = Joi.object({ p: Joi.string() }).validate('text');
    const err = fromJoi(error!);
    expect(err.body.data.details).toEqual({ '(body)': { code: 'rest_invalid_type', message: expect.any(String), data: { param: '(body)' } } });
  });

  it('keeps the first detail and joins the messages when a parameter breaks two rules', () => {
    const { error } = Joi.object({
      p: Joi.string()
        .min(5)
        .pattern(/^[a-z]+$/),
    }).validate({ p: 'A1' }, { abortEarly: false });
    const err = fromJoi(error!);
    expect((err.body.data.details as Record<string, { code: string }>).p.code).toBe('rest_too_short');
    expect(String((err.body.data.params as Record<string, string>).p).split('"p"').length).toBeGreaterThan(2);
  });
});

describe("hapi's own refusals", () => {
  it.each([
    [Boom.badRequest('Invalid request payload input'), 400, 'rest_invalid_request'],
    [Boom.badRequest('Invalid request payload JSON format'), 400, 'rest_invalid_json'],
    [Boom.clientTimeout('Request timeout'), 408, 'rest_request_timeout'],
    [Boom.entityTooLarge('Payload content length greater than maximum allowed: 10'), 413, 'rest_payload_too_large'],
    [Boom.unsupportedMediaType('Unsupported Media Type'), 415, 'rest_unsupported_media_type'],
    [Boom.notFound(), 404, 'rest_no_route'],
    [Boom.conflict('Conflict'), 409, 'rest_http_409'],
  ])('maps %s to the documented code', (boom, status, code) => {
    const err = toRestError(boom, 'req-1');
    expect(err).toMatchObject({ status, internal: false, body: { code, data: { status } } });
  });

  it('hides anything else behind svc_internal_error with the request id', () => {
    const err = toRestError(new Error('SELECT * FROM secrets'), 'req-42');
    expect(err).toMatchObject({ status: 500, internal: true, body: { code: 'svc_internal_error', data: { status: 500, request_id: 'req-42' } } });
    expect(err.body.message).toContain('req-42');
    expect(JSON.stringify(err.body)).not.toContain('SELECT');
  });
});
