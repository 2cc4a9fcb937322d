// A network as the API and CLI show it, built from its module and row: whether it is configured
// (told without opening secrets where it can), its settings with secret ones as `<name>_set`, its
// cashback rule, postback switches and counts.
import type { CustomDefinition } from '../../networks/custom-definition.js';
import type { ModuleSettings, NetworkModule } from '../../networks/types.js';
import { dict } from '../../objects.js';
import { shownSettings, type Network, type NetworkRow } from './rows.js';
import { effectiveSettings, fromConfig as configuredSettings, keysOf } from './settings.js';
import type { NetworkStore } from './store.js';

export async function networkView(
  store: NetworkStore,
  module: NetworkModule,
  row: NetworkRow | null,
  orders: Record<string, number>,
  advertisers: Record<string, number>,
): Promise<Network> {
  const id = module.id;
  const fromConfig = configuredSettings(store, id);
  const secretNames = new Set([...(row?.secret_names ?? []), ...module.configKeys.filter((k) => k.secret && fromConfig[k.name]).map((k) => k.name)]);
  const plain = Object.assign(dict<string>(), fromConfig, row?.settings);
  // Whether every required key is there; secret values need not be decrypted to tell.
  const presence: ModuleSettings = Object.assign(dict<string>(), plain);
  for (const name of secretNames) presence[name] = presence[name] || 'set';
  let configured: boolean;
  try {
    configured = module.isConfigured(row?.secret_settings ? effectiveSettings(store, module, row) : presence);
  } catch {
    configured = false;
  }
  const cashback = await store.deps.cashback.resolve(id, null);
  const base = store.deps.selfUrl.get();
  const definition: CustomDefinition | null =
    row?.kind === 'custom' && row.definition
      ? { ...row.definition, cashback: cashback.source === 'network' ? { type: cashback.type, value: cashback.value, currency: cashback.currency } : null }
      : null;
  return {
    id,
    kind: store.byId.has(id) ? 'builtin' : 'custom',
    name: store.byId.has(id) ? module.name : (row?.name ?? module.name),
    currency: store.byId.has(id) ? module.defaultCurrency : (row?.currency ?? module.defaultCurrency),
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
      previous_secret_until:
        row?.postback_previous_secret && row.postback_previous_until && new Date(row.postback_previous_until) > store.deps.clock.now()
          ? row.postback_previous_until
          : null,
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
