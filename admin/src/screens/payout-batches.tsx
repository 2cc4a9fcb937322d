// Payout batches (reached from the Payouts screen): the list of batches, a new batch made from a
// filter after a preview of what goes and what is held out and why, and a batch's page with its
// items, the held payouts, the file to download (CSV, SEPA pain.001), and the ways results come
// back (mark all paid, upload the bank's result CSV or pain.002; a PayPal batch is sent to PayPal
// and its results read back by the payouts.batch_status job), each in an ActionModal.
import { Button, Card, CardBody, CardHeader, Notice, Spinner, TextareaControl, TextControl } from '@wordpress/components';
import type { Field } from '@wordpress/dataviews';
import apiFetch from '@wordpress/api-fetch';
import { useCallback, useEffect, useState } from 'react';
import { ActionModal } from '../lib/action-modal';
import { api, errorMessage, NAMESPACE } from '../lib/api';
import { Link } from '../lib/link';
import { ListView, type ListSpec, useListData } from '../lib/list';
import { Money } from '../lib/money';
import { ScreenNotices, useScreenNotice } from '../lib/notices';
import { navigate } from '../lib/router';

export interface PayoutBatch {
  id: number;
  method: string;
  currency: string;
  channel: string;
  status: 'open' | 'sent' | 'finished' | 'cancelled';
  item_count: number;
  held_count: number;
  total: string;
  paid_count: number;
  failed_count: number;
  pending_count: number;
  note: string | null;
  file_name: string | null;
  provider_batch_id: string | null;
  provider_status: string | null;
  actor: string;
  created_at: string;
  sent_at: string | null;
  finished_at: string | null;
  cancelled_at: string | null;
}

interface Item {
  item_ref: string;
  payout_id: number;
  login: string;
  display_name: string;
  amount: string;
  currency: string;
  details: string | null;
  status: string;
  reference: string | null;
  reason: string | null;
  override_note: string | null;
}

interface Held {
  payout_id: number;
  login: string;
  display_name: string;
  amount: string;
  currency: string;
  details: string | null;
  code: string;
  reason: string;
}

interface Preview {
  method: string;
  currency: string;
  channel: string;
  item_count: number;
  total: string;
  held: Held[];
}

const STATUSES = [
  { value: 'open', label: 'Open' },
  { value: 'sent', label: 'Sent' },
  { value: 'finished', label: 'Finished' },
  { value: 'cancelled', label: 'Cancelled' },
];

const fields: Field<PayoutBatch>[] = [
  {
    id: 'id',
    label: 'Batch',
    type: 'integer',
    enableHiding: false,
    filterBy: false,
    render: ({ item }) => <Link to={`/payouts/batches/${item.id}`}>{`Batch #${item.id}`}</Link>,
  },
  { id: 'method', label: 'Method', enableSorting: false, filterBy: { operators: ['is'] } },
  { id: 'currency', label: 'Currency', enableSorting: false, filterBy: { operators: ['is'] } },
  { id: 'status', label: 'Status', elements: STATUSES, filterBy: { operators: ['isAny'] } },
  { id: 'total', label: 'Total', filterBy: false, render: ({ item }) => <Money amount={item.total} currency={item.currency} /> },
  {
    id: 'items',
    label: 'Items',
    enableSorting: false,
    filterBy: false,
    getValue: ({ item }) => `${item.item_count} (${item.paid_count} paid, ${item.failed_count} failed, ${item.held_count} held)`,
  },
  { id: 'created_at', label: 'Made', type: 'datetime', filterBy: false },
];

const spec: ListSpec<PayoutBatch> = {
  screen: '/payouts/batches',
  path: '/payouts/batches',
  fields,
  columns: ['method', 'status', 'total', 'items', 'created_at'],
  sort: { field: 'id', direction: 'desc' },
  filters: [
    { field: 'status', kind: 'any' },
    { field: 'method', kind: 'is' },
    { field: 'currency', kind: 'is' },
  ],
  amounts: ['total'],
};

function HeldText({ h }: { h: Held }) {
  return (
    <>
      Payout #{h.payout_id} to {h.display_name || h.login} ({h.login}), <Money amount={h.amount} currency={h.currency} />: {h.reason}
    </>
  );
}

function when(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}

export default function PayoutBatches({ id, query }: { id?: string; query: URLSearchParams }) {
  return id ? <BatchPage id={id} /> : <BatchList query={query} />;
}

function BatchList({ query }: { query: URLSearchParams }) {
  const list = useListData(spec, query);
  const [creating, setCreating] = useState(false);
  return (
    <>
      <h1>Payout batches</h1>
      <p className="ct-muted">
        Pending payouts of one method and currency paid together: download the file for the bank or payment tool, then mark the batch paid or upload its
        results. <Link to="/payouts">All payouts</Link>
      </p>
      <div className="ct-list-tools">
        <Button __next40pxDefaultSize variant="primary" onClick={() => setCreating(true)}>
          New batch
        </Button>
      </div>
      <ListView spec={spec} query={query} list={list} />
      {creating ? <CreateBatchModal onClose={() => setCreating(false)} /> : null}
    </>
  );
}

/** A new batch: the filter, a preview of what goes and what is held out and why, then the batch (one Idempotency-Key). */
function CreateBatchModal({ onClose }: { onClose: () => void }) {
  const [method, setMethod] = useState('');
  const [currency, setCurrency] = useState('');
  const [max, setMax] = useState('');
  const [preview, setPreview] = useState<Preview | null>(null);
  const [previewError, setPreviewError] = useState<string | null>(null);
  const [release, setRelease] = useState<number[]>([]);
  const [overrideNote, setOverrideNote] = useState('');
  const body = () => ({
    method: method.trim(),
    ...(currency.trim() ? { currency: currency.trim().toUpperCase() } : {}),
    ...(max.trim() ? { max_items: Number(max) } : {}),
  });
  const look = () => {
    setPreviewError(null);
    api<Preview>('/payouts/batches/preview', { method: 'POST', data: body() }).then(
      (p) => {
        setPreview(p);
        setRelease([]);
      },
      (err: unknown) => {
        setPreview(null);
        setPreviewError(errorMessage(err));
      },
    );
  };
  const ready = preview !== null && (release.length === 0 || overrideNote.trim().length > 0);
  return (
    <ActionModal<{ batch: PayoutBatch }>
      title="New payout batch"
      submitLabel={preview ? `Make the batch of ${preview.item_count + release.length} payouts` : 'Make the batch'}
      ready={ready}
      request={() => ({
        path: '/payouts/batches',
        data: { ...body(), ...(release.length ? { override: release, override_note: overrideNote.trim() } : {}) },
      })}
      onDone={(r) => navigate(`/payouts/batches/${r.batch.id}`)}
      onClose={onClose}
    >
      <TextControl
        __next40pxDefaultSize
        __nextHasNoMarginBottom
        label="Method (required)"
        help="The payouts' method, e.g. bank_transfer."
        value={method}
        onChange={(v) => {
          setMethod(v);
          setPreview(null);
        }}
      />
      <TextControl
        __next40pxDefaultSize
        __nextHasNoMarginBottom
        label="Currency"
        help="Default: the site currency."
        value={currency}
        onChange={(v) => {
          setCurrency(v);
          setPreview(null);
        }}
        maxLength={3}
      />
      <TextControl
        __next40pxDefaultSize
        __nextHasNoMarginBottom
        label="At most this many payouts"
        help="Oldest first; default 1000."
        type="number"
        value={max}
        onChange={(v) => {
          setMax(v);
          setPreview(null);
        }}
      />
      <p>
        <Button __next40pxDefaultSize variant="secondary" onClick={look} disabled={!method.trim()} accessibleWhenDisabled>
          Preview
        </Button>
      </p>
      {previewError ? (
        <Notice status="warning" isDismissible={false}>
          {previewError}
        </Notice>
      ) : null}
      {preview ? (
        <div className="ct-batch-preview">
          <p>
            {preview.item_count} payout(s) go, <Money amount={preview.total} currency={preview.currency} />,{' '}
            {preview.channel === 'paypal' ? 'through PayPal Payouts' : `as a ${preview.channel === 'sepa' ? 'SEPA pain.001' : 'CSV'} file`}.
          </p>
          {preview.held.length ? (
            <>
              <p>Held out ({preview.held.length}):</p>
              <ul className="ct-bulk-rows">
                {preview.held.map((h) => (
                  <li key={h.payout_id}>
                    {h.code === 'shared_destination' ? (
                      <label>
                        <input
                          type="checkbox"
                          checked={release.includes(h.payout_id)}
                          onChange={(e) => setRelease((r) => (e.target.checked ? [...r, h.payout_id] : r.filter((x) => x !== h.payout_id)))}
                        />{' '}
                        <HeldText h={h} />
                      </label>
                    ) : (
                      <HeldText h={h} />
                    )}
                  </li>
                ))}
              </ul>
              {release.length ? (
                <TextareaControl
                  __nextHasNoMarginBottom
                  label="Why the ticked payouts may go anyway (required)"
                  value={overrideNote}
                  onChange={setOverrideNote}
                  maxLength={500}
                  rows={2}
                />
              ) : null}
            </>
          ) : (
            <p>Nothing is held out.</p>
          )}
        </div>
      ) : null}
    </ActionModal>
  );
}

/** Saves the batch's file through the API (the session's nonce goes with it), as the browser's download. */
async function download(batch: PayoutBatch): Promise<void> {
  const res = await apiFetch<Response, false>({ path: `${NAMESPACE}/payouts/batches/${batch.id}/file`, parse: false });
  const blob = await res.blob();
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = batch.file_name ?? `payout-batch-${batch.id}.csv`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

type Open = 'send' | 'paid' | 'results' | 'cancel';

function BatchPage({ id }: { id: string }) {
  const [detail, setDetail] = useState<{ batch: PayoutBatch; items: Item[]; held: Held[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState<Open | null>(null);
  const [reference, setReference] = useState('');
  const [csv, setCsv] = useState('');
  const [notice, say] = useScreenNotice();
  const load = useCallback(() => {
    api<{ batch: PayoutBatch; items: Item[]; held: Held[] }>(`/payouts/batches/${encodeURIComponent(id)}`).then(
      (d) => {
        setDetail(d);
        setError(null);
      },
      (err: unknown) => setError(errorMessage(err)),
    );
  }, [id]);
  useEffect(load, [load]);
  if (error)
    return (
      <>
        <h1>Payout batch #{id}</h1>
        <Notice status="error" isDismissible={false}>
          {error}
        </Notice>
        <p>
          <Link to="/payouts/batches">All batches</Link>
        </p>
      </>
    );
  if (!detail) return <Spinner />;
  const { batch, items, held } = detail;
  const live = batch.status === 'open' || batch.status === 'sent';
  // A PayPal batch's results come from PayPal (the payouts.batch_status job), not from finance.
  const paypal = batch.channel === 'paypal';
  const done = (text: string) => {
    setOpen(null);
    say.success(text);
    load();
  };
  const summary = (r: { batch: PayoutBatch; results: { effect: string }[] }) =>
    `Batch #${r.batch.id} is ${r.batch.status}: ${r.results.filter((x) => x.effect === 'applied').length} payout(s) closed now, ${r.batch.paid_count} paid, ${r.batch.failed_count} failed, ${r.batch.pending_count} pending.`;
  return (
    <>
      <h1>Payout batch #{batch.id}</h1>
      <ScreenNotices notice={notice} onDismiss={say.clear} />
      <p>
        <Link to="/payouts/batches">All batches</Link>
      </p>
      <Card>
        <CardHeader>
          <h2>
            {batch.method}, {batch.currency}: {STATUSES.find((s) => s.value === batch.status)?.label ?? batch.status}
          </h2>
        </CardHeader>
        <CardBody>
          <table className="ct-fields">
            <tbody>
              <tr>
                <th>Total</th>
                <td>
                  <Money amount={batch.total} currency={batch.currency} /> in {batch.item_count} payout(s)
                </td>
              </tr>
              <tr>
                <th>Results</th>
                <td>{`${batch.paid_count} paid, ${batch.failed_count} failed, ${batch.pending_count} pending`}</td>
              </tr>
              <tr>
                <th>Made</th>
                <td>{`${when(batch.created_at)} by ${batch.actor}`}</td>
              </tr>
              <tr>
                <th>Sent</th>
                <td>{when(batch.sent_at)}</td>
              </tr>
              {batch.channel === 'paypal' ? (
                <tr>
                  <th>PayPal</th>
                  <td>
                    {batch.provider_batch_id
                      ? `Batch ${batch.provider_batch_id}, ${batch.provider_status ?? 'status unknown'}; results are read every 10 minutes until every item is final.`
                      : 'Not sent to PayPal yet.'}
                  </td>
                </tr>
              ) : null}
              <tr>
                <th>Finished</th>
                <td>{when(batch.finished_at ?? batch.cancelled_at)}</td>
              </tr>
              <tr>
                <th>Note</th>
                <td>{batch.note ?? '—'}</td>
              </tr>
            </tbody>
          </table>
          <div className="ct-list-tools">
            {batch.file_name && batch.status !== 'cancelled' ? (
              <Button __next40pxDefaultSize variant="secondary" onClick={() => download(batch).catch((err: unknown) => say.error(err))}>
                Download {batch.file_name}
              </Button>
            ) : null}
            {batch.status === 'open' ? (
              <Button __next40pxDefaultSize variant="secondary" onClick={() => setOpen('send')}>
                {paypal ? 'Send to PayPal' : 'Mark sent'}
              </Button>
            ) : null}
            {live && !paypal ? (
              <>
                <Button __next40pxDefaultSize variant="primary" onClick={() => setOpen('paid')}>
                  Mark paid
                </Button>
                <Button __next40pxDefaultSize variant="secondary" onClick={() => setOpen('results')}>
                  Upload results
                </Button>
              </>
            ) : null}
            {batch.status === 'open' ? (
              <Button __next40pxDefaultSize variant="tertiary" isDestructive onClick={() => setOpen('cancel')}>
                Cancel batch
              </Button>
            ) : null}
          </div>
        </CardBody>
      </Card>
      <h2>Items</h2>
      <table className="widefat striped ct-batch-items">
        <thead>
          <tr>
            <th>Item</th>
            <th>Member</th>
            <th>Amount</th>
            <th>Send to</th>
            <th>Status</th>
            <th>Reference or reason</th>
          </tr>
        </thead>
        <tbody>
          {items.map((i) => (
            <tr key={i.item_ref}>
              <td>{i.item_ref}</td>
              <td>{`${i.display_name || i.login} (${i.login})`}</td>
              <td>
                <Money amount={i.amount} currency={i.currency} />
              </td>
              <td>{i.details ?? '—'}</td>
              <td>{i.status}</td>
              <td>{i.reference ?? i.reason ?? (i.override_note ? `Released: ${i.override_note}` : '')}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Held out ({held.length})</h2>
      {held.length ? (
        <ul className="ct-held">
          {held.map((h) => (
            <li key={h.payout_id}>
              Payout #{h.payout_id} to {h.display_name || h.login} ({h.login}), <Money amount={h.amount} currency={h.currency} />: {h.reason}
            </li>
          ))}
        </ul>
      ) : (
        <p>None.</p>
      )}
      {open === 'send' ? (
        <ActionModal<{ batch: PayoutBatch }>
          title={paypal ? `Send batch #${batch.id} to PayPal` : `Mark batch #${batch.id} sent`}
          submitLabel={paypal ? 'Send to PayPal' : 'Mark sent'}
          request={() => ({ path: `/payouts/batches/${batch.id}/send` })}
          onDone={(r) =>
            done(
              r.batch.provider_batch_id
                ? `Batch #${r.batch.id} went to PayPal (batch ${r.batch.provider_batch_id}, ${r.batch.provider_status}); its results are read back shortly.`
                : `Batch #${r.batch.id} is sent.`,
            )
          }
          onClose={() => setOpen(null)}
        >
          {paypal ? (
            <p>
              PayPal pays {batch.item_count} payout(s), <Money amount={batch.total} currency={batch.currency} />, from the site's PayPal account. Sending again
              never pays twice. Once sent, the batch can no longer be cancelled.
            </p>
          ) : (
            <p>Once the file went to the bank or payment tool, the batch can no longer be cancelled: its results close its payouts.</p>
          )}
        </ActionModal>
      ) : null}
      {open === 'paid' ? (
        <ActionModal<{ batch: PayoutBatch; results: { effect: string }[] }>
          title={`Mark batch #${batch.id} paid`}
          submitLabel={`Mark ${batch.pending_count} payout(s) paid`}
          request={() => ({ path: `/payouts/batches/${batch.id}/paid`, data: reference.trim() ? { reference: reference.trim() } : {} })}
          onDone={(r) => done(summary(r))}
          onClose={() => setOpen(null)}
        >
          <p>Every payout of the batch still pending is marked paid.</p>
          <TextControl
            __next40pxDefaultSize
            __nextHasNoMarginBottom
            label="Payment reference"
            help="The bank's reference for the transfer, kept on each payout."
            value={reference}
            onChange={setReference}
            maxLength={191}
          />
        </ActionModal>
      ) : null}
      {open === 'results' ? (
        <ActionModal<{ batch: PayoutBatch; results: { effect: string }[] }>
          title={`Upload results of batch #${batch.id}`}
          submitLabel="Apply the results"
          ready={csv.trim().length > 0}
          request={() => ({ path: `/payouts/batches/${batch.id}/results`, data: { csv } })}
          onDone={(r) => done(summary(r))}
          onClose={() => setOpen(null)}
        >
          <p>
            A CSV with a header row: <code>item_ref</code> (or <code>payout_id</code>), <code>status</code> (paid or failed), and optionally{' '}
            <code>reference</code> and <code>reason</code>
            {batch.channel === 'sepa' ? (
              <>
                ; or the bank's <code>pain.002</code> status report (XML)
              </>
            ) : null}
            . Failed payouts are cancelled and their amounts credited back; a result applied twice changes nothing.
          </p>
          <input
            type="file"
            accept={batch.channel === 'sepa' ? '.csv,text/csv,.xml,application/xml,text/xml' : '.csv,text/csv'}
            aria-label="Result file"
            onChange={(e) => {
              const f = e.target.files?.[0];
              if (f) void f.text().then(setCsv);
            }}
          />
          <TextareaControl
            __nextHasNoMarginBottom
            label={batch.channel === 'sepa' ? 'Or paste the CSV or the pain.002' : 'Or paste the CSV'}
            value={csv}
            onChange={setCsv}
            rows={5}
          />
        </ActionModal>
      ) : null}
      {open === 'cancel' ? (
        <ActionModal<{ batch: PayoutBatch }>
          title={`Cancel batch #${batch.id}`}
          submitLabel="Cancel the batch"
          destructive
          request={() => ({ path: `/payouts/batches/${batch.id}/cancel` })}
          onDone={(r) => done(`Batch #${r.batch.id} is cancelled; its payouts are pending and free for another batch.`)}
          onClose={() => setOpen(null)}
        >
          <p>Its payouts stay pending and leave the batch. Cancel only if its file did not go to the bank.</p>
        </ActionModal>
      ) : null}
    </>
  );
}
