// The actions on one order, each in an ActionModal (one Idempotency-Key per opened modal, the
// API's refusal in words): assign an unmatched order to a member, release or decline an order held
// for review, change a status, and enter an order by hand (a missing-cashback claim). The list's
// row actions and the order's own page open the same modals.
import { SelectControl, TextareaControl, TextControl } from '@wordpress/components';
import { useEffect, useState } from 'react';
import { ActionModal } from '../lib/action-modal';
import { BulkActionModal } from '../lib/bulk';
import { api } from '../lib/api';
import { Money } from '../lib/money';
import { MemberPicker } from './member-picker';
import type { Order } from './orders';

export type OrderActionKind = 'assign' | 'release' | 'decline' | 'status';

/** Which actions an order allows now. */
export function orderAllows(order: Order, kind: OrderActionKind): boolean {
  const held = order.review?.state === 'held';
  if (kind === 'assign') return order.member === null;
  if (kind === 'release' || kind === 'decline') return held;
  return !held && nextStatuses(order.status).length > 0;
}

/** The moves POST /orders/{id} allows from a status (never back to pending). */
function nextStatuses(status: Order['status']): Order['status'][] {
  if (status === 'pending') return ['approved', 'declined'];
  return status === 'approved' ? ['declined'] : ['approved'];
}

const STATUS_LABEL: Record<Order['status'], string> = { pending: 'Pending', approved: 'Approved', declined: 'Declined' };

function Summary({ order }: { order: Order }) {
  return (
    <p className="ct-order-summary">
      Order #{order.id}: {order.network} {order.transaction_id}, commission <Money amount={order.commission} currency={order.currency} />, cashback{' '}
      <Money amount={order.cashback} currency={order.currency} /> ({STATUS_LABEL[order.status].toLowerCase()}).
    </p>
  );
}

/** A note field: `required` where the API requires one. */
function NoteField({ value, onChange, required, help }: { value: string; onChange: (v: string) => void; required?: boolean; help?: string }) {
  return (
    <TextareaControl
      __nextHasNoMarginBottom
      label={required ? 'Note (required)' : 'Note'}
      help={help}
      value={value}
      onChange={onChange}
      maxLength={500}
      required={required}
      rows={3}
    />
  );
}

function noteOf(note: string): { note?: string } {
  const trimmed = note.trim();
  return trimmed ? { note: trimmed } : {};
}

/** A candidate owner of an unmatched order (GET /orders/{id}/candidates): the member and their click. */
export interface Suggestion {
  member: { id: number; login: string; display_name: string };
  click: { id: string; created_at: string };
  gap_seconds: number;
  evidence: { click_time_match: boolean; same_address: boolean; last_click: boolean };
}

/** "12 min before the sale", "3 h", "2 days". */
export function gapText(seconds: number): string {
  if (seconds < 90) return `${seconds} s before the sale`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min before the sale`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h before the sale`;
  return `${Math.round(seconds / 86_400)} days before the sale`;
}

/** The evidence of a candidate, in words. */
export function evidenceText(s: Suggestion): string {
  const parts = [`clicked ${gapText(s.gap_seconds)}`];
  if (s.evidence.click_time_match) parts.push("at the network's click time");
  if (s.evidence.same_address) parts.push("from the network's click address");
  if (s.evidence.last_click) parts.push('the last click on the shop');
  return parts.join(', ');
}

export function OrderActionModal({
  kind,
  order,
  suggestion,
  onDone,
  onClose,
}: {
  kind: OrderActionKind;
  order: Order;
  /** For assign: the member the modal opens with, and the click recorded when that member is kept. */
  suggestion?: Suggestion;
  onDone: (order: Order, message: string) => void;
  onClose: () => void;
}) {
  const [note, setNote] = useState('');
  const suggested = suggestion
    ? { id: String(suggestion.member.id), label: `${suggestion.member.display_name || suggestion.member.login} (${suggestion.member.login})` }
    : null;
  const [member, setMember] = useState<{ id: string; label: string | null } | null>(suggested);
  const moves = nextStatuses(order.status);
  const [status, setStatus] = useState<Order['status']>(moves[0]);
  if (kind === 'assign') {
    return (
      <ActionModal<Order>
        title={`Assign order #${order.id}`}
        submitLabel="Assign"
        ready={member !== null}
        request={() => ({
          path: `/orders/${order.id}/assign`,
          data: {
            member_id: Number(member?.id),
            ...(suggestion && member?.id === String(suggestion.member.id) ? { click_id: suggestion.click.id } : {}),
            ...noteOf(note),
          },
        })}
        onDone={(o) => onDone(o, `Order #${o.id} is now ${o.member?.display_name || o.member?.login}'s.`)}
        onClose={onClose}
      >
        <Summary order={order} />
        {suggestion ? (
          <p>
            Best candidate: <strong>{suggested?.label}</strong>, {evidenceText(suggestion)} (click <code>{suggestion.click.id}</code>, recorded on the order if
            you keep this member).
          </p>
        ) : null}
        <MemberPicker
          value={member?.id ?? null}
          initialLabel={suggested?.label}
          onChange={(id, label) => setMember(id ? { id, label } : null)}
          help="Type the start of a login, email or name. The order's cashback follows its status: pending enters the member's pending balance, approved is credited."
        />
        <NoteField value={note} onChange={setNote} />
      </ActionModal>
    );
  }
  if (kind === 'release' || kind === 'decline') {
    const release = kind === 'release';
    return (
      <ActionModal<Order>
        title={`${release ? 'Release' : 'Decline'} held order #${order.id}`}
        submitLabel={release ? 'Release' : 'Decline'}
        destructive={!release}
        request={() => ({ path: `/orders/${order.id}/${kind}`, data: noteOf(note) })}
        onDone={(o) => onDone(o, `Order #${o.id} ${release ? 'released' : 'declined'}.`)}
        onClose={onClose}
      >
        <Summary order={order} />
        <p>
          Held because: <strong>{reviewReason(order.review?.reason)}</strong>.{' '}
          {release
            ? 'Releasing applies the effects of its current status once: pending cashback enters the member’s pending balance, an approved order is credited.'
            : 'Declining makes it declined with no ledger effect; the network’s later reports about it are ignored.'}
        </p>
        <NoteField value={note} onChange={setNote} />
      </ActionModal>
    );
  }
  return (
    <ActionModal<Order>
      title={`Change the status of order #${order.id}`}
      submitLabel={`Mark ${STATUS_LABEL[status].toLowerCase()}`}
      destructive={status === 'declined'}
      request={() => ({ path: `/orders/${order.id}`, data: { status, ...noteOf(note) } })}
      onDone={(o) => onDone(o, `Order #${o.id} is now ${STATUS_LABEL[o.status].toLowerCase()}.`)}
      onClose={onClose}
    >
      <Summary order={order} />
      <SelectControl
        __next40pxDefaultSize
        __nextHasNoMarginBottom
        label="New status"
        value={status}
        options={moves.map((s) => ({ value: s, label: STATUS_LABEL[s] }))}
        onChange={(v) => setStatus(v as Order['status'])}
        help={
          status === 'approved'
            ? 'Approving credits the cashback (and the referrer’s share) to the member.'
            : 'Declining an approved order reverses its credits; the balance may go negative.'
        }
      />
      <NoteField value={note} onChange={setNote} help="Kept on the order and added to the ledger entries the change posts." />
    </ActionModal>
  );
}

export function reviewReason(reason: string | undefined): string {
  switch (reason) {
    case 'above_ceiling':
      return 'the commission is above the review ceiling';
    case 'currency_not_covered':
      return 'the review ceiling names no amount in this currency';
    case 'commission_exceeds_sale':
      return 'the commission is above the sale amount';
    default:
      return reason ?? 'not held';
  }
}

interface Network {
  id: string;
  name: string;
}

/** Every network, for pickers and filters (GET /networks pages at most 100). */
export function loadNetworks(): Promise<{ value: string; label: string }[]> {
  return api<Network[]>('/networks', { query: { per_page: 100 } }).then((all) => all.map((n) => ({ value: n.id, label: n.name })));
}

/** A missing-cashback claim entered by support: POST /orders with source manual; the note is required. */
export function ManualOrderModal({ onDone, onClose }: { onDone: (order: Order) => void; onClose: () => void }) {
  const [networks, setNetworks] = useState<{ value: string; label: string }[]>([]);
  const [form, setForm] = useState({
    network: '',
    transaction_id: '',
    merchant_ref: '',
    sale_amount: '',
    commission: '',
    currency: '',
    status: 'pending',
    note: '',
  });
  const [member, setMember] = useState<string | null>(null);
  useEffect(() => {
    loadNetworks().then(setNetworks, () => setNetworks([]));
  }, []);
  const set = (key: keyof typeof form) => (value: string) => setForm((f) => ({ ...f, [key]: value }));
  const ready = Boolean(form.network && form.transaction_id.trim() && form.sale_amount.trim() && form.commission.trim() && form.note.trim());
  return (
    <ActionModal<Order>
      title="Enter an order"
      submitLabel="Record the order"
      ready={ready}
      request={() => {
        const data: Record<string, unknown> = {
          network: form.network,
          transaction_id: form.transaction_id.trim(),
          sale_amount: form.sale_amount.trim(),
          commission: form.commission.trim(),
          status: form.status,
          note: form.note.trim(),
        };
        if (member) data.member_id = Number(member);
        if (form.merchant_ref.trim()) data.merchant_ref = form.merchant_ref.trim();
        if (form.currency.trim()) data.currency = form.currency.trim().toUpperCase();
        return { path: '/orders', data };
      }}
      onDone={onDone}
      onClose={onClose}
    >
      <p>A missing-cashback claim: the order as the shop confirmed it. Orders entered here are never held for review.</p>
      <SelectControl
        __next40pxDefaultSize
        __nextHasNoMarginBottom
        label="Network"
        value={form.network}
        options={[{ value: '', label: 'Choose a network' }, ...networks]}
        onChange={set('network')}
        required
      />
      <TextControl __next40pxDefaultSize __nextHasNoMarginBottom label="Transaction id" value={form.transaction_id} onChange={set('transaction_id')} required />
      <MemberPicker value={member} onChange={(id) => setMember(id)} help="Leave empty to record it unmatched." />
      <TextControl __next40pxDefaultSize __nextHasNoMarginBottom label="Shop's order reference" value={form.merchant_ref} onChange={set('merchant_ref')} />
      <div className="ct-form-row">
        <TextControl
          __next40pxDefaultSize
          __nextHasNoMarginBottom
          label="Sale amount"
          value={form.sale_amount}
          onChange={set('sale_amount')}
          inputMode="decimal"
          required
        />
        <TextControl
          __next40pxDefaultSize
          __nextHasNoMarginBottom
          label="Commission"
          value={form.commission}
          onChange={set('commission')}
          inputMode="decimal"
          required
        />
        <TextControl
          __next40pxDefaultSize
          __nextHasNoMarginBottom
          label="Currency"
          help="Empty: the site currency."
          value={form.currency}
          onChange={set('currency')}
          maxLength={3}
        />
      </div>
      <SelectControl
        __next40pxDefaultSize
        __nextHasNoMarginBottom
        label="Status"
        value={form.status}
        options={Object.entries(STATUS_LABEL).map(([value, label]) => ({ value, label }))}
        onChange={set('status')}
      />
      <NoteField value={form.note} onChange={set('note')} required help="Who asked for it and why (a claim number, the receipt)." />
    </ActionModal>
  );
}

/** Release or decline many held orders: each its own request with the note of the single-row modal (optional there too). */
export function BulkReviewModal({
  kind,
  orders,
  onFinished,
  onClose,
}: {
  kind: 'release' | 'decline';
  orders: Order[];
  onFinished: () => void;
  onClose: () => void;
}) {
  const [note, setNote] = useState('');
  const release = kind === 'release';
  const n = orders.length;
  return (
    <BulkActionModal<Order>
      title={`${release ? 'Release' : 'Decline'} ${n} held orders`}
      items={orders}
      name={(o) => `Order #${o.id} (${o.network} ${o.transaction_id})`}
      request={(o) => ({ path: `/orders/${o.id}/${kind}`, data: noteOf(note) })}
      submitLabel={`${release ? 'Release' : 'Decline'} ${n} orders`}
      doneLabel={release ? 'released' : 'declined'}
      destructive={!release}
      onFinished={onFinished}
      onClose={onClose}
    >
      <ul className="ct-bulk-rows">
        {orders.map((o) => (
          <li key={o.id}>
            <Summary order={o} />
          </li>
        ))}
      </ul>
      <p>
        {release
          ? 'Releasing applies the effects of each order’s current status once: pending cashback enters the member’s pending balance, an approved order is credited.'
          : 'Declining makes each order declined with no ledger effect; the network’s later reports about it are ignored.'}{' '}
        Each order is sent on its own; one the server refuses does not stop the others.
      </p>
      <NoteField value={note} onChange={setNote} help="The same note is kept on every order." />
    </BulkActionModal>
  );
}
