// Networks: every network with its state (GET /networks), and one network's page at
// /admin/networks/{id} (settings, the custom network editor, postbacks). A custom network that
// does not exist yet is made from its page: "Add a custom network" asks for its id.
import { Button, Notice, TextControl } from '@wordpress/components';
import type { Action, Field } from '@wordpress/dataviews';
import { useState } from 'react';
import { ActionModal } from '../lib/action-modal';
import { Link } from '../lib/link';
import { ListView, type ListSpec, useListData } from '../lib/list';
import { navigate } from '../lib/router';
import type { ScreenProps } from '../screens';
import { NetworkScreen } from './network';
import './networks.css';

/** A network as GET /networks answers it. */
export interface Network {
  id: string;
  kind: 'builtin' | 'custom';
  name: string;
  currency: string;
  enabled: boolean;
  configured: boolean;
  settings: Record<string, string | boolean | null>;
  config_keys: { name: string; description?: string; required: boolean; secret: boolean; default?: string; binds_secrets?: boolean }[];
  cashback_rule: { type: string; value: string; currency: string | null; source: string } | null;
  definition: Record<string, unknown> | null;
  postbacks: {
    enabled: boolean;
    mode: 'token' | 'hmac';
    secret_set: boolean;
    secret_set_at: string | null;
    previous_secret_until: string | null;
    ip_allowlist: string[];
    url: string | null;
    template: string | null;
  };
  last_sync_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
  counts: { advertisers: number; orders: number };
}

const yesNo = (v: boolean) => (v ? 'yes' : 'no');

const fields: Field<Network>[] = [
  {
    id: 'id',
    label: 'Network',
    enableHiding: false,
    enableSorting: false,
    render: ({ item }) => (
      <Link to={`/networks/${encodeURIComponent(item.id)}`}>
        {item.name} <span className="ct-aside">({item.id})</span>
      </Link>
    ),
  },
  {
    id: 'kind',
    label: 'Kind',
    enableSorting: false,
    elements: [
      { value: 'builtin', label: 'Built-in' },
      { value: 'custom', label: 'Custom' },
    ],
    filterBy: { operators: ['is'] },
  },
  { id: 'enabled', label: 'Enabled', enableSorting: false, getValue: ({ item }) => yesNo(item.enabled) },
  { id: 'configured', label: 'Configured', enableSorting: false, getValue: ({ item }) => yesNo(item.configured) },
  {
    id: 'postbacks',
    label: 'Postbacks',
    enableSorting: false,
    getValue: ({ item }) => (item.postbacks.enabled ? `on (${item.postbacks.mode})` : 'off'),
  },
  { id: 'advertisers', label: 'Advertisers', enableSorting: false, getValue: ({ item }) => item.counts.advertisers },
  { id: 'orders', label: 'Orders', enableSorting: false, getValue: ({ item }) => item.counts.orders },
  { id: 'last_sync_at', label: 'Last sync', type: 'datetime', enableSorting: false },
  {
    id: 'last_error',
    label: 'Last error',
    enableSorting: false,
    render: ({ item }) => (item.last_error ? <span className="ct-negative">{item.last_error}</span> : <>—</>),
  },
];

const spec: ListSpec<Network> = {
  screen: '/networks',
  path: '/networks',
  fields,
  columns: ['id', 'kind', 'enabled', 'configured', 'postbacks', 'advertisers', 'orders', 'last_sync_at', 'last_error'],
  sort: { field: 'id', direction: 'asc' },
  sortable: false,
  filters: [{ field: 'kind', kind: 'is' }],
  getItemId: (n) => n.id,
};

export default function NetworksScreen({ rest, query }: ScreenProps) {
  if (rest[0]) return <NetworkScreen id={rest[0]} query={query} />;
  return <NetworksList query={query} />;
}

const switchActions = (open: (network: Network) => void): Action<Network>[] => [
  { id: 'enable', label: 'Enable', isEligible: (n) => !n.enabled, callback: ([n]) => open(n!) },
  { id: 'disable', label: 'Disable', isEligible: (n) => n.enabled, callback: ([n]) => open(n!) },
];

function NetworksList({ query }: { query: URLSearchParams }) {
  const list = useListData(spec, query);
  const [id, setId] = useState('');
  const [switching, setSwitching] = useState<Network | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const valid = /^[a-z0-9_-]{1,64}$/.test(id);
  return (
    <>
      <h1>Networks</h1>
      {done ? (
        <Notice status="success" onRemove={() => setDone(null)}>
          {done}
        </Notice>
      ) : null}
      <ListView spec={{ ...spec, actions: switchActions(setSwitching) }} query={query} list={list} />
      {switching ? (
        <SwitchModal
          network={switching}
          onDone={(message) => {
            setSwitching(null);
            setDone(message);
            list.reload();
          }}
          onClose={() => setSwitching(null)}
        />
      ) : null}
      <form
        className="ct-inline-form"
        onSubmit={(event) => {
          event.preventDefault();
          if (valid) navigate(`/networks/${id}`);
        }}
      >
        <TextControl
          __next40pxDefaultSize
          __nextHasNoMarginBottom
          label="New custom network id"
          help="1–64 lower-case letters, digits, - and _."
          value={id}
          onChange={setId}
        />
        <Button __next40pxDefaultSize variant="secondary" type="submit" disabled={!valid} accessibleWhenDisabled>
          Add a custom network
        </Button>
      </form>
    </>
  );
}

/** Enable or disable a network (POST /networks/{id}/enabled), saying first what that starts or stops. */
function SwitchModal({ network, onDone, onClose }: { network: Network; onDone: (message: string) => void; onClose: () => void }) {
  const on = !network.enabled;
  const name = `${network.name} (${network.id})`;
  return (
    <ActionModal<{ network: Network; changed: boolean }>
      title={`${on ? 'Enable' : 'Disable'} ${name}?`}
      submitLabel={on ? 'Enable the network' : 'Disable the network'}
      destructive={!on}
      request={() => ({ path: `/networks/${encodeURIComponent(network.id)}/enabled`, data: { enabled: on } })}
      onDone={(r) => onDone(r.changed ? `${name} is ${on ? 'enabled' : 'disabled'}.` : `${name} already was ${on ? 'enabled' : 'disabled'}; nothing changed.`)}
      onClose={onClose}
    >
      {on ? (
        <p>
          Scheduled syncs, polls and coupon refreshes take it up again{network.configured ? '' : ' once every required setting is set'}, and its advertisers'
          tracking links work again.
        </p>
      ) : (
        <>
          <p>Disabling stops:</p>
          <ul>
            <li>its scheduled syncs, polls and coupon refreshes, and its part in syncs started for every network;</li>
            <li>its advertisers' tracking links (members get a refusal instead of a link).</li>
          </ul>
          <p>
            It does not stop a sync or poll already running (cancel that on the Jobs screen), nor its postbacks:{' '}
            {network.postbacks.enabled
              ? 'they are on and keep arriving, so late approvals still reach members; switch them off on the network’s page.'
              : 'they are off already.'}
          </p>
        </>
      )}
    </ActionModal>
  );
}
