// The composition root: database, services and logger, with no hapi in it. The daemon and every
// CLI command start here.
//
// Each table has one owning module, the only one that writes it. Another domain reads it through
// the owner's service (the orders' review reads network settings through `networks.storedSetting`)
// or through a read model of the owner's domain: a small read-only class over the owner's tables,
// exported by its face and built before the services that show its figures (networks count orders
// through `OrderCounts` and advertisers through `AdvertiserCounts`, a shop page counts coupons
// through `CouponCounts`, advertisers, coupons and the overview show the AI records through
// `AiUsage`). So `buildContext` builds everything in dependency order: no service is handed a
// closure over a service built after it.
//
//   users                          services/users/
//   app_passwords                  services/auth/app-passwords.ts
//   sessions                       services/auth/sessions.ts
//   auth_throttle                  services/auth/throttle.ts
//   settings                       services/settings/ (revisions: auth, networks)
//   idempotency_keys               services/idempotency/
//   balances, ledger_entries       services/ledger/ (counters row 'balances'; balances read by
//                                  LedgerLiabilities, ledger/liabilities.ts)
//   payouts                        services/payouts/ (settings rows 'payouts_sepa', 'payouts_paypal',
//                                  'payouts_paypal_client_secret' through SettingsService)
//   payout_batches,                services/payouts/batches.ts (payouts.batch_id too, by its guarded
//   payout_batch_items,            UPDATE; closes payouts through PayoutService)
//   payout_batch_holds
//   referrals                      services/referrals/ (counters row 'referral_changes')
//   networks                       services/networks/
//   cashback_rules                 services/cashback/
//   advertisers                    services/advertisers/ (page_id through linkPages/unlinkPage;
//                                  read by AdvertiserCounts, advertisers/counts.ts)
//   pages                          services/pages/
//   coupons, coupon_refreshes      services/coupons/ (read by CouponCounts, coupons/counts.ts)
//   orders                         services/orders/ (its SQL in store.ts; read by OrderCounts,
//                                  orders/counts.ts, by OrderMatches, orders/matches.ts, for claims,
//                                  and with network_payments by OrderReceivables, orders/receivables.ts)
//   clicks                         services/clicks/ (its SQL in store.ts; read by ClickLookup)
//   (none)                         services/members/ (a member's data export and erasure: reads
//                                  and wipes each table above through its owner's methods)
//   exports                        services/exports/ (reads the exported lists through each owner's keyset read)
//   claims                         services/claims/ (listens to cashtrack.order.recorded to match
//                                  claims to arriving orders; assigns orders through OrderService)
//   postbacks                      services/postbacks/records.ts
//   postback_rejections            services/postbacks/throttle.ts
//   jobs                           services/jobs/
//   schedule_runs                  services/schedules/
//   logs                           services/logs/ (counters row 'logs')
//   media                          services/media/ (advertisers.local_logo through services/advertisers/)
//   webhooks, webhook_deliveries   services/webhooks/ (settings row 'webhooks_revision'; the outbox
//                                  rows are written by WebhookEvents.emit in other services' transactions)
//   ai_calls                       services/ai/calls.ts (settings rows 'ai_settings', 'ai_api_key'
//                                  through SettingsService; read by AiUsage, ai/usage.ts)
//   network_watchdog               services/watchdog/ (reads intake through PostbackCounts and
//                                  OrderCounts; read by WatchdogStates for the overview and the gauge)
//   ai_token_days,                 services/ai/budget.ts (the daily token budget)
//   ai_token_reservations
//
// Read-only joins for display stay in SQL where paging and sorting need them (a list of balances,
// orders, payouts or referrals with the member's names joins users); services/overview/ is a
// report over every domain's tables and writes none. A bulk AI run walks the coupons table by id
// (services/ai/coupon-source.ts, read-only) and writes coupons only through the coupon service.
//
// The daemon's own base URL (src/self-url.ts: server.public_url, else the address it listens on)
// is a value built first: the server sets it once it listens; networks, media and postbacks read it.
//
// Every fetch of a URL an administrator or a network chose (logos, site icons, custom network
// feeds, webhooks) goes through `outbound` (src/outbound/), which owns no table.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { builtInModules } from './networks/index.js';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config/index.js';
import { Database } from './db/database.js';
import { migrate, migrationStatus } from './db/migrator.js';
import { ServiceError } from './errors.js';
import { tighten } from './private-files.js';
import { HookBus, loadExtensions } from './hooks/index.js';
import { AdvertiserCounts, AdvertiserService } from './services/advertisers/index.js';
import { CouponCounts, CouponService } from './services/coupons/index.js';
import { AppPasswordService, AuthService, AuthThrottle, PasswordCheckGate, SessionService } from './services/auth/index.js';
import { CashbackRuleService } from './services/cashback/index.js';
import { ClickLookup, ClickService } from './services/clicks/index.js';
import { ClickTokens } from './click-tokens.js';
import { IdempotencyService, type HoldInTransaction } from './services/idempotency/index.js';
import { JobService } from './services/jobs/index.js';
import { JobRegistry, type JobType } from './jobs/registry.js';
import { jobTypes } from './jobs/types/index.js';
import { LedgerLiabilities, LedgerService } from './services/ledger/index.js';
import { LogService } from './services/logs/index.js';
import { AiBudget, AiCalls, AiProposals, AiService, AiSettingsStore, AiUsage, couponSource, shopPages } from './services/ai/index.js';
import { LogoBulkService, LogoService } from './services/logos/index.js';
import { MediaService } from './services/media/index.js';
import { NetworkService } from './services/networks/index.js';
import { OutboundGuard } from './outbound/index.js';
import { PostbackCounts, PostbackService } from './services/postbacks/index.js';
import type { NetworkModule } from './networks/types.js';
import { OrderCounts, OrderMatches, OrderReceivables, OrderService } from './services/orders/index.js';
import { ClaimService } from './services/claims/index.js';
import { ExportService } from './services/exports/index.js';
import { join } from 'node:path';
import { OverviewService } from './services/overview/index.js';
import { PageService } from './services/pages/index.js';
import { PayoutBatchService, PayoutService, paypalChannel, PayPalSettings, sepaChannel, SepaSettingsStore } from './services/payouts/index.js';
import { MemberDataService } from './services/members/index.js';
import { ReferralService } from './services/referrals/index.js';
import { deriveKeys, SecretBox, type Keys } from './keys.js';
import { SecretValues } from './secret-values.js';
import { SelfUrl } from './self-url.js';
import { ScheduleService, type ScheduleDefinition } from './services/schedules/index.js';
import { scheduleDefinitions } from './jobs/schedules.js';
import { SettingsService } from './services/settings/index.js';
import { UserService } from './services/users/index.js';
import { HealthService } from './services/health/index.js';
import { noMetrics, PromMetrics, type Metrics } from './metrics.js';
import { DeliveryStore, WebhookEvents, WebhookSender, WebhookService } from './services/webhooks/index.js';
import { WatchdogService, WatchdogStates } from './services/watchdog/index.js';

export interface Context {
  config: Config;
  clock: Clock;
  keys: Keys;
  hooks: HookBus;
  db: Database;
  logger: LogService;
  /** The guard every fetch of an administrator- or network-supplied URL goes through. */
  outbound: OutboundGuard;
  /** Secret values this process opened: scrubbed from the log, job errors and network errors. */
  secrets: SecretValues;
  /** The daemon's own base URL: server.public_url, else the address the server sets once it listens. */
  selfUrl: SelfUrl;
  settings: SettingsService;
  users: UserService;
  appPasswords: AppPasswordService;
  sessions: SessionService;
  auth: AuthService;
  authThrottle: AuthThrottle;
  idempotency: IdempotencyService;
  ledger: LedgerService;
  payouts: PayoutService;
  /** The site's own account for SEPA payout files (settings row 'payouts_sepa'). */
  sepaSettings: SepaSettingsStore;
  /** The PayPal Payouts account (settings rows 'payouts_paypal*') and its API client. */
  paypal: PayPalSettings;
  payoutBatches: PayoutBatchService;
  overview: OverviewService;
  /** What each network still owes (a read model of the orders' tables). */
  receivables: OrderReceivables;
  cashback: CashbackRuleService;
  referrals: ReferralService;
  orders: OrderService;
  /** Members' clicks through `/go/{token}`. */
  clicks: ClickService;
  /** Missing-cashback claims (matched, filed, followed). */
  claims: ClaimService;
  /** A member's data exported or erased (owns no table: goes through each owner). */
  members: MemberDataService;
  /** Exports as files (POST /exports, `cashtrack export`). */
  exports: ExportService;
  networks: NetworkService;
  postbacks: PostbackService;
  jobs: JobService<JobRegistry>;
  schedules: ScheduleService;
  advertisers: AdvertiserService;
  /** Readiness of this process (the daemon's /readyz). */
  health: HealthService;
  /** Prometheus metrics, or `noMetrics` when they are off. */
  metrics: Metrics;
  /** The intake watchdog (`networks.watchdog`, GET /networks/{id}/health). */
  watchdog: WatchdogService;
  pages: PageService;
  media: MediaService;
  logos: LogoService;
  logoBulk: LogoBulkService;
  /** The webhook outbox writer every service emits its events through. */
  events: WebhookEvents;
  webhooks: WebhookService;
  /** Sends the outbox; its loop runs in the daemon (`webhooks.send`). */
  webhookSender: WebhookSender;
  coupons: CouponService;
  ai: AiService;
  close(): Promise<void>;
}

export interface ContextOptions {
  clock?: Clock;
  /** JSON log lines go here (the daemon: process.stdout); null for none. */
  logStream?: NodeJS.WritableStream | null;
  /** The built-in network modules (tests pass doubles). */
  networkModules?: NetworkModule[];
  /** The job types this context knows (default: src/jobs/types); tests add their own. */
  jobTypes?: JobType[];
  /** The schedules this context knows (default: src/jobs/schedules.ts); tests pass their own. */
  scheduleDefinitions?: ScheduleDefinition[];
  /** Who this process is on the runs it claims (default: host:pid:random). */
  owner?: string;
  /**
   * Tests only (ignored unless `env` is `test`): runs inside an idempotent effect's transaction,
   * right after its Idempotency-Key is claimed, so a test can hold a request there.
   */
  holdInTransaction?: HoldInTransaction;
}

export function buildContext(config: Config, options: ContextOptions = {}): Context {
  const clock = options.clock ?? systemClock;
  // An older release created the data directory readable by everyone: owner-only from now on.
  tighten(config.data_dir);
  const keys = deriveKeys(config.secret);
  const db = new Database({
    url: config.database.url,
    busyTimeoutMs: config.database.busy_timeout_ms,
    poolMax: config.database.pool_max,
    groupMax: config.database.group_max,
    groupsInFlight: config.database.groups_in_flight,
  });
  // Postback and media URLs are absolute on the daemon's own base (public_url, else its listening address).
  const selfUrl = new SelfUrl(config.server);
  const secrets = new SecretValues();
  const logger = new LogService({
    db,
    clock,
    secrets,
    level: config.log.level,
    retentionDays: config.log.retention_days,
    stdout: options.logStream === undefined ? (config.log.stdout ? process.stdout : null) : options.logStream,
  });
  const hooks = new HookBus();
  // The watchdog's states: a read model the gauge and the overview read (services/watchdog/store.ts).
  const watchdogStates = new WatchdogStates({ db });
  const metrics = config.metrics.enabled ? new PromMetrics({ pool: () => db.poolStats(), networkStates: () => watchdogStates.states() }) : noMetrics;
  hooks.attachLogger(logger);
  const outbound = new OutboundGuard({ allow: config.outbound.allow, ports: config.outbound.ports, maxBytes: config.outbound.max_bytes, logger });
  const settings = new SettingsService({ db });
  const events = new WebhookEvents({ db, clock, hooks, settings });
  const users = new UserService({ db, clock, logger, settings, hooks, scryptLogN: config.auth.scrypt_log_n });
  const appPasswords = new AppPasswordService({ db, clock, logger, keys, settings, cacheSeconds: config.auth.credential_cache_seconds });
  const sessions = new SessionService({ db, clock, logger, keys, ttlHours: config.auth.session_ttl_hours });
  const authThrottle = new AuthThrottle({ db, clock, settings: config.auth.throttle });
  const passwordChecks = new PasswordCheckGate(config.auth.password_checks);
  const auth = new AuthService({ db, clock, logger, users, appPasswords, sessions, hooks, throttle: authThrottle, passwordChecks });
  const idempotency = new IdempotencyService({ db, clock, holdInTransaction: config.env === 'test' ? options.holdInTransaction : null });
  const ledger = new LedgerService({ db, clock, logger, events, currency: config.currency });
  const payouts = new PayoutService({ db, clock, logger, ledger, events, currency: config.currency, minimum: config.payouts.minimum });
  const sepaSettings = new SepaSettingsStore({ settings, logger });
  const paypal = new PayPalSettings({ settings, keys, secrets, logger, guard: outbound, clock });
  // The read models other domains show (see the header): read-only, before the services using them.
  const orderCounts = new OrderCounts({ db });
  const advertiserCounts = new AdvertiserCounts({ db });
  const couponCounts = new CouponCounts({ db, clock });
  const aiSettings = new AiSettingsStore({ config: config.ai, settings, keys, secrets, logger });
  const aiUsage = new AiUsage({ db, clock, settings: aiSettings });
  const liabilities = new LedgerLiabilities({ db });
  const cashback = new CashbackRuleService({ db, clock, logger, hooks, defaults: config.cashback, currency: config.currency });
  const referrals = new ReferralService({ db, clock, logger, users });
  const jobs = new JobService({
    db,
    clock,
    logger,
    registry: new JobRegistry(options.jobTypes ?? jobTypes),
    maxAttempts: config.jobs.max_attempts,
    secrets,
    events,
  });
  const payoutBatches = new PayoutBatchService({
    db,
    clock,
    logger,
    events,
    payouts,
    currency: config.currency,
    channels: { sepa: sepaChannel(sepaSettings), paypal: paypalChannel(paypal) },
    jobs,
  });
  const networks = new NetworkService({
    db,
    clock,
    logger,
    keys,
    cashback,
    secrets,
    outbound,
    modules: options.networkModules ?? builtInModules,
    configured: config.networks,
    postbacksEnabled: config.postbacks.enabled,
    selfUrl,
    advertiserCounts,
    orderCounts,
    settings,
  });
  // Built after the networks service: it reads their payment terms through it.
  const receivables = new OrderReceivables({ db, clock, networks, liabilities, configured: config.networks });
  const overview = new OverviewService({ db, clock, currency: config.currency, ai: aiUsage, liabilities, receivables, watchdog: watchdogStates });
  const media = new MediaService({ db, clock, selfUrl });
  const clickTokens = new ClickTokens({ key: keys.clickToken, clock, selfUrl, ttlSeconds: config.clicks.token_ttl_seconds });
  const advertisers = new AdvertiserService({
    db,
    clock,
    logger,
    networks,
    cashback,
    users,
    jobs,
    mediaUrl: (name) => media.urlOf(name),
    aiUsage,
    clickTokens,
  });
  const clicks = new ClickService({ db, clock, logger, tokens: clickTokens, deviceKey: keys.clickDevice, advertisers, cashback, config: config.clicks });
  const logos = new LogoService({ db, logger, hooks, events, advertisers, media, outbound, limits: config.logos });
  const logoBulk = new LogoBulkService({ logos, advertisers, media, jobs, networks, limits: config.logos });
  const orders = new OrderService({
    db,
    clock,
    logger,
    ledger,
    cashback,
    referrals,
    events,
    networks,
    advertisers,
    jobs,
    users,
    clicks: new ClickLookup({ db }),
    ratePolicy: config.cashback.rate_policy,
    currency: config.currency,
    referralShare: config.referrals.share_percent,
    reviewAbove: config.orders.review_above,
    configuredNetworks: config.networks,
  });
  const claims = new ClaimService({
    db,
    clock,
    logger,
    hooks,
    events,
    users,
    advertisers,
    networks,
    orders,
    clicks,
    orderMatches: new OrderMatches({ db }),
    media,
    jobs,
    currency: config.currency,
    settings: {
      tolerancePercent: config.claims.amount_tolerance_percent,
      windowDays: config.claims.match_window_days,
      warnDays: config.claims.warn_days,
      deadlineDays: config.claims.deadline_days,
    },
    exportDir: join(config.data_dir, 'exports'),
  });
  const exports = new ExportService({
    db,
    clock,
    logger,
    jobs,
    sources: { orders, ledger, payouts, clicks, claims },
    dir: join(config.data_dir, 'exports'),
    retentionDays: config.exports.retention_days,
  });
  const schedules = new ScheduleService({
    db,
    clock,
    logger,
    jobs,
    networks,
    config: config.schedules,
    definitions: options.scheduleDefinitions ?? scheduleDefinitions,
    owner: options.owner ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`,
  });
  const pages = new PageService({
    db,
    clock,
    logger,
    hooks,
    events,
    advertisers,
    cashback,
    networks,
    jobs,
    config: config.pages,
    currency: config.currency,
    couponCounts,
  });
  const postbacks = new PostbackService({ db, clock, logger, hooks, events, keys, networks, orders, config, selfUrl, metrics });
  const watchdog = new WatchdogService({
    db,
    clock,
    logger,
    events,
    networks,
    postbackCounts: new PostbackCounts({ db }),
    orderCounts,
    schedules: config.schedules,
    config: config.watchdog,
  });
  const deliveries = new DeliveryStore({ db, clock });
  const webhookSender = new WebhookSender({
    db,
    clock,
    logger,
    events,
    store: deliveries,
    box: new SecretBox(keys.secretBox),
    transport: outbound,
    settings: config.webhooks,
    metrics,
  });
  const webhooks = new WebhookService({
    db,
    clock,
    logger,
    events,
    store: deliveries,
    sender: webhookSender,
    guard: outbound,
    secretBox: keys.secretBox,
    retentionDays: config.webhooks.retention_days,
  });
  const members = new MemberDataService({
    db,
    clock,
    logger,
    events,
    users,
    sessions,
    appPasswords,
    ledger,
    payouts,
    payoutBatches,
    orders,
    referrals,
    clicks,
    claims,
    idempotency,
    webhooks,
    jobs,
  });
  const coupons = new CouponService({ db, clock, logger, hooks, networks, advertisers, jobs, maxRemovedShare: config.coupons.max_removed_share, aiUsage });
  const ai = new AiService({
    db,
    clock,
    logger,
    hooks,
    jobs,
    advertisers,
    store: aiSettings,
    calls: new AiCalls({ db, clock }),
    proposals: new AiProposals({ db, clock }),
    budget: new AiBudget({ db, clock }),
    usage: aiUsage,
    coupons: couponSource({ db, clock, coupons }),
    pages: shopPages({ pages, advertisers }),
    outbound,
  });
  return {
    config,
    clock,
    keys,
    hooks,
    db,
    logger,
    outbound,
    secrets,
    selfUrl,
    settings,
    users,
    appPasswords,
    sessions,
    auth,
    authThrottle,
    idempotency,
    ledger,
    payouts,
    sepaSettings,
    paypal,
    payoutBatches,
    overview,
    receivables,
    cashback,
    referrals,
    orders,
    clicks,
    claims,
    members,
    exports,
    networks,
    postbacks,
    jobs,
    schedules,
    advertisers,
    health: new HealthService({ db }),
    metrics,
    watchdog,
    pages,
    media,
    logos,
    logoBulk,
    events,
    webhooks,
    webhookSender,
    coupons,
    ai,
    async close() {
      postbacks.close();
      await claims.idle();
      await webhookSender.stop();
      await logger.close().catch(() => {});
      await db.close();
    },
  };
}

/**
 * Makes sure the schema is current. SQLite migrates by itself (the embedded default must just
 * work); MariaDB/MySQL refuses to run on pending migrations unless told to migrate.
 */
export async function ensureSchema(ctx: Context, autoMigrate = ctx.config.database.auto_migrate ?? ctx.db.dialect === 'sqlite'): Promise<string[]> {
  const status = await migrationStatus(ctx.db);
  if (status.pending.length === 0) return [];
  if (!autoMigrate) {
    throw new ServiceError(
      'svc_pending_migrations',
      `The database has ${status.pending.length} pending migration(s) (${status.pending.join(', ')}). Run \`cashtrack db migrate\` first.`,
      503,
      { pending: status.pending },
    );
  }
  return migrate(ctx.db);
}

/** Loads the configured extensions into the context's hooks (the daemon and every command). */
export async function loadContextExtensions(ctx: Context): Promise<string[]> {
  const loaded = await loadExtensions(ctx.config.extensions, ctx.hooks, ctx);
  if (loaded.length) ctx.logger.info('hooks', 'Extensions loaded', { extensions: loaded });
  return loaded;
}
