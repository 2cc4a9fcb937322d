// The `networks` table as NetworkService's parts share it: each network's module (built-in, or
// built from its custom definition), its row read or locked, and the transaction every write of a
// row runs in (which creates a built-in network's row first and bumps `networks_revision`).
import type { Transaction } from '../../db/transaction.js';
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { ServiceError } from '../../errors.js';
import { customModule } from '../../networks/custom.js';
import type { NetworkModule } from '../../networks/types.js';
import type { AdvertiserCounts } from '../advertisers/index.js';
import type { CashbackRuleService } from '../cashback/index.js';
import { SecretBox, type Keys } from '../../keys.js';
import type { LogService } from '../logs/index.js';
import type { OrderCounts } from '../orders/index.js';
import type { SecretValues } from '../../secret-values.js';
import type { SelfUrl } from '../../self-url.js';
import type { SettingsService } from '../settings/index.js';
import type { OutboundGuard } from '../../outbound/index.js';
import { PostbackTargets } from './postback-targets.js';
import { NETWORK_ID } from '../../fields.js';
import { NETWORK_COLUMNS, toNetworkRow, type NetworkRow } from './rows.js';

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
  /** Active advertiser counts per network id: the advertisers domain's read model (its service owns the table). */
  advertiserCounts: Pick<AdvertiserCounts, 'countByModule'>;
  /** Order counts per network id: the orders domain's read model (its service owns the table). */
  orderCounts: Pick<OrderCounts, 'countByNetwork'>;
  /** The shared settings service (which keeps `networks_revision`). */
  settings: SettingsService;
  /** The base URL postbacks reach this daemon at (public_url, else the listening address), when known. */
  selfUrl: Pick<SelfUrl, 'get'>;
  /** Every secret this service opens (settings, postback secrets) is added here, so the log and stored errors scrub it. */
  secrets?: SecretValues;
  /** The outbound guard module runtimes fetch through (custom network feeds). */
  outbound?: OutboundGuard;
  /** `postbacks.enabled`, the global switch (configuration): switching a network on says whether it is still off. */
  postbacksEnabled?: boolean;
}

export function notFound(id: string): ServiceError {
  return new ServiceError('svc_network_not_found', `Network ${String(id).slice(0, 64)} not found.`, 404, { network: String(id).slice(0, 64) });
}

/** The modules, rows and row writes NetworkService's parts share (see the file's header). */
export class NetworkStore {
  readonly byId: Map<string, NetworkModule>;
  readonly box: SecretBox;
  readonly targets: PostbackTargets;

  constructor(readonly deps: NetworkServiceDeps) {
    this.byId = new Map(deps.modules.map((m) => [m.id, m]));
    this.box = new SecretBox(deps.keys.secretBox);
    this.targets = new PostbackTargets({
      db: deps.db,
      settings: deps.settings,
      box: this.box,
      secrets: deps.secrets,
      moduleOf: (id, row) => this.moduleOf(id, row),
    });
  }

  /** A network row changes in `t`: every process reads its postback target again once `t` commits. */
  async changed(id: string, t: Transaction): Promise<void> {
    await this.targets.changed(id, t);
  }

  /** The module of network `id`: built-in, or defined by its row; null when there is none. */
  moduleOf(id: string, row: NetworkRow | null): { module: NetworkModule; builtin: boolean } | null {
    const builtin = this.byId.get(id);
    if (builtin) return { module: builtin, builtin: true };
    return row?.kind === 'custom' && row.definition ? { module: customModule(id, row.definition), builtin: false } : null;
  }

  async resolve(id: string): Promise<{ module: NetworkModule; row: NetworkRow | null }> {
    if (typeof id !== 'string' || !NETWORK_ID.test(id)) throw notFound(id);
    const [r] = await this.deps.db.select<Record<string, unknown>>(`SELECT ${NETWORK_COLUMNS} FROM networks WHERE id = ?`, [id]);
    const row = r ? toNetworkRow(r) : null;
    const found = this.moduleOf(id, row);
    if (!found) throw notFound(id);
    return { module: found.module, row };
  }

  async lockRow(id: string, t: Transaction): Promise<NetworkRow | null> {
    const [r] = await this.deps.db.select<Record<string, unknown>>(`SELECT ${NETWORK_COLUMNS} FROM networks WHERE id = ?${this.deps.db.forUpdate()}`, [id], t);
    return r ? toNetworkRow(r) : null;
  }

  /** Runs `fn` on the locked row, creating the row of a built-in network first. */
  async update(id: string, fn: (row: NetworkRow, t: Transaction) => Promise<void>): Promise<void> {
    await this.deps.db.transaction(async (t) => {
      let row = await this.lockRow(id, t);
      if (!row) {
        const m = this.byId.get(id);
        if (!m) throw notFound(id);
        const now = this.deps.clock.now();
        await this.deps.db.execute(
          this.deps.db.insertIgnore('networks', [
            'id',
            'kind',
            'name',
            'currency',
            'enabled',
            'postbacks_enabled',
            'postback_mode',
            'created_at',
            'updated_at',
          ]),
          [id, 'builtin', m.name.slice(0, 191), m.defaultCurrency, false, false, 'token', now, now],
          t,
        );
        row = (await this.lockRow(id, t))!;
      }
      await this.changed(id, t);
      await fn(row, t);
    });
  }
}
