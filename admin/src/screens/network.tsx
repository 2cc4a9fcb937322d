// One network: its state, its settings (secret ones write-only: "set" and replaceable, never
// shown), a custom network's definition as JSON with the API's validation errors at the field they
// name, its postbacks (network-postbacks.tsx), its health (network-health.tsx) and its receivables
// (network-receivables.tsx). An id that is no network yet opens the editor to define it.
import { Button, Card, CardBody, CardHeader, Notice, Spinner, TextareaControl, TextControl } from '@wordpress/components';
import { useCallback, useEffect, useState } from 'react';
import { api, errorMessage, isApiError } from '../lib/api';
import { Link } from '../lib/link';
import { HealthCard } from './network-health';
import { NetworkPayments } from './network-payments';
import { PostbacksCard, RecentPostbacks, TestPostbackCard } from './network-postbacks';
import { ReceivablesPanel } from './network-receivables';
import type { Network } from './networks';
import { ruleText } from './shop';

const NEW_DEFINITION = {
  name: '',
  currency: 'EUR',
  statuses: { pending: 'pending', approved: 'approved', declined: 'declined' },
  tracking_link: null,
  postback: { params: { transaction_id: 'txn', commission: 'commission', status: 'status', sale_amount: 'amount', sub_id: 'sub_id' } },
};

export function NetworkScreen({ id, query }: { id: string; query: URLSearchParams }) {
  const [network, setNetwork] = useState<Network | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  // A test postback adds a record: the list (and its counts) are read again.
  const [sent, setSent] = useState(0);
  const load = useCallback(() => {
    api<Network>(`/networks/${encodeURIComponent(id)}`).then(setNetwork, (err: unknown) => {
      if (isApiError(err) && err.code === 'svc_network_not_found') setNetwork(null);
      else setError(errorMessage(err));
    });
  }, [id]);
  useEffect(load, [load]);

  if (error)
    return (
      <>
        <h1>Network {id}</h1>
        <Notice status="error" isDismissible={false}>
          {error}
        </Notice>
      </>
    );
  if (network === undefined) return <Spinner />;
  if (network === null)
    return (
      <>
        <p className="ct-breadcrumb">
          <Link to="/networks">Networks</Link>
        </p>
        <h1>New custom network: {id}</h1>
        <DefinitionEditor id={id} initial={NEW_DEFINITION} isNew onSaved={(n) => setNetwork(n)} />
      </>
    );
  return (
    <>
      <p className="ct-breadcrumb">
        <Link to="/networks">Networks</Link>
      </p>
      <h1>
        {network.name} <span className="ct-aside">({network.id})</span>
      </h1>
      <div className="ct-cards">
        <StateCard network={network} />
        <HealthCard networkId={network.id} />
        <SettingsCard network={network} onSaved={setNetwork} />
        <PostbacksCard network={network} onChanged={setNetwork} />
        <TestPostbackCard network={network} onSent={() => setSent((n) => n + 1)} />
        {network.kind === 'custom' ? (
          <div className="ct-wide">
            <DefinitionEditor id={network.id} initial={network.definition ?? {}} onSaved={setNetwork} />
          </div>
        ) : null}
        <ReceivablesPanel network={network.id} />
        <div className="ct-wide">
          <RecentPostbacks network={network} query={query} refresh={sent} />
        </div>
        <NetworkPayments network={network} />
      </div>
    </>
  );
}

function StateCard({ network }: { network: Network }) {
  const rule = network.cashback_rule;
  return (
    <Card>
      <CardHeader>
        <h2>State</h2>
      </CardHeader>
      <CardBody>
        <dl className="ct-facts">
          <dt>Kind</dt>
          <dd>{network.kind === 'builtin' ? 'Built-in' : 'Custom'}</dd>
          <dt>Enabled</dt>
          <dd>{network.enabled ? 'Yes' : 'No'}</dd>
          <dt>Configured</dt>
          <dd>{network.configured ? 'Yes' : 'No: a required setting is missing'}</dd>
          <dt>Currency</dt>
          <dd>{network.currency}</dd>
          <dt>Cashback</dt>
          <dd>{rule ? `${ruleText(rule)} (${rule.source === 'network' ? "the network's rule" : "the site's default"})` : '—'}</dd>
          <dt>Advertisers</dt>
          <dd>
            <Link to="/shops" query={{ network: network.id }}>
              {network.counts.advertisers}
            </Link>
          </dd>
          <dt>Orders</dt>
          <dd>
            <Link to="/orders" query={{ network: network.id }}>
              {network.counts.orders}
            </Link>
          </dd>
          <dt>Last sync</dt>
          <dd>{network.last_sync_at ?? 'never'}</dd>
          {network.last_error ? (
            <>
              <dt>Last error</dt>
              <dd className="ct-negative">
                {network.last_error} <span className="ct-aside">({network.last_error_at})</span>
              </dd>
            </>
          ) : null}
        </dl>
      </CardBody>
    </Card>
  );
}

/** The network's settings: plain ones edited in place, secret ones only replaced or removed. */
function SettingsCard({ network, onSaved }: { network: Network; onSaved: (n: Network) => void }) {
  const [values, setValues] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<{ status: 'success' | 'error'; text: string } | null>(null);
  const keys = network.config_keys;
  const save = (settings: Record<string, string | null>) => {
    setBusy(true);
    setNotice(null);
    api<Network>(`/networks/${encodeURIComponent(network.id)}/settings`, { method: 'POST', data: { settings } }).then(
      (n) => {
        setBusy(false);
        setValues({});
        setNotice({ status: 'success', text: 'Settings saved.' });
        onSaved(n);
      },
      (err: unknown) => {
        setBusy(false);
        setNotice({ status: 'error', text: errorMessage(err) });
      },
    );
  };
  const changed = Object.fromEntries(Object.entries(values).filter(([k, v]) => v !== (network.settings[k] ?? '')));
  return (
    <Card>
      <CardHeader>
        <h2>Settings</h2>
      </CardHeader>
      <CardBody>
        {keys.length === 0 ? <p>This network takes no settings.</p> : null}
        <form
          className="ct-form"
          onSubmit={(event) => {
            event.preventDefault();
            if (Object.keys(changed).length) save(changed);
          }}
        >
          {notice ? (
            <Notice status={notice.status} isDismissible={false}>
              {notice.text}
            </Notice>
          ) : null}
          {keys.map((key) =>
            key.secret ? (
              <div key={key.name} className="ct-secret">
                <TextControl
                  __next40pxDefaultSize
                  __nextHasNoMarginBottom
                  type="password"
                  autoComplete="new-password"
                  label={`${key.name}${key.required ? ' (required)' : ''}: ${network.settings[`${key.name}_set`] ? 'set' : 'not set'}`}
                  help={`${key.description ? `${key.description}. ` : ''}Secret: never shown. Type a new value to replace it.`}
                  placeholder={network.settings[`${key.name}_set`] ? '•••••••• (set)' : ''}
                  value={values[key.name] ?? ''}
                  onChange={(v) => setValues((s) => ({ ...s, [key.name]: v }))}
                />
                {network.settings[`${key.name}_set`] ? (
                  <Button variant="link" isDestructive disabled={busy} onClick={() => save({ [key.name]: null })}>
                    Remove {key.name}
                  </Button>
                ) : null}
              </div>
            ) : (
              <TextControl
                key={key.name}
                __next40pxDefaultSize
                __nextHasNoMarginBottom
                label={`${key.name}${key.required ? ' (required)' : ''}`}
                help={[key.description, key.default ? `Default: ${key.default}` : ''].filter(Boolean).join('. ')}
                value={values[key.name] ?? String(network.settings[key.name] ?? '')}
                onChange={(v) => setValues((s) => ({ ...s, [key.name]: v }))}
              />
            ),
          )}
          {keys.length ? (
            <div>
              <Button
                __next40pxDefaultSize
                variant="primary"
                type="submit"
                isBusy={busy}
                disabled={busy || !Object.keys(changed).length}
                accessibleWhenDisabled
              >
                Save settings
              </Button>
            </div>
          ) : null}
        </form>
      </CardBody>
    </Card>
  );
}

/** A custom network's definition as JSON; the API's validation errors (data.params) listed by field. */
function DefinitionEditor({ id, initial, isNew, onSaved }: { id: string; initial: Record<string, unknown>; isNew?: boolean; onSaved: (n: Network) => void }) {
  const [text, setText] = useState(() => JSON.stringify(initial, null, 2));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [params, setParams] = useState<Record<string, string>>({});
  const [saved, setSaved] = useState(false);
  const save = (event: React.FormEvent) => {
    event.preventDefault();
    setSaved(false);
    let definition: unknown;
    try {
      definition = JSON.parse(text);
    } catch (err) {
      setError(`The definition is not valid JSON: ${(err as Error).message}`);
      setParams({});
      return;
    }
    setBusy(true);
    setError(null);
    setParams({});
    api<Network>(`/networks/${encodeURIComponent(id)}`, { method: 'POST', data: definition as Record<string, unknown> }).then(
      (n) => {
        setBusy(false);
        setSaved(true);
        onSaved(n);
      },
      (err: unknown) => {
        setBusy(false);
        setError(errorMessage(err));
        const p = isApiError(err) ? (err.data?.params as Record<string, string> | undefined) : undefined;
        setParams(p && typeof p === 'object' ? p : {});
      },
    );
  };
  const fieldErrors = Object.entries(params);
  return (
    <Card>
      <CardHeader>
        <h2>Definition</h2>
      </CardHeader>
      <CardBody>
        <form className="ct-form" onSubmit={save}>
          <p className="ct-aside">
            The network as data: name, currency, statuses (the network's words → pending, approved or declined), postback parameter mapping, tracking link and
            feeds. Setting values are set above, never here.
          </p>
          {saved ? (
            <Notice status="success" isDismissible={false}>
              Definition saved.
            </Notice>
          ) : null}
          {error ? (
            <Notice status="error" isDismissible={false}>
              {error}
            </Notice>
          ) : null}
          <TextareaControl
            __nextHasNoMarginBottom
            label="Definition (JSON)"
            className="ct-code"
            rows={18}
            value={text}
            onChange={setText}
            aria-invalid={fieldErrors.length > 0 || undefined}
            aria-describedby={fieldErrors.length ? 'ct-definition-errors' : undefined}
          />
          {fieldErrors.length ? (
            <ul id="ct-definition-errors" className="ct-field-errors" aria-label="Errors in the definition">
              {fieldErrors.map(([field, message]) => (
                <li key={field}>
                  <code>{field}</code>: {message}
                </li>
              ))}
            </ul>
          ) : null}
          <div>
            <Button __next40pxDefaultSize variant="primary" type="submit" isBusy={busy} disabled={busy} accessibleWhenDisabled>
              {isNew ? 'Create network' : 'Save definition'}
            </Button>
          </div>
        </form>
      </CardBody>
    </Card>
  );
}
