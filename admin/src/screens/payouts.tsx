// Payouts: the pending queue and every payout made, with the views row by status, filters by
// method, currency, member and dates, and the two ways a pending payout ends, each in an
// ActionModal: complete (the money left; its payment reference) and cancel (its reason; the amount
// is credited back). /payouts/batches is the payout batches' screens (payout-batches.tsx).
import { Notice, TextareaControl, TextControl } from '@wordpress/components';
import type { Action, Field } from '@wordpress/dataviews';
import { lazy, Suspense, useState } from 'react';
import { ActionModal } from '../lib/action-modal';
import { BulkActionModal } from '../lib/bulk';
import { Link } from '../lib/link';
import { ExportButton } from '../lib/export-button';
import { ListView, type ListSpec, useListData } from '../lib/list';
import { Money } from '../lib/money';
import { navigate } from '../lib/router';
import type { ScreenProps } from '../screens';
import { MemberPicker } from './member-picker';
import './orders.css';

const PayoutBatches = lazy(() => import('./payout-batches'));

export interface Payout {
  id: number;
  member_id: number;
  login: string;
  display_name: string;
  amount: string;
  currency: string;
  method: string;
  details: string | null;
  note: string | null;
  status: 'pending' | 'paid' | 'cancelled';
  reference: string | null;
  reason: string | null;
  /** The live payout batch it is in: its results close it, not these actions. */
  batch_id: number | null;
  actor: string;
  closed_by: string | null;
  created_at: string;
  closed_at: string | null;
}

const STATUSES = [
  { value: 'pending', label: 'Pending' },
  { value: 'paid', label: 'Paid' },
  { value: 'cancelled', label: 'Cancelled' },
];

const fields: Field<Payout>[] = [
  { id: 'id', label: 'Payout', type: 'integer', enableHiding: false, filterBy: false, render: ({ item }) => <>#{item.id}</> },
  {
    id: 'member',
    label: 'Member',
    enableSorting: false,
    filterBy: false,
    getValue: ({ item }) => item.login,
    render: ({ item }) => (
      <span>
        {item.display_name || item.login} <span className="ct-aside">({item.login})</span>
      </span>
    ),
  },
  { id: 'amount', label: 'Amount', filterBy: false, render: ({ item }) => <Money amount={item.amount} currency={item.currency} /> },
  { id: 'currency', label: 'Currency', enableSorting: false, filterBy: { operators: ['is'] } },
  { id: 'method', label: 'Method', enableSorting: false, filterBy: { operators: ['is'] } },
  { id: 'details', label: 'Send to', enableSorting: false, filterBy: false, getValue: ({ item }) => item.details ?? '' },
  { id: 'status', label: 'Status', elements: STATUSES, filterBy: { operators: ['isAny', 'isNone'] } },
  {
    id: 'outcome',
    label: 'Reference or reason',
    enableSorting: false,
    filterBy: false,
    getValue: ({ item }) => item.reference ?? item.reason ?? '',
  },
  { id: 'created_at', label: 'Requested', type: 'datetime', filterBy: { operators: ['after', 'before'] } },
  { id: 'closed_at', label: 'Closed', type: 'datetime', enableSorting: false, filterBy: false },
];

const spec: ListSpec<Payout> = {
  screen: '/payouts',
  path: '/payouts',
  fields,
  columns: ['member', 'amount', 'method', 'details', 'status', 'created_at'],
  sort: { field: 'id', direction: 'desc' },
  filters: [
    { field: 'status', kind: 'any' },
    { field: 'method', kind: 'is' },
    { field: 'currency', kind: 'is' },
  ],
  dateField: 'created_at',
  amounts: ['amount'],
  views: { param: 'status', values: STATUSES, countsPath: '/payouts/counts' },
};

type Open = { kind: 'complete' | 'cancel'; payout: Payout };

export default function PayoutsScreen({ rest, query }: ScreenProps) {
  if (rest[0] === 'batches')
    return (
      <Suspense fallback={null}>
        <PayoutBatches id={rest[1]} query={query} />
      </Suspense>
    );
  return <PayoutsList query={query} />;
}

function PayoutsList({ query }: { query: URLSearchParams }) {
  const list = useListData(spec, query);
  const [open, setOpen] = useState<Open | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [bulk, setBulk] = useState<Payout[] | null>(null);
  const memberId = query.get('member_id');
  const shown = list.items.find((p) => String(p.member_id) === memberId);
  const actions: Action<Payout>[] = [
    {
      id: 'complete',
      label: 'Complete',
      isPrimary: true,
      isEligible: (p) => p.status === 'pending' && !p.batch_id,
      callback: ([payout]) => setOpen({ kind: 'complete', payout }),
    },
    {
      id: 'cancel',
      // Many at once: "Cancel payouts", apart from the bulk bar's own Cancel (which clears the selection).
      label: (items) => (items.length > 1 ? 'Cancel payouts' : 'Cancel'),
      isEligible: (p) => p.status === 'pending' && !p.batch_id,
      // Cancel runs on many payouts with one reason; complete stays one at a time (each its own payment reference).
      supportsBulk: true,
      callback: (payouts) => (payouts.length > 1 ? setBulk(payouts) : setOpen({ kind: 'cancel', payout: payouts[0]! })),
    },
  ];
  const setMember = (id: string | null) => {
    const q = new URLSearchParams(query);
    if (id) q.set('member_id', id);
    else q.delete('member_id');
    q.delete('page');
    const s = q.toString();
    navigate(`/payouts${s ? `?${s}` : ''}`, true);
  };
  return (
    <>
      <h1>Payouts</h1>
      <p className="ct-muted">
        Pay many at once in a <Link to="/payouts/batches">payout batch</Link>: a file for the bank or payment tool, its results applied once.
      </p>
      {done ? (
        <Notice status="success" onRemove={() => setDone(null)}>
          {done}
        </Notice>
      ) : null}
      <div className="ct-list-tools">
        <MemberPicker
          value={memberId}
          initialLabel={shown ? `${shown.display_name || shown.login} (${shown.login})` : undefined}
          onChange={(id) => setMember(id)}
        />
        <ExportButton kind="payouts" query={query} />
      </div>
      <ListView spec={{ ...spec, actions }} query={query} list={list} />
      {open ? (
        <PayoutModal
          {...open}
          onDone={(message) => {
            setOpen(null);
            setDone(message);
            list.reload();
          }}
          onClose={() => setOpen(null)}
        />
      ) : null}
      {bulk ? <BulkCancelModal payouts={bulk} onFinished={list.reload} onClose={() => setBulk(null)} /> : null}
    </>
  );
}

/** Cancel many pending payouts: the reason is required, as for one, and kept on each. */
function BulkCancelModal({ payouts, onFinished, onClose }: { payouts: Payout[]; onFinished: () => void; onClose: () => void }) {
  const [reason, setReason] = useState('');
  return (
    <BulkActionModal<Payout>
      title={`Cancel ${payouts.length} payouts`}
      items={payouts}
      name={(p) => `Payout #${p.id} (${p.amount} ${p.currency} to ${p.login})`}
      request={(p) => ({ path: `/payouts/${p.id}/cancel`, data: { reason: reason.trim() } })}
      submitLabel={`Cancel ${payouts.length} payouts`}
      doneLabel="cancelled, the amount is back on the balance"
      destructive
      ready={reason.trim().length > 0}
      onFinished={onFinished}
      onClose={onClose}
    >
      <ul className="ct-bulk-rows">
        {payouts.map((p) => (
          <li key={p.id}>
            Payout #{p.id}: <Money amount={p.amount} currency={p.currency} /> to {p.display_name || p.login} ({p.login}) by {p.method}
          </li>
        ))}
      </ul>
      <p>
        Each amount is credited back to its member's balance. A cancelled payout cannot be reopened. Each payout is sent on its own; one the server refuses does
        not stop the others.
      </p>
      <TextareaControl
        __nextHasNoMarginBottom
        label="Reason (required)"
        help="The same reason is kept on every payout."
        value={reason}
        onChange={setReason}
        maxLength={500}
        required
        rows={3}
      />
    </BulkActionModal>
  );
}

function PayoutModal({ kind, payout, onDone, onClose }: Open & { onDone: (message: string) => void; onClose: () => void }) {
  const [reference, setReference] = useState('');
  const [reason, setReason] = useState('');
  const who = `${payout.display_name || payout.login} (${payout.login})`;
  const summary = (
    <p>
      Payout #{payout.id}: <Money amount={payout.amount} currency={payout.currency} /> to {who} by {payout.method}
      {payout.details ? `, to ${payout.details}` : ''}.
    </p>
  );
  if (kind === 'complete')
    return (
      <ActionModal<{ payout: Payout }>
        title={`Complete payout #${payout.id}`}
        submitLabel={`Mark ${payout.amount} ${payout.currency} paid`}
        request={() => ({ path: `/payouts/${payout.id}/complete`, data: reference.trim() ? { reference: reference.trim() } : {} })}
        onDone={(r) => onDone(`Payout #${r.payout.id} is paid${r.payout.reference ? ` (reference ${r.payout.reference})` : ''}.`)}
        onClose={onClose}
      >
        {summary}
        <p>Mark it paid once the money has left. No money moves here: the amount was debited when the payout was requested.</p>
        <TextControl
          __next40pxDefaultSize
          __nextHasNoMarginBottom
          label="Payment reference"
          help="The payment's reference, e.g. the PayPal transaction id or the bank transfer's reference."
          value={reference}
          onChange={setReference}
          maxLength={191}
        />
      </ActionModal>
    );
  return (
    <ActionModal<{ payout: Payout }>
      title={`Cancel payout #${payout.id}`}
      submitLabel="Cancel the payout"
      destructive
      ready={reason.trim().length > 0}
      request={() => ({ path: `/payouts/${payout.id}/cancel`, data: { reason: reason.trim() } })}
      onDone={(r) => onDone(`Payout #${r.payout.id} is cancelled; ${payout.amount} ${payout.currency} is back on ${who}'s balance.`)}
      onClose={onClose}
    >
      {summary}
      <p>The amount is credited back to the member's balance. A cancelled payout cannot be reopened.</p>
      <TextareaControl __nextHasNoMarginBottom label="Reason (required)" value={reason} onChange={setReason} maxLength={500} required rows={3} />
    </ActionModal>
  );
}
