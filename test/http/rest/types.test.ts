// `route()` is mostly a compile-time contract: `npm test` type-checks this file (tsc -p
// tsconfig.json), so each `@ts-expect-error` below fails the run if the typing it pins loosens.
import Joi from 'joi';
import { describe, expect, it } from 'vitest';
import type { Context } from '../../../src/context.js';
import { route, type RestInput } from '../../../src/http/rest/types.js';
import { routeTable } from '../../../src/http/routes/index.js';
import { ledgerSchemas } from '../../../src/services/ledger/schemas.js';

const input = <Q, P, A>(query: Q, payload: P, params: A): RestInput<Q, P, A> => ({
  query,
  payload,
  params,
  principal: null,
  actor: 'user:1',
  requestId: 'r1',
  ip: null,
  headers: {},
  idempotency: null,
});
const validated = <T>(schema: Joi.ObjectSchema<T>, value: unknown): T => {
  const { value: out, error } = schema.validate(value, { convert: true });
  if (error) throw error;
  return out;
};

describe('route()', () => {
  const since = Joi.object<{ page: number; since?: Date }, true>({ page: Joi.number().integer().default(1), since: Joi.date().iso() });
  const noteBody = Joi.object<{ note: string }, true>({ note: Joi.string().required() });
  const idParam = Joi.object<{ id: number }, true>({ id: Joi.number().integer().required() });
  const def = route({
    id: 'test.typed',
    method: 'POST',
    path: '/typed/{id}',
    auth: 'manage_options',
    description: 'A typed route.',
    validate: { query: since, payload: noteBody, params: idParam },
    // Each line uses a member only its type has: a number's toFixed, a Date's getUTCFullYear, a string's toUpperCase.
    handler: ({ query, payload, params }) => ({
      page: query.page.toFixed(0),
      year: query.since?.getUTCFullYear() ?? null,
      note: payload.note.toUpperCase(),
      id: params.id + 1,
    }),
  });

  it('produces the definition the host registers, with the same schemas', () => {
    expect(def).toMatchObject({ id: 'test.typed', method: 'POST', path: '/typed/{id}', auth: 'manage_options' });
    expect(def.validate.query).toBe(since);
    expect(def.validate.payload).toBe(noteBody);
    expect(def.validate.params).toBe(idParam);
  });

  it("hands the handler its schemas' validated values: numbers, dates and strings, not the raw text", async () => {
    const args = input(validated(since, { page: '2', since: '2026-03-01T00:00:00Z' }), validated(noteBody, { note: 'why' }), validated(idParam, { id: '41' }));
    expect(await def.handler(args, {} as Context, {} as never, {} as never)).toEqual({ page: '2', year: 2026, note: 'WHY', id: 42 });
  });

  it('refuses at compile time a handler that misreads its input, an untyped schema, and a schema that does not match its type', () => {
    route({
      id: 'test.misread',
      method: 'GET',
      path: '/misread',
      auth: 'manage_options',
      description: 'x',
      validate: { query: ledgerSchemas.members },
      handler: ({ query }) => {
        // @ts-expect-error page is a number once validated
        const page: string = query.page;
        // @ts-expect-error the members query has no status
        return [page, query.status];
      },
    });
    route({
      id: 'test.untyped',
      method: 'GET',
      path: '/untyped',
      auth: 'manage_options',
      description: 'x',
      // @ts-expect-error an untyped Joi.object() would give the handler `any`
      validate: { query: Joi.object({ a: Joi.string() }) },
      handler: () => null,
    });
    // @ts-expect-error every key of the type needs its schema
    Joi.object<{ a: string; b: number }, true>({ a: Joi.string() });
    // @ts-expect-error and of the right kind
    Joi.object<{ a: string }, true>({ a: Joi.number() });
    expect(routeTable.length).toBeGreaterThan(0);
  });
});
