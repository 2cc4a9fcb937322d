// The AI provider's settings: the configuration (config/ files and CASHTRACK_AI_* variables), with
// what `cashtrack ai configure` (or POST /ai/settings) stored over it in the settings table. The
// API key is write-only: stored sealed by the SecretBox, never shown, and known to the process's
// scrubbing as soon as it is read so it cannot reach the log or a job's error.
import Joi from 'joi';
import type { AiConfig } from '../../config/index.js';
import { ServiceError } from '../../errors.js';
import { dict } from '../../objects.js';
import type { ProviderSettings } from './provider.js';
import { SecretBox, type Keys } from '../../keys.js';
import type { LogService } from '../logs/index.js';
import type { SecretValues } from '../../secret-values.js';
import type { SettingsService } from '../settings/index.js';
import { PAGE_TEMPLATE_TAGS, unknownTags } from '../../config/template-tags.js';
import { originOf, secretOriginChanged } from '../../secret-origin.js';

export const AI_TASKS = ['shop', 'coupon'] as const;
export type AiTask = (typeof AI_TASKS)[number];

/** Tags a prompt may use beside the page template tags. */
export const AI_PROMPT_TAGS = {
  shop: [...PAGE_TEMPLATE_TAGS, 'LANGUAGE', 'CATEGORIES', 'COUNTRIES'],
  coupon: [
    ...PAGE_TEMPLATE_TAGS,
    'LANGUAGE',
    'COUPON_TITLE',
    'COUPON_DESCRIPTION',
    'COUPON_CODE',
    'COUPON_DISCOUNT',
    'COUPON_STARTS',
    'COUPON_ENDS',
    'COUPON_TERMS',
  ],
} as const;

const STORED = 'ai_settings';
const STORED_KEY = 'ai_api_key';
const KEY_AAD = 'ai:api_key';

const prompt = (task: AiTask) =>
  Joi.string()
    .min(1)
    .max(20_000)
    .custom((value: string, helpers) => {
      const unknown = unknownTags(value, AI_PROMPT_TAGS[task]);
      return unknown.length ? helpers.message({ custom: `{{#label}} uses unknown tag(s) ${unknown.map((t) => `%${t}%`).join(', ')}` }) : value;
    });

/** Every setting `ai configure --set` takes, with its check; values are text on the way in. */
const SETTABLE: Record<string, Joi.Schema> = {
  base_url: Joi.string()
    .uri({ scheme: ['http', 'https'] })
    .max(1000),
  model: Joi.string()
    .max(191)
    .pattern(/^[^\u0000-\u001f\u007f]+$/),
  temperature: Joi.number().min(0).max(2),
  timeout_ms: Joi.number().integer().min(100).max(600_000),
  concurrency: Joi.number().integer().min(1).max(64),
  token_budget: Joi.number().integer().min(0),
  daily_token_budget: Joi.number().integer().min(0),
  answer_token_estimate: Joi.number().integer().min(1).max(1_000_000),
  language: Joi.string()
    .min(1)
    .max(64)
    .pattern(/^[^\u0000-\u001f\u007f]+$/),
  'prompts.shop.system': prompt('shop'),
  'prompts.shop.user': prompt('shop'),
  'prompts.coupon.system': prompt('coupon'),
  'prompts.coupon.user': prompt('coupon'),
};
export const AI_SETTING_NAMES = Object.keys(SETTABLE);

/** The effective settings, key opened (for calls, never for display). */
export interface AiSettings extends Omit<AiConfig, 'api_key'> {
  api_key: string | null;
}

/** What GET /ai/settings and `cashtrack ai configure` show: no key, only whether there is one. */
export interface AiSettingsView {
  configured: boolean;
  /** What is still to set, by setting name. */
  missing: string[];
  base_url: string | null;
  model: string | null;
  temperature: number;
  timeout_ms: number;
  concurrency: number;
  token_budget: number;
  daily_token_budget: number;
  answer_token_estimate: number;
  language: string;
  api_key_set: boolean;
  prompts: AiConfig['prompts'];
  /** Settings stored by `ai configure` (the rest come from the configuration). */
  stored: string[];
  tags: { shop: readonly string[]; coupon: readonly string[] };
}

const ENV_OF: Record<string, string> = { base_url: 'CASHTRACK_AI_BASE_URL', api_key: 'CASHTRACK_AI_API_KEY', model: 'CASHTRACK_AI_MODEL' };

/** Missing settings as a 503 that names each and how to set it. */
export function notConfigured(missing: string[]): ServiceError {
  const how = missing.map(
    (m) => `${m} (${ENV_OF[m] ?? m}${m === 'api_key' ? ', or `cashtrack ai configure --api-key-stdin`' : `, or \`cashtrack ai configure --set ${m}=...\``})`,
  );
  return new ServiceError('svc_ai_not_configured', `No AI provider is configured: set ${how.join(', ')}.`, 503, { missing });
}

/** Reads and stores the AI provider's settings. */
export class AiSettingsStore {
  private readonly box: SecretBox;

  constructor(private readonly deps: { config: AiConfig; settings: SettingsService; keys: Keys; secrets: SecretValues; logger: LogService }) {
    this.box = new SecretBox(deps.keys.secretBox);
    deps.secrets.add(deps.config.api_key);
  }

  /**
   * The effective settings: stored values over the configuration's. The stored key is opened
   * only with `openKey` (a call needs it; a view only says whether there is one, and keeps working
   * when the key no longer opens after a change of CASHTRACK_SECRET).
   */
  async read(openKey = true): Promise<AiSettings & { stored: string[] }> {
    const [raw, sealed] = await Promise.all([this.deps.settings.get(STORED), this.deps.settings.get(STORED_KEY)]);
    const stored = this.parse(raw);
    const c = this.deps.config;
    const out: AiSettings = { ...c, prompts: { shop: { ...c.prompts.shop }, coupon: { ...c.prompts.coupon } } };
    for (const [name, value] of Object.entries(stored)) setSetting(out, name, value);
    let key = c.api_key;
    if (sealed && openKey) {
      key = this.box.open(sealed, KEY_AAD);
      this.deps.secrets.add(key);
    } else if (sealed) key = '(stored)';
    return { ...out, api_key: key, stored: [...Object.keys(stored), ...(sealed ? ['api_key'] : [])] };
  }

  /** The settings as shown: the key only as set or not. */
  async view(): Promise<AiSettingsView> {
    const s = await this.read(false);
    const missing = missingOf(s);
    return {
      configured: missing.length === 0,
      missing,
      base_url: s.base_url,
      model: s.model,
      temperature: s.temperature,
      timeout_ms: s.timeout_ms,
      concurrency: s.concurrency,
      token_budget: s.token_budget,
      daily_token_budget: s.daily_token_budget,
      answer_token_estimate: s.answer_token_estimate,
      language: s.language,
      api_key_set: !!s.api_key,
      prompts: s.prompts,
      stored: s.stored,
      tags: AI_PROMPT_TAGS,
    };
  }

  /**
   * What a call needs, or 503 svc_ai_not_configured naming what is missing (base URL, API key,
   * model).
   */
  async provider(): Promise<{ settings: AiSettings; provider: ProviderSettings }> {
    const s = await this.read();
    const missing = missingOf(s);
    if (missing.length) throw notConfigured(missing);
    return {
      settings: s,
      provider: {
        base_url: s.base_url!,
        api_key: s.api_key!,
        model: s.model!,
        temperature: s.temperature,
        timeout_ms: s.timeout_ms,
        max_attempts: s.max_attempts,
        retry_base_ms: s.retry_base_ms,
        retry_max_ms: s.retry_max_ms,
        retry_after_max_seconds: s.retry_after_max_seconds,
      },
    };
  }

  /**
   * Stores settings (null or '' unsets one, back to the configuration's value) and the API key
   * (`api_key`: a string sets it, null removes the stored one). Unknown names are 400
   * svc_unknown_setting, bad values 400 svc_invalid_setting.
   */
  async configure(values: Record<string, string | number | null>, actor: string): Promise<AiSettingsView> {
    const checked = dict<string | number | null>();
    let key: string | null | undefined;
    for (const [name, value] of Object.entries(values)) {
      if (name === 'api_key') {
        if (value !== null && value !== '' && (typeof value !== 'string' || value.length > 4096 || /[\s\u0000-\u001f\u007f]/.test(value))) {
          throw new ServiceError('svc_invalid_setting', 'api_key must be text of at most 4096 characters without spaces or control characters.', 400, {
            field: 'api_key',
          });
        }
        key = value === '' ? null : (value as string | null);
        continue;
      }
      const schema = SETTABLE[name];
      if (!schema)
        throw new ServiceError(
          'svc_unknown_setting',
          `The AI provider has no setting "${name.slice(0, 64)}". Settings: api_key, ${AI_SETTING_NAMES.join(', ')}.`,
          400,
          { field: name.slice(0, 64), settings: ['api_key', ...AI_SETTING_NAMES] },
        );
      if (value === null || value === '') {
        checked[name] = null;
        continue;
      }
      const { value: v, error } = schema.validate(value, { convert: true, errors: { wrap: { label: false } } });
      if (error) throw new ServiceError('svc_invalid_setting', `${name}: ${error.details[0].message.replace(/^"?value"? /, '')}`, 400, { field: name });
      checked[name] = v as string | number;
    }
    const stored = this.parse(await this.deps.settings.get(STORED));
    if (Object.hasOwn(checked, 'base_url')) await this.checkKeyOrigin(stored, checked.base_url as string | null, key);
    for (const [name, value] of Object.entries(checked)) {
      if (value === null) delete stored[name];
      else stored[name] = value;
    }
    await this.deps.settings.set(STORED, JSON.stringify(stored));
    if (key !== undefined) {
      if (key === null) await this.deps.settings.set(STORED_KEY, '');
      else {
        this.deps.secrets.add(key);
        await this.deps.settings.set(STORED_KEY, this.box.seal(key, KEY_AAD));
      }
    }
    // Names only: the key's value never reaches a log.
    this.deps.logger.info('ai', 'AI provider configured', { keys: Object.keys(values), actor });
    return this.view();
  }

  /**
   * The key is bound to the origin of the base URL it was given for (see src/secret-origin.ts): a
   * change to another origin must give the key again in the same request, or remove it (a key from
   * the configuration cannot be removed here, so it must be given). A first base URL is free: the
   * key was bound to none yet.
   */
  private async checkKeyOrigin(stored: Record<string, string | number>, next: string | null, key: string | null | undefined): Promise<void> {
    const c = this.deps.config;
    const before = (stored.base_url as string | undefined) ?? c.base_url;
    const after = next ?? c.base_url;
    if (!before || !after || originOf(before) === originOf(after)) return;
    if (typeof key === 'string') return;
    const left = key === null ? c.api_key : (await this.deps.settings.get(STORED_KEY)) || c.api_key;
    if (left) throw secretOriginChanged('base_url', ['api_key'], originOf(before), originOf(after));
  }

  private parse(raw: string | null): Record<string, string | number> {
    const out = dict<string | number>();
    if (!raw) return out;
    try {
      const value = JSON.parse(raw) as Record<string, unknown>;
      for (const [k, v] of Object.entries(value)) if (SETTABLE[k] && (typeof v === 'string' || typeof v === 'number')) out[k] = v;
    } catch {
      // A damaged row reads as nothing stored; the next configure writes it whole again.
    }
    return out;
  }
}

function missingOf(s: AiSettings): string[] {
  return (['base_url', 'api_key', 'model'] as const).filter((k) => !s[k]);
}

function setSetting(target: AiSettings, name: string, value: string | number): void {
  const [head, task, part] = name.split('.');
  if (head === 'prompts') target.prompts[task as AiTask][part as 'system' | 'user'] = String(value);
  else (target as unknown as Record<string, unknown>)[head] = value;
}
