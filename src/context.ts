// The composition root: database, services and logger, with no hapi in it. The daemon and every
// CLI command start here.
//
// Each table has one owning module, the only one that writes it; another domain reads it through
// the owner's service (networks count orders through `orders.countByNetwork`, the orders' review
// reads network settings through `networks.storedSetting`):
//
//   users                          services/users.ts
//   app_passwords                  services/app-passwords.ts
//   sessions                       services/sessions.ts
//   auth_throttle                  services/auth-throttle.ts
//   settings                       services/settings.ts (revisions: auth, networks)
//   idempotency_keys               services/idempotency.ts
//   balances, ledger_entries       services/ledger/ (counters row 'balances')
//   payouts                        services/payouts.ts
//   referrals                      services/referrals.ts (counters row 'referral_changes')
//   networks                       services/networks/
//   cashback_rules                 services/cashback.ts
//   advertisers                    services/advertisers.ts
//   orders                         services/orders.ts, order-rows.ts (reads), order-poll.ts
//   postbacks                      services/postbacks/records.ts
//   postback_rejections            services/postbacks/throttle.ts
//   jobs                           services/jobs.ts
//   logs                           services/logs.ts (counters row 'logs')
//
// Read-only joins for display stay in SQL where paging and sorting need them (a list of balances,
// orders, payouts or referrals with the member's names joins users); services/overview.ts is a
// report over every domain's tables and writes none.
import { builtInModules } from './networks/index.js';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config.js';
import { Database } from './db/database.js';
import { migrate, migrationStatus } from './db/migrator.js';
import { ServiceError } from './errors.js';
import { tighten } from './private-files.js';
import { HookBus, loadExtensions } from './hooks/index.js';
import { AdvertiserService } from './services/advertisers.js';
import { AppPasswordService } from './services/app-passwords.js';
import { AuthService } from './services/auth.js';
import { AuthThrottle } from './services/auth-throttle.js';
import { PasswordCheckGate } from './services/password-checks.js';
import { CashbackRuleService } from './services/cashback.js';
import { IdempotencyService, type HoldInTransaction } from './services/idempotency.js';
import { JobService } from './services/jobs.js';
import { JobRegistry, type JobType } from './jobs/registry.js';
import { jobTypes } from './jobs/types/index.js';
import { LedgerService } from './services/ledger/index.js';
import { LogService } from './services/logs.js';
import { NetworkService } from './services/networks/index.js';
import { PostbackService } from './services/postbacks/index.js';
import type { NetworkModule } from './networks/types.js';
import { OrderService } from './services/orders.js';
import { OverviewService } from './services/overview.js';
import { PayoutService } from './services/payouts.js';
import { ReferralService } from './services/referrals.js';
import { deriveKeys, type Keys } from './services/keys.js';
import { SecretValues } from './services/secret-values.js';
import { SessionService } from './services/sessions.js';
import { SettingsService } from './services/settings.js';
import { UserService } from './services/users.js';

export interface Context {
  config: Config;
  clock: Clock;
  keys: Keys;
  hooks: HookBus;
  db: Database;
  logger: LogService;
  /** Secret values this process opened: scrubbed from the log, job errors and network errors. */
  secrets: SecretValues;
  settings: SettingsService;
  users: UserService;
  appPasswords: AppPasswordService;
  sessions: SessionService;
  auth: AuthService;
  authThrottle: AuthThrottle;
  idempotency: IdempotencyService;
  ledger: LedgerService;
  payouts: PayoutService;
  overview: OverviewService;
  cashback: CashbackRuleService;
  referrals: ReferralService;
  orders: OrderService;
  networks: NetworkService;
  postbacks: PostbackService;
  jobs: JobService;
  advertisers: AdvertiserService;
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
  const db = new Database({ url: config.database.url, busyTimeoutMs: config.database.busy_timeout_ms, poolMax: config.database.pool_max });
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
  hooks.attachLogger(logger);
  const settings = new SettingsService({ db });
  const users = new UserService({ db, clock, logger, settings, hooks, scryptLogN: config.auth.scrypt_log_n });
  const appPasswords = new AppPasswordService({ db, clock, logger, keys, settings, cacheSeconds: config.auth.credential_cache_seconds });
  const sessions = new SessionService({ db, clock, logger, keys, ttlHours: config.auth.session_ttl_hours });
  const authThrottle = new AuthThrottle({ db, clock, settings: config.auth.throttle });
  const passwordChecks = new PasswordCheckGate(config.auth.password_checks);
  const auth = new AuthService({ db, clock, logger, users, appPasswords, sessions, hooks, throttle: authThrottle, passwordChecks });
  const idempotency = new IdempotencyService({ db, clock, holdInTransaction: config.env === 'test' ? options.holdInTransaction : null });
  const ledger = new LedgerService({ db, clock, logger, users, hooks, currency: config.currency });
  const payouts = new PayoutService({ db, clock, logger, ledger, hooks, currency: config.currency, minimum: config.payouts.minimum });
  const overview = new OverviewService({ db, clock, currency: config.currency });
  const cashback = new CashbackRuleService({ db, clock, logger, hooks, defaults: config.cashback, currency: config.currency });
  const referrals = new ReferralService({ db, clock, logger, users });
  const jobs = new JobService({ db, clock, logger, registry: new JobRegistry(options.jobTypes ?? jobTypes), maxAttempts: config.jobs.max_attempts, secrets });
  const networks: NetworkService = new NetworkService({
    db, clock, logger, keys, cashback, secrets,
    modules: options.networkModules ?? builtInModules,
    configured: config.networks,
    postbackBaseUrl: () => postbacks.selfUrl,
    countAdvertisers: (networks) => advertisers.countByModule(networks),
    countOrders: (networks) => orders.countByNetwork(networks),
    settings,
  });
  const advertisers: AdvertiserService = new AdvertiserService({ db, clock, logger, networks, cashback, users, jobs });
  const orders = new OrderService({
    db, clock, logger, ledger, cashback, referrals, hooks, networks, advertisers, jobs, users,
    currency: config.currency, referralShare: config.referrals.share_percent, reviewAbove: config.orders.review_above, configuredNetworks: config.networks,
  });
  const postbacks: PostbackService = new PostbackService({ db, clock, logger, hooks, keys, networks, orders, config });
  return {
    config,
    clock,
    keys,
    hooks,
    db,
    logger,
    secrets,
    settings,
    users,
    appPasswords,
    sessions,
    auth,
    authThrottle,
    idempotency,
    ledger,
    payouts,
    overview,
    cashback,
    referrals,
    orders,
    networks,
    postbacks,
    jobs,
    advertisers,
    async close() {
      postbacks.close();
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
