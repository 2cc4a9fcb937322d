// Webhooks: the subscriptions (create, edit, pause, rotate the secret, delete), and at
// /admin/webhooks/{id} one subscription's deliveries with redelivery and a test ping.
import { Button, CheckboxControl, Notice, TextControl, ToggleControl } from '@wordpress/components';
import type { Action, Field } from '@wordpress/dataviews';
import { useMemo, useState } from 'react';
import { ActionModal } from '../lib/action-modal';
import { Link } from '../lib/link';
import { ListView, type ListSpec, useListData } from '../lib/list';
import type { ScreenProps } from '../screens';
import { WebhookDetail } from './webhook-detail';
import './content.css';

export interface Webhook {
  id: number;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: string | null;
  failure_count: number;
  actor: string;
  created_at: string;
  updated_at: string;
  secret?: string | null;
}

/** The events of docs/api.md "Webhooks" (`*`: every event, later ones included). */
export const WEBHOOK_EVENTS = [
  'order.recorded',
  'order.status_changed',
  'order.assigned',
  'order.held',
  'order.reviewed',
  'order.network_paid',
  'ledger.entry_posted',
  'payout.created',
  'payout.status_changed',
  'postback.rejected',
  'job.finished',
  'page.created',
  'page.published',
  'page.deleted',
  'logo.fetched',
];

const fields: Field<Webhook>[] = [
  { id: 'id', label: 'Subscription', type: 'integer', render: ({ item }) => <>#{item.id}</> },
  { id: 'url', label: 'URL', enableHiding: false, render: ({ item }) => <Link to={`/webhooks/${item.id}`}>{item.url}</Link> },
  { id: 'events', label: 'Events', enableSorting: false, render: ({ item }) => <>{item.events.includes('*') ? 'every event' : item.events.join(', ')}</> },
  { id: 'description', label: 'Description', enableSorting: false },
  {
    id: 'enabled',
    label: 'Enabled',
    enableSorting: false,
    elements: [
      { value: 'true', label: 'Enabled' },
      { value: 'false', label: 'Disabled' },
    ],
    filterBy: { operators: ['is'] },
    getValue: ({ item }) => String(item.enabled),
    render: ({ item }) => <>{item.enabled ? 'enabled' : `disabled${item.disabled_reason ? `: ${item.disabled_reason}` : ''}`}</>,
  },
  { id: 'failure_count', label: 'Failures in a row', type: 'integer' },
  { id: 'updated_at', label: 'Updated', type: 'datetime' },
];

/** The subscription form (create and edit): URL, events, description, enabled, and on edit a new secret. */
export function WebhookForm({ webhook, onDone, onClose }: { webhook: Webhook | null; onDone: (w: Webhook) => void; onClose: () => void }) {
  const [url, setUrl] = useState(webhook?.url.includes('[redacted]') ? '' : (webhook?.url ?? ''));
  const [events, setEvents] = useState<string[]>(webhook?.events ?? []);
  const [description, setDescription] = useState(webhook?.description ?? '');
  const [enabled, setEnabled] = useState(webhook?.enabled ?? true);
  const [rotate, setRotate] = useState(false);
  const all = events.includes('*');
  const toggle = (e: string, on: boolean) => setEvents(on ? [...events.filter((x) => x !== e), e] : events.filter((x) => x !== e));
  const data = () => {
    const body: Record<string, unknown> = { events, description, enabled };
    if (!webhook || url) body.url = url;
    if (webhook && rotate) body.rotate_secret = true;
    return body;
  };
  return (
    <ActionModal<Webhook>
      title={webhook ? `Edit subscription #${webhook.id}` : 'Add a subscription'}
      submitLabel={webhook ? 'Save' : 'Add subscription'}
      ready={(webhook !== null || url.trim() !== '') && events.length > 0}
      request={() => ({ path: webhook ? `/webhooks/${webhook.id}` : '/webhooks', data: data() })}
      onDone={onDone}
      onClose={onClose}
    >
      <TextControl
        __next40pxDefaultSize
        __nextHasNoMarginBottom
        label="Receiver URL"
        type="url"
        value={url}
        help={webhook?.url.includes('[redacted]') ? `Now ${webhook.url}: its credentials are not shown. Leave empty to keep it, or send it whole.` : undefined}
        onChange={setUrl}
      />
      <fieldset className="ct-checks">
        <legend>Events</legend>
        <CheckboxControl __nextHasNoMarginBottom label="Every event (later ones too)" checked={all} onChange={(on) => setEvents(on ? ['*'] : [])} />
        {WEBHOOK_EVENTS.map((e) => (
          <CheckboxControl __nextHasNoMarginBottom key={e} label={e} checked={all || events.includes(e)} disabled={all} onChange={(on) => toggle(e, on)} />
        ))}
      </fieldset>
      <TextControl __next40pxDefaultSize __nextHasNoMarginBottom label="Description" value={description} onChange={setDescription} />
      <ToggleControl __nextHasNoMarginBottom label="Enabled" checked={enabled} onChange={setEnabled} />
      {webhook ? (
        <CheckboxControl __nextHasNoMarginBottom label="Make a new signing secret (the old one stops signing at once)" checked={rotate} onChange={setRotate} />
      ) : null}
    </ActionModal>
  );
}

/** The secret, shown once after a create or a rotation. */
export function SecretNotice({ webhook, onDismiss }: { webhook: Webhook; onDismiss: () => void }) {
  return (
    <div role="status">
      <Notice status={webhook.secret ? 'warning' : 'info'} onRemove={onDismiss}>
        {webhook.secret ? (
          <>
            <p>The signing secret of subscription #{webhook.id}, shown this once: give it to the receiver now.</p>
            <p className="ct-secret">{webhook.secret}</p>
          </>
        ) : (
          <p>Subscription #{webhook.id} is saved.</p>
        )}
      </Notice>
    </div>
  );
}

const spec: ListSpec<Webhook> = {
  screen: '/webhooks',
  path: '/webhooks',
  fields,
  columns: ['url', 'events', 'description', 'enabled', 'failure_count'],
  sort: { field: 'id', direction: 'desc' },
  filters: [{ field: 'enabled', kind: 'is' }],
};

function WebhookList({ query }: { query: URLSearchParams }) {
  const list = useListData(spec, query);
  const [adding, setAdding] = useState(false);
  const [done, setDone] = useState<Webhook | null>(null);
  const { reload } = list;
  const [editing, setEditing] = useState<Webhook | null>(null);
  const [deleting, setDeleting] = useState<Webhook | null>(null);
  const withActions = useMemo<ListSpec<Webhook>>(() => {
    const actions: Action<Webhook>[] = [
      { id: 'edit', label: 'Edit', isPrimary: true, callback: (items) => setEditing(items[0] ?? null) },
      { id: 'delete', label: 'Delete', callback: (items) => setDeleting(items[0] ?? null) },
    ];
    return { ...spec, actions };
  }, []);
  return (
    <>
      <div className="ct-heading">
        <h1>Webhooks</h1>
        <Button variant="secondary" onClick={() => setAdding(true)}>
          Add a subscription
        </Button>
      </div>
      {done ? <SecretNotice webhook={done} onDismiss={() => setDone(null)} /> : null}
      <ListView spec={withActions} query={query} list={list} />
      {editing ? (
        <WebhookForm
          webhook={editing}
          onDone={(w) => {
            setEditing(null);
            setDone(w);
            reload();
          }}
          onClose={() => setEditing(null)}
        />
      ) : null}
      {deleting ? (
        <ActionModal<unknown>
          title={`Delete subscription #${deleting.id}?`}
          submitLabel="Delete for good"
          destructive
          request={() => ({ path: `/webhooks/${deleting.id}`, method: 'DELETE' })}
          onDone={() => {
            setDeleting(null);
            reload();
          }}
          onClose={() => setDeleting(null)}
        >
          <p>{deleting.url} gets no more events, and its delivery log goes with it.</p>
        </ActionModal>
      ) : null}
      {adding ? (
        <WebhookForm
          webhook={null}
          onDone={(w) => {
            setAdding(false);
            setDone(w);
            reload();
          }}
          onClose={() => setAdding(false)}
        />
      ) : null}
    </>
  );
}

export default function WebhooksScreen({ rest, query }: ScreenProps) {
  const id = rest[0] && /^\d+$/.test(rest[0]) ? Number(rest[0]) : null;
  return id ? <WebhookDetail id={id} query={query} /> : <WebhookList query={query} />;
}
