// Networks: the built-in modules (passed in) and custom networks (defined as data), with their
// state, settings and postback switches. Secrets are write-only: module credentials are stored
// encrypted, a postback token only as a keyed hash, an HMAC secret encrypted; none is ever shown.
import type { Transaction } from '../../db/transaction.js';
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { toInt } from '../../db/values.js';
import { ServiceError } from '../../errors.js';
import { checkDefinition, mergeDefinition, REQUIRED_DEFINITION_FIELDS, type CustomDefinition } from '../../networks/custom-definition.js';
import { customModule } from '../../networks/custom.js';
import type { ConfigKey, ModuleRuntime, ModuleSettings, NetworkModule } from '../../networks/types.js';
import { parseCeiling } from '../../money.js';
import { REVIEW_SETTING } from '../order-review.js';
import type { CashbackRuleService } from '../cashback.js';
import { SecretBox, type Keys } from '../keys.js';
import type { LogService } from '../logs.js';
import type { SecretValues } from '../secret-values.js';
import type { SettingsService } from '../settings.js';
import type { OutboundGuard } from '../../outbound/index.js';
import { PostbackTargets, type PostbackTarget, type PostbackView } from './postback-targets.js';
import { encodeSettings, NETWORK_COLUMNS, NETWORK_ID, settingValues, shownSettings, toNetworkRow, type Network, type NetworkRow } from './rows.js';
import { newPostbackSecret, normaliseAllowlist, POSTBACK_MODES, tokenHash, type PostbackMode } from '../postbacks/auth.js';
import { dict, own } from '../../objects.js';

export { NETWORK_ID, type Network, type NetworkRow } from './rows.js';
export type { PostbackTarget, PostbackView } from './postback-targets.js';

export interface NetworkServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  keys: Keys;
  cashback: CashbackRuleService;
  /** The built-in modules (src/networks/index.ts in the daemon; test doubles in tests). */
  modules: NetworkModule[];
  /** `networks` from the configuration: settings per network id, under those stored here. */
  configured?: Record<string, Record<string, string>>;
  /**
   * Hook point for the advertisers table (issue 4, item 5): advertiser counts per network id.
   * Until it is wired, every network counts 0 advertisers.
   */
  countAdvertisers?: (networks?: string[]) => Promise<Record<string, number>>;
  /** Order counts per network id, from the orders service (which owns the table). */
  countOrders: (networks?: string[]) => Promise<Record<string, number>>;
  /** The shared settings service (which keeps `networks_revision`). */
  settings: SettingsService;
  /** The base URL postbacks reach this daemon at (public_url, else the listening address), when known. */
  postbackBaseUrl?: () => string | null;
  /** Every secret this service opens (settings, postback secrets) is added here, so the log and stored errors scrub it. */
  secrets?: SecretValues;
  /** The outbound guard module runtimes fetch through (custom network feeds). */
  outbound?: OutboundGuard;
}

const MAX_PLAIN_SETTING = 1000;

/** The setting every network has beside its module's: the ceiling its orders are held for review above (order-review.ts). */
const REVIEW_KEY: ConfigKey = {
  name: REVIEW_SETTING,
  description: 'Commission above which an order from this network is held for review: "1000.00" (units of the order\'s currency), "500.00 GBP, 80000 JPY", or "none"; unset: the site\'s orders.review_above.',
  required: false,
  secret: false,
};

/** A module's settings and the review ceiling. */
function keysOf(module: NetworkModule): ConfigKey[] {
  return module.configKeys.some((k) => k.name === REVIEW_SETTING) ? module.configKeys : [...module.configKeys, REVIEW_KEY];
}
const MAX_SECRET_SETTING = 4096;
const MAX_GRACE_HOURS = 24 * 7;

/** The values of a network's secret settings: those stored encrypted, and those its module (or definition) declares secret. */
function secretValuesOf(module: NetworkModule, row: NetworkRow | null, settings: ModuleSettings): string[] {
  const names = new Set([...(row?.secret_names ?? []), ...module.configKeys.filter((k) => k.secret).map((k) => k.name)]);
  return [...names].map((n) => settings[n]).filter((v): v is string => typeof v === 'string' && v !== '');
}

export function notFound(id: string): ServiceError {
  return new ServiceError('svc_network_not_found', `Network ${String(id).slice(0, 64)} not found.`, 404, { network: String(id).slice(0, 64) });
}

/** Lists, defines, configures and switches networks. */
export class NetworkService {
  private readonly byId: Map<string, NetworkModule>;
  private readonly box: SecretBox;
  private readonly targets: PostbackTargets;

  constructor(private readonly deps: NetworkServiceDeps) {
    this.byId = new Map(deps.modules.map((m) => [m.id, m]));
    this.box = new SecretBox(deps.keys.secretBox);
    this.targets = new PostbackTargets({ db: deps.db, settings: deps.settings, box: this.box, secrets: deps.secrets, moduleOf: (id, row) => this.moduleOf(id, row) });
  }

  /** Every network, built-in then custom, with its state. */
  async list(filters: { kind?: 'builtin' | 'custom' } = {}): Promise<Network[]> {
    const rows = new Map((await this.deps.db.select<Record<string, unknown>>(`SELECT ${NETWORK_COLUMNS} FROM networks`)).map((r) => [String(r.id), toNetworkRow(r)]));
    const [orders, advertisers] = await Promise.all([this.orderCounts(), this.advertiserCounts()]);
    const out: Network[] = [];
    for (const m of [...this.byId.values()].sort((a, b) => a.id.localeCompare(b.id))) out.push(await this.view(m, rows.get(m.id) ?? null, orders, advertisers));
    for (const row of [...rows.values()].filter((r) => r.kind === 'custom' && r.definition && !this.byId.has(r.id)).sort((a, b) => a.id.localeCompare(b.id))) {
      out.push(await this.view(customModule(row.id, row.definition!), row, orders, advertisers));
    }
    return filters.kind ? out.filter((n) => n.kind === filters.kind) : out;
  }

  /**
   * A page of the networks, built-in (by id) then custom (by id), and how many there are. Only the
   * page's rows and counts are read: a site with many custom networks lists them page by page.
   */
  async listPage(query: { kind?: 'builtin' | 'custom'; page: number; per_page: number }): Promise<{ items: Network[]; total: number }> {
    const builtin = query.kind === 'custom' ? [] : [...this.byId.keys()].sort();
    // A custom row that reuses a built-in id (left from before that module existed) is not listed.
    const ids = [...this.byId.keys()];
    const customWhere = `kind = 'custom' AND definition IS NOT NULL${ids.length ? ` AND id NOT IN (${ids.map(() => '?').join(', ')})` : ''}`;
    const customTotal = query.kind === 'builtin' ? 0 : toInt((await this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM networks WHERE ${customWhere}`, ids))[0].n);
    const offset = (query.page - 1) * query.per_page;
    const pageBuiltin = builtin.slice(offset, offset + query.per_page);
    const customLimit = query.per_page - pageBuiltin.length;
    const [builtinRows, customRows] = await Promise.all([
      pageBuiltin.length ? this.deps.db.select<Record<string, unknown>>(`SELECT ${NETWORK_COLUMNS} FROM networks WHERE id IN (${pageBuiltin.map(() => '?').join(', ')})`, pageBuiltin) : [],
      customLimit > 0 && customTotal > 0
        ? this.deps.db.select<Record<string, unknown>>(`SELECT ${NETWORK_COLUMNS} FROM networks WHERE ${customWhere} ORDER BY id LIMIT ${customLimit} OFFSET ${Math.max(0, offset - builtin.length)}`, ids)
        : [],
    ]);
    const rows = new Map([...builtinRows, ...customRows].map((r) => [String(r.id), toNetworkRow(r)]));
    const pageIds = [...pageBuiltin, ...customRows.map((r) => String(r.id))];
    const [orders, advertisers] = await Promise.all([this.orderCounts(pageIds), this.advertiserCounts(pageIds)]);
    const items: Network[] = [];
    for (const id of pageBuiltin) items.push(await this.view(this.byId.get(id)!, rows.get(id) ?? null, orders, advertisers));
    for (const r of customRows) {
      const row = rows.get(String(r.id))!;
      items.push(await this.view(customModule(row.id, row.definition!), row, orders, advertisers));
    }
    return { items, total: builtin.length + customTotal };
  }

  /** The stored value of setting `name` of each network of `ids` that has one (one query). */
  async storedSetting(ids: string[], name: string): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (ids.length === 0) return out;
    const rows = await this.deps.db.select<{ id: unknown; settings: unknown }>(`SELECT id, settings FROM networks WHERE id IN (${ids.map(() => '?').join(', ')})`, ids);
    for (const r of rows) {
      const value = settingValues(r.settings)[name];
      if (value !== undefined) out.set(String(r.id), value);
    }
    return out;
  }

  /** One network (404 svc_network_not_found). */
  async get(id: string): Promise<Network> {
    const { module, row } = await this.resolve(id);
    const [orders, advertisers] = await Promise.all([this.orderCounts([module.id]), this.advertiserCounts()]);
    return this.view(module, row, orders, advertisers);
  }

  /** The module of a network: the built-in one, or one built from a custom definition. */
  async module(id: string): Promise<NetworkModule> {
    return (await this.resolve(id)).module;
  }

  /** The effective settings of a network, secrets decrypted: for sync and polling, never for display. */
  async settings(id: string): Promise<ModuleSettings> {
    const { module, row } = await this.resolve(id);
    return this.effectiveSettings(module, row);
  }

  /**
   * A network's module and the runtime it calls its network with: effective settings, the exact
   * values of its secret settings (which the module keeps out of its errors, and this process out
   * of its log and stored errors), the log (source `networks`), the outbound guard and `signal`.
   */
  async runtime(id: string, signal?: AbortSignal): Promise<{ module: NetworkModule; runtime: ModuleRuntime }> {
    const { module, row } = await this.resolve(id);
    const settings = this.effectiveSettings(module, row);
    const { clock, logger } = this.deps;
    return {
      module,
      runtime: {
        settings,
        secrets: secretValuesOf(module, row, settings),
        signal,
        outbound: this.deps.outbound,
        now: () => clock.now(),
        log: (level, message, context) => logger.write(level, 'networks', message, { network: module.id, ...(context ?? {}) }),
        addSecret: (value) => this.deps.secrets?.add(value),
      },
    };
  }

  /**
   * The module and effective settings of a network that may be used now (tracking links): 404
   * svc_network_not_found, 409 svc_network_disabled while it is switched off, 409
   * svc_network_not_configured while a required setting is missing. Lighter than `get` (no counts).
   */
  async requireUsable(id: string): Promise<{ module: NetworkModule; settings: ModuleSettings }> {
    const { module, row } = await this.resolve(id);
    if (!row?.enabled) {
      throw new ServiceError('svc_network_disabled', `${module.name} is disabled: run \`cashtrack networks enable ${module.id}\` first.`, 409, { network: module.id });
    }
    const settings = this.effectiveSettings(module, row);
    let configured: boolean;
    try {
      configured = module.isConfigured(settings);
    } catch {
      configured = false;
    }
    if (!configured) {
      const missing = module.configKeys.filter((k) => k.required && !settings[k.name]?.trim()).map((k) => k.name);
      throw new ServiceError(
        'svc_network_not_configured',
        `${module.name} is not configured${missing.length ? `: set ${missing.join(', ')}` : ''} (\`cashtrack networks configure ${module.id} --set key=value\`).`,
        409,
        { network: module.id, ...(missing.length ? { missing } : {}) },
      );
    }
    return { module, settings };
  }

  /**
   * Creates (201) or updates (200) a custom network. An update keeps every field it does not send
   * (as the host platform updates a resource; `feeds` per feed), and null clears a field: a body
   * with only a new `name` leaves the postback mapping, feeds, tracking link and cashback rule as
   * they were. A new network needs name, currency and statuses (400 rest_missing_callback_param).
   * 409 svc_network_not_custom for a built-in id; 409 svc_postback_no_mapping when the network's
   * postbacks are switched on and the update would remove their mapping (every postback would be
   * refused, and networks do not retry a refusal); 400 svc_invalid_network (with `data.params`)
   * for a bad id or definition. The definition's `cashback` becomes the network's cashback rule
   * (null: the site default; absent on an update: unchanged).
   */
  async saveCustom(id: string, input: unknown, actor: string): Promise<{ network: Network; created: boolean }> {
    if (typeof id !== 'string' || !NETWORK_ID.test(id)) {
      throw new ServiceError('svc_invalid_network', 'The network id must be 1 to 64 lower-case letters, digits, - or _, starting with a letter or digit.', 400, { params: { id: 'invalid network id' } });
    }
    if (this.byId.has(id)) throw this.notCustom(id);
    if (input === null || typeof input !== 'object' || Array.isArray(input)) checkDefinition(input);
    const update = input as Record<string, unknown>;
    const now = this.deps.clock.now();
    const { created, def } = await this.deps.db.transaction(async (t) => {
      const existing = await this.lockRow(id, t);
      if (existing && existing.kind !== 'custom') throw this.notCustom(id);
      if (!existing) {
        const missing = REQUIRED_DEFINITION_FIELDS.filter((f) => own(update, f) === undefined);
        if (missing.length) throw new ServiceError('rest_missing_callback_param', `Missing parameter(s): ${missing.join(', ')}`, 400, { params: missing });
      }
      const def = checkDefinition(existing ? mergeDefinition({ ...(existing.definition ?? {}) }, update) : update);
      if (existing?.postbacks_enabled && !def.postback) {
        throw new ServiceError('svc_postback_no_mapping', `Postbacks are switched on for ${id}: switch them off (\`cashtrack networks postbacks ${id} off\`) before removing its postback mapping, or every postback would be refused.`, 409, { network: id });
      }
      const { cashback: _rule, ...stored } = def;
      await this.changed(id, t);
      if (existing) {
        await this.deps.db.execute('UPDATE networks SET name = ?, currency = ?, definition = ?, updated_at = ? WHERE id = ?', [def.name, def.currency, JSON.stringify(stored), now, id], t);
        return { created: false, def };
      }
      await this.deps.db.execute(
        "INSERT INTO networks (id, kind, name, currency, enabled, postbacks_enabled, definition, postback_mode, created_at, updated_at) VALUES (?, 'custom', ?, ?, ?, ?, ?, 'token', ?, ?)",
        [id, def.name, def.currency, true, false, JSON.stringify(stored), now, now],
        t,
      );
      return { created: true, def };
    });
    // An update that does not send `cashback` keeps the network's rule; null (or a new network without one) is the site default.
    const sentRule = own(update, 'cashback') !== undefined;
    if (def.cashback) await this.deps.cashback.set(id, null, def.cashback.type, def.cashback.value, def.cashback.currency ?? null, actor);
    else if (created || sentRule) await this.deps.cashback.remove(id, null, actor);
    this.deps.logger.info('networks', created ? 'Custom network created' : 'Custom network updated', { network: id, name: def.name, fields: Object.keys(update).filter((k) => own(update, k) !== undefined).slice(0, 20), actor });
    return { network: await this.get(id), created };
  }

  /**
   * Sets settings of a network (null or '' unsets one). Keys are the module's (or the custom
   * definition's) config keys: any other is 400 svc_unknown_setting.
   */
  async configure(id: string, values: Record<string, string | null>, actor: string): Promise<Network> {
    const { module } = await this.resolve(id);
    const keys = new Map(keysOf(module).map((k) => [k.name, k]));
    for (const [name, value] of Object.entries(values)) {
      const key = keys.get(name);
      if (!key) throw new ServiceError('svc_unknown_setting', `${module.name} has no setting "${name.slice(0, 64)}". Settings: ${[...keys.keys()].join(', ') || '(none)'}.`, 400, { field: name.slice(0, 64), settings: [...keys.keys()] });
      if (value !== null && (typeof value !== 'string' || value.length > (key.secret ? MAX_SECRET_SETTING : MAX_PLAIN_SETTING) || /[\u0000-\u001f\u007f]/.test(value))) {
        throw new ServiceError('svc_invalid_setting', `${name} must be text of at most ${key.secret ? MAX_SECRET_SETTING : MAX_PLAIN_SETTING} characters without control characters.`, 400, { field: name });
      }
      if (name === REVIEW_SETTING && value) parseCeiling(value, name);
    }
    await this.update(id, async (row, t) => {
      const plain = Object.assign(dict<string>(), row.settings);
      const secrets = Object.assign(dict<string>(), row.secret_settings ? (JSON.parse(this.box.open(row.secret_settings, `network:${id}:settings`)) as Record<string, string>) : {});
      for (const [name, value] of Object.entries(values)) {
        const target = keys.get(name)!.secret ? secrets : plain;
        if (value === null || value === '') delete target[name];
        else target[name] = value;
      }
      const sealed = Object.keys(secrets).length ? this.box.seal(JSON.stringify(secrets), `network:${id}:settings`) : null;
      await this.deps.db.execute('UPDATE networks SET settings = ?, secret_settings = ?, updated_at = ? WHERE id = ?', [encodeSettings(plain, Object.keys(secrets)), sealed, this.deps.clock.now(), id], t);
    });
    this.deps.secrets?.add(...Object.entries(values).filter(([name]) => keys.get(name)!.secret).map(([, value]) => value));
    // Names only: the values of secret settings never reach a log.
    this.deps.logger.info('networks', 'Network configured', { network: id, keys: Object.keys(values), actor });
    return this.get(id);
  }

  async enable(id: string, actor: string): Promise<Network> {
    return this.setFlag(id, 'enabled', true, actor);
  }

  async disable(id: string, actor: string): Promise<Network> {
    return this.setFlag(id, 'enabled', false, actor);
  }

  /**
   * Switches a network's postbacks on or off, and optionally sets its IP allowlist (CIDRs; an
   * empty list allows any address). Switching on needs a postback secret (409 svc_postback_secret_missing).
   */
  async setPostbacks(id: string, on: boolean, actor: string, options: { ip_allowlist?: string[] | null } = {}): Promise<Network> {
    const allowlist = options.ip_allowlist === undefined ? undefined : options.ip_allowlist === null ? [] : normaliseAllowlist(options.ip_allowlist);
    await this.resolve(id);
    await this.update(id, async (row, t) => {
      if (on && !row.postback_secret) throw this.secretMissing(id);
      if (on && row.kind === 'custom' && !row.definition?.postback) {
        throw new ServiceError('svc_postback_no_mapping', `The custom network ${id} has no postback parameter mapping: add "postback" to its definition first.`, 409);
      }
      const sets = ['postbacks_enabled = ?', 'updated_at = ?'];
      const params: unknown[] = [on, this.deps.clock.now()];
      if (allowlist !== undefined) (sets.push('postback_ip_allowlist = ?'), params.push(allowlist.length ? JSON.stringify(allowlist) : null));
      await this.deps.db.execute(`UPDATE networks SET ${sets.join(', ')} WHERE id = ?`, [...params, id], t);
    });
    this.deps.logger.info('networks', on ? 'Postbacks switched on' : 'Postbacks switched off', { network: id, ip_allowlist: allowlist, actor });
    return this.get(id);
  }

  /**
   * Generates a new postback secret (256 bits, URL-safe) and returns it once. Token mode keeps
   * only its keyed hash; HMAC mode keeps it encrypted (verifying a signature needs it). The old
   * secret stops working at once, or after `grace_hours` (at most a week).
   */
  async rotatePostbackSecret(id: string, actor: string, options: { mode?: PostbackMode; grace_hours?: number } = {}): Promise<{ network: Network; secret: string; mode: PostbackMode }> {
    if (options.mode !== undefined && !(POSTBACK_MODES as readonly string[]).includes(options.mode)) {
      throw new ServiceError('svc_invalid_postback_mode', `The postback mode must be one of ${POSTBACK_MODES.join(', ')}.`, 400, { field: 'mode' });
    }
    const grace = options.grace_hours ?? 0;
    if (!Number.isInteger(grace) || grace < 0 || grace > MAX_GRACE_HOURS) {
      throw new ServiceError('svc_invalid_grace', `The grace period must be 0 to ${MAX_GRACE_HOURS} hours.`, 400, { field: 'grace_hours' });
    }
    await this.resolve(id);
    const secret = newPostbackSecret();
    let mode: PostbackMode = 'token';
    await this.update(id, async (row, t) => {
      mode = options.mode ?? row.postback_mode;
      const stored = mode === 'hmac' ? this.box.seal(secret, `network:${id}:postback`) : tokenHash(this.deps.keys.postback, id, secret);
      const now = this.deps.clock.now();
      const keepPrevious = grace > 0 && row.postback_secret !== null;
      await this.deps.db.execute(
        'UPDATE networks SET postback_mode = ?, postback_secret = ?, postback_secret_set_at = ?, postback_previous_secret = ?, postback_previous_until = ?, updated_at = ? WHERE id = ?',
        [mode, stored, now, keepPrevious ? row.postback_secret : null, keepPrevious ? new Date(now.getTime() + grace * 3_600_000) : null, now, id],
        t,
      );
    });
    this.deps.secrets?.add(secret);
    this.deps.logger.info('networks', 'Postback secret rotated', { network: id, mode, grace_hours: grace, actor });
    return { network: await this.get(id), secret, mode };
  }

  /**
   * Records the outcome of a sync. The error and the result are shown by GET /networks: every
   * secret this process opened is scrubbed from both.
   */
  async recordSync(id: string, outcome: { at: Date; result?: unknown; error?: string | null }): Promise<void> {
    await this.writeSync(id, outcome.at, () => outcome.result, outcome.error ?? null);
  }

  /**
   * Records how one kind of run ended (`advertisers`: the sync; `orders`: the poll; `coupons`: the refresh) under its own
   * key of `last_sync_result`, keeping the other's. Read and written on the locked row, so a sync
   * and a poll of one network ending together both stay recorded.
   */
  async recordRun(id: string, run: 'advertisers' | 'orders' | 'coupons', counts: object, error: string | null): Promise<void> {
    const at = this.deps.clock.now();
    await this.writeSync(id, at, (previous) => {
      const base = previous && typeof previous === 'object' && !Array.isArray(previous) ? (previous as Record<string, unknown>) : {};
      // Each kind's own outcome: `error` is null when its last run succeeded, whatever another
      // kind's run left in `last_error` (the latest error of any run, kept with its time).
      return { ...base, [run]: { ...counts, error, at: at.toISOString() } };
    }, error);
  }

  private async writeSync(id: string, at: Date, resultOf: (previous: unknown) => unknown, rawError: string | null): Promise<void> {
    await this.resolve(id);
    const secrets = this.deps.secrets;
    await this.update(id, async (row, t) => {
      const value = resultOf(row.last_sync_result);
      const result = value === undefined ? null : JSON.stringify(secrets ? secrets.scrubDeep(value) : value);
      const error = rawError ? (secrets ? secrets.scrub(rawError) : rawError).slice(0, 1000) : null;
      await this.deps.db.execute(
        `UPDATE networks SET last_sync_at = ?, last_sync_result = ?, ${error ? 'last_error = ?, last_error_at = ?, ' : ''}updated_at = ? WHERE id = ?`,
        [at, result, ...(error ? [error, at] : []), this.deps.clock.now(), id],
        t,
      );
    });
  }

  /** The postback endpoint's view of a network (see PostbackTargets.view). */
  async postbackTarget(id: string): Promise<PostbackTarget | null> {
    return (await this.targets.view(id)).target;
  }

  /** `postbackTarget` with the revision it is current at. */
  postbackView(id: string): Promise<PostbackView> {
    return this.targets.view(id);
  }

  /** The view this process keeps of a network, without reading anything (see PostbackTargets.kept). */
  keptPostbackView(id: string): PostbackView | undefined {
    return this.targets.kept(id);
  }

  /** The current `networks_revision` (read after the call began; concurrent callers share reads). */
  postbacksRevision(): Promise<string> {
    return this.targets.revision();
  }

  /** Opens a sealed HMAC secret of a network (kept opened per process, by ciphertext). */
  openPostbackSecret(id: string, sealed: string): string {
    return this.targets.openSecret(id, sealed);
  }

  /** A network row changes in `t`: every process reads its postback target again once `t` commits. */
  private async changed(id: string, t: Transaction): Promise<void> {
    await this.targets.changed(id, t);
  }

  /** The module of network `id`: built-in, or defined by its row; null when there is none. */
  private moduleOf(id: string, row: NetworkRow | null): { module: NetworkModule; builtin: boolean } | null {
    const builtin = this.byId.get(id);
    if (builtin) return { module: builtin, builtin: true };
    return row?.kind === 'custom' && row.definition ? { module: customModule(id, row.definition), builtin: false } : null;
  }

  private notCustom(id: string): ServiceError {
    return new ServiceError('svc_network_not_custom', `${id} is a built-in network: configure it with \`cashtrack networks configure ${id} --set key=value\` instead.`, 409, { network: id });
  }

  private secretMissing(id: string): ServiceError {
    return new ServiceError('svc_postback_secret_missing', `Network ${id} has no postback secret yet: run \`cashtrack networks postback-secret ${id} --rotate\` first.`, 409, { network: id });
  }

  private async resolve(id: string): Promise<{ module: NetworkModule; row: NetworkRow | null }> {
    if (typeof id !== 'string' || !NETWORK_ID.test(id)) throw notFound(id);
    const [r] = await this.deps.db.select<Record<string, unknown>>(`SELECT ${NETWORK_COLUMNS} FROM networks WHERE id = ?`, [id]);
    const row = r ? toNetworkRow(r) : null;
    const found = this.moduleOf(id, row);
    if (!found) throw notFound(id);
    return { module: found.module, row };
  }

  private async lockRow(id: string, t: Transaction): Promise<NetworkRow | null> {
    const [r] = await this.deps.db.select<Record<string, unknown>>(`SELECT ${NETWORK_COLUMNS} FROM networks WHERE id = ?${this.deps.db.forUpdate()}`, [id], t);
    return r ? toNetworkRow(r) : null;
  }

  /** Runs `fn` on the locked row, creating the row of a built-in network first. */
  private async update(id: string, fn: (row: NetworkRow, t: Transaction) => Promise<void>): Promise<void> {
    await this.deps.db.transaction(async (t) => {
      let row = await this.lockRow(id, t);
      if (!row) {
        const m = this.byId.get(id);
        if (!m) throw notFound(id);
        const now = this.deps.clock.now();
        await this.deps.db.execute(
          this.deps.db.insertIgnore('networks', ['id', 'kind', 'name', 'currency', 'enabled', 'postbacks_enabled', 'postback_mode', 'created_at', 'updated_at']),
          [id, 'builtin', m.name.slice(0, 191), m.defaultCurrency, false, false, 'token', now, now],
          t,
        );
        row = (await this.lockRow(id, t))!;
      }
      await this.changed(id, t);
      await fn(row, t);
    });
  }

  private async setFlag(id: string, column: 'enabled', on: boolean, actor: string): Promise<Network> {
    await this.resolve(id);
    await this.update(id, async (_row, t) => {
      await this.deps.db.execute(`UPDATE networks SET ${column} = ?, updated_at = ? WHERE id = ?`, [on, this.deps.clock.now(), id], t);
    });
    this.deps.logger.info('networks', on ? 'Network enabled' : 'Network disabled', { network: id, actor });
    return this.get(id);
  }

  /** The settings a module runs with; the secret ones, once opened, are known to the process's scrubbing. */
  private effectiveSettings(module: NetworkModule, row: NetworkRow | null): ModuleSettings {
    const id = module.id;
    const secrets = row?.secret_settings ? (JSON.parse(this.box.open(row.secret_settings, `network:${id}:settings`)) as Record<string, string>) : {};
    const settings: ModuleSettings = Object.assign(dict<string>(), this.fromConfig(id), row?.settings, secrets);
    this.deps.secrets?.add(...secretValuesOf(module, row, settings));
    return settings;
  }

  /**
   * The settings of a network from the configuration. Settings objects have no prototype: a
   * custom network may name a setting `constructor` or `toString`, which must read as unset, not
   * as a function.
   */
  private fromConfig(id: string): Record<string, string> {
    return Object.assign(dict<string>(), own(this.deps.configured, id));
  }

  private async orderCounts(networks?: string[]): Promise<Record<string, number>> {
    return this.deps.countOrders(networks);
  }

  private async advertiserCounts(networks?: string[]): Promise<Record<string, number>> {
    return this.deps.countAdvertisers ? this.deps.countAdvertisers(networks) : {};
  }

  private async view(module: NetworkModule, row: NetworkRow | null, orders: Record<string, number>, advertisers: Record<string, number>): Promise<Network> {
    const id = module.id;
    const fromConfig = this.fromConfig(id);
    const secretNames = new Set([...(row?.secret_names ?? []), ...module.configKeys.filter((k) => k.secret && fromConfig[k.name]).map((k) => k.name)]);
    const plain = Object.assign(dict<string>(), fromConfig, row?.settings);
    // Whether every required key is there; secret values need not be decrypted to tell.
    const presence: ModuleSettings = Object.assign(dict<string>(), plain);
    for (const name of secretNames) presence[name] = presence[name] || 'set';
    let configured: boolean;
    try {
      configured = module.isConfigured(row?.secret_settings ? this.effectiveSettings(module, row) : presence);
    } catch {
      configured = false;
    }
    const cashback = await this.deps.cashback.resolve(id, null);
    const base = this.deps.postbackBaseUrl?.() ?? null;
    const definition: CustomDefinition | null = row?.kind === 'custom' && row.definition ? { ...row.definition, cashback: cashback.source === 'network' ? { type: cashback.type, value: cashback.value, currency: cashback.currency } : null } : null;
    return {
      id,
      kind: this.byId.has(id) ? 'builtin' : 'custom',
      name: this.byId.has(id) ? module.name : (row?.name ?? module.name),
      currency: this.byId.has(id) ? module.defaultCurrency : (row?.currency ?? module.defaultCurrency),
      enabled: row?.enabled ?? false,
      configured,
      settings: shownSettings(keysOf(module), plain, secretNames),
      config_keys: keysOf(module).map((k) => ({ ...k })),
      cashback_rule: cashback,
      definition,
      postbacks: {
        enabled: row?.postbacks_enabled ?? false,
        mode: row?.postback_mode ?? 'token',
        secret_set: !!row?.postback_secret,
        secret_set_at: row?.postback_secret_set_at ?? null,
        previous_secret_until: row?.postback_previous_secret && row.postback_previous_until && new Date(row.postback_previous_until) > this.deps.clock.now() ? row.postback_previous_until : null,
        ip_allowlist: row?.postback_ip_allowlist ?? [],
        url: base ? `${base}/postback/${id}` : null,
        template: module.postbackTemplate ?? null,
      },
      last_sync_at: row?.last_sync_at ?? null,
      last_sync_result: row?.last_sync_result ?? null,
      last_error: row?.last_error ?? null,
      last_error_at: row?.last_error_at ?? null,
      counts: { advertisers: advertisers[id] ?? 0, orders: orders[id] ?? 0 },
      created_at: row?.created_at ?? null,
      updated_at: row?.updated_at ?? null,
    };
  }
}
