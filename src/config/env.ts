// Environment variables: which CASHTRACK_* variable sets which configuration key, and how its text
// becomes a value (lists split at commas, booleans spelled out).
import { ServiceError } from '../errors.js';
import { SCHEDULE_NAMES } from './types.js';

/** Environment variables and the configuration key each one sets. Documented in README.md. */
export const ENV_KEYS: Record<string, string> = {
  CASHTRACK_ENV: 'env',
  CASHTRACK_DATA_DIR: 'data_dir',
  CASHTRACK_SECRET: 'secret',
  CASHTRACK_CURRENCY: 'currency',
  CASHTRACK_DATABASE_URL: 'database.url',
  CASHTRACK_DATABASE_BUSY_TIMEOUT_MS: 'database.busy_timeout_ms',
  CASHTRACK_DATABASE_POOL_MAX: 'database.pool_max',
  CASHTRACK_DATABASE_GROUP_MAX: 'database.group_max',
  CASHTRACK_DATABASE_GROUPS_IN_FLIGHT: 'database.groups_in_flight',
  CASHTRACK_DATABASE_AUTO_MIGRATE: 'database.auto_migrate',
  CASHTRACK_HOST: 'server.host',
  CASHTRACK_PORT: 'server.port',
  CASHTRACK_WORKERS: 'server.workers',
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
  CASHTRACK_CASHBACK_RATE_POLICY: 'cashback.rate_policy',
  CASHTRACK_CLICKS_RETENTION_DAYS: 'clicks.retention_days',
  CASHTRACK_EXPORTS_RETENTION_DAYS: 'exports.retention_days',
  CASHTRACK_REFERRAL_SHARE_PERCENT: 'referrals.share_percent',
  CASHTRACK_PAYOUT_MINIMUM: 'payouts.minimum',
  CASHTRACK_ORDERS_REVIEW_ABOVE: 'orders.review_above',
  CASHTRACK_CLAIMS_AMOUNT_TOLERANCE_PERCENT: 'claims.amount_tolerance_percent',
  CASHTRACK_CLAIMS_MATCH_WINDOW_DAYS: 'claims.match_window_days',
  CASHTRACK_CLAIMS_WARN_DAYS: 'claims.warn_days',
  CASHTRACK_COUPONS_MAX_REMOVED_SHARE: 'coupons.max_removed_share',
  CASHTRACK_WATCHDOG_WINDOW_MINUTES: 'watchdog.window_minutes',
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
    SCHEDULE_NAMES.flatMap((name) =>
      ['cron', 'timezone', 'enabled', 'catch_up'].map((field) => [
        `CASHTRACK_SCHEDULE_${name.toUpperCase()}_${field.toUpperCase()}`,
        `schedules.${name}.${field}`,
      ]),
    ),
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
  CASHTRACK_WEBHOOKS_LEASE_MARGIN_MS: 'webhooks.lease_margin_ms',
  CASHTRACK_WEBHOOKS_DISABLE_AFTER_FAILURES: 'webhooks.disable_after_failures',
  CASHTRACK_WEBHOOKS_RETENTION_DAYS: 'webhooks.retention_days',
};

export function coerceEnv(name: string, key: string, raw: string, current: unknown): unknown {
  if (Array.isArray(current))
    return raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  if (typeof current === 'boolean' || key.endsWith('auto_migrate')) {
    if (/^(1|true|yes|on)$/i.test(raw)) return true;
    if (/^(0|false|no|off)$/i.test(raw)) return false;
    throw new ServiceError('svc_invalid_config', `Invalid configuration ${name} (${key}): must be true or false`, 500, { key });
  }
  return raw;
}
