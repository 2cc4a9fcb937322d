// Configuration: JSON defaults in config/, a per-environment file beside them, then CASHTRACK_*
// environment variables; validated once at start with a message that names the bad key.
import { readFileSync, existsSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Joi from 'joi';
import { ServiceError } from './errors.js';
import { parseCeiling } from './money.js';
import { isPrototypeKey, own } from './objects.js';
import { isAllowEntry } from './outbound/addresses.js';
import { privateDir, tighten } from './private-files.js';
import { CronSlots } from './jobs/cron-slots.js';

/** The configurable schedules (`schedules.<name>`); src/jobs/schedules.ts says what each runs. */
export const SCHEDULE_NAMES = ['advertisers_sync', 'orders_poll', 'coupons_refresh', 'maintenance_prune'] as const;
export type ScheduleName = (typeof SCHEDULE_NAMES)[number];
/** The schedules that run once per network, and take per-network overrides. */
export const PER_NETWORK_SCHEDULES: readonly ScheduleName[] = ['advertisers_sync', 'orders_poll'];

/** One schedule: a cron expression (node-cron syntax, seconds optional) in a time zone. */
export interface ScheduleConfig {
  cron: string;
  timezone: string;
  enabled: boolean;
  /** On start, run the latest slot missed while every daemon was down (once, not once per slot). */
  catch_up: boolean;
  /** Per network (per-network schedules only): its own expression, or switched on/off alone. */
  networks?: Record<string, { cron?: string; enabled?: boolean }>;
}
import { PAGE_TEMPLATE_TAGS, unknownTags } from './services/pages/templates.js';

export interface Config {
  env: string;
  data_dir: string;
  secret: string;
  currency: string;
  database: { url: string; busy_timeout_ms: number; pool_max: number; auto_migrate: boolean | null };
  server: {
    host: string;
    port: number;
    rest_root: string;
    public_url: string | null;
    trust_proxy: boolean;
    max_body_bytes: number;
    /** Largest body accepted under the REST root from a request without credentials. */
    anonymous_max_body_bytes: number;
    cors_origins: string[];
    /** Hosts (`name[:port]`) the daemon answers; empty: any outside production, public_url's in production. */
    allowed_hosts: string[];
  };
  auth: {
    session_ttl_hours: number;
    credential_cache_seconds: number;
    /** log2 of scrypt's N for login passwords: at least 17 (OWASP); lower is accepted in tests only. */
    scrypt_log_n: number;
    /**
     * Failures per client address (IPv4 address or IPv6 /64) in a fixed window, then 429; per user,
     * growing delays after `failures_before_delay`, up to `max_delay_seconds`. Kept in the database.
     */
    throttle: { window_seconds: number; max_failures_per_address: number; failures_before_delay: number; max_delay_seconds: number };
    /** Login-form password checks (scrypt) running at once in this process: in total and per address. */
    password_checks: { max_concurrent: number; per_address: number };
  };
  log: { level: 'debug' | 'info'; retention_days: number; stdout: boolean };
  /** Member share when neither the network nor the advertiser has a rule. */
  cashback: { default_type: 'percent_commission' | 'percent_sale' | 'flat'; default_value: string };
  /** The referrer's share of the referee's approved cashback, in percent. */
  referrals: { share_percent: string };
  /** Smallest payout, a decimal string in the site currency. */
  payouts: { minimum: string };
  /**
   * Orders reported by networks: `review_above` is the commission above which an order is held
   * for review ("1000.00", "500.00 GBP, 80000 JPY"; null or "none": no ceiling). A network's
   * own `review_above` setting overrides it.
   */
  orders: { review_above: string | null };
  /**
   * Coupon refreshes: a full refresh refuses to mark more than `max_removed_share` (0..1) of a
   * network's coupons removed at once unless forced (a network dropping them all is more often
   * an outage than a real change).
   */
  coupons: { max_removed_share: number };
  /** Persisted jobs: how many this process runs at once (0: none), leases, polling, retention. */
  jobs: { concurrency: number; lease_seconds: number; poll_interval_ms: number; max_attempts: number; retention_days: number };
  /** Extension modules (paths) whose `register(hooks, ctx)` runs at start. */
  extensions: string[];
  /** The postback endpoint (`/postback/{network}`): off until switched on, here and per network. */
  postbacks: {
    enabled: boolean;
    retention_days: number;
    max_query_bytes: number;
    max_body_bytes: number;
    signature_tolerance_seconds: number;
    /** Postbacks recorded together in one transaction, at most (1: each alone). */
    batch_max: number;
    /** Batches recorded at once by this process. */
    batches_in_flight: number;
    /** Flood control of refused postbacks, per network and client address (an IPv6 client by its /64). */
    rejections: {
      /** The fixed window the counts below run in. */
      window_seconds: number;
      /** Unauthenticated refusals in a window after which the address is answered 429, storing nothing. */
      max_per_address: number;
      /** Refusals in a window stored one by one; past this, one record per kind of refusal counts the repeats. */
      aggregate_after: number;
    };
  };
  /**
   * `GET /metrics` (Prometheus): off unless enabled. With `port`, served only by a listener of its
   * own on `host:port` (the token, when set, still required); without, on the main port and only
   * with the bearer `token`.
   */
  metrics: { enabled: boolean; token: string | null; host: string; port: number | null };
  /** Settings of network modules by network id, under those set by `cashtrack networks configure`. */
  networks: Record<string, Record<string, string>>;
  /** The AI provider (any OpenAI-compatible chat-completions endpoint); `cashtrack ai configure` stores settings over these. */
  ai: AiConfig;
  /**
   * Shop logos: advertisers fetched at once by a bulk run (`concurrency`) and requests at once to
   * one host (`per_host`); the image bounds (decoded pixels, the output box, the stored size); the
   * home page read for icon links (`max_html_bytes`); timeouts of each request (connect and
   * headers, whole request).
   */
  logos: {
    concurrency: number;
    per_host: number;
    max_input_pixels: number;
    max_size: number;
    max_stored_bytes: number;
    max_html_bytes: number;
    connect_timeout_ms: number;
    timeout_ms: number;
  };
  /**
   * The outbound guard (every fetch of a URL an administrator or a network chose): `allow` lists
   * host names, addresses and CIDRs that may be reached although private, on any port; every other
   * destination must be public and use one of `ports`; responses larger than `max_bytes` are cut off.
   */
  outbound: { allow: string[]; ports: number[]; max_bytes: number };
  /** When the periodic jobs run (src/jobs/schedules.ts). */
  schedules: Record<ScheduleName, ScheduleConfig>;
  /** Shop pages: the templates pages are made from, and where a page is published. */
  pages: {
    /** Template name to its title, body (HTML) and excerpt, with `%TAG%`s (docs/api.md lists them). */
    templates: Record<string, PageTemplate>;
    /** The template used when a request names none. */
    default_template: string;
    /** The status of a page made without one. */
    default_status: 'draft' | 'publish';
    /** A page's public address with `%SLUG%` (and `%ID%`), shown as `link`; null: pages have none. */
    link_template: string | null;
  };
  /** Outgoing webhooks (docs/api.md "Webhooks"). */
  webhooks: {
    /** Whether this daemon sends deliveries (any daemon on the database may; at least one should). */
    send: boolean;
    /** Deliveries this process attempts at once. */
    concurrency: number;
    /** How often the sender looks for retries that fell due. */
    poll_interval_ms: number;
    /** One attempt, connection and answer, at most. */
    timeout_ms: number;
    /** Seconds before the 1st, 2nd, ... retry (each spread by ±20%); past the last, a delivery is dead. */
    retry_schedule_seconds: number[];
    /** Failed attempts in a row that disable a subscription. */
    disable_after_failures: number;
    /** Days the delivery log is kept (maintenance.prune). */
    retention_days: number;
  };
}

export interface PageTemplate {
  title: string;
  body: string;
  excerpt: string;
}

/** A task's prompt templates, with the page template tags (see docs/operations.md "AI content"). */
export interface AiPrompt {
  system: string;
  user: string;
}

/** The AI provider and how it is used. */
export interface AiConfig {
  base_url: string | null;
  /** Write-only: never shown, scrubbed from logs. */
  api_key: string | null;
  model: string | null;
  temperature: number;
  /** Per attempt. */
  timeout_ms: number;
  /** Calls at once in a bulk run. */
  concurrency: number;
  /** Tokens a bulk run may spend (0: no limit). */
  token_budget: number;
  /** The language the content is written in (a name or a BCP 47 tag), passed to the prompts as {language}. */
  language: string;
  /** Attempts per call (429, 5xx, timeouts and connection errors are tried again with a capped backoff). */
  max_attempts: number;
  retry_base_ms: number;
  retry_max_ms: number;
  /** A provider's Retry-After is honoured up to this many seconds. */
  retry_after_max_seconds: number;
  prompts: { shop: AiPrompt; coupon: AiPrompt };
}

/** Environment variables and the configuration key each one sets. Documented in README.md. */
export const ENV_KEYS: Record<string, string> = {
  CASHTRACK_ENV: 'env',
  CASHTRACK_DATA_DIR: 'data_dir',
  CASHTRACK_SECRET: 'secret',
  CASHTRACK_CURRENCY: 'currency',
  CASHTRACK_DATABASE_URL: 'database.url',
  CASHTRACK_DATABASE_BUSY_TIMEOUT_MS: 'database.busy_timeout_ms',
  CASHTRACK_DATABASE_POOL_MAX: 'database.pool_max',
  CASHTRACK_DATABASE_AUTO_MIGRATE: 'database.auto_migrate',
  CASHTRACK_HOST: 'server.host',
  CASHTRACK_PORT: 'server.port',
  CASHTRACK_REST_ROOT: 'server.rest_root',
  CASHTRACK_PUBLIC_URL: 'server.public_url',
  CASHTRACK_TRUST_PROXY: 'server.trust_proxy',
  CASHTRACK_MAX_BODY_BYTES: 'server.max_body_bytes',
  CASHTRACK_ANONYMOUS_MAX_BODY_BYTES: 'server.anonymous_max_body_bytes',
  CASHTRACK_CORS_ORIGINS: 'server.cors_origins',
  CASHTRACK_ALLOWED_HOSTS: 'server.allowed_hosts',
  CASHTRACK_SESSION_TTL_HOURS: 'auth.session_ttl_hours',
  CASHTRACK_CREDENTIAL_CACHE_SECONDS: 'auth.credential_cache_seconds',
  CASHTRACK_SCRYPT_LOG_N: 'auth.scrypt_log_n',
  CASHTRACK_THROTTLE_WINDOW_SECONDS: 'auth.throttle.window_seconds',
  CASHTRACK_THROTTLE_MAX_FAILURES_PER_ADDRESS: 'auth.throttle.max_failures_per_address',
  CASHTRACK_THROTTLE_FAILURES_BEFORE_DELAY: 'auth.throttle.failures_before_delay',
  CASHTRACK_THROTTLE_MAX_DELAY_SECONDS: 'auth.throttle.max_delay_seconds',
  CASHTRACK_PASSWORD_CHECKS_MAX_CONCURRENT: 'auth.password_checks.max_concurrent',
  CASHTRACK_PASSWORD_CHECKS_PER_ADDRESS: 'auth.password_checks.per_address',
  CASHTRACK_LOG_LEVEL: 'log.level',
  CASHTRACK_LOG_RETENTION_DAYS: 'log.retention_days',
  CASHTRACK_LOG_STDOUT: 'log.stdout',
  CASHTRACK_CASHBACK_DEFAULT_TYPE: 'cashback.default_type',
  CASHTRACK_CASHBACK_DEFAULT_VALUE: 'cashback.default_value',
  CASHTRACK_REFERRAL_SHARE_PERCENT: 'referrals.share_percent',
  CASHTRACK_PAYOUT_MINIMUM: 'payouts.minimum',
  CASHTRACK_ORDERS_REVIEW_ABOVE: 'orders.review_above',
  CASHTRACK_COUPONS_MAX_REMOVED_SHARE: 'coupons.max_removed_share',
  CASHTRACK_JOBS_CONCURRENCY: 'jobs.concurrency',
  CASHTRACK_JOBS_LEASE_SECONDS: 'jobs.lease_seconds',
  CASHTRACK_JOBS_POLL_INTERVAL_MS: 'jobs.poll_interval_ms',
  CASHTRACK_JOBS_MAX_ATTEMPTS: 'jobs.max_attempts',
  CASHTRACK_JOBS_RETENTION_DAYS: 'jobs.retention_days',
  CASHTRACK_EXTENSIONS: 'extensions',
  CASHTRACK_METRICS_ENABLED: 'metrics.enabled',
  CASHTRACK_METRICS_TOKEN: 'metrics.token',
  CASHTRACK_METRICS_HOST: 'metrics.host',
  CASHTRACK_METRICS_PORT: 'metrics.port',
  CASHTRACK_POSTBACKS_ENABLED: 'postbacks.enabled',
  CASHTRACK_POSTBACKS_RETENTION_DAYS: 'postbacks.retention_days',
  CASHTRACK_POSTBACKS_MAX_QUERY_BYTES: 'postbacks.max_query_bytes',
  CASHTRACK_POSTBACKS_MAX_BODY_BYTES: 'postbacks.max_body_bytes',
  CASHTRACK_POSTBACKS_SIGNATURE_TOLERANCE_SECONDS: 'postbacks.signature_tolerance_seconds',
  CASHTRACK_POSTBACKS_BATCH_MAX: 'postbacks.batch_max',
  CASHTRACK_POSTBACKS_BATCHES_IN_FLIGHT: 'postbacks.batches_in_flight',
  CASHTRACK_POSTBACKS_REJECTIONS_WINDOW_SECONDS: 'postbacks.rejections.window_seconds',
  CASHTRACK_POSTBACKS_REJECTIONS_MAX_PER_ADDRESS: 'postbacks.rejections.max_per_address',
  CASHTRACK_POSTBACKS_REJECTIONS_AGGREGATE_AFTER: 'postbacks.rejections.aggregate_after',
  CASHTRACK_LOGOS_CONCURRENCY: 'logos.concurrency',
  CASHTRACK_LOGOS_PER_HOST: 'logos.per_host',
  CASHTRACK_LOGOS_MAX_INPUT_PIXELS: 'logos.max_input_pixels',
  CASHTRACK_LOGOS_MAX_SIZE: 'logos.max_size',
  CASHTRACK_LOGOS_TIMEOUT_MS: 'logos.timeout_ms',
  CASHTRACK_OUTBOUND_ALLOW: 'outbound.allow',
  CASHTRACK_OUTBOUND_PORTS: 'outbound.ports',
  CASHTRACK_OUTBOUND_MAX_BYTES: 'outbound.max_bytes',
  // CASHTRACK_SCHEDULE_<NAME>_CRON, _TIMEZONE, _ENABLED, _CATCH_UP for each schedule.
  ...Object.fromEntries(
    SCHEDULE_NAMES.flatMap((name) => ['cron', 'timezone', 'enabled', 'catch_up'].map((field) => [`CASHTRACK_SCHEDULE_${name.toUpperCase()}_${field.toUpperCase()}`, `schedules.${name}.${field}`])),
  ),
  CASHTRACK_PAGES_DEFAULT_TEMPLATE: 'pages.default_template',
  CASHTRACK_PAGES_DEFAULT_STATUS: 'pages.default_status',
  CASHTRACK_PAGES_LINK_TEMPLATE: 'pages.link_template',
  CASHTRACK_AI_BASE_URL: 'ai.base_url',
  CASHTRACK_AI_API_KEY: 'ai.api_key',
  CASHTRACK_AI_MODEL: 'ai.model',
  CASHTRACK_WEBHOOKS_SEND: 'webhooks.send',
  CASHTRACK_WEBHOOKS_CONCURRENCY: 'webhooks.concurrency',
  CASHTRACK_WEBHOOKS_POLL_INTERVAL_MS: 'webhooks.poll_interval_ms',
  CASHTRACK_WEBHOOKS_TIMEOUT_MS: 'webhooks.timeout_ms',
  CASHTRACK_WEBHOOKS_DISABLE_AFTER_FAILURES: 'webhooks.disable_after_failures',
  CASHTRACK_WEBHOOKS_RETENTION_DAYS: 'webhooks.retention_days',
};

/** An entry of `server.allowed_hosts`: `example.com`, `example.com:8443`, `127.0.0.1`, `[::1]:8080` (no scheme, path or wildcard). */
export const HOST_ENTRY = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?\.?)(?::\d{1,5})?$/;

const currency = Joi.string().pattern(/^[A-Z]{3}$/).message('{{#label}} must be a three-letter ISO 4217 code');

/** A review ceiling ("1000.00", "500.00 GBP, 80000 JPY", "none"), checked as the orders service reads it. */
const ceilingText: Joi.CustomValidator<string> = (value, helpers) => {
  try {
    parseCeiling(value, 'it');
  } catch (err) {
    return helpers.message({ custom: `{{#label}} ${(err as Error).message.replace(/^it /, '').replace(/[{}]/g, '')}` });
  }
  return value;
};

/** A cron expression node-cron accepts (checked with its validator, with the reason it gives). */
const cronExpression = Joi.string()
  .max(200)
  .custom((value: string, helpers) => {
    try {
      new CronSlots(value, 'UTC');
    } catch (err) {
      return helpers.message({ custom: `{{#label}} ${(err as Error).message.replace(/[{}]/g, '')}` });
    }
    return value;
  });

const timeZone = Joi.string()
  .max(64)
  .custom((value: string, helpers) => {
    try {
      new CronSlots('0 0 * * *', value);
    } catch (err) {
      return helpers.message({ custom: `{{#label}} ${(err as Error).message.replace(/[{}]/g, '')}` });
    }
    return value;
  });

function scheduleSchema(name: ScheduleName): Joi.ObjectSchema {
  const base = {
    cron: cronExpression.required(),
    timezone: timeZone.required(),
    enabled: Joi.boolean().required(),
    catch_up: Joi.boolean().required(),
  };
  if (!PER_NETWORK_SCHEDULES.includes(name)) return Joi.object(base).required();
  return Joi.object({
    ...base,
    networks: Joi.object()
      .pattern(/^[a-z0-9][a-z0-9_-]{0,63}$/, Joi.object({ cron: cronExpression, enabled: Joi.boolean() }))
      .default({}),
  }).required();
}
/** A page template's text names only the tags pages know (a typo would render empty on every page). */
const tagsKnown =
  (known: readonly string[]): Joi.CustomValidator<string> =>
  (value, helpers) => {
    const unknown = unknownTags(value, known);
    if (unknown.length === 0) return value;
    return helpers.message({ custom: `{{#label}} uses unknown tag${unknown.length > 1 ? 's' : ''} ${unknown.map((t) => `%${t}%`).join(', ')} (known: ${known.map((t) => `%${t}%`).join(' ')})` });
  };

const pageTemplate = Joi.object({
  title: Joi.string().min(1).max(1000).custom(tagsKnown(PAGE_TEMPLATE_TAGS)).required(),
  body: Joi.string().allow('').max(200_000).custom(tagsKnown(PAGE_TEMPLATE_TAGS)).required(),
  excerpt: Joi.string().allow('').max(5000).custom(tagsKnown(PAGE_TEMPLATE_TAGS)).default(''),
});

const pages = Joi.object({
  templates: Joi.object().pattern(/^[a-z0-9][a-z0-9_-]{0,63}$/, pageTemplate).min(1).required(),
  default_template: Joi.string()
    .required()
    .custom((value: string, helpers) => {
      const templates = (helpers.state.ancestors[0] as { templates?: Record<string, unknown> }).templates ?? {};
      return own(templates, value) ? value : helpers.message({ custom: `{{#label}} names no template of pages.templates (${Object.keys(templates).join(', ')})` });
    }),
  default_status: Joi.string().valid('draft', 'publish').required(),
  link_template: Joi.string()
    .max(1000)
    .pattern(/^https?:\/\/[^\s]+$/)
    .message('{{#label}} must be an http(s) URL with %SLUG%, such as https://example.com/shops/%SLUG%')
    .custom(tagsKnown(['SLUG', 'ID']))
    .allow(null)
    .required(),
});

const schema = Joi.object({
  env: Joi.string().valid('development', 'production', 'test').required(),
  data_dir: Joi.string().min(1).required(),
  secret: Joi.string().min(32).allow(null).messages({ 'string.min': '{{#label}} must be at least 32 characters' }),
  currency: currency.required(),
  database: Joi.object({
    url: Joi.string()
      .pattern(/^(sqlite:|mysql:\/\/|mariadb:\/\/)/)
      .message('{{#label}} must start with sqlite:, mysql:// or mariadb://')
      .required(),
    busy_timeout_ms: Joi.number().integer().min(0).max(600_000).required(),
    pool_max: Joi.number().integer().min(1).max(500).required(),
    auto_migrate: Joi.boolean().allow(null).required(),
  }).required(),
  server: Joi.object({
    host: Joi.string().min(1).required(),
    port: Joi.number().integer().min(0).max(65535).required(),
    rest_root: Joi.string().pattern(/^[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/).message('{{#label}} must be a path segment such as wp-json').required(),
    public_url: Joi.string().uri({ scheme: ['http', 'https'] }).allow(null).required(),
    trust_proxy: Joi.boolean().required(),
    max_body_bytes: Joi.number().integer().min(1024).max(64 * 1024 * 1024).required(),
    anonymous_max_body_bytes: Joi.number().integer().min(256).max(Joi.ref('max_body_bytes')).required().messages({ 'number.max': '{{#label}} must not be larger than server.max_body_bytes' }),
    cors_origins: Joi.array().items(Joi.string().uri({ scheme: ['http', 'https'] })).required(),
    allowed_hosts: Joi.array().items(Joi.string().pattern(HOST_ENTRY).message('{{#label}} must be a host name or address with an optional port, such as admin.example.com or 127.0.0.1:8080')).required(),
  }).required(),
  auth: Joi.object({
    session_ttl_hours: Joi.number().integer().min(1).max(24 * 365).required(),
    credential_cache_seconds: Joi.number().integer().min(0).max(3600).required(),
    // Tests may hash faster; everything else keeps OWASP's floor.
    scrypt_log_n: Joi.when('/env', {
      is: 'test',
      then: Joi.number().integer().min(4).max(20),
      otherwise: Joi.number().integer().min(17).max(20).messages({ 'number.min': '{{#label}} must be at least 17 (scrypt N=2^17)' }),
    }).required(),
    throttle: Joi.object({
      window_seconds: Joi.number().integer().min(1).max(86_400).required(),
      max_failures_per_address: Joi.number().integer().min(1).max(1_000_000).required(),
      failures_before_delay: Joi.number().integer().min(0).max(1000).required(),
      max_delay_seconds: Joi.number().integer().min(1).max(3600).required(),
    }).required(),
    password_checks: Joi.object({
      max_concurrent: Joi.number().integer().min(1).max(64).required(),
      per_address: Joi.number().integer().min(1).max(64).required(),
    }).required(),
  }).required(),
  log: Joi.object({
    level: Joi.string().valid('debug', 'info').required(),
    retention_days: Joi.number().integer().min(1).max(3650).required(),
    stdout: Joi.boolean().required(),
  }).required(),
  cashback: Joi.object({
    default_type: Joi.string().valid('percent_commission', 'percent_sale', 'flat').required(),
    default_value: Joi.string().pattern(/^\d{1,15}(\.\d{1,6})?$/).message('{{#label}} must be a decimal number such as 50 or 12.5').required(),
  }).required(),
  referrals: Joi.object({
    share_percent: Joi.string().pattern(/^\d{1,3}(\.\d{1,6})?$/).message('{{#label}} must be a percentage such as 10').required(),
  }).required(),
  extensions: Joi.array().items(Joi.string().min(1)).required(),
  payouts: Joi.object({
    minimum: Joi.string().pattern(/^\d{1,15}(\.\d{1,3})?$/).message('{{#label}} must be a decimal amount such as 10.00').required(),
  }).required(),
  orders: Joi.object({
    review_above: Joi.string().allow(null).max(1000).custom(ceilingText).required(),
  }).required(),
  coupons: Joi.object({
    max_removed_share: Joi.number().min(0).max(1).required(),
  }).required(),
  jobs: Joi.object({
    concurrency: Joi.number().integer().min(0).max(64).required(),
    lease_seconds: Joi.number().integer().min(1).max(3600).required(),
    poll_interval_ms: Joi.number().integer().min(10).max(600_000).required(),
    max_attempts: Joi.number().integer().min(1).max(100).required(),
    retention_days: Joi.number().integer().min(1).max(3650).required(),
  }).required(),
  postbacks: Joi.object({
    enabled: Joi.boolean().required(),
    retention_days: Joi.number().integer().min(1).max(3650).required(),
    max_query_bytes: Joi.number().integer().min(512).max(65_536).required(),
    max_body_bytes: Joi.number().integer().min(1024).max(1024 * 1024).required(),
    signature_tolerance_seconds: Joi.number().integer().min(30).max(3600).required(),
    batch_max: Joi.number().integer().min(1).max(1000).required(),
    batches_in_flight: Joi.number().integer().min(1).max(64).required(),
    rejections: Joi.object({
      window_seconds: Joi.number().integer().min(10).max(86_400).required(),
      max_per_address: Joi.number().integer().min(1).max(1_000_000).required(),
      aggregate_after: Joi.number().integer().min(0).max(1_000_000).required(),
    }).required(),
  }).required(),
  metrics: Joi.object({
    enabled: Joi.boolean().required(),
    token: Joi.string().min(16).max(256).pattern(/^[\x21-\x7e]+$/).message('{{#label}} must be printable ASCII without spaces').allow(null).required(),
    host: Joi.string().min(1).required(),
    port: Joi.number().integer().min(0).max(65535).allow(null).required(),
  })
    .custom((value: Config['metrics'], helpers) =>
      value.enabled && value.port === null && value.token === null
        ? helpers.message({ custom: '{{#label}} needs metrics.token to be served on the main port (or metrics.port for a listener of their own)' })
        : value,
    )
    .required(),
  logos: Joi.object({
    concurrency: Joi.number().integer().min(1).max(64).required(),
    per_host: Joi.number().integer().min(1).max(16).required(),
    max_input_pixels: Joi.number().integer().min(10_000).max(100_000_000).required(),
    max_size: Joi.number().integer().min(16).max(2048).required(),
    max_stored_bytes: Joi.number().integer().min(16_384).max(8 * 1024 * 1024).required(),
    max_html_bytes: Joi.number().integer().min(16_384).max(8 * 1024 * 1024).required(),
    connect_timeout_ms: Joi.number().integer().min(100).max(60_000).required(),
    timeout_ms: Joi.number().integer().min(100).max(120_000).required(),
  }).required(),
  ai: Joi.object({
    base_url: Joi.string().uri({ scheme: ['http', 'https'] }).allow(null).required(),
    api_key: Joi.string().max(4096).allow(null).required(),
    model: Joi.string().max(191).allow(null).required(),
    temperature: Joi.number().min(0).max(2).required(),
    timeout_ms: Joi.number().integer().min(100).max(600_000).required(),
    concurrency: Joi.number().integer().min(1).max(64).required(),
    token_budget: Joi.number().integer().min(0).required(),
    language: Joi.string().min(1).max(64).required(),
    max_attempts: Joi.number().integer().min(1).max(10).required(),
    retry_base_ms: Joi.number().integer().min(1).max(60_000).required(),
    retry_max_ms: Joi.number().integer().min(1).max(300_000).required(),
    retry_after_max_seconds: Joi.number().integer().min(0).max(600).required(),
    prompts: Joi.object({
      shop: Joi.object({ system: Joi.string().min(1).max(20_000).required(), user: Joi.string().min(1).max(20_000).required() }).required(),
      coupon: Joi.object({ system: Joi.string().min(1).max(20_000).required(), user: Joi.string().min(1).max(20_000).required() }).required(),
    }).required(),
  }).required(),
  networks: Joi.object()
    .pattern(
      /^[a-z0-9][a-z0-9_-]{0,63}$/,
      Joi.object({ review_above: Joi.string().max(1000).allow('').custom(ceilingText) }).pattern(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, Joi.string().max(4096).allow('')),
    )
    .required(),
  outbound: Joi.object({
    allow: Joi.array()
      .items(Joi.string().custom((value: string, helpers) => (isAllowEntry(value) ? value.trim() : helpers.message({ custom: '{{#label}} must be a host name, an IP address or a CIDR such as 10.0.0.0/8' }))))
      .required(),
    ports: Joi.array().items(Joi.number().integer().min(1).max(65535)).min(1).required(),
    max_bytes: Joi.number().integer().min(1024).max(1024 * 1024 * 1024).required(),
  }).required(),
  schedules: Joi.object(Object.fromEntries(SCHEDULE_NAMES.map((name) => [name, scheduleSchema(name)]))).required(),
  pages: pages.required(),
  webhooks: Joi.object({
    send: Joi.boolean().required(),
    concurrency: Joi.number().integer().min(1).max(64).required(),
    poll_interval_ms: Joi.number().integer().min(10).max(600_000).required(),
    timeout_ms: Joi.number().integer().min(100).max(120_000).required(),
    retry_schedule_seconds: Joi.array().items(Joi.number().integer().min(1).max(7 * 86_400)).max(30).required(),
    disable_after_failures: Joi.number().integer().min(1).max(100_000).required(),
    retention_days: Joi.number().integer().min(1).max(3650).required(),
  }).required(),
});

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), fileURLToPath(import.meta.url).includes('/dist/') ? '../..' : '..');

export interface LoadOptions {
  /** Environment to read CASHTRACK_* variables from (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** Values applied last, e.g. `--port` on the command line or a test's database URL. */
  overrides?: Record<string, unknown>;
  /** Directory holding default.json and <env>.json (default: the project's config/). */
  configDir?: string;
  /** Generate and keep a secret in the data directory when none is configured (not in production). */
  persistSecret?: boolean;
}

/** Loads, merges and validates the configuration. Throws ServiceError `svc_invalid_config`. */
export function loadConfig(options: LoadOptions = {}): Config {
  const env = options.env ?? process.env;
  const dir = options.configDir ?? join(projectRoot, 'config');
  const envName = env.CASHTRACK_ENV ?? env.NODE_ENV ?? 'development';
  let merged: Record<string, unknown> = readJson(join(dir, 'default.json'));
  const envFile = join(dir, `${envName}.json`);
  if (existsSync(envFile)) merged = deepMerge(merged, readJson(envFile));
  merged.env = envName;
  for (const [name, key] of Object.entries(ENV_KEYS)) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    setPath(merged, key, coerceEnv(name, key, raw, getPath(merged, key)));
  }
  for (const [key, value] of Object.entries(options.overrides ?? {})) setPath(merged, key, value);

  const { value, error } = schema.validate(merged, { abortEarly: true, convert: true, errors: { wrap: { label: false } } });
  if (error) {
    const detail = error.details[0];
    const key = detail.path.join('.');
    // A list item's path ends in its index (server.allowed_hosts.1): the variable set the whole list.
    const fromEnv = Object.keys(ENV_KEYS).find((name) => env[name] && (ENV_KEYS[name] === key || key.startsWith(`${ENV_KEYS[name]}.`)));
    const where = fromEnv ? `${fromEnv} (${key})` : key;
    throw new ServiceError('svc_invalid_config', `Invalid configuration ${where}: ${detail.message.replace(/^[\w.[\]]+ /, '')}`, 500, { key });
  }
  const config = value as Config;
  config.data_dir = isAbsolute(config.data_dir) ? config.data_dir : resolve(process.cwd(), config.data_dir);
  if (!config.secret) {
    if (config.env === 'production') {
      throw new ServiceError('svc_invalid_config', 'Invalid configuration CASHTRACK_SECRET (secret): required in production (at least 32 characters)', 500, { key: 'secret' });
    }
    config.secret = options.persistSecret === false ? randomBytes(32).toString('hex') : readOrCreateSecret(config.data_dir);
  }
  // Without it the Host header of each request would become the site URL of index documents and links.
  if (config.env === 'production' && !config.server.public_url) {
    throw new ServiceError('svc_invalid_config', 'Invalid configuration CASHTRACK_PUBLIC_URL (server.public_url): required in production (the URL clients reach the daemon at, e.g. https://admin.example.com)', 500, { key: 'server.public_url' });
  }
  return config;
}

function readOrCreateSecret(dataDir: string): string {
  const file = join(dataDir, 'secret');
  if (existsSync(file)) {
    tighten(file);
    const secret = readFileSync(file, 'utf8').trim();
    if (secret.length >= 32) return secret;
    throw new ServiceError('svc_invalid_config', `Invalid configuration secret: ${file} holds fewer than 32 characters`, 500, { key: 'secret' });
  }
  privateDir(dataDir);
  const secret = randomBytes(32).toString('hex');
  writeFileSync(file, secret + '\n', { mode: 0o600, flag: 'wx' });
  return secret;
}

function readJson(file: string): Record<string, unknown> {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new ServiceError('svc_invalid_config', `Cannot read configuration file ${file}: ${(err as Error).message}`, 500);
  }
  refusePrototypeKeys(value, '');
  return value;
}

function coerceEnv(name: string, key: string, raw: string, current: unknown): unknown {
  if (Array.isArray(current)) return raw.split(',').map((s) => s.trim()).filter(Boolean);
  if (typeof current === 'boolean' || key.endsWith('auto_migrate')) {
    if (/^(1|true|yes|on)$/i.test(raw)) return true;
    if (/^(0|false|no|off)$/i.test(raw)) return false;
    throw new ServiceError('svc_invalid_config', `Invalid configuration ${name} (${key}): must be true or false`, 500, { key });
  }
  return raw;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Keys of a configuration file or override that would reach a prototype when merged are refused by
 * name (the file and the overrides are ours, but a mistake there must not change every object).
 */
function refusePrototypeKeys(value: unknown, where: string): void {
  if (!isPlainObject(value)) return;
  for (const [k, v] of Object.entries(value)) {
    const key = where ? `${where}.${k}` : k;
    refusePrototypeKey(k, key);
    refusePrototypeKeys(v, key);
  }
}

function refusePrototypeKey(part: string, key: string): void {
  if (isPrototypeKey(part)) throw new ServiceError('svc_invalid_config', `Invalid configuration ${key}: "${part}" cannot be a configuration key`, 500, { key });
}

function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const current = own(out, k);
    out[k] = isPlainObject(v) && isPlainObject(current) ? deepMerge(current, v) : v;
  }
  return out;
}

function getPath(obj: Record<string, unknown>, key: string): unknown {
  return key.split('.').reduce<unknown>((o, k) => own(o, k), obj);
}

function setPath(obj: Record<string, unknown>, key: string, value: unknown): void {
  const parts = key.split('.');
  for (const part of parts) refusePrototypeKey(part, key);
  refusePrototypeKeys(value, key);
  let cur = obj;
  for (const part of parts.slice(0, -1)) {
    if (!isPlainObject(own(cur, part))) cur[part] = {};
    cur = cur[part] as Record<string, unknown>;
  }
  cur[parts[parts.length - 1]] = value;
}
