// The PayPal Payouts account (settings group `payouts.paypal`): client_id, the write-only
// client_secret, the environment (sandbox or live) and an optional base_url override (a local
// fixture in tests). Stored through SettingsService like the AI provider's settings: the secret
// sealed by the SecretBox, never answered or printed, and known to the process's scrubbing as soon
// as it is read. The secret is bound to the API origin it was given for (src/secret-origin.ts).
// `client()` hands out one PayPalPayouts per set of credentials, so its access token is reused
// across calls until the settings change.
import Joi from 'joi';
import type { Clock } from '../../clock.js';
import { ServiceError } from '../../errors.js';
import { SecretBox, type Keys } from '../../keys.js';
import { dict } from '../../objects.js';
import type { OutboundGuard } from '../../outbound/index.js';
import { originOf, secretOriginChanged } from '../../secret-origin.js';
import type { SecretValues } from '../../secret-values.js';
import type { LogService } from '../logs/index.js';
import type { SettingsService } from '../settings/index.js';
import { PAYPAL_BASE_URLS, PayPalPayouts, paypalNotConfigured, type PayPalEnvironment } from './paypal.js';

const STORED = 'payouts_paypal';
const STORED_SECRET = 'payouts_paypal_client_secret';
const SECRET_AAD = 'payouts.paypal:client_secret';
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point.
const NO_SPACE = /^[^\s\x00-\x1f\x7f]+$/;

/** Every setting but the secret, with its check; values are text on the way in. */
const SETTABLE: Record<string, Joi.Schema> = {
  client_id: Joi.string().min(1).max(255).pattern(NO_SPACE),
  environment: Joi.string().valid('sandbox', 'live'),
  base_url: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .max(1000),
};
export const PAYPAL_SETTING_NAMES = ['client_id', 'client_secret', 'environment', 'base_url'];

/** What GET /payouts/paypal/settings and `cashtrack payouts paypal-settings` show: never the secret. */
export interface PayPalSettingsView {
  configured: boolean;
  missing: string[];
  client_id: string | null;
  client_secret_set: boolean;
  environment: PayPalEnvironment;
  /** The API origin calls go to: the override when set, else the environment's. */
  base_url: string;
  base_url_override: string | null;
  /** Settings stored so far. */
  stored: string[];
}

interface Stored {
  client_id?: string;
  environment?: PayPalEnvironment;
  base_url?: string;
}

/** Reads and stores the PayPal Payouts account, and builds its client. */
export class PayPalSettings {
  private readonly box: SecretBox;
  private cached: { key: string; client: PayPalPayouts } | null = null;

  constructor(
    private readonly deps: {
      settings: SettingsService;
      keys: Keys;
      secrets: SecretValues;
      logger: LogService;
      guard: Pick<OutboundGuard, 'fetch'>;
      clock: Clock;
    },
  ) {
    this.box = new SecretBox(deps.keys.secretBox);
  }

  /** The settings as shown: the secret only as set or not. */
  async view(): Promise<PayPalSettingsView> {
    const [stored, sealed] = await Promise.all([this.stored(), this.deps.settings.get(STORED_SECRET)]);
    const environment = stored.environment ?? 'sandbox';
    const missing = [...(stored.client_id ? [] : ['client_id']), ...(sealed ? [] : ['client_secret'])];
    return {
      configured: missing.length === 0,
      missing,
      client_id: stored.client_id ?? null,
      client_secret_set: !!sealed,
      environment,
      base_url: stored.base_url ?? PAYPAL_BASE_URLS[environment],
      base_url_override: stored.base_url ?? null,
      stored: [...Object.keys(stored), ...(sealed ? ['client_secret'] : [])],
    };
  }

  /** The client for the stored account, or 503 svc_paypal_not_configured naming what is missing. */
  async client(): Promise<PayPalPayouts> {
    const view = await this.view();
    if (!view.configured) throw paypalNotConfigured(view.missing);
    const sealed = await this.deps.settings.get(STORED_SECRET);
    const secret = this.box.open(sealed!, SECRET_AAD);
    this.deps.secrets.add(secret);
    const key = JSON.stringify([view.client_id, secret, view.base_url]);
    if (this.cached?.key !== key) {
      const client = new PayPalPayouts({
        guard: this.deps.guard,
        clock: this.deps.clock,
        secrets: this.deps.secrets,
        credentials: { client_id: view.client_id!, client_secret: secret, base_url: view.base_url },
      });
      this.cached = { key, client };
    }
    return this.cached.client;
  }

  /**
   * Stores settings: a value sets one, null or '' removes it (environment back to sandbox,
   * base_url back to the environment's). `client_secret` is write-only. Unknown names are 400
   * svc_unknown_setting, bad values 400 svc_invalid_setting; moving the API to another origin
   * without giving the secret again is 400 svc_secret_origin_changed.
   */
  async configure(values: Record<string, string | null>, actor: string): Promise<PayPalSettingsView> {
    const checked = dict<string | null>();
    let secret: string | null | undefined;
    for (const [name, value] of Object.entries(values)) {
      if (name === 'client_secret') {
        if (value !== null && value !== '' && (typeof value !== 'string' || value.length > 4096 || !NO_SPACE.test(value)))
          throw new ServiceError('svc_invalid_setting', 'client_secret must be text of at most 4096 characters without spaces or control characters.', 400, {
            field: 'client_secret',
          });
        secret = value === '' ? null : value;
        continue;
      }
      const schema = SETTABLE[name];
      if (!schema)
        throw new ServiceError(
          'svc_unknown_setting',
          `PayPal Payouts has no setting "${name.slice(0, 64)}". Settings: ${PAYPAL_SETTING_NAMES.join(', ')}.`,
          400,
          { field: name.slice(0, 64), settings: PAYPAL_SETTING_NAMES },
        );
      if (value === null || value === '') {
        checked[name] = null;
        continue;
      }
      const { value: v, error } = schema.validate(value, { convert: true, errors: { wrap: { label: false } } });
      if (error) throw new ServiceError('svc_invalid_setting', `${name}: ${error.details[0].message.replace(/^"?value"? /, '')}`, 400, { field: name });
      checked[name] = v as string;
    }
    const stored = await this.stored();
    const next: Stored = { ...stored };
    for (const [name, value] of Object.entries(checked)) {
      if (value === null) delete next[name as keyof Stored];
      else (next as Record<string, string>)[name] = value;
    }
    const before = stored.base_url ?? PAYPAL_BASE_URLS[stored.environment ?? 'sandbox'];
    const after = next.base_url ?? PAYPAL_BASE_URLS[next.environment ?? 'sandbox'];
    if (originOf(before) !== originOf(after) && secret === undefined && (await this.deps.settings.get(STORED_SECRET)))
      throw secretOriginChanged(Object.hasOwn(checked, 'base_url') ? 'base_url' : 'environment', ['client_secret'], originOf(before), originOf(after));
    await this.deps.settings.set(STORED, JSON.stringify(next));
    if (secret !== undefined) {
      if (secret === null) await this.deps.settings.set(STORED_SECRET, '');
      else {
        this.deps.secrets.add(secret);
        await this.deps.settings.set(STORED_SECRET, this.box.seal(secret, SECRET_AAD));
      }
    }
    this.cached = null;
    // Names only: the secret's value never reaches a log.
    this.deps.logger.info('payouts', 'PayPal Payouts settings stored', { keys: Object.keys(values), actor });
    return this.view();
  }

  private async stored(): Promise<Stored> {
    const raw = await this.deps.settings.get(STORED);
    const out: Stored = {};
    if (!raw) return out;
    try {
      const value = JSON.parse(raw) as Record<string, unknown>;
      if (typeof value.client_id === 'string') out.client_id = value.client_id;
      if (value.environment === 'sandbox' || value.environment === 'live') out.environment = value.environment;
      if (typeof value.base_url === 'string') out.base_url = value.base_url;
    } catch {
      // A damaged row reads as nothing stored; the next configure writes it whole again.
    }
    return out;
  }
}
