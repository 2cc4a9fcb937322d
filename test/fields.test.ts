import Joi from 'joi';
import { describe, expect, it } from 'vitest';
import { advertiserId, amount, currency, dateTime, flag, id, lookupPaging, networkId, networkRef, none, note, paging } from '../src/fields.js';

/** The Joi error types a value gets from a schema (empty when it is valid). */
const errors = (schema: Joi.Schema, value: unknown) => (schema.validate(value, { abortEarly: false }).error?.details ?? []).map((d) => d.type);
const valid = (schema: Joi.Schema, value: unknown) => {
  const { value: out, error } = schema.validate(value, { convert: true });
  expect(error, String(value)).toBeUndefined();
  return out;
};

describe('the shared field schemas', () => {
  it('take an id from 1 to 2^53 - 1 and convert its string form', () => {
    expect(valid(id(), '1')).toBe(1);
    expect(valid(id(), 9007199254740991)).toBe(9007199254740991);
    expect(errors(id(), 0)).toEqual(['number.min']);
    expect(errors(id(), 9007199254740992)).not.toEqual([]);
    expect(errors(id(), 1.5)).toEqual(['number.integer']);
  });

  it('take a currency as exactly three capital letters, naming the ISO 4217 rule when refused', () => {
    expect(valid(currency(), 'EUR')).toBe('EUR');
    for (const bad of ['eur', 'EURO', 'EU', 'E1R']) expect(errors(currency(), bad), bad).toEqual(['string.pattern.name']);
    expect(currency().validate('eur').error?.message).toContain('ISO 4217 code');
  });

  it('keep an amount a string of at most 40 characters, for the service to parse in minor units', () => {
    expect(valid(amount(), '12.50')).toBe('12.50');
    expect(errors(amount(), '1'.repeat(41))).toEqual(['string.max']);
    expect(errors(amount(), 12.5)).toEqual(['string.base']);
  });

  it('trim a note and refuse one over 500 characters', () => {
    expect(valid(note(), '  why  ')).toBe('why');
    expect(errors(note(), 'x'.repeat(501))).toEqual(['string.max']);
    expect(valid(note(), `  ${'x'.repeat(500)}  `)).toHaveLength(500);
  });

  it('take a network id as networks are named: a lower-case letter or digit, then letters, digits, _ and -, at most 64', () => {
    for (const ok of ['awin', 'my-net_2', '0x', 'a'.repeat(64)]) expect(valid(networkId(), ok)).toBe(ok);
    for (const bad of ['Awin', '-awin', '_x', 'a b', 'a.b', '']) expect(errors(networkId(), bad), bad).not.toEqual([]);
    expect(errors(networkId(), 'a'.repeat(65))).toContain('string.max');
  });

  it('take a network or advertiser id as orders carry it: printable ASCII, so an unknown one is not found rather than malformed', () => {
    expect(valid(networkRef(), 'Awin.UK')).toBe('Awin.UK');
    expect(errors(networkRef(), 'a b')).toEqual(['string.pattern.name']);
    expect(valid(advertiserId(), ' Shop 12 ')).toBe('Shop 12');
    expect(errors(advertiserId(), 'caf\u00e9')).toEqual(['string.pattern.name']);
    expect(errors(advertiserId(), 'x'.repeat(129))).toEqual(['string.max']);
  });

  it('default page to 1 and per_page to 10, at most 100 (20 for lookups)', () => {
    const list = Joi.object(paging);
    expect(valid(list, {})).toEqual({ page: 1, per_page: 10 });
    expect(valid(list, { per_page: '100' })).toEqual({ page: 1, per_page: 100 });
    expect(errors(list, { per_page: 101 })).toEqual(['number.max']);
    expect(errors(list, { page: 0 })).toEqual(['number.min']);
    const lookup = Joi.object(lookupPaging);
    expect(valid(lookup, {})).toEqual({ page: 1, per_page: 20 });
    expect(errors(lookup, { per_page: 21 })).toEqual(['number.max']);
  });

  it('read query booleans as true/false/1/0 and dates as ISO 8601', () => {
    expect(valid(flag(), '1')).toBe(true);
    expect(valid(flag(), '0')).toBe(false);
    expect(errors(flag(), 'yes')).toEqual(['boolean.base']);
    expect(valid(dateTime(), '2026-03-01T10:00:00Z')).toEqual(new Date('2026-03-01T10:00:00Z'));
    expect(errors(dateTime(), '1 March 2026')).toEqual(['date.format']);
  });

  it('take nothing where a route takes no input', () => {
    expect(valid(none(), {})).toEqual({});
    expect(errors(none(), { a: 1 })).toEqual(['object.unknown']);
  });

  it("never let one caller's .required() or .description() change the field another caller gets", () => {
    const required = Joi.object({ network: networkId().required().description('Mine.') });
    expect(errors(required, {})).toEqual(['any.required']);
    expect(errors(Joi.object({ network: networkId() }), {})).toEqual([]);
    expect(networkId().describe().flags).toBeUndefined();
  });
});
