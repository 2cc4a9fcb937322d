// Networks: every network with its state (GET /networks), and one network's page at
// /admin/networks/{id} (settings, the custom network editor, postbacks). A custom network that
// does not exist yet is made from its page: "Add a custom network" asks for its id.
import { Button, TextControl } from '@wordpress/components';
import type { Field } from '@wordpress/dataviews';
import { useState } from 'react';
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

function NetworksList({ query }: { query: URLSearchParams }) {
  const list = useListData(spec, query);
  const [id, setId] = useState('');
  const valid = /^[a-z0-9_-]{1,64}$/.test(id);
  return (
    <>
      <h1>Networks</h1>
      <ListView spec={spec} query={query} list={list} />
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
