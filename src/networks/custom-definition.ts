// A custom network, defined as data: name, currency, cashback rule, tracking-link template,
// status words, postback parameter mapping, optional JSON/CSV feeds with a field mapping, and the
// settings (credentials) its feeds need. One Joi schema serves the REST route and the service; the
// checks Joi cannot express (unique names, placeholders) follow it, with the same field names.
import Joi from 'joi';
import { ServiceError } from '../errors.js';
import { currency } from '../fields.js';
import { isCurrency } from '../money.js';
import { dict, own } from '../objects.js';
import { CASHBACK_TYPES, normaliseRule } from '../cashback-rule.js';
import type { TransactionStatus } from './types.js';

export const TRANSACTION_STATUSES = ['pending', 'approved', 'declined'] as const;

/** Fields a postback can carry (the PostbackFields of the module interface). */
export const POSTBACK_FIELDS = [
  'transaction_id',
  'status',
  'sale_amount',
  'commission',
  'currency',
  'sub_id',
  'advertiser_id',
  'merchant_ref',
  'event_time',
] as const;
export type PostbackField = (typeof POSTBACK_FIELDS)[number];

export const ADVERTISER_FEED_FIELDS = [
  'id',
  'name',
  'domain',
  'site_url',
  'logo_url',
  'tracking_template',
  'commission_type',
  'commission_min',
  'commission_max',
  'commission_currency',
  'categories',
  'countries',
  'status',
  'validation_days',
] as const;
export const COUPON_FEED_FIELDS = [
  'coupon_id',
  'advertiser_id',
  'code',
  'title',
  'description',
  'terms',
  'discount',
  'discount_type',
  'discount_value',
  'discount_currency',
  'url',
  'tracking_url',
  'starts_at',
  'ends_at',
  'exclusive',
  'regions',
] as const;
export const TRANSACTION_FEED_FIELDS = [
  'transaction_id',
  'status',
  'sale_amount',
  'commission',
  'currency',
  'sub_id',
  'advertiser_id',
  'merchant_ref',
  'clicked_at',
  'event_at',
  'paid',
  'payment_id',
  'paid_amount',
  'paid_at',
] as const;

/** Parameter names the endpoint itself reads: a mapping may not claim them. */
export const RESERVED_PARAMS = ['token', 'test'];

export interface SettingKey {
  name: string;
  description?: string;
  required?: boolean;
  secret?: boolean;
}

export interface FeedDefinition {
  /**
   * http(s) URL; `{settings.NAME}` (and, for transactions, `{from}` `{to}` as YYYY-MM-DD) are filled
   * in. https when it or a header uses a secret setting (plain http only to a loopback host).
   */
  url: string;
  format: 'json' | 'csv';
  /** JSON: dotted path to the array of records (absent: the document is the array). */
  items?: string;
  /** CSV: one character (default `,`). */
  delimiter?: string;
  /** Extra request headers; values may use `{settings.NAME}`. Sent to the feed's own origin only. */
  headers?: Record<string, string>;
  /** Our field → the record's key (JSON: dotted path; CSV: header name). */
  fields: Record<string, string>;
  /** Advertisers feed: values of the status field that mean active (absent: every listed one is active). */
  active_values?: string[];
}

/** The columns of the network's payment report (CSV, header row) that `POST /networks/{id}/payments/import` reads. */
export interface PaymentsMapping {
  /** One character (default `,`). */
  delimiter?: string;
  /** Our field → the report's column header: transaction_id and payment_id required; amount, currency, paid_at optional. */
  fields: { transaction_id: string; payment_id: string; amount?: string; currency?: string; paid_at?: string };
}

export interface CustomDefinition {
  name: string;
  currency: string;
  /** The network's default member cashback (kept as the network's cashback rule). */
  cashback?: { type: (typeof CASHBACK_TYPES)[number]; value: string; currency?: string | null } | null;
  /** `{sub_id}` required; `{url}` (URL-encoded), `{advertiser_id}`, `{settings.NAME}` (non-secret settings). */
  tracking_link?: string | null;
  settings?: SettingKey[];
  /** The network's status words → ours, matched without regard to case. */
  statuses: Record<string, TransactionStatus>;
  postback?: { params: Partial<Record<PostbackField, string>> } | null;
  feeds?: { advertisers?: FeedDefinition | null; transactions?: FeedDefinition | null; coupons?: FeedDefinition | null } | null;
  /** How to read the network's payment report (a CSV upload); absent: the network takes no import. */
  payments?: PaymentsMapping | null;
}

const paramName = Joi.string()
  .pattern(/^[A-Za-z0-9_.[\]-]{1,64}$/, 'parameter name')
  .description('A query or body parameter name.');
const fieldSource = Joi.string().min(1).max(128);
const settingName = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

const feed = (fields: readonly string[], required: string[]) =>
  Joi.object({
    url: Joi.string().max(2000).required().description('http(s) URL; {settings.NAME} placeholders are filled in.'),
    format: Joi.string().valid('json', 'csv').required(),
    items: Joi.string()
      .max(200)
      .pattern(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, 'dotted path'),
    delimiter: Joi.string().length(1).invalid('"', '\n', '\r'),
    headers: Joi.object()
      .pattern(/^[A-Za-z0-9-]{1,64}$/, Joi.string().max(2000))
      .max(20),
    fields: Joi.object(Object.fromEntries(fields.map((f) => [f, required.includes(f) ? fieldSource.required() : fieldSource]))).required(),
    active_values: Joi.array().items(Joi.string().min(1).max(64)).max(50),
  });

/** The body of `POST /networks/{id}` and the argument of `NetworkService.saveCustom`. */
export const customDefinitionSchema = Joi.object<CustomDefinition, true>({
  name: Joi.string().trim().min(1).max(191).required(),
  currency: currency().required().description('The currency the network reports in when a record names none.'),
  cashback: Joi.object({
    type: Joi.string()
      .valid(...CASHBACK_TYPES)
      .required(),
    value: Joi.string().max(32).required(),
    currency: currency().allow(null).description('The currency of a flat amount (a percent rule has none).'),
  })
    .allow(null)
    .description("The network's default member cashback (default: the site's)."),
  tracking_link: Joi.string().max(2000).allow(null).description('Template with {sub_id} (required), {url}, {advertiser_id}, {settings.NAME}.'),
  settings: Joi.array()
    .items(
      Joi.object({
        name: Joi.string().pattern(settingName, 'setting name').required(),
        description: Joi.string().max(500),
        required: Joi.boolean(),
        secret: Joi.boolean(),
      }),
    )
    .max(20),
  statuses: Joi.object()
    .pattern(
      /^[\x21-\x7e](?:[\x20-\x7e]{0,62}[\x21-\x7e])?$/,
      Joi.string()
        .valid(...TRANSACTION_STATUSES)
        .required(),
    )
    .min(1)
    .max(100)
    .required()
    .description('Network status word → pending, approved or declined.'),
  postback: Joi.object({
    params: Joi.object(
      Object.fromEntries(POSTBACK_FIELDS.map((f) => [f, f === 'transaction_id' || f === 'commission' ? paramName.required() : paramName])),
    ).required(),
  }).allow(null),
  feeds: Joi.object({
    advertisers: feed(ADVERTISER_FEED_FIELDS, ['id', 'name']).allow(null),
    transactions: feed(TRANSACTION_FEED_FIELDS, ['transaction_id', 'commission']).allow(null),
    coupons: feed(COUPON_FEED_FIELDS, ['coupon_id', 'advertiser_id', 'title']).allow(null),
  }).allow(null),
  payments: Joi.object({
    delimiter: Joi.string().length(1).invalid('"', '\n', '\r'),
    fields: Joi.object({
      transaction_id: fieldSource.required(),
      payment_id: fieldSource.required(),
      amount: fieldSource,
      currency: fieldSource,
      paid_at: fieldSource,
    }).required(),
  })
    .allow(null)
    .description("The columns of the network's payment report (CSV with a header row) read by POST /networks/{id}/payments/import."),
});

/** Fields a new custom network must have; an update may leave them out (they are kept). */
export const REQUIRED_DEFINITION_FIELDS = ['name', 'currency', 'statuses'] as const;

/**
 * The body of `POST /networks/{id}`: the definition with every field optional, since an update
 * keeps what it does not send. Whether a new network has its required fields is the service's
 * check (it alone knows whether the network exists).
 */
export const customDefinitionPatchSchema = customDefinitionSchema.fork([...REQUIRED_DEFINITION_FIELDS], (f) => f.optional()) as Joi.ObjectSchema<
  Partial<CustomDefinition>
>;
// (Joi's types cannot follow `fork`: the assertion states what the fork above does at run time.)

/**
 * A stored definition with an update applied, as the host platform updates a resource: a field
 * the update does not send is kept; a field it sends (null included) replaces the stored one.
 * `feeds` is merged per feed, so sending one feed keeps the other. The postback mapping and the
 * status words are replaced whole: a mapping merged parameter by parameter could keep a
 * parameter the network no longer sends.
 */
export function mergeDefinition(stored: Record<string, unknown>, update: Record<string, unknown>): Record<string, unknown> {
  // No prototype: a key `__proto__` in a directly called update stays a (refused) field.
  const merged = Object.assign(dict<unknown>(), stored);
  for (const [key, value] of Object.entries(update)) {
    if (value === undefined) continue;
    const before = stored.feeds;
    if (key === 'feeds' && value !== null && typeof value === 'object' && before && typeof before === 'object')
      merged.feeds = { ...(before as object), ...(value as object) };
    else merged[key] = value;
  }
  return merged;
}

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_.]*)\}/g;

function placeholders(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)].map((m) => m[1]);
}

/** Fills `{name}` placeholders, URL-encoding the values unless `encode` is false. Unknown placeholders stay. */
export function fillTemplate(template: string, values: Record<string, string | null | undefined>, encode = true): string {
  return template.replace(PLACEHOLDER, (whole, name: string) => {
    const v = own(values, name) as string | null | undefined;
    if (v === undefined) return whole;
    return encode ? encodeURIComponent(v ?? '') : (v ?? '');
  });
}

/**
 * A loopback host: `localhost`, 127.0.0.0/8 or ::1. The one exception to "a feed that sends a
 * secret is https": nothing leaves the machine (and test fixtures listen there).
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return (u.protocol === 'http:' || u.protocol === 'https:') && !!u.hostname;
  } catch {
    return false;
  }
}

/** Joi's path as the host names parameters: `postback[params][status]`. */
function hostName(path: (string | number)[]): string {
  const [head, ...rest] = path.map(String);
  return head + rest.map((p) => `[${p}]`).join('');
}

function refuse(params: Record<string, string>): never {
  const names = Object.keys(params);
  throw new ServiceError('svc_invalid_network', `Invalid network definition: ${names.map((n) => `${n}: ${params[n]}`).join('; ')}`, 400, { params });
}

/** Validates a definition (schema, then cross-field rules); 400 svc_invalid_network with `data.params`. */
export function checkDefinition(input: unknown): CustomDefinition {
  const { value, error } = customDefinitionSchema.validate(input, { abortEarly: false, convert: true, errors: { wrap: { label: false } } });
  if (error) {
    const params: Record<string, string> = {};
    for (const d of error.details) params[d.path.length ? hostName(d.path) : '(body)'] ??= d.message;
    refuse(params);
  }
  const def = value as CustomDefinition;
  const params: Record<string, string> = {};
  if (!isCurrency(def.currency)) params.currency = `unknown currency ${def.currency}`;
  if (def.cashback) {
    try {
      def.cashback = normaliseRule(def.cashback.type, def.cashback.value, def.cashback.currency, def.currency);
    } catch (err) {
      params[`cashback[${String((err as ServiceError).data?.field ?? 'value')}]`] = (err as Error).message;
    }
  }
  const settings = def.settings ?? [];
  const settingNames = new Set<string>();
  settings.forEach((s, i) => {
    if (settingNames.has(s.name)) params[`settings[${i}][name]`] = `setting ${s.name} is declared twice`;
    settingNames.add(s.name);
  });
  const secretNames = new Set(settings.filter((s) => s.secret).map((s) => s.name));

  const lowerWords = new Map<string, string>();
  for (const word of Object.keys(def.statuses)) {
    const lower = word.toLowerCase();
    if (lowerWords.has(lower)) params[`statuses[${word}]`] = `status word "${word}" differs from "${lowerWords.get(lower)}" only in case`;
    lowerWords.set(lower, word);
  }

  if (def.tracking_link) {
    const allowed = new Set(['sub_id', 'url', 'advertiser_id', ...[...settingNames].filter((n) => !secretNames.has(n)).map((n) => `settings.${n}`)]);
    const used = placeholders(def.tracking_link);
    const bad = used.find((p) => !allowed.has(p));
    if (bad)
      params.tracking_link = secretNames.has(bad.replace(/^settings\./, ''))
        ? `{${bad}} is a secret setting: a tracking link is shown to members`
        : `unknown placeholder {${bad}}`;
    else if (!used.includes('sub_id')) params.tracking_link = 'tracking_link must contain {sub_id}, or no order could be credited to a member';
    else if (!isHttpUrl(fillTemplate(def.tracking_link, { sub_id: '1', url: 'https://example.com/', advertiser_id: '1' }).replace(PLACEHOLDER, 'x')))
      params.tracking_link = 'tracking_link must be an http(s) URL';
  }

  if (def.postback) {
    const seen = new Map<string, string>();
    for (const [field, name] of Object.entries(def.postback.params) as [PostbackField, string][]) {
      const lower = name.toLowerCase();
      if (RESERVED_PARAMS.includes(lower)) params[`postback[params][${field}]`] = `"${name}" is reserved for the endpoint (token, test)`;
      else if (seen.has(lower)) params[`postback[params][${field}]`] = `parameter "${name}" is already mapped to ${seen.get(lower)}`;
      seen.set(lower, field);
    }
  }

  for (const kind of ['advertisers', 'transactions', 'coupons'] as const) {
    const f = def.feeds?.[kind];
    if (!f) continue;
    const allowed = new Set([...[...settingNames].map((n) => `settings.${n}`), ...(kind === 'transactions' ? ['from', 'to'] : [])]);
    const bad = [f.url, ...Object.values(f.headers ?? {})].flatMap(placeholders).find((p) => !allowed.has(p));
    if (bad) params[`feeds[${kind}][url]`] = `unknown placeholder {${bad}}`;
    else if (!isHttpUrl(fillTemplate(f.url, {}).replace(PLACEHOLDER, 'x'))) params[`feeds[${kind}][url]`] = 'the feed URL must be an http(s) URL';
    else {
      // A secret setting in the URL or a header travels in clear over http: https, or loopback.
      const secret = [f.url, ...Object.values(f.headers ?? {})]
        .flatMap(placeholders)
        .find((p) => p.startsWith('settings.') && secretNames.has(p.slice('settings.'.length)));
      const target = new URL(fillTemplate(f.url, {}).replace(PLACEHOLDER, 'x'));
      if (secret && target.protocol !== 'https:' && !isLoopbackHost(target.hostname)) {
        params[`feeds[${kind}][url]`] = `the feed sends the secret setting {${secret}}, so its URL must be https (plain http only to a loopback host)`;
      }
    }
    if (f.format === 'csv' && f.items) params[`feeds[${kind}][items]`] = 'items applies to JSON feeds only';
    if (f.format === 'json' && f.delimiter) params[`feeds[${kind}][delimiter]`] = 'delimiter applies to CSV feeds only';
  }
  if (Object.keys(params).length) refuse(params);
  return def;
}

/**
 * Where a custom network's secret settings travel: each secret setting a feed's URL or headers
 * use → the origins of those feeds, with the given non-secret settings filled in (a placeholder
 * left unfilled counts as part of the text). The networks service compares these before and after
 * a change, so a definition edit or a setting that moves a feed to another host cannot carry a
 * secret given for the old one along with it.
 */
export function secretDestinations(def: CustomDefinition, plain: Record<string, string | undefined>): Map<string, Set<string>> {
  const secretNames = new Set((def.settings ?? []).filter((s) => s.secret).map((s) => s.name));
  const values: Record<string, string> = {};
  for (const [k, v] of Object.entries(plain)) if (v !== undefined && !secretNames.has(k)) values[`settings.${k}`] = v;
  const out = new Map<string, Set<string>>();
  for (const f of Object.values(def.feeds ?? {})) {
    if (!f) continue;
    const used = [f.url, ...Object.values(f.headers ?? {})].flatMap((t) => [...t.matchAll(/\{settings\.([A-Za-z0-9_]+)\}/g)].map((m) => m[1]));
    const filled = fillTemplate(f.url, values);
    let origin: string;
    try {
      origin = new URL(filled).origin;
    } catch {
      origin = filled.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/?#]*).*$/i, '$1').toLowerCase();
    }
    for (const name of used.filter((n) => secretNames.has(n))) {
      if (!out.has(name)) out.set(name, new Set());
      out.get(name)!.add(origin);
    }
  }
  return out;
}

/**
 * The secret settings that `after` would send to an origin `before` did not send them to, each with
 * that origin and the one it was given for; only secrets that `hasValue` and that were already bound
 * (sent somewhere before: a secret no feed used yet binds on its first use).
 */
export function movedSecrets(
  before: Map<string, Set<string>>,
  after: Map<string, Set<string>>,
  hasValue: (name: string) => boolean,
): { name: string; from: string; to: string }[] {
  const moved: { name: string; from: string; to: string }[] = [];
  for (const [name, origins] of after) {
    const was = before.get(name);
    if (!was?.size || !hasValue(name)) continue;
    const to = [...origins].find((o) => !was.has(o));
    if (to) moved.push({ name, from: [...was].join(', '), to });
  }
  return moved;
}
