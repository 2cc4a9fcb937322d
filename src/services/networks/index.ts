// Networks: the built-in modules (passed in) and custom networks (defined as data), with their
// state, settings and postback switches. Secrets are write-only: module credentials are stored
// encrypted, a postback token only as a keyed hash, an HMAC secret encrypted; none is ever shown.
// This file is the service and the module's entry point; its parts live beside it (store.ts,
// settings.ts, custom.ts, postback-settings.ts, sync-runs.ts, view.ts).
import type { Transaction } from '../../db/transaction.js';
import { toInt } from '../../db/values.js';
import { ServiceError } from '../../errors.js';
import { customModule } from '../../networks/custom.js';
import type { ModuleRuntime, ModuleSettings, NetworkModule } from '../../networks/types.js';
import type { PostbackTarget, PostbackView } from './postback-targets.js';
import { NETWORK_COLUMNS, settingValues, toNetworkRow, type Network } from './rows.js';
import type { PostbackMode } from './postback-secrets.js';
import { saveCustomDefinition } from './custom.js';
import { rotateSecret, writePostbackSwitch } from './postback-settings.js';
import { configureSettings, effectiveSettings, secretValuesOf } from './settings.js';
import { NetworkStore, type NetworkServiceDeps } from './store.js';
import { writeRunOutcome, writeSyncOutcome } from './sync-runs.js';
import { networkView } from './view.js';

export type { Network, NetworkRow } from './rows.js';
export { tokenHash, type PostbackMode } from './postback-secrets.js';
export type { PostbackTarget, PostbackView } from './postback-targets.js';
export { notFound, type NetworkServiceDeps } from './store.js';
export {
  PAYABLE_POLICIES,
  PAYABLE_SETTING,
  PAYMENT_TERMS_DEFAULT_DAYS,
  PAYMENT_TERMS_SETTING,
  parsePaymentTerms,
  REVIEW_SETTING,
  type PayablePolicy,
} from './settings.js';

/** What switching a network's postbacks did (NetworkService.switchPostbacks). */
export interface PostbackSwitch {
  network: Network;
  /** The secret generated because the network had none, shown this once; null when it had one (or on switching off). */
  secret: string | null;
  /** Both switches as they stand: postbacks arrive only while both are on. */
  switches: { global: boolean; network: boolean };
  /** Which switch is still off, in words; null when nothing is missing (or on switching off). */
  message: string | null;
}

/** Lists, defines, configures and switches networks. */
export class NetworkService {
  private readonly store: NetworkStore;

  constructor(private readonly deps: NetworkServiceDeps) {
    this.store = new NetworkStore(deps);
  }

  /** Every network, built-in then custom, with its state. */
  async list(filters: { kind?: 'builtin' | 'custom' } = {}): Promise<Network[]> {
    const rows = new Map(
      (await this.deps.db.select<Record<string, unknown>>(`SELECT ${NETWORK_COLUMNS} FROM networks`)).map((r) => [String(r.id), toNetworkRow(r)]),
    );
    const [orders, advertisers] = await Promise.all([this.orderCounts(), this.advertiserCounts()]);
    const out: Network[] = [];
    for (const m of [...this.store.byId.values()].sort((a, b) => a.id.localeCompare(b.id)))
      out.push(await networkView(this.store, m, rows.get(m.id) ?? null, orders, advertisers));
    for (const row of [...rows.values()]
      .filter((r) => r.kind === 'custom' && r.definition && !this.store.byId.has(r.id))
      .sort((a, b) => a.id.localeCompare(b.id))) {
      out.push(await networkView(this.store, customModule(row.id, row.definition!), row, orders, advertisers));
    }
    return filters.kind ? out.filter((n) => n.kind === filters.kind) : out;
  }

  /**
   * A page of the networks, built-in (by id) then custom (by id), and how many there are. Only the
   * page's rows and counts are read: a site with many custom networks lists them page by page.
   */
  async listPage(query: { kind?: 'builtin' | 'custom'; page: number; per_page: number }): Promise<{ items: Network[]; total: number }> {
    const builtin = query.kind === 'custom' ? [] : [...this.store.byId.keys()].sort();
    // A custom row that reuses a built-in id (left from before that module existed) is not listed.
    const ids = [...this.store.byId.keys()];
    const customWhere = `kind = 'custom' AND definition IS NOT NULL${ids.length ? ` AND id NOT IN (${ids.map(() => '?').join(', ')})` : ''}`;
    const customTotal =
      query.kind === 'builtin' ? 0 : toInt((await this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM networks WHERE ${customWhere}`, ids))[0].n);
    const offset = (query.page - 1) * query.per_page;
    const pageBuiltin = builtin.slice(offset, offset + query.per_page);
    const customLimit = query.per_page - pageBuiltin.length;
    const [builtinRows, customRows] = await Promise.all([
      pageBuiltin.length
        ? this.deps.db.select<Record<string, unknown>>(
            `SELECT ${NETWORK_COLUMNS} FROM networks WHERE id IN (${pageBuiltin.map(() => '?').join(', ')})`,
            pageBuiltin,
          )
        : [],
      customLimit > 0 && customTotal > 0
        ? this.deps.db.select<Record<string, unknown>>(
            `SELECT ${NETWORK_COLUMNS} FROM networks WHERE ${customWhere} ORDER BY id LIMIT ${customLimit} OFFSET ${Math.max(0, offset - builtin.length)}`,
            ids,
          )
        : [],
    ]);
    const rows = new Map([...builtinRows, ...customRows].map((r) => [String(r.id), toNetworkRow(r)]));
    const pageIds = [...pageBuiltin, ...customRows.map((r) => String(r.id))];
    const [orders, advertisers] = await Promise.all([this.orderCounts(pageIds), this.advertiserCounts(pageIds)]);
    const items: Network[] = [];
    for (const id of pageBuiltin) items.push(await networkView(this.store, this.store.byId.get(id)!, rows.get(id) ?? null, orders, advertisers));
    for (const r of customRows) {
      const row = rows.get(String(r.id))!;
      items.push(await networkView(this.store, customModule(row.id, row.definition!), row, orders, advertisers));
    }
    return { items, total: builtin.length + customTotal };
  }

  /** The stored value of setting `name` of each network of `ids` that has one (one query). */
  async storedSetting(ids: string[], name: string, t?: Transaction): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (ids.length === 0) return out;
    const rows = await this.deps.db.select<{ id: unknown; settings: unknown }>(
      `SELECT id, settings FROM networks WHERE id IN (${ids.map(() => '?').join(', ')})`,
      ids,
      t,
    );
    for (const r of rows) {
      const value = settingValues(r.settings)[name];
      if (value !== undefined) out.set(String(r.id), value);
    }
    return out;
  }

  /** One network (404 svc_network_not_found). */
  async get(id: string): Promise<Network> {
    const { module, row } = await this.store.resolve(id);
    const [orders, advertisers] = await Promise.all([this.orderCounts([module.id]), this.advertiserCounts()]);
    return networkView(this.store, module, row, orders, advertisers);
  }

  /** The module of a network: the built-in one, or one built from a custom definition. */
  async module(id: string): Promise<NetworkModule> {
    return (await this.store.resolve(id)).module;
  }

  /** The effective settings of a network, secrets decrypted: for sync and polling, never for display. */
  async settings(id: string): Promise<ModuleSettings> {
    const { module, row } = await this.store.resolve(id);
    return effectiveSettings(this.store, module, row);
  }

  /**
   * A network's module and the runtime it calls its network with: effective settings, the exact
   * values of its secret settings (which the module keeps out of its errors, and this process out
   * of its log and stored errors), the log (source `networks`), the outbound guard and `signal`.
   */
  async runtime(id: string, signal?: AbortSignal): Promise<{ module: NetworkModule; runtime: ModuleRuntime }> {
    const { module, row } = await this.store.resolve(id);
    const settings = effectiveSettings(this.store, module, row);
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
    const { module, row } = await this.store.resolve(id);
    if (!row?.enabled) {
      throw new ServiceError('svc_network_disabled', `${module.name} is disabled: run \`cashtrack networks enable ${module.id}\` first.`, 409, {
        network: module.id,
      });
    }
    const settings = effectiveSettings(this.store, module, row);
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
    const created = await saveCustomDefinition(this.store, id, input, actor);
    return { network: await this.get(id), created };
  }

  /**
   * Sets settings of a network (null or '' unsets one). Keys are the module's (or the custom
   * definition's) config keys: any other is 400 svc_unknown_setting.
   */
  async configure(id: string, values: Record<string, string | null>, actor: string): Promise<Network> {
    await configureSettings(this.store, id, values, actor);
    return this.get(id);
  }

  async enable(id: string, actor: string): Promise<Network> {
    return (await this.switchNetwork(id, true, actor)).network;
  }

  async disable(id: string, actor: string): Promise<Network> {
    return (await this.switchNetwork(id, false, actor)).network;
  }

  /**
   * Switches a network on or off for sync, polling and tracking links; `changed` is false when it
   * already was (nothing is written or logged then). Switching off stops what starts afterwards:
   * scheduled and all-network syncs, polls and coupon refreshes skip it, tracking links are 409
   * svc_network_disabled. A run already going finishes (nothing here stops a job), and postbacks
   * keep their own switch, so late approvals of its orders still reach members.
   */
  async switchNetwork(id: string, on: boolean, actor: string): Promise<{ network: Network; changed: boolean }> {
    await this.store.resolve(id);
    let changed = false;
    await this.store.update(id, async (row, t) => {
      if (row.enabled === on) return;
      changed = true;
      await this.deps.db.execute('UPDATE networks SET enabled = ?, updated_at = ? WHERE id = ?', [on, this.deps.clock.now(), id], t);
    });
    if (changed) this.deps.logger.info('networks', on ? 'Network enabled' : 'Network disabled', { network: id, actor });
    return { network: await this.get(id), changed };
  }

  /**
   * Switches a network's postbacks on or off, and optionally sets its IP allowlist (CIDRs; an
   * empty list allows any address). The switch alone: switching on needs a postback secret (409
   * svc_postback_secret_missing). The route and the CLI use switchPostbacks, which makes one.
   */
  async setPostbacks(id: string, on: boolean, actor: string, options: { ip_allowlist?: string[] | null } = {}): Promise<Network> {
    await writePostbackSwitch(this.store, id, on, actor, { ip_allowlist: options.ip_allowlist });
    return this.get(id);
  }

  /**
   * Switches a network's postbacks on or off in one step, as an administrator means it: switching
   * on a network without a secret generates one (returned here, the only time it is shown), and the
   * answer says whether postbacks now arrive or which switch is still off (the global one is
   * configuration: `postbacks.enabled`). 409 svc_postback_no_mapping for a custom network without
   * a mapping; 400 svc_invalid_ip_allowlist.
   */
  async switchPostbacks(id: string, on: boolean, actor: string, options: { ip_allowlist?: string[] | null } = {}): Promise<PostbackSwitch> {
    const { secret } = await writePostbackSwitch(this.store, id, on, actor, { ...options, generate: true });
    const network = await this.get(id);
    const switches = { global: this.deps.postbacksEnabled ?? false, network: network.postbacks.enabled };
    const message =
      on && !switches.global
        ? `Postbacks are on for ${network.id}, but still off globally: set CASHTRACK_POSTBACKS_ENABLED=true (postbacks.enabled) and restart the daemon.`
        : null;
    return { network, secret, switches, message };
  }

  /**
   * Generates a new postback secret (256 bits, URL-safe) and returns it once. Token mode keeps
   * only its keyed hash; HMAC mode keeps it encrypted (verifying a signature needs it). The old
   * secret stops working at once, or after `grace_hours` (at most a week).
   */
  async rotatePostbackSecret(
    id: string,
    actor: string,
    options: { mode?: PostbackMode; grace_hours?: number } = {},
  ): Promise<{ network: Network; secret: string; mode: PostbackMode }> {
    const { secret, mode } = await rotateSecret(this.store, id, actor, options);
    return { network: await this.get(id), secret, mode };
  }

  /**
   * Records the outcome of a sync. The error and the result are shown by GET /networks: every
   * secret this process opened is scrubbed from both.
   */
  async recordSync(id: string, outcome: { at: Date; result?: unknown; error?: string | null }): Promise<void> {
    await writeSyncOutcome(this.store, id, outcome);
  }

  /**
   * Records how one kind of run ended (`advertisers`: the sync; `orders`: the poll; `coupons`: the refresh) under its own
   * key of `last_sync_result`, keeping the other's. Read and written on the locked row, so a sync
   * and a poll of one network ending together both stay recorded. `code` is the failure's error
   * code when it has one (a refused login counts toward the watchdog's `auth_failures`).
   */
  async recordRun(
    id: string,
    run: 'advertisers' | 'orders' | 'coupons' | 'payments',
    counts: object,
    error: string | null,
    code: string | null = null,
  ): Promise<void> {
    await writeRunOutcome(this.store, id, run, counts, error, code);
  }

  /** The postback endpoint's view of a network (see PostbackTargets.view). */
  async postbackTarget(id: string): Promise<PostbackTarget | null> {
    return (await this.store.targets.view(id)).target;
  }

  /** `postbackTarget` with the revision it is current at. */
  postbackView(id: string): Promise<PostbackView> {
    return this.store.targets.view(id);
  }

  /** The view this process keeps of a network, without reading anything (see PostbackTargets.kept). */
  keptPostbackView(id: string): PostbackView | undefined {
    return this.store.targets.kept(id);
  }

  /** The current `networks_revision` (read after the call began; concurrent callers share reads). */
  postbacksRevision(): Promise<string> {
    return this.store.targets.revision();
  }

  /** Opens a sealed HMAC secret of a network (kept opened per process, by ciphertext). */
  openPostbackSecret(id: string, sealed: string): string {
    return this.store.targets.openSecret(id, sealed);
  }

  private async orderCounts(networks?: string[]): Promise<Record<string, number>> {
    return this.deps.orderCounts.countByNetwork(networks);
  }

  private async advertiserCounts(networks?: string[]): Promise<Record<string, number>> {
    return this.deps.advertiserCounts.countByModule(networks);
  }
}
