// A network's settings: the keys it has (its module's and the review ceiling), the settings it
// runs with (configuration, then stored, then the opened secret ones), and `configure`'s writes.
// Secret settings are stored encrypted and only their names shown.
import { ServiceError } from '../../errors.js';
import type { ConfigKey, ModuleSettings, NetworkModule } from '../../networks/types.js';
import { parseCeiling } from '../../money.js';
import { dict, own } from '../../objects.js';
import { encodeSettings, type NetworkRow } from './rows.js';
import { originOf, secretOriginChanged } from '../../secret-origin.js';
import { movedSecrets, secretDestinations } from '../../networks/custom-definition.js';
import type { NetworkStore } from './store.js';

/** The network setting (and `networks.<id>` config key) that overrides the site's ceiling (services/orders/review.ts). */
export const REVIEW_SETTING = 'review_above';

const MAX_PLAIN_SETTING = 1000;

/** The setting every network has beside its module's: the ceiling its orders are held for review above (services/orders/review.ts). */
const REVIEW_KEY: ConfigKey = {
  name: REVIEW_SETTING,
  description:
    'Commission above which an order from this network is held for review: "1000.00" (units of the order\'s currency), "500.00 GBP, 80000 JPY", or "none"; unset: the site\'s orders.review_above.',
  required: false,
  secret: false,
};

/** The network setting (and `networks.<id>` config key): days after approval within which the network should have paid an order. */
export const PAYMENT_TERMS_SETTING = 'payment_terms_days';

/** The payment terms of a network without the setting. */
export const PAYMENT_TERMS_DEFAULT_DAYS = 90;

const PAYMENT_TERMS_MAX_DAYS = 3650;

/** The setting every network has beside its module's: its payment terms (services/orders/receivables.ts). */
const PAYMENT_TERMS_KEY: ConfigKey = {
  name: PAYMENT_TERMS_SETTING,
  description: `Days after approval within which the network should have paid an order (1-${PAYMENT_TERMS_MAX_DAYS}); an approved order unpaid for longer is a variance of its receivables. Unset: ${PAYMENT_TERMS_DEFAULT_DAYS}.`,
  required: false,
  secret: false,
};

/** The days a `payment_terms_days` value says, or null when it is not a whole number of days in range. */
export function parsePaymentTerms(text: string): number | null {
  if (!/^\d{1,4}$/.test(text.trim())) return null;
  const days = Number(text.trim());
  return days >= 1 && days <= PAYMENT_TERMS_MAX_DAYS ? days : null;
}

/** The network setting (and `networks.<id>` config key) that says when its orders' cashback becomes available (services/orders/effects.ts). */
export const PAYABLE_SETTING = 'cashback_payable';
export const PAYABLE_POLICIES = ['on_approval', 'on_network_payment'] as const;
export type PayablePolicy = (typeof PAYABLE_POLICIES)[number];

const PAYABLE_KEY: ConfigKey = {
  name: PAYABLE_SETTING,
  description:
    'When an approved order\'s cashback becomes available to the member: "on_approval" (default) or "on_network_payment" (it stays pending until the network has paid the order).',
  required: false,
  secret: false,
  default: 'on_approval',
};

/** A module's settings, the review ceiling, the payment terms and the cashback policy. */
export function keysOf(module: NetworkModule): ConfigKey[] {
  const names = new Set(module.configKeys.map((k) => k.name));
  return [...module.configKeys, ...[REVIEW_KEY, PAYMENT_TERMS_KEY, PAYABLE_KEY].filter((k) => !names.has(k.name))];
}
const MAX_SECRET_SETTING = 4096;

/** The values of a network's secret settings: those stored encrypted, and those its module (or definition) declares secret. */
export function secretValuesOf(module: NetworkModule, row: NetworkRow | null, settings: ModuleSettings): string[] {
  const names = new Set([...(row?.secret_names ?? []), ...module.configKeys.filter((k) => k.secret).map((k) => k.name)]);
  return [...names].map((n) => settings[n]).filter((v): v is string => typeof v === 'string' && v !== '');
}

/** The settings a module runs with; the secret ones, once opened, are known to the process's scrubbing. */
export function effectiveSettings(store: NetworkStore, module: NetworkModule, row: NetworkRow | null): ModuleSettings {
  const id = module.id;
  const secrets = row?.secret_settings ? (JSON.parse(store.box.open(row.secret_settings, `network:${id}:settings`)) as Record<string, string>) : {};
  const settings: ModuleSettings = Object.assign(dict<string>(), fromConfig(store, id), row?.settings, secrets);
  store.deps.secrets?.add(...secretValuesOf(module, row, settings));
  return settings;
}

/**
 * The settings of a network from the configuration. Settings objects have no prototype: a
 * custom network may name a setting `constructor` or `toString`, which must read as unset, not
 * as a function.
 */
export function fromConfig(store: NetworkStore, id: string): Record<string, string> {
  return Object.assign(dict<string>(), own(store.deps.configured, id));
}

/**
 * Secret settings are bound to the origin of the URL they are sent to (a `binds_secrets` setting
 * such as `base_url`, its default when unset): a change of that origin must give every secret
 * setting that would still have a value again in the same request (a secret the configuration
 * gives cannot be removed here, so it too must be given). Otherwise 400 svc_secret_origin_changed:
 * an administrator pointing Awin's `base_url` at another host would have sent it the API token.
 */
export function checkSecretsOrigin(
  keys: ConfigKey[],
  configured: Record<string, string>,
  stored: Record<string, string>,
  storedSecrets: Record<string, string>,
  values: Record<string, string | null>,
): void {
  const secretNames = keys.filter((k) => k.secret).map((k) => k.name);
  for (const key of keys.filter((k) => k.binds_secrets && Object.hasOwn(values, k.name))) {
    const effective = (own: string | null | undefined) => own || configured[key.name] || key.default || '';
    const before = effective(stored[key.name]);
    const after = effective(values[key.name]);
    if (!before || !after || originOf(before) === originOf(after)) continue;
    const following = secretNames.filter((name) => {
      const given = values[name];
      if (typeof given === 'string' && given !== '') return false;
      const left = Object.hasOwn(values, name) ? configured[name] : (storedSecrets[name] ?? configured[name]);
      return Boolean(left);
    });
    if (following.length) throw secretOriginChanged(key.name, following, originOf(before), originOf(after));
  }
}

/**
 * The same binding for a custom network, whose secrets travel to its feeds' hosts: a non-secret
 * setting filled into a feed's URL (a host, a region) that moves a secret to another origin must
 * give that secret again in the same request (or remove it).
 */
function checkCustomSecretsOrigin(
  def: NonNullable<NetworkRow['definition']>,
  configured: Record<string, string>,
  stored: Record<string, string>,
  storedSecrets: Record<string, string>,
  values: Record<string, string | null>,
): void {
  const after = { ...configured, ...stored };
  for (const [name, value] of Object.entries(values)) {
    if (value === null || value === '') {
      delete after[name];
      if (configured[name]) after[name] = configured[name];
    } else after[name] = value;
  }
  const moved = movedSecrets(secretDestinations(def, { ...configured, ...stored }), secretDestinations(def, after), (name) => {
    const given = values[name];
    if (typeof given === 'string' && given !== '') return false;
    return Boolean(Object.hasOwn(values, name) ? configured[name] : (storedSecrets[name] ?? configured[name]));
  });
  if (!moved.length) return;
  const changed = Object.keys(values).filter((k) => !(def.settings ?? []).some((s) => s.name === k && s.secret));
  throw secretOriginChanged(changed.join(', ') || 'settings', [...new Set(moved.map((m) => m.name))], moved[0].from, moved[0].to);
}

/** Checks and writes the settings of NetworkService.configure (which then reads the network back). */
export async function configureSettings(store: NetworkStore, id: string, values: Record<string, string | null>, actor: string): Promise<void> {
  const { module } = await store.resolve(id);
  const keys = new Map(keysOf(module).map((k) => [k.name, k]));
  for (const [name, value] of Object.entries(values)) {
    const key = keys.get(name);
    if (!key)
      throw new ServiceError(
        'svc_unknown_setting',
        `${module.name} has no setting "${name.slice(0, 64)}". Settings: ${[...keys.keys()].join(', ') || '(none)'}.`,
        400,
        { field: name.slice(0, 64), settings: [...keys.keys()] },
      );
    if (
      value !== null &&
      (typeof value !== 'string' || value.length > (key.secret ? MAX_SECRET_SETTING : MAX_PLAIN_SETTING) || /[\u0000-\u001f\u007f]/.test(value))
    ) {
      throw new ServiceError(
        'svc_invalid_setting',
        `${name} must be text of at most ${key.secret ? MAX_SECRET_SETTING : MAX_PLAIN_SETTING} characters without control characters.`,
        400,
        { field: name },
      );
    }
    if (name === REVIEW_SETTING && value) parseCeiling(value, name);
    if (name === PAYMENT_TERMS_SETTING && value && parsePaymentTerms(value) === null)
      throw new ServiceError('svc_invalid_setting', `${name} must be a whole number of days from 1 to ${PAYMENT_TERMS_MAX_DAYS}.`, 400, { field: name });
    if (name === PAYABLE_SETTING && value && !(PAYABLE_POLICIES as readonly string[]).includes(value))
      throw new ServiceError('svc_invalid_setting', `${PAYABLE_SETTING} must be one of ${PAYABLE_POLICIES.join(', ')}.`, 400, { field: name });
  }
  await store.update(id, async (row, t) => {
    const plain = Object.assign(dict<string>(), row.settings);
    const secrets = Object.assign(
      dict<string>(),
      row.secret_settings ? (JSON.parse(store.box.open(row.secret_settings, `network:${id}:settings`)) as Record<string, string>) : {},
    );
    const configured = fromConfig(store, id);
    checkSecretsOrigin(keysOf(module), configured, plain, secrets, values);
    if (row.definition) checkCustomSecretsOrigin(row.definition, configured, plain, secrets, values);
    for (const [name, value] of Object.entries(values)) {
      const target = keys.get(name)!.secret ? secrets : plain;
      if (value === null || value === '') delete target[name];
      else target[name] = value;
    }
    const sealed = Object.keys(secrets).length ? store.box.seal(JSON.stringify(secrets), `network:${id}:settings`) : null;
    await store.deps.db.execute(
      'UPDATE networks SET settings = ?, secret_settings = ?, updated_at = ? WHERE id = ?',
      [encodeSettings(plain, Object.keys(secrets)), sealed, store.deps.clock.now(), id],
      t,
    );
  });
  store.deps.secrets?.add(
    ...Object.entries(values)
      .filter(([name]) => keys.get(name)!.secret)
      .map(([, value]) => value),
  );
  // Names only: the values of secret settings never reach a log.
  store.deps.logger.info('networks', 'Network configured', { network: id, keys: Object.keys(values), actor });
}
