// The field schemas every input shares: the domains' schemas (src/services/<noun>/schemas.ts,
// which the routes, the CLI and the jobs take) import them from here, so a field means the same
// thing at every door. Each is a function or a fresh object because Joi schemas are immutable: a
// caller's `.required()` or `.description()` makes a new schema and never changes the shared one.
import Joi from 'joi';

/** `page` and `per_page` as the host platform defines them. */
export const paging = {
  page: Joi.number().integer().min(1).max(1_000_000).default(1).description('Current page of the collection.'),
  per_page: Joi.number().integer().min(1).max(100).default(10).description('Maximum number of items to be returned in result set.'),
};

/** `page` and `per_page` of a typeahead lookup: at most 20 a page. */
export const lookupPaging = {
  page: paging.page,
  per_page: Joi.number().integer().min(1).max(20).default(20).description('Maximum number of items to be returned in result set (at most 20).'),
};

/** What `paging` and `lookupPaging` give a handler once validated (both have defaults). */
export interface Paging {
  page: number;
  per_page: number;
}

/** An ISO 8601 date-time filter. */
export const dateTime = () => Joi.date().iso();

/** Query string booleans: true/false/1/0. */
export const flag = () => Joi.boolean().truthy('1').falsy('0');

/** A row id (order, payout, entry, job, member): a positive integer the database can hold exactly. */
export const id = () => Joi.number().integer().min(1).max(Number.MAX_SAFE_INTEGER);

/** A money amount as a decimal string; the service parses it in the currency's minor units. */
export const amount = () => Joi.string().max(40).description('Decimal string in the currency, e.g. "12.50".');

/** An ISO 4217 currency code. */
export const currency = () =>
  Joi.string()
    .pattern(/^[A-Z]{3}$/, 'ISO 4217 code')
    .description('ISO 4217 code (default: the site currency).');

/** An administrator's free-text note (who asked and why). */
export const note = () => Joi.string().trim().max(500);

/** A network's id as networks are named: lower case, digits, `_` and `-`, at most 64 (the networks domain checks ids with it too). */
export const NETWORK_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** The id of a network as networks are named: lower case, digits, `_` and `-`, at most 64. */
export const networkId = () => Joi.string().max(64).pattern(NETWORK_ID, 'network id');

/**
 * A network id as orders and postbacks carry it: any printable ASCII without spaces (documented
 * in docs/api.md for the order filters and the manual order), so an id that no network has is
 * "not found" or an empty list rather than a malformed request.
 */
export const networkRef = () =>
  Joi.string()
    .max(64)
    .pattern(/^[\x21-\x7e]+$/, 'printable ASCII')
    .description('Network id, e.g. awin.');

/** A network's own advertiser id, as orders carry it. */
export const advertiserId = () =>
  Joi.string()
    .trim()
    .max(128)
    .pattern(/^[\x20-\x7e]+$/, 'printable ASCII')
    .description("The network's advertiser id.");

/** The input of a route or command that takes none: nothing may be sent. */
export const none = () => Joi.object<Record<string, never>, true>({});

/** A "one or many" filter as its schema gives it: always an array. */
type ManyOf<V> = [Extract<V, readonly unknown[]>] extends [never] ? V : Extract<V, readonly unknown[]> extends readonly (infer U)[] ? U[] : V;

/** A list's filters as its query schema gives them (`Joi.object<ListQuery<Filters>, true>`): every `OneOrMany` an array. */
export type ListQuery<T> = { [K in keyof T]: ManyOf<T[K]> };

/** The direction of a list's sort, as the host platform spells it. */
export type SortOrder = 'asc' | 'desc';

/** What `sorting()` gives a handler once validated (both have defaults). */
export interface Sorting<C extends string = string> {
  orderby: C;
  order: SortOrder;
}

/**
 * `orderby` and `order` of a list (the host platform's names): the fields it sorts by and its
 * default. Ties are always broken by `id` in the same direction, so paging never repeats or skips
 * a row; the services add that key (see `orderClause` in src/db/lists.ts).
 */
export function sorting<C extends string>(columns: readonly C[], by: C, order: SortOrder) {
  return {
    orderby: Joi.string()
      .valid(...columns)
      .default(by)
      .description(`Sort by this field (default ${by}); ties go by id in the same direction.`),
    order: Joi.string().valid('asc', 'desc').default(order).description(`Sort direction (default ${order}).`),
  };
}

/**
 * Joi's array with one more way in: a comma-separated string (`status=pending,approved`). The
 * repeated and bracket forms (`status=a&status=b`, `status[]=a&status[]=b`, `status[0]=a`) reach
 * it as an array (the REST host folds the bracket forms onto the plain name).
 */
const commaJoi: Joi.Root = Joi.extend((joi) => ({
  type: 'commaList',
  base: joi.array(),
  coerce: { from: 'string', method: (value: string) => ({ value: value.split(',').map((s) => s.trim()) }) },
}));

/**
 * An "is any of" / "is none of" filter over an enumerated field: one value, a comma-separated
 * list, or an array; every value must be one of `values` (400 rest_invalid_param names the
 * parameter otherwise).
 */
export function anyOf<T extends string>(values: readonly T[]): Joi.ArraySchema<T[]> {
  const list = (commaJoi as unknown as { commaList(): Joi.ArraySchema<T[]> }).commaList();
  return list
    .items(Joi.string().valid(...values))
    .min(1)
    .max(Math.max(values.length, 1) * 2) as Joi.ArraySchema<T[]>;
}

/** A free-form value list filter (network ids, currencies): like `anyOf`, each item checked by `item`. */
export function anyOfPattern(item: Joi.StringSchema, max = 50): Joi.ArraySchema<string[]> {
  return (commaJoi as unknown as { commaList(): Joi.ArraySchema<string[]> }).commaList().items(item).min(1).max(max);
}

/** A list of ids (`include=3,7`, or an array), as the host platform's `include`. */
export function idList(max = 20): Joi.ArraySchema<number[]> {
  return (commaJoi as unknown as { commaList(): Joi.ArraySchema<number[]> }).commaList().items(id()).min(1).max(max);
}

/** `after` / `before` of a dated list: strictly after / strictly before (the host platform's meaning). */
export function dateRange(what: string) {
  return {
    after: dateTime().description(`Only ${what} strictly after this instant (ISO 8601).`),
    before: dateTime().description(`Only ${what} strictly before this instant (ISO 8601).`),
  };
}

/**
 * A module's table of schemas, built on the first read of any of them: every command loads every
 * service, and building all their schemas as the modules loaded took some 35 ms of each command's
 * start-up, most of them never used. `build` runs once; every read, key listing and `in` then
 * answers from what it built, as the plain object would.
 */
export function lazySchemas<T extends object>(build: () => T): T {
  let built: T | undefined;
  const table = () => (built ??= build());
  return new Proxy({} as T, {
    get: (_, key) => Reflect.get(table(), key),
    has: (_, key) => Reflect.has(table(), key),
    ownKeys: () => Reflect.ownKeys(table()),
    getOwnPropertyDescriptor: (_, key) => Reflect.getOwnPropertyDescriptor(table(), key),
    set: (_, key, value) => Reflect.set(table(), key, value),
  });
}
