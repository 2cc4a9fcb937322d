// The Joi schema every merged configuration is validated against, section by section, with the
// custom checks (review ceilings, cron expressions and time zones, page template tags) it uses.
import Joi from 'joi';
import { CASHBACK_TYPES } from '../cashback-rule.js';
import { NETWORK_ID } from '../fields.js';
import { parseCeiling } from '../money.js';
import { own } from '../objects.js';
import { isAllowEntry } from '../outbound/addresses.js';
import { CronSlots } from '../cron-slots.js';
import { WORKERS_RULE, workersSetting } from './workers.js';
import { PAGE_TEMPLATE_TAGS, unknownTags } from './template-tags.js';
import { PER_NETWORK_SCHEDULES, SCHEDULE_NAMES, type Config, type ScheduleName } from './types.js';

/** An entry of `server.allowed_hosts`: `example.com`, `example.com:8443`, `127.0.0.1`, `[::1]:8080` (no scheme, path or wildcard). */
export const HOST_ENTRY = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?\.?)(?::\d{1,5})?$/;

const currency = Joi.string()
  .pattern(/^[A-Z]{3}$/)
  .message('{{#label}} must be a three-letter ISO 4217 code');

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
      .pattern(NETWORK_ID, Joi.object({ cron: cronExpression, enabled: Joi.boolean() }))
      .default({}),
  }).required();
}
/** A page template's text names only the tags pages know (a typo would render empty on every page). */
const tagsKnown =
  (known: readonly string[]): Joi.CustomValidator<string> =>
  (value, helpers) => {
    const unknown = unknownTags(value, known);
    if (unknown.length === 0) return value;
    return helpers.message({
      custom: `{{#label}} uses unknown tag${unknown.length > 1 ? 's' : ''} ${unknown.map((t) => `%${t}%`).join(', ')} (known: ${known.map((t) => `%${t}%`).join(' ')})`,
    });
  };

const pageTemplate = Joi.object({
  title: Joi.string().min(1).max(1000).custom(tagsKnown(PAGE_TEMPLATE_TAGS)).required(),
  body: Joi.string().allow('').max(200_000).custom(tagsKnown(PAGE_TEMPLATE_TAGS)).required(),
  excerpt: Joi.string().allow('').max(5000).custom(tagsKnown(PAGE_TEMPLATE_TAGS)).default(''),
});

const pages = Joi.object({
  templates: Joi.object()
    .pattern(/^[a-z0-9][a-z0-9_-]{0,63}$/, pageTemplate)
    .min(1)
    .required(),
  default_template: Joi.string()
    .required()
    .custom((value: string, helpers) => {
      const templates = (helpers.state.ancestors[0] as { templates?: Record<string, unknown> }).templates ?? {};
      return own(templates, value)
        ? value
        : helpers.message({ custom: `{{#label}} names no template of pages.templates (${Object.keys(templates).join(', ')})` });
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

export const schema = Joi.object({
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
    group_max: Joi.number().integer().min(1).max(1000).required(),
    groups_in_flight: Joi.number().integer().min(1).max(64).required(),
    auto_migrate: Joi.boolean().allow(null).required(),
  }).required(),
  server: Joi.object({
    host: Joi.string().min(1).required(),
    port: Joi.number().integer().min(0).max(65535).required(),
    workers: Joi.any()
      .required()
      .custom((value, helpers) => workersSetting(value) ?? helpers.error('any.invalid'))
      .messages({ 'any.invalid': `{{#label}} must be ${WORKERS_RULE}` }),
    rest_root: Joi.string()
      .pattern(/^[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/)
      .message('{{#label}} must be a path segment such as wp-json')
      .required(),
    public_url: Joi.string()
      .uri({ scheme: ['http', 'https'] })
      .allow(null)
      .required(),
    trust_proxy: Joi.boolean().required(),
    max_body_bytes: Joi.number()
      .integer()
      .min(1024)
      .max(64 * 1024 * 1024)
      .required(),
    anonymous_max_body_bytes: Joi.number()
      .integer()
      .min(256)
      .max(Joi.ref('max_body_bytes'))
      .required()
      .messages({ 'number.max': '{{#label}} must not be larger than server.max_body_bytes' }),
    cors_origins: Joi.array()
      .items(Joi.string().uri({ scheme: ['http', 'https'] }))
      .required(),
    allowed_hosts: Joi.array()
      .items(
        Joi.string()
          .pattern(HOST_ENTRY)
          .message('{{#label}} must be a host name or address with an optional port, such as admin.example.com or 127.0.0.1:8080'),
      )
      .required(),
  }).required(),
  auth: Joi.object({
    session_ttl_hours: Joi.number()
      .integer()
      .min(1)
      .max(24 * 365)
      .required(),
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
    default_type: Joi.string()
      .valid(...CASHBACK_TYPES)
      .required(),
    default_value: Joi.string()
      .pattern(/^\d{1,15}(\.\d{1,6})?$/)
      .message('{{#label}} must be a decimal number such as 50 or 12.5')
      .required(),
    rate_policy: Joi.string().valid('order', 'click', 'best').required(),
  }).required(),
  exports: Joi.object({
    retention_days: Joi.number().integer().min(1).max(3650).required(),
  }).required(),
  clicks: Joi.object({
    retention_days: Joi.number().integer().min(1).max(3650).required(),
    token_ttl_seconds: Joi.number().integer().min(60).max(31_536_000).required(),
    repeat_seconds: Joi.number().integer().min(0).max(600).required(),
    cookie_days: Joi.number().integer().min(1).max(365).required(),
    cookie_days_by_network: Joi.object()
      .pattern(/^[a-z0-9][a-z0-9_-]{0,63}$/, Joi.number().integer().min(1).max(365))
      .required(),
    batch_max: Joi.number().integer().min(1).max(1000).required(),
    batches_in_flight: Joi.number().integer().min(1).max(64).required(),
  }).required(),
  referrals: Joi.object({
    share_percent: Joi.string()
      .pattern(/^\d{1,3}(\.\d{1,6})?$/)
      .message('{{#label}} must be a percentage such as 10')
      .required(),
  }).required(),
  extensions: Joi.array().items(Joi.string().min(1)).required(),
  payouts: Joi.object({
    minimum: Joi.string()
      .pattern(/^\d{1,15}(\.\d{1,3})?$/)
      .message('{{#label}} must be a decimal amount such as 10.00')
      .required(),
  }).required(),
  orders: Joi.object({
    review_above: Joi.string().allow(null).max(1000).custom(ceilingText).required(),
  }).required(),
  claims: Joi.object({
    amount_tolerance_percent: Joi.number().min(0).max(50).required(),
    match_window_days: Joi.number().integer().min(0).max(60).required(),
    warn_days: Joi.number().integer().min(0).max(365).required(),
    deadline_days: Joi.object().pattern(Joi.string().max(64), Joi.number().integer().min(1).max(3650)).required(),
  }).required(),
  watchdog: Joi.object({
    window_minutes: Joi.number().integer().min(5).max(1440).required(),
    recovery_minutes: Joi.number().integer().min(1).max(1440).required(),
    min_ratio: Joi.number().min(0).max(1).required(),
    significance: Joi.number().greater(0).max(0.5).required(),
    history_days: Joi.number().integer().min(7).max(90).required(),
    min_history_days: Joi.number().integer().min(1).max(Joi.ref('history_days')).required(),
    min_history_events: Joi.number().integer().min(1).max(1_000_000_000).required(),
    run_intervals: Joi.number().integer().min(1).max(100).required(),
    auth_failures: Joi.number().integer().min(1).max(100).required(),
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
    max_body_bytes: Joi.number()
      .integer()
      .min(1024)
      .max(1024 * 1024)
      .required(),
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
    token: Joi.string()
      .min(16)
      .max(256)
      .pattern(/^[\x21-\x7e]+$/)
      .message('{{#label}} must be printable ASCII without spaces')
      .allow(null)
      .required(),
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
    max_stored_bytes: Joi.number()
      .integer()
      .min(16_384)
      .max(8 * 1024 * 1024)
      .required(),
    max_html_bytes: Joi.number()
      .integer()
      .min(16_384)
      .max(8 * 1024 * 1024)
      .required(),
    connect_timeout_ms: Joi.number().integer().min(100).max(60_000).required(),
    timeout_ms: Joi.number().integer().min(100).max(120_000).required(),
  }).required(),
  ai: Joi.object({
    base_url: Joi.string()
      .uri({ scheme: ['http', 'https'] })
      .allow(null)
      .required(),
    api_key: Joi.string().max(4096).allow(null).required(),
    model: Joi.string().max(191).allow(null).required(),
    temperature: Joi.number().min(0).max(2).required(),
    timeout_ms: Joi.number().integer().min(100).max(600_000).required(),
    concurrency: Joi.number().integer().min(1).max(64).required(),
    token_budget: Joi.number().integer().min(0).required(),
    daily_token_budget: Joi.number().integer().min(0).required(),
    answer_token_estimate: Joi.number().integer().min(1).max(1_000_000).required(),
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
      NETWORK_ID,
      Joi.object({
        review_above: Joi.string().max(1000).allow('').custom(ceilingText),
        // Days; the same range the network setting takes (services/networks/settings.ts).
        payment_terms_days: Joi.string()
          .allow('')
          .pattern(/^\s*\d{1,4}\s*$/)
          .custom((value: string, helpers) =>
            Number(value) >= 1 && Number(value) <= 3650 ? value : helpers.message({ custom: '{{#label}} must be 1 to 3650 days' }),
          ),
      }).pattern(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, Joi.string().max(4096).allow('')),
    )
    .required(),
  outbound: Joi.object({
    allow: Joi.array()
      .items(
        Joi.string().custom((value: string, helpers) =>
          isAllowEntry(value)
            ? value.trim()
            : helpers.message({
                custom: '{{#label}} must be a host name, an IP address or a CIDR such as 10.0.0.0/8, optionally with :PORT or :* ([v6]:PORT for IPv6)',
              }),
        ),
      )
      .required(),
    ports: Joi.array().items(Joi.number().integer().min(1).max(65535)).min(1).required(),
    max_bytes: Joi.number()
      .integer()
      .min(1024)
      .max(1024 * 1024 * 1024)
      .required(),
  }).required(),
  schedules: Joi.object(Object.fromEntries(SCHEDULE_NAMES.map((name) => [name, scheduleSchema(name)]))).required(),
  pages: pages.required(),
  webhooks: Joi.object({
    send: Joi.boolean().required(),
    concurrency: Joi.number().integer().min(1).max(64).required(),
    poll_interval_ms: Joi.number().integer().min(10).max(600_000).required(),
    timeout_ms: Joi.number().integer().min(100).max(120_000).required(),
    lease_margin_ms: Joi.number().integer().min(1000).max(600_000).required(),
    retry_schedule_seconds: Joi.array()
      .items(
        Joi.number()
          .integer()
          .min(1)
          .max(7 * 86_400),
      )
      .max(30)
      .required(),
    disable_after_failures: Joi.number().integer().min(1).max(100_000).required(),
    retention_days: Joi.number().integer().min(1).max(3650).required(),
  }).required(),
});
