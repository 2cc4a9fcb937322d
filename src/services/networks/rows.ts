// Networks as stored and as shown. The stored row holds secrets only as keyed hashes or
// ciphertext, and the shown network holds none at all: a secret setting is `<name>_set: true`.
import { toIso } from '../../db/values.js';
import type { CustomDefinition } from '../../networks/custom-definition.js';
import type { ConfigKey } from '../../networks/types.js';
import type { ScopedCashbackRule } from '../cashback/index.js';
import type { PostbackMode } from './postback-secrets.js';

export type NetworkKind = 'builtin' | 'custom';

export interface NetworkRow {
  id: string;
  kind: NetworkKind;
  name: string;
  currency: string;
  enabled: boolean;
  postbacks_enabled: boolean;
  /** Non-secret settings. */
  settings: Record<string, string>;
  /** Names of the secret settings stored (encrypted) in `secret_settings`. */
  secret_names: string[];
  secret_settings: string | null;
  definition: CustomDefinition | null;
  postback_mode: PostbackMode;
  postback_secret: string | null;
  postback_secret_set_at: string | null;
  postback_previous_secret: string | null;
  postback_previous_until: string | null;
  postback_ip_allowlist: string[];
  last_sync_at: string | null;
  last_sync_result: unknown;
  last_error: string | null;
  last_error_at: string | null;
  created_at: string | null;
  updated_at: string | null;
}

export const NETWORK_COLUMNS =
  'id, kind, name, currency, enabled, postbacks_enabled, settings, secret_settings, definition, postback_mode, postback_secret, postback_secret_set_at, postback_previous_secret, postback_previous_until, postback_ip_allowlist, last_sync_at, last_sync_result, last_error, last_error_at, created_at, updated_at';

function json<T>(value: unknown, fallback: T): T {
  if (typeof value !== 'string' || !value) return fallback;
  try {
    return JSON.parse(value) as T;
  } catch {
    return fallback;
  }
}

/** The `settings` column: `{"values": {...}, "secret_names": [...]}`. */
function storedSettings(value: unknown): { settings: Record<string, string>; secret_names: string[] } {
  const v = json<{ values?: Record<string, string>; secret_names?: string[] }>(value, {});
  return { settings: v.values ?? {}, secret_names: Array.isArray(v.secret_names) ? v.secret_names : [] };
}

/** The non-secret setting values of a stored `settings` column. */
export function settingValues(value: unknown): Record<string, string> {
  return storedSettings(value).settings;
}

export function encodeSettings(values: Record<string, string>, secretNames: string[]): string {
  return JSON.stringify({ values, secret_names: [...new Set(secretNames)].sort() });
}

const bool = (v: unknown) => v === true || Number(v) === 1;

export function toNetworkRow(r: Record<string, unknown>): NetworkRow {
  const str = (v: unknown) => (v === null || v === undefined ? null : String(v));
  return {
    id: String(r.id),
    kind: r.kind === 'custom' ? 'custom' : 'builtin',
    name: String(r.name),
    currency: String(r.currency),
    enabled: bool(r.enabled),
    postbacks_enabled: bool(r.postbacks_enabled),
    ...storedSettings(r.settings),
    secret_settings: str(r.secret_settings),
    definition: json<CustomDefinition | null>(r.definition, null),
    postback_mode: r.postback_mode === 'hmac' ? 'hmac' : 'token',
    postback_secret: str(r.postback_secret),
    postback_secret_set_at: toIso(r.postback_secret_set_at),
    postback_previous_secret: str(r.postback_previous_secret),
    postback_previous_until: toIso(r.postback_previous_until),
    postback_ip_allowlist: json<string[]>(r.postback_ip_allowlist, []),
    last_sync_at: toIso(r.last_sync_at),
    last_sync_result: json<unknown>(r.last_sync_result, null),
    last_error: str(r.last_error),
    last_error_at: toIso(r.last_error_at),
    created_at: toIso(r.created_at),
    updated_at: toIso(r.updated_at),
  };
}

/** A network as the API and CLI show it. Never holds a secret. */
export interface Network {
  id: string;
  kind: NetworkKind;
  name: string;
  currency: string;
  enabled: boolean;
  /** Every required setting is set (module.isConfigured). */
  configured: boolean;
  /** Non-secret settings with their values; a secret one only as `<name>_set`. */
  settings: Record<string, string | boolean>;
  config_keys: ConfigKey[];
  /** The network's default member cashback (its rule, else the site default). */
  cashback_rule: ScopedCashbackRule;
  /** Custom networks: the definition (its `cashback` is the network's current rule). */
  definition: CustomDefinition | null;
  postbacks: {
    enabled: boolean;
    mode: PostbackMode;
    secret_set: boolean;
    secret_set_at: string | null;
    /** Until when the secret before the last rotation is still accepted. */
    previous_secret_until: string | null;
    ip_allowlist: string[];
    /** Where the network sends postbacks (null until the daemon knows its URL). */
    url: string | null;
    /** The query string to give the network, with its parameter names (auth not included). */
    template: string | null;
  };
  last_sync_at: string | null;
  last_sync_result: unknown;
  last_error: string | null;
  last_error_at: string | null;
  counts: { advertisers: number; orders: number };
  created_at: string | null;
  updated_at: string | null;
}

/** The shown settings: configured values of non-secret keys, `<key>_set` for secret ones. */
export function shownSettings(keys: ConfigKey[], plain: Record<string, string | undefined>, secretNames: Set<string>): Record<string, string | boolean> {
  const out: Record<string, string | boolean> = {};
  for (const k of keys) {
    if (k.secret) out[`${k.name}_set`] = secretNames.has(k.name);
    else if (plain[k.name] !== undefined && plain[k.name] !== '') out[k.name] = plain[k.name]!;
  }
  return out;
}
