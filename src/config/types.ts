// The configuration's shape: the Config type and the types of its sections, with the schedule names
// that key `schedules`. src/config/index.ts re-exports all of it.
import type { CashbackType } from '../cashback-rule.js';

/** The configurable schedules (`schedules.<name>`); src/jobs/schedules.ts says what each runs. */
export const SCHEDULE_NAMES = [
  'advertisers_sync',
  'orders_poll',
  'coupons_refresh',
  'maintenance_prune',
  'claims_poll',
  'claims_export',
  'networks_watchdog',
  'networks_payments',
  'payouts_batch_status',
] as const;
export type ScheduleName = (typeof SCHEDULE_NAMES)[number];
/** The schedules that run once per network, and take per-network overrides. */
export const PER_NETWORK_SCHEDULES: readonly ScheduleName[] = ['advertisers_sync', 'orders_poll', 'networks_payments'];

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

export interface Config {
  env: string;
  data_dir: string;
  secret: string;
  currency: string;
  database: {
    url: string;
    busy_timeout_ms: number;
    pool_max: number;
    /** Money writes committed in one transaction at most (src/db/group-commit.ts). */
    group_max: number;
    /** Groups of money writes committed at once on MariaDB/MySQL (SQLite: one). */
    groups_in_flight: number;
    auto_migrate: boolean | null;
  };
  server: {
    host: string;
    port: number;
    /** Daemon processes on the port (`serve --workers`): a count, or `auto` for one per CPU. */
    workers: number | 'auto';
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
  /**
   * `rate_policy`: the rule an order that came through a click is paid by: `order` (the rule when
   * the order arrives), `click` (the rule shown at the click) or `best` (the better of the two for
   * the member on that order).
   */
  cashback: { default_type: CashbackType; default_value: string; rate_policy: 'order' | 'click' | 'best' };
  /** Export files (`POST /exports`, `cashtrack export`): kept `retention_days` after they are written, then pruned nightly. */
  exports: { retention_days: number };
  /**
   * Clicks through `/go/{token}`: kept `retention_days` (the nightly prune), tokens valid
   * `token_ttl_seconds`, a reload within `repeat_seconds` is the same click, and an order's
   * candidates are the clicks within `cookie_days` before the sale (per network in
   * `cookie_days_by_network`).
   */
  clicks: {
    retention_days: number;
    token_ttl_seconds: number;
    repeat_seconds: number;
    cookie_days: number;
    cookie_days_by_network: Record<string, number>;
    batch_max: number;
    batches_in_flight: number;
  };
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
   * Missing-cashback claims: the matching rule's tolerance (percent of the claimed amount) and
   * window (days either side of the purchase), the days a claim has per network before it
   * expires (`default` for networks not named), and the days before that it is warned about.
   */
  claims: { amount_tolerance_percent: number; match_window_days: number; warn_days: number; deadline_days: Record<string, number> };
  /**
   * The intake watchdog (services/watchdog/, docs/operations.md): the window silence is judged
   * over, how much below the baseline and how improbable it must be, the history it learns from
   * and how much of it is enough, how many schedule intervals a sync or poll may miss, and how
   * many refused logins in a row alarm.
   */
  watchdog: WatchdogConfig;
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
   * host names, addresses and CIDRs that may be reached although private, each on the port it names
   * (`host:8080`, `host:*`) or else on `ports`; every other
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
    /** A claimed delivery is its sender's for timeout_ms plus this, to record the outcome; past it, another sender may try it. */
    lease_margin_ms: number;
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
  /** Tokens all AI calls of a UTC day may spend, bulk runs and single items alike (0: no limit). */
  daily_token_budget: number;
  /** Tokens an answer is reserved at before a call (see services/ai/budget.ts). */
  answer_token_estimate: number;
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

/** `watchdog` in config: see docs/operations.md "Intake watchdog". */
export interface WatchdogConfig {
  window_minutes: number;
  recovery_minutes: number;
  min_ratio: number;
  significance: number;
  history_days: number;
  min_history_days: number;
  min_history_events: number;
  run_intervals: number;
  auth_failures: number;
}
