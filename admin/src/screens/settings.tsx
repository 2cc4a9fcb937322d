// Settings: the AI provider and its prompts (GET/POST /ai/settings). The API key is write-only:
// the screen says whether one is set and lets it be replaced, never shows it. Today's spend
// against the daily token budget is shown beside; the PayPal Payouts account below
// (GET/POST /payouts/paypal/settings, ./paypal-settings.tsx).
import { Card, CardBody, CardHeader, Notice, Spinner, TextareaControl, TextControl } from '@wordpress/components';
import { SecretField, SettingsButtons, SettingsNotices, useSettingsForm } from '../lib/settings-form';
import type { ScreenProps } from '../screens';
import { PayPalSettingsPanel } from './paypal-settings';
import './content.css';

interface AiSettingsView {
  configured: boolean;
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
  prompts: { shop: { system: string; user: string }; coupon: { system: string; user: string } };
  stored: string[];
  tags: { shop: string[]; coupon: string[] };
  today: { day: string; spent: number; reserved: number; remaining: number | null; resets_at: string };
}

const PLAIN = [
  { name: 'base_url', label: 'Provider base URL', type: 'url' },
  { name: 'model', label: 'Model', type: 'text' },
  { name: 'language', label: 'Language of the content', type: 'text' },
  { name: 'temperature', label: 'Temperature (0 – 2)', type: 'number' },
  { name: 'timeout_ms', label: 'Timeout per call (ms)', type: 'number' },
  { name: 'concurrency', label: 'Calls at once (bulk runs)', type: 'number' },
  { name: 'token_budget', label: 'Token budget per bulk run (0: none)', type: 'number' },
  { name: 'daily_token_budget', label: 'Daily token budget (0: none)', type: 'number' },
  { name: 'answer_token_estimate', label: 'Tokens reserved per answer', type: 'number' },
] as const;

const PROMPTS = [
  { name: 'prompts.shop.system', label: 'Shop content: system prompt', task: 'shop' },
  { name: 'prompts.shop.user', label: 'Shop content: user prompt', task: 'shop' },
  { name: 'prompts.coupon.system', label: 'Coupon rewrite: system prompt', task: 'coupon' },
  { name: 'prompts.coupon.user', label: 'Coupon rewrite: user prompt', task: 'coupon' },
] as const;

function formOf(s: AiSettingsView): Record<string, string> {
  const form: Record<string, string> = {};
  for (const f of PLAIN) form[f.name] = String(s[f.name] ?? '');
  form['prompts.shop.system'] = s.prompts.shop.system;
  form['prompts.shop.user'] = s.prompts.shop.user;
  form['prompts.coupon.system'] = s.prompts.coupon.system;
  form['prompts.coupon.user'] = s.prompts.coupon.user;
  return form;
}

// A number field sends a number; the rest send their text.
const fieldValue = (name: string, text: string) => (PLAIN.find((f) => f.name === name)?.type === 'number' ? Number(text) : text);

export default function SettingsScreen(_props: ScreenProps) {
  const state = useSettingsForm<AiSettingsView>({ path: '/ai/settings', formOf, secretName: 'api_key', value: fieldValue });
  const { settings, form, setField } = state;
  if (!settings)
    return (
      <>
        <h1>Settings</h1>
        {state.error ? (
          <Notice status="error" isDismissible={false}>
            {state.error}
          </Notice>
        ) : (
          <Spinner />
        )}
      </>
    );
  const origin = (name: string) => (settings.stored.includes(name) ? 'stored here' : 'from the configuration');
  const { today } = settings;
  return (
    <>
      <h1>Settings</h1>
      <SettingsNotices state={state} savedText="Settings saved." />
      <div className="ct-editor">
        <form onSubmit={state.save} aria-label="AI provider">
          <h2>AI provider</h2>
          <p className={settings.configured ? 'ct-aside' : undefined}>
            {settings.configured
              ? 'The provider is configured. Empty a field to use the configuration’s value again.'
              : `Not configured yet: set ${settings.missing.join(', ')}.`}
          </p>
          {PLAIN.map((f) => (
            <TextControl
              key={f.name}
              __next40pxDefaultSize
              __nextHasNoMarginBottom
              label={f.label}
              type={f.type}
              value={form[f.name] ?? ''}
              help={origin(f.name)}
              onChange={(v) => setField(f.name, v)}
            />
          ))}
          <SecretField
            state={state}
            isSet={settings.api_key_set}
            name="API key"
            noun="key"
            label="New API key"
            help="Sent once and stored sealed; a key belongs to the base URL's origin, so a new origin needs the key again."
          />
          <h2>Prompts</h2>
          {PROMPTS.map((p) => (
            <TextareaControl
              key={p.name}
              __nextHasNoMarginBottom
              label={p.label}
              rows={p.name.endsWith('system') ? 3 : 6}
              value={form[p.name] ?? ''}
              help={`${origin(p.name)}. Tags: ${settings.tags[p.task].map((t) => `%${t}%`).join(' ')}`}
              onChange={(v) => setField(p.name, v)}
            />
          ))}
          <SettingsButtons state={state} undoText="Undo changes" saveText="Save settings" />
        </form>
        <Card>
          <CardHeader>
            <h2>AI spend today</h2>
          </CardHeader>
          <CardBody>
            <dl className="ct-dl">
              <dt>Day (UTC)</dt>
              <dd>{today.day}</dd>
              <dt>Tokens spent</dt>
              <dd className="ct-num">{today.spent.toLocaleString()}</dd>
              <dt>Reserved now</dt>
              <dd className="ct-num">{today.reserved.toLocaleString()}</dd>
              <dt>Left today</dt>
              <dd className="ct-num">{today.remaining === null ? 'no daily budget' : today.remaining.toLocaleString()}</dd>
              <dt>Resets</dt>
              <dd>{new Date(today.resets_at).toLocaleString()}</dd>
            </dl>
          </CardBody>
        </Card>
      </div>
      <div className="ct-editor">
        <PayPalSettingsPanel />
      </div>
    </>
  );
}
