// Settings: the AI provider and its prompts (GET/POST /ai/settings). The API key is write-only:
// the screen says whether one is set and lets it be replaced, never shows it. Today's spend
// against the daily token budget is shown beside; the PayPal Payouts account below
// (GET/POST /payouts/paypal/settings, ./paypal-settings.tsx).
import { Button, Card, CardBody, CardHeader, Notice, Spinner, TextareaControl, TextControl } from '@wordpress/components';
import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { api, errorMessage } from '../lib/api';
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

type Form = Record<string, string>;

function formOf(s: AiSettingsView): Form {
  const form: Form = {};
  for (const f of PLAIN) form[f.name] = String(s[f.name] ?? '');
  form['prompts.shop.system'] = s.prompts.shop.system;
  form['prompts.shop.user'] = s.prompts.shop.user;
  form['prompts.coupon.system'] = s.prompts.coupon.system;
  form['prompts.coupon.user'] = s.prompts.coupon.user;
  return form;
}

export default function SettingsScreen(_props: ScreenProps) {
  const [settings, setSettings] = useState<AiSettingsView | null>(null);
  const [form, setForm] = useState<Form>({});
  const [key, setKey] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const show = useCallback((s: AiSettingsView) => {
    setSettings(s);
    setForm(formOf(s));
    setKey(null);
  }, []);
  useEffect(() => {
    api<AiSettingsView>('/ai/settings').then(show, (err: unknown) => setError(errorMessage(err)));
  }, [show]);
  if (!settings)
    return (
      <>
        <h1>Settings</h1>
        {error ? (
          <Notice status="error" isDismissible={false}>
            {error}
          </Notice>
        ) : (
          <Spinner />
        )}
      </>
    );
  const initial = formOf(settings);
  const changed = Object.keys(form).filter((k) => form[k] !== initial[k]);
  const dirty = changed.length > 0 || (key !== null && key !== '');
  const save = (event: FormEvent) => {
    event.preventDefault();
    if (!dirty || busy) return;
    const data: Record<string, string | number | null> = {};
    for (const k of changed) {
      const type = PLAIN.find((f) => f.name === k)?.type;
      // An emptied field goes back to the configuration's value.
      data[k] = form[k] === '' ? null : type === 'number' ? Number(form[k]) : form[k]!;
    }
    if (key) data.api_key = key;
    setBusy(true);
    setError(null);
    setSaved(false);
    api<AiSettingsView>('/ai/settings', { method: 'POST', data }).then(
      (s) => {
        show(s);
        setSaved(true);
        setBusy(false);
      },
      (err: unknown) => {
        setError(errorMessage(err));
        setBusy(false);
      },
    );
  };
  const origin = (name: string) => (settings.stored.includes(name) ? 'stored here' : 'from the configuration');
  const { today } = settings;
  return (
    <>
      <h1>Settings</h1>
      {error ? (
        <Notice status="error" isDismissible={false}>
          {error}
        </Notice>
      ) : null}
      <div role="status">
        {saved ? (
          <Notice status="success" onRemove={() => setSaved(false)}>
            Settings saved.
          </Notice>
        ) : null}
      </div>
      <div className="ct-editor">
        <form onSubmit={save} aria-label="AI provider">
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
              onChange={(v) => setForm({ ...form, [f.name]: v })}
            />
          ))}
          {key === null ? (
            <div className="ct-toolbar">
              <span>
                API key: <strong>{settings.api_key_set ? 'set' : 'not set'}</strong>
                {settings.api_key_set ? <span className="ct-aside"> (never shown)</span> : null}
              </span>
              <Button variant="secondary" onClick={() => setKey('')}>
                {settings.api_key_set ? 'Replace the key' : 'Set a key'}
              </Button>
            </div>
          ) : (
            <TextControl
              __next40pxDefaultSize
              __nextHasNoMarginBottom
              label="New API key"
              type="password"
              autoComplete="new-password"
              value={key}
              help="Sent once and stored sealed; a key belongs to the base URL's origin, so a new origin needs the key again."
              onChange={setKey}
            />
          )}
          <h2>Prompts</h2>
          {PROMPTS.map((p) => (
            <TextareaControl
              key={p.name}
              __nextHasNoMarginBottom
              label={p.label}
              rows={p.name.endsWith('system') ? 3 : 6}
              value={form[p.name] ?? ''}
              help={`${origin(p.name)}. Tags: ${settings.tags[p.task].map((t) => `%${t}%`).join(' ')}`}
              onChange={(v) => setForm({ ...form, [p.name]: v })}
            />
          ))}
          <div className="ct-modal-buttons">
            <Button __next40pxDefaultSize variant="tertiary" onClick={() => show(settings)} disabled={!dirty || busy} accessibleWhenDisabled>
              Undo changes
            </Button>
            <Button __next40pxDefaultSize variant="primary" type="submit" isBusy={busy} disabled={!dirty || busy} accessibleWhenDisabled>
              Save settings
            </Button>
          </div>
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
