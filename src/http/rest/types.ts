// The declarative route table of the `svc/v1` namespace: every route has an id, an auth
// requirement and Joi validation (a test walks the table and fails on any that lacks one).
// Routes are written with `route()`, so a handler's input has the type of its schemas.
import type { Request, ResponseToolkit } from '@hapi/hapi';
import type Joi from 'joi';
import type { Context } from '../../context.js';
import type { Principal } from '../../services/auth/index.js';
import type { KeyHold } from '../../services/idempotency/index.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * `manage_options`: administrators only (every namespace route but these). `signed_in`: any
 * authenticated user, the handler's service deciding whose data they reach (a user's own
 * application passwords). `public`: the index documents.
 */
export type Auth = 'manage_options' | 'signed_in' | 'public';

// biome-ignore lint/suspicious/noExplicitAny: an untyped route's input is what its Joi schema let through.
export interface RestInput<Q = Record<string, any>, P = Record<string, any>, A = Record<string, any>> {
  query: Q;
  payload: P;
  params: A;
  principal: Principal | null;
  /** "user:<id>" of the caller, for audit fields. */
  actor: string;
  requestId: string;
  ip: string | null;
  headers: Record<string, string>;
  /**
   * On `idempotent` routes called with an Idempotency-Key: handlers pass `once(status)` to the
   * service, which claims the key first in its transaction and records the outcome last.
   */
  idempotency: KeyHold | null;
}

export interface RouteDef {
  /** Stable id, `<group>.<action>` (e.g. `logs.list`). */
  id: string;
  method: Method;
  /** Path below the namespace, hapi style: `/ledger/entries/{id}`. */
  path: string;
  auth: Auth;
  description: string;
  validate: {
    query?: Joi.ObjectSchema;
    payload?: Joi.ObjectSchema;
    params?: Joi.ObjectSchema;
  };
  /** Accepts `Idempotency-Key` (POSTs that move money). */
  idempotent?: boolean;
  /**
   * Where what a 201 made can be read: its path below the namespace (`/pages/7`). The host turns
   * it into the absolute `Location` of every 201 the route answers, an idempotent replay's too.
   * Every route that can answer 201 declares it (a test follows each).
   */
  // biome-ignore lint/suspicious/noExplicitAny: the body is what the route's 201 answered.
  location?(body: any): string;
  handler(input: RestInput, ctx: Context, request: Request, h: ResponseToolkit): Promise<unknown> | unknown;
}

/**
 * A schema whose validated value has the type `T`, written `Joi.object<T, true>({...})`: Joi
 * then checks that the map has a schema of the right kind for every key of `T` and no other.
 * An untyped `Joi.object({...})` is `ObjectSchema<any>` and is refused here, so no handler
 * receives `any`.
 */
export type TypedSchema<T> = Joi.ObjectSchema<T> & (0 extends 1 & T ? 'type the schema: Joi.object<T, true>({...})' : unknown);

/** A route as it is written: the handler's `query`, `payload` and `params` have their schemas' types. */
export interface RouteSpec<Q, P, A> extends Omit<RouteDef, 'validate' | 'handler'> {
  validate: { query?: TypedSchema<Q>; payload?: TypedSchema<P>; params?: TypedSchema<A> };
  handler(input: RestInput<Q, P, A>, ctx: Context, request: Request, h: ResponseToolkit): Promise<unknown> | unknown;
}

/** No input of that kind: the host validates an absent schema as an empty object. */
export type NoInput = Record<string, never>;

/**
 * Declares a route. The types exist at compile time only: the host validates with the same
 * schemas before it calls the handler, so the value a handler receives is the schema's output.
 */
export function route<Q = NoInput, P = NoInput, A = NoInput>(spec: RouteSpec<Q, P, A>): RouteDef {
  return spec as unknown as RouteDef;
}

/** A response with a status and headers other than 200 JSON. */
export class RestResponse {
  constructor(
    readonly body: unknown,
    readonly status = 200,
    readonly headers: Record<string, string> = {},
  ) {}
}

/** A page of a collection; the host adds X-WP-Total, X-WP-TotalPages and Link. */
export class PagedResult<T = unknown> {
  constructor(
    readonly items: T[],
    readonly total: number,
    readonly page: number,
    readonly perPage: number,
  ) {}
}

/** A 201; the host adds `Location` from the route's `location`. */
export const created = (body: unknown): RestResponse => new RestResponse(body, 201);
export const accepted = (body: unknown): RestResponse => new RestResponse(body, 202);
