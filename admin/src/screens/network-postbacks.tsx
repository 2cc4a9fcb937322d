// A network's postbacks: the switch (a new secret shown once when switching on makes one), the IP
// allowlist, secret rotation (in a modal: it cannot be undone), the test postback with what was
// sent and answered, and the postbacks received, with views by outcome.
import { Button, Card, CardBody, CardHeader, Notice, SelectControl, TextControl, ToggleControl } from '@wordpress/components';
import type { Field } from '@wordpress/dataviews';
import { useEffect, useMemo, useState } from 'react';
import { ActionModal } from '../lib/action-modal';
import { api, errorMessage } from '../lib/api';
import { ListView, type ListSpec, useListData } from '../lib/list';
import type { Network } from './networks';

interface SwitchAnswer {
  network: Network;
  secret: string | null;
  switches: { global: boolean; network: boolean };
  message: string | null;
}

/** A secret just made: shown here once, with what to give the network. */
function NewSecret({ network, secret, mode }: { network: Network; secret: string; mode: string }) {
  const url = network.postbacks.url ?? `<public URL>/postback/${network.id}`;
  const give = mode === 'token' ? `${url}?token=${secret}${network.postbacks.template ? `&${network.postbacks.template}` : ''}` : null;
  return (
    <Notice status="warning" isDismissible={false} className="ct-secret-once">
      <p>
        <strong>The new postback secret ({mode} mode), shown this once:</strong> copy it now.
      </p>
      <TextControl __next40pxDefaultSize __nextHasNoMarginBottom label="Postback secret, shown once" readOnly value={secret} onChange={() => {}} />
      {give ? (
        <TextControl __next40pxDefaultSize __nextHasNoMarginBottom label="Postback URL to give the network" readOnly value={give} onChange={() => {}} />
      ) : null}
    </Notice>
  );
}

export function PostbacksCard({ network, onChanged }: { network: Network; onChanged: (n: Network) => void }) {
  const pb = network.postbacks;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [secret, setSecret] = useState<{ secret: string; mode: string } | null>(null);
  const [allowlist, setAllowlist] = useState(pb.ip_allowlist.join(', '));
  const [rotating, setRotating] = useState(false);
  const [mode, setMode] = useState<'token' | 'hmac'>(pb.mode);
  const [grace, setGrace] = useState('0');

  const send = (data: { enabled: boolean; ip_allowlist?: string[] }) => {
    setBusy(true);
    setError(null);
    api<SwitchAnswer>(`/networks/${encodeURIComponent(network.id)}/postback`, { method: 'POST', data }).then(
      (answer) => {
        setBusy(false);
        setMessage(answer.message);
        if (answer.secret) setSecret({ secret: answer.secret, mode: answer.network.postbacks.mode });
        onChanged(answer.network);
      },
      (err: unknown) => {
        setBusy(false);
        setError(errorMessage(err));
      },
    );
  };
  const list = allowlist
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
  return (
    <Card>
      <CardHeader>
        <h2>Postbacks</h2>
      </CardHeader>
      <CardBody>
        <div className="ct-form">
          {error ? (
            <Notice status="error" isDismissible={false}>
              {error}
            </Notice>
          ) : null}
          {message ? (
            <Notice status="warning" isDismissible={false}>
              {message}
            </Notice>
          ) : null}
          {secret ? <NewSecret network={network} secret={secret.secret} mode={secret.mode} /> : null}
          <ToggleControl
            __nextHasNoMarginBottom
            label="Accept postbacks from this network"
            checked={pb.enabled}
            disabled={busy}
            onChange={(enabled) => send({ enabled })}
          />
          <dl className="ct-facts">
            <dt>Mode</dt>
            <dd>{pb.mode}</dd>
            <dt>Secret</dt>
            <dd>{pb.secret_set ? `set ${pb.secret_set_at ?? ''}` : 'not set (switching on makes one)'}</dd>
            {pb.previous_secret_until ? (
              <>
                <dt>Previous secret</dt>
                <dd>works until {pb.previous_secret_until}</dd>
              </>
            ) : null}
            <dt>URL</dt>
            <dd className="ct-break">{pb.url ?? 'unknown until the daemon knows its public URL'}</dd>
            <dt>Parameters</dt>
            <dd className="ct-break">{pb.template ?? '—'}</dd>
          </dl>
          <form
            className="ct-inline-form"
            onSubmit={(event) => {
              event.preventDefault();
              send({ enabled: pb.enabled, ip_allowlist: list });
            }}
          >
            <TextControl
              __next40pxDefaultSize
              __nextHasNoMarginBottom
              label="Accept from (IP addresses or CIDR ranges)"
              help="Comma-separated; empty: any address."
              value={allowlist}
              onChange={setAllowlist}
            />
            <Button __next40pxDefaultSize variant="secondary" type="submit" disabled={busy} accessibleWhenDisabled>
              Save addresses
            </Button>
          </form>
          <div>
            <Button __next40pxDefaultSize variant="secondary" isDestructive onClick={() => setRotating(true)}>
              Rotate the secret…
            </Button>
          </div>
        </div>
        {rotating ? (
          <ActionModal<{ network: Network; secret: string; mode: string }>
            title={`New postback secret for ${network.id}`}
            submitLabel="Make a new secret"
            destructive
            request={() => ({
              path: `/networks/${encodeURIComponent(network.id)}/postback/secret`,
              data: { mode, grace_hours: Number(grace) },
            })}
            ready={/^\d+$/.test(grace) && Number(grace) <= 168}
            onClose={() => setRotating(false)}
            onDone={(answer) => {
              setRotating(false);
              setSecret({ secret: answer.secret, mode: answer.mode });
              setMessage(null);
              onChanged(answer.network);
            }}
          >
            <p>The network must be given the new secret. The old one stops working at once, or after the grace period.</p>
            <SelectControl
              __next40pxDefaultSize
              __nextHasNoMarginBottom
              label="Mode"
              value={mode}
              options={[
                { value: 'token', label: 'Token (sent with each postback)' },
                { value: 'hmac', label: 'HMAC (each postback signed)' },
              ]}
              onChange={setMode}
            />
            <TextControl
              __next40pxDefaultSize
              __nextHasNoMarginBottom
              label="Keep the old secret working for (hours, 0–168)"
              type="number"
              min={0}
              max={168}
              value={grace}
              onChange={setGrace}
            />
          </ActionModal>
        ) : null}
      </CardBody>
    </Card>
  );
}

interface TestAnswer {
  request: { method: string; url: string; headers: Record<string, string> };
  response: { status: number; body: unknown };
  record: PostbackRecord | null;
}

/** The test postback: what was sent, and what the endpoint answered and stored. */
export function TestPostbackCard({ network, onSent }: { network: Network; onSent: () => void }) {
  const [status, setStatus] = useState('pending');
  const [amount, setAmount] = useState('100.00');
  const [commission, setCommission] = useState('10.00');
  const [subId, setSubId] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [answer, setAnswer] = useState<TestAnswer | null>(null);
  const send = (event: React.FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setAnswer(null);
    const data: Record<string, string> = { status, amount, commission };
    if (subId) data.sub_id = subId;
    api<TestAnswer>(`/networks/${encodeURIComponent(network.id)}/postback/test`, { method: 'POST', data }).then(
      (a) => {
        setBusy(false);
        setAnswer(a);
        onSent();
      },
      (err: unknown) => {
        setBusy(false);
        setError(errorMessage(err));
      },
    );
  };
  const ok = answer && answer.response.status >= 200 && answer.response.status < 300;
  return (
    <Card>
      <CardHeader>
        <h2>Test postback</h2>
      </CardHeader>
      <CardBody>
        <form className="ct-form" onSubmit={send}>
          <p className="ct-aside">Sent over HTTP to this daemon's postback URL in the network's format; it never records an order.</p>
          <div className="ct-row">
            <SelectControl
              __next40pxDefaultSize
              __nextHasNoMarginBottom
              label="Status"
              value={status}
              options={['pending', 'approved', 'declined'].map((s) => ({ value: s, label: s }))}
              onChange={setStatus}
            />
            <TextControl __next40pxDefaultSize __nextHasNoMarginBottom label="Sale amount" value={amount} onChange={setAmount} />
            <TextControl __next40pxDefaultSize __nextHasNoMarginBottom label="Commission" value={commission} onChange={setCommission} />
            <TextControl __next40pxDefaultSize __nextHasNoMarginBottom label="Sub id" value={subId} onChange={setSubId} />
          </div>
          <div>
            <Button __next40pxDefaultSize variant="secondary" type="submit" isBusy={busy} disabled={busy} accessibleWhenDisabled>
              Send a test postback
            </Button>
          </div>
          {error ? (
            <Notice status="error" isDismissible={false}>
              {error}
            </Notice>
          ) : null}
        </form>
        {answer ? (
          <section className="ct-test-answer" aria-label="Test postback result">
            <h3>Sent</h3>
            <pre className="ct-pre">
              {answer.request.method} {answer.request.url}
              {Object.entries(answer.request.headers).map(([k, v]) => `\n${k}: ${v}`)}
            </pre>
            <h3>
              Answered <span className={ok ? 'ct-ok' : 'ct-negative'}>{answer.response.status}</span>
            </h3>
            <pre className="ct-pre">{JSON.stringify(answer.response.body, null, 2)}</pre>
            {answer.record ? (
              <p>
                Stored as postback #{answer.record.id}: <strong>{answer.record.outcome}</strong>
                {answer.record.code ? ` (${answer.record.code}${answer.record.message ? `: ${answer.record.message}` : ''})` : ''}
              </p>
            ) : (
              <p>Nothing was stored.</p>
            )}
          </section>
        ) : null}
      </CardBody>
    </Card>
  );
}

/** A postback as GET /networks/{id}/postbacks answers it. */
export interface PostbackRecord {
  id: number;
  received_at: string;
  last_seen_at: string;
  repeat_count: number;
  ip: string;
  method: string;
  outcome: 'accepted' | 'duplicate' | 'rejected' | 'error';
  code: string | null;
  message: string | null;
  transaction_id: string | null;
  status: string | null;
  order_id: number | null;
  test: boolean;
}

const OUTCOMES = [
  { value: 'accepted', label: 'Accepted' },
  { value: 'duplicate', label: 'Duplicate' },
  { value: 'rejected', label: 'Rejected' },
  { value: 'error', label: 'Error' },
];

const postbackFields: Field<PostbackRecord>[] = [
  { id: 'id', label: 'Postback', type: 'integer', enableHiding: false, render: ({ item }) => <>#{item.id}</> },
  { id: 'received_at', label: 'Received', type: 'datetime' },
  { id: 'outcome', label: 'Outcome', elements: OUTCOMES, filterBy: { operators: ['isAny', 'isNone'] } },
  {
    id: 'code',
    label: 'Why',
    enableSorting: false,
    render: ({ item }) => (item.code ? <span title={item.message ?? undefined}>{item.message ? `${item.message} (${item.code})` : item.code}</span> : <>—</>),
  },
  { id: 'transaction_id', label: 'Transaction', enableSorting: false },
  { id: 'status', label: 'Status', enableSorting: false },
  { id: 'order_id', label: 'Order', enableSorting: false, render: ({ item }) => (item.order_id ? <>#{item.order_id}</> : <>—</>) },
  {
    id: 'test',
    label: 'Test',
    enableSorting: false,
    elements: [
      { value: 'true', label: 'Test postbacks' },
      { value: 'false', label: 'Real postbacks' },
    ],
    getValue: ({ item }) => String(item.test),
    filterBy: { operators: ['is'] },
  },
  { id: 'ip', label: 'Address', enableSorting: false },
  { id: 'repeat_count', label: 'Times', type: 'integer', enableSorting: false },
  { id: 'last_seen_at', label: 'Last seen', type: 'datetime' },
];

/** `refresh`: a count the page raises when it sent a postback; the list reads again in place (no remount: focus and scroll stay). */
export function RecentPostbacks({ network, query, refresh = 0 }: { network: Network; query: URLSearchParams; refresh?: number }) {
  const spec = useMemo<ListSpec<PostbackRecord>>(
    () => ({
      screen: `/networks/${encodeURIComponent(network.id)}`,
      path: `/networks/${encodeURIComponent(network.id)}/postbacks`,
      fields: postbackFields,
      columns: ['id', 'received_at', 'outcome', 'code', 'transaction_id', 'status', 'order_id', 'test', 'ip', 'repeat_count'],
      sort: { field: 'id', direction: 'desc' },
      filters: [
        { field: 'outcome', kind: 'any' },
        { field: 'test', kind: 'is' },
      ],
      dateField: 'received_at',
      views: { param: 'outcome', values: OUTCOMES, countsPath: `/networks/${encodeURIComponent(network.id)}/postbacks/counts` },
    }),
    [network.id],
  );
  const list = useListData(spec, query);
  const { reload } = list;
  useEffect(() => {
    if (refresh > 0) reload();
  }, [refresh, reload]);
  return (
    <Card>
      <CardHeader>
        <h2>Recent postbacks</h2>
        <Button variant="link" onClick={list.reload}>
          Refresh
        </Button>
      </CardHeader>
      <CardBody>
        <ListView spec={spec} query={query} list={list} />
      </CardBody>
    </Card>
  );
}
