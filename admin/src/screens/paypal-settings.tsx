// The PayPal Payouts account on the Settings screen (GET/POST /payouts/paypal/settings). The
// client secret is write-only: the panel says whether one is stored and lets it be replaced,
// never shows it.
import { Button, Notice, SelectControl, Spinner, TextControl } from '@wordpress/components';
import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { api, errorMessage } from '../lib/api';

interface PayPalSettingsView {
  configured: boolean;
  missing: string[];
  client_id: string | null;
  client_secret_set: boolean;
  environment: 'sandbox' | 'live';
  base_url: string;
  base_url_override: string | null;
  stored: string[];
}

type Environment = PayPalSettingsView['environment'];
type Form = { client_id: string; environment: Environment; base_url: string };

const formOf = (s: PayPalSettingsView): Form => ({ client_id: s.client_id ?? '', environment: s.environment, base_url: s.base_url_override ?? '' });

export function PayPalSettingsPanel() {
  const [settings, setSettings] = useState<PayPalSettingsView | null>(null);
  const [form, setForm] = useState<Form>({ client_id: '', environment: 'sandbox', base_url: '' });
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const show = useCallback((s: PayPalSettingsView) => {
    setSettings(s);
    setForm(formOf(s));
    setSecret(null);
  }, []);
  useEffect(() => {
    api<PayPalSettingsView>('/payouts/paypal/settings').then(show, (err: unknown) => setError(errorMessage(err)));
  }, [show]);
  if (!settings)
    return error ? (
      <Notice status="error" isDismissible={false}>
        {error}
      </Notice>
    ) : (
      <Spinner />
    );
  const initial = formOf(settings);
  const changed = (Object.keys(form) as (keyof Form)[]).filter((k) => form[k] !== initial[k]);
  const dirty = changed.length > 0 || (secret !== null && secret !== '');
  const save = (event: FormEvent) => {
    event.preventDefault();
    if (!dirty || busy) return;
    const data: Record<string, string | null> = {};
    // An emptied field is removed (the base URL goes back to the environment's).
    for (const k of changed) data[k] = form[k] === '' ? null : form[k];
    if (secret) data.client_secret = secret;
    setBusy(true);
    setError(null);
    setSaved(false);
    api<PayPalSettingsView>('/payouts/paypal/settings', { method: 'POST', data }).then(
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
  return (
    <form onSubmit={save} aria-label="PayPal Payouts">
      <h2>PayPal Payouts</h2>
      {error ? (
        <Notice status="error" isDismissible={false}>
          {error}
        </Notice>
      ) : null}
      <div role="status">
        {saved ? (
          <Notice status="success" onRemove={() => setSaved(false)}>
            PayPal settings saved.
          </Notice>
        ) : null}
      </div>
      <p className={settings.configured ? 'ct-aside' : undefined}>
        {settings.configured ? `Batches are sent to ${settings.base_url}.` : `Not configured yet: set ${settings.missing.join(', ')}.`}
      </p>
      <TextControl
        __next40pxDefaultSize
        __nextHasNoMarginBottom
        label="PayPal client ID"
        value={form.client_id}
        onChange={(v) => setForm({ ...form, client_id: v })}
      />
      <SelectControl
        __next40pxDefaultSize
        __nextHasNoMarginBottom
        label="PayPal environment"
        value={form.environment}
        options={[
          { label: 'Sandbox (api-m.sandbox.paypal.com)', value: 'sandbox' as Environment },
          { label: 'Live (api-m.paypal.com)', value: 'live' as Environment },
        ]}
        onChange={(v: Environment) => setForm({ ...form, environment: v })}
      />
      <TextControl
        __next40pxDefaultSize
        __nextHasNoMarginBottom
        label="PayPal API base URL override"
        type="url"
        value={form.base_url}
        help="Empty: the environment's address."
        onChange={(v) => setForm({ ...form, base_url: v })}
      />
      {secret === null ? (
        <div className="ct-toolbar">
          <span>
            Client secret: <strong>{settings.client_secret_set ? 'set' : 'not set'}</strong>
            {settings.client_secret_set ? <span className="ct-aside"> (never shown)</span> : null}
          </span>
          <Button variant="secondary" onClick={() => setSecret('')}>
            {settings.client_secret_set ? 'Replace the client secret' : 'Set a client secret'}
          </Button>
        </div>
      ) : (
        <TextControl
          __next40pxDefaultSize
          __nextHasNoMarginBottom
          label="New PayPal client secret"
          type="password"
          autoComplete="new-password"
          value={secret}
          help="Sent once and stored sealed; it belongs to the API address, so a new environment or base URL needs it again."
          onChange={setSecret}
        />
      )}
      <div className="ct-modal-buttons">
        <Button __next40pxDefaultSize variant="tertiary" onClick={() => show(settings)} disabled={!dirty || busy} accessibleWhenDisabled>
          Undo PayPal changes
        </Button>
        <Button __next40pxDefaultSize variant="primary" type="submit" isBusy={busy} disabled={!dirty || busy} accessibleWhenDisabled>
          Save PayPal settings
        </Button>
      </div>
    </form>
  );
}
