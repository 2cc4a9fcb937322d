// One webhook subscription: what it sends where, its delivery log (views by status) with each
// delivery's payload, redelivery (POST /webhooks/deliveries/{id}/redeliver) and a test ping.
import { Button, Notice, Spinner } from '@wordpress/components';
import type { Action, Field, RenderModalProps } from '@wordpress/dataviews';
import { useCallback, useEffect, useMemo, useState } from 'react';
import { api, errorMessage } from '../lib/api';
import { BulkActionModal } from '../lib/bulk';
import { Link } from '../lib/link';
import { ListView, type ListSpec, useListData } from '../lib/list';
import { SecretNotice, type Webhook, WebhookForm } from './webhooks';

interface Delivery {
  id: string;
  webhook_id: number;
  event: string;
  status: 'pending' | 'failed' | 'delivered' | 'dead';
  attempts: number;
  next_attempt_at: string | null;
  last_status: number | null;
  last_error: string | null;
  duration_ms: number | null;
  created_at: string;
  updated_at: string;
  delivered_at: string | null;
  payload?: unknown;
}

const STATUSES = [
  { value: 'pending', label: 'Pending' },
  { value: 'failed', label: 'Failed' },
  { value: 'delivered', label: 'Delivered' },
  { value: 'dead', label: 'Dead' },
];

const fields: Field<Delivery>[] = [
  { id: 'id', label: 'Delivery', enableHiding: false, enableSorting: false, render: ({ item }) => <code>{item.id}</code> },
  { id: 'event', label: 'Event' },
  { id: 'status', label: 'Status', elements: STATUSES, filterBy: { operators: ['isAny', 'isNone'] } },
  { id: 'attempts', label: 'Attempts', type: 'integer' },
  {
    id: 'last_error',
    label: 'Last answer',
    enableSorting: false,
    render: ({ item }) => <>{item.last_error ?? (item.last_status ? `HTTP ${item.last_status}` : '—')}</>,
  },
  { id: 'next_attempt_at', label: 'Next attempt', type: 'datetime' },
  { id: 'created_at', label: 'Created', type: 'datetime' },
  { id: 'delivered_at', label: 'Delivered', type: 'datetime' },
];

function DeliveryPayload({ id, onClose }: { id: string; onClose?: () => void }) {
  const [delivery, setDelivery] = useState<Delivery | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api<Delivery>(`/webhooks/deliveries/${encodeURIComponent(id)}`).then(setDelivery, (err: unknown) => setError(errorMessage(err)));
  }, [id]);
  return (
    <>
      {error ? (
        <Notice status="error" isDismissible={false}>
          {error}
        </Notice>
      ) : null}
      {delivery ? <pre className="ct-pre">{JSON.stringify(delivery.payload, null, 2)}</pre> : error ? null : <Spinner />}
      <div className="ct-modal-buttons">
        <Button variant="secondary" onClick={() => onClose?.()}>
          Close
        </Button>
      </div>
    </>
  );
}

function PayloadModal({ items, closeModal }: RenderModalProps<Delivery>) {
  return <DeliveryPayload id={items[0]!.id} onClose={closeModal} />;
}

const payloadAction: Action<Delivery> = {
  id: 'payload',
  label: 'Payload',
  modalHeader: (items) => `Payload of ${items[0]?.id}`,
  RenderModal: PayloadModal,
};

export function WebhookDetail({ id, query }: { id: number; query: URLSearchParams }) {
  const [webhook, setWebhook] = useState<Webhook | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [outcome, setOutcome] = useState<{ status: 'success' | 'error' | 'warning'; text: string } | null>(null);
  const [editing, setEditing] = useState(false);
  const [saved, setSaved] = useState<Webhook | null>(null);
  const [busy, setBusy] = useState(false);
  const [redelivering, setRedelivering] = useState<Delivery[] | null>(null);
  const spec = useMemo<ListSpec<Delivery>>(
    () => ({
      screen: `/webhooks/${id}`,
      path: `/webhooks/${id}/deliveries`,
      fields,
      columns: ['event', 'status', 'attempts', 'last_error', 'next_attempt_at', 'created_at'],
      sort: { field: 'id', direction: 'desc' },
      filters: [{ field: 'status', kind: 'any' }],
      dateField: 'created_at',
      views: { param: 'status', values: STATUSES, countsPath: `/webhooks/${id}/deliveries/counts` },
    }),
    [id],
  );
  const list = useListData(spec, query);
  const { reload } = list;
  const load = useCallback(() => {
    api<Webhook>(`/webhooks/${id}`).then(setWebhook, (err: unknown) => setError(errorMessage(err)));
  }, [id]);
  useEffect(load, [load]);
  const told = useCallback(
    (d: Delivery) =>
      setOutcome(
        d.status === 'delivered'
          ? { status: 'success', text: `Delivery ${d.id} (${d.event}) delivered.` }
          : { status: 'warning', text: `Delivery ${d.id} (${d.event}): ${d.status}${d.last_error ? `, ${d.last_error}` : ''}.` },
      ),
    [],
  );
  const actions = useMemo<Action<Delivery>[]>(
    () => [
      payloadAction,
      {
        id: 'redeliver',
        label: 'Redeliver',
        isPrimary: true,
        supportsBulk: true,
        callback: (items) => {
          if (items.length > 1) {
            setRedelivering(items);
            return;
          }
          const d = items[0]!;
          setOutcome(null);
          api<Delivery>(`/webhooks/deliveries/${encodeURIComponent(d.id)}/redeliver`, { method: 'POST' }).then(
            (next) => {
              told(next);
              reload();
            },
            (err: unknown) => setOutcome({ status: 'error', text: errorMessage(err) }),
          );
        },
      },
    ],
    [reload, told],
  );
  const withActions = useMemo(() => ({ ...spec, actions }), [spec, actions]);
  const ping = () => {
    setBusy(true);
    setOutcome(null);
    api<Delivery>(`/webhooks/${id}/test`, { method: 'POST' }).then(
      (d) => {
        setBusy(false);
        told(d);
        reload();
      },
      (err: unknown) => {
        setBusy(false);
        setOutcome({ status: 'error', text: errorMessage(err) });
      },
    );
  };
  return (
    <>
      <div className="ct-heading">
        <h1>Webhook #{id}</h1>
        <Link to="/webhooks">All subscriptions</Link>
      </div>
      {error ? (
        <Notice status="error" isDismissible={false}>
          {error}
        </Notice>
      ) : null}
      {saved ? <SecretNotice webhook={saved} onDismiss={() => setSaved(null)} /> : null}
      <div role="status">
        {outcome ? (
          <Notice status={outcome.status} onRemove={() => setOutcome(null)}>
            {outcome.text}
          </Notice>
        ) : null}
      </div>
      {webhook ? (
        <div className="ct-panel">
          <dl className="ct-dl">
            <dt>URL</dt>
            <dd>{webhook.url}</dd>
            <dt>Events</dt>
            <dd>{webhook.events.includes('*') ? 'every event' : webhook.events.join(', ')}</dd>
            <dt>Description</dt>
            <dd>{webhook.description || '—'}</dd>
            <dt>State</dt>
            <dd>
              {webhook.enabled ? 'enabled' : `disabled${webhook.disabled_reason ? `: ${webhook.disabled_reason}` : ''}`}, {webhook.failure_count} failed
              attempts in a row
            </dd>
          </dl>
          <div className="ct-toolbar">
            <Button variant="secondary" onClick={() => setEditing(true)}>
              Edit…
            </Button>
            <Button variant="secondary" onClick={ping} isBusy={busy} disabled={busy} accessibleWhenDisabled>
              Send a test ping
            </Button>
          </div>
        </div>
      ) : null}
      <h2 className="ct-section">Deliveries</h2>
      <ListView spec={withActions} query={query} list={list} />
      {redelivering ? (
        <BulkActionModal<Delivery>
          title={`Redeliver ${redelivering.length} deliveries`}
          items={redelivering}
          name={(d) => `Delivery ${d.id} (${d.event})`}
          request={(d) => ({ path: `/webhooks/deliveries/${encodeURIComponent(d.id)}/redeliver` })}
          submitLabel={`Redeliver ${redelivering.length}`}
          doneLabel="sent again (its new status is in the list)"
          onFinished={reload}
          onClose={() => setRedelivering(null)}
        >
          <p>
            Each delivery is attempted again now, with its own id and body (a new timestamp and signature); a failure is retried on the schedule. One the server
            refuses does not stop the others.
          </p>
        </BulkActionModal>
      ) : null}
      {editing && webhook ? (
        <WebhookForm
          webhook={webhook}
          onDone={(w) => {
            setEditing(false);
            setSaved(w);
            setWebhook(w);
          }}
          onClose={() => setEditing(false)}
        />
      ) : null}
    </>
  );
}
