// The PayPal Payouts account on the Settings screen (GET/POST /payouts/paypal/settings). The
// client secret is write-only: the panel says whether one is stored and lets it be replaced,
// never shows it.
import { Notice, SelectControl, Spinner, TextControl } from '@wordpress/components';
import { SecretField, SettingsButtons, SettingsNotices, useSettingsForm } from '../lib/settings-form';

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

const formOf = (s: PayPalSettingsView): Record<string, string> => ({
  client_id: s.client_id ?? '',
  environment: s.environment,
  base_url: s.base_url_override ?? '',
});

export function PayPalSettingsPanel() {
  const state = useSettingsForm<PayPalSettingsView>({ path: '/payouts/paypal/settings', formOf, secretName: 'client_secret' });
  const { settings, form, setField } = state;
  if (!settings)
    return state.error ? (
      <Notice status="error" isDismissible={false}>
        {state.error}
      </Notice>
    ) : (
      <Spinner />
    );
  return (
    <form onSubmit={state.save} aria-label="PayPal Payouts">
      <h2>PayPal Payouts</h2>
      <SettingsNotices state={state} savedText="PayPal settings saved." />
      <p className={settings.configured ? 'ct-aside' : undefined}>
        {settings.configured ? `Batches are sent to ${settings.base_url}.` : `Not configured yet: set ${settings.missing.join(', ')}.`}
      </p>
      <TextControl
        __next40pxDefaultSize
        __nextHasNoMarginBottom
        label="PayPal client ID"
        value={form.client_id ?? ''}
        onChange={(v) => setField('client_id', v)}
      />
      <SelectControl
        __next40pxDefaultSize
        __nextHasNoMarginBottom
        label="PayPal environment"
        value={form.environment as Environment}
        options={[
          { label: 'Sandbox (api-m.sandbox.paypal.com)', value: 'sandbox' as Environment },
          { label: 'Live (api-m.paypal.com)', value: 'live' as Environment },
        ]}
        onChange={(v: Environment) => setField('environment', v)}
      />
      <TextControl
        __next40pxDefaultSize
        __nextHasNoMarginBottom
        label="PayPal API base URL override"
        type="url"
        value={form.base_url ?? ''}
        help="Empty: the environment's address."
        onChange={(v) => setField('base_url', v)}
      />
      <SecretField
        state={state}
        isSet={settings.client_secret_set}
        name="Client secret"
        noun="client secret"
        label="New PayPal client secret"
        help="Sent once and stored sealed; it belongs to the API address, so a new environment or base URL needs it again."
      />
      <SettingsButtons state={state} undoText="Undo PayPal changes" saveText="Save PayPal settings" />
    </form>
  );
}
