// Orders: every order the networks reported or support entered, with the views row by status, the
// held and unmatched queues (the overview's links land here), filters by network, member, currency
// and dates, and the actions on an order (assign, release, decline, change a status) in modals.
// /admin/orders/{id} is one order's page.
import { Button, Notice } from '@wordpress/components';
import type { Action, Field } from '@wordpress/dataviews';
import { lazy, Suspense, useEffect, useMemo, useState } from 'react';
import { api } from '../lib/api';
import { ExportButton } from '../lib/export-button';
import { Link } from '../lib/link';
import { ListView, type ListSpec, useListData } from '../lib/list';
import { Money } from '../lib/money';
import { navigate } from '../lib/router';
import type { ScreenProps } from '../screens';
import { MemberPicker } from './member-picker';
import {
  BulkReviewModal,
  evidenceText,
  loadNetworks,
  ManualOrderModal,
  OrderActionModal,
  type OrderActionKind,
  orderAllows,
  type Suggestion,
} from './order-actions';
import './orders.css';

const OrderDetail = lazy(() => import('./order-detail'));

export interface Order {
  id: number;
  network: string;
  transaction_id: string;
  merchant_ref: string | null;
  advertiser: string | null;
  member: { id: number; login: string; display_name: string } | null;
  sub_id?: string | null;
  sale_amount: string;
  commission: string;
  cashback: string;
  currency: string;
  cashback_rule?: { type: string; value: string; currency: string | null };
  /** The click the order came from (its sub-id was a click id, or it was assigned with one). */
  click_id?: string | null;
  status: 'pending' | 'approved' | 'declined';
  source: string;
  review: { state: string; reason: string; reviewed_by?: string | null; reviewed_at?: string | null } | null;
  cashback_entry_id?: number | null;
  referral?: { referral_id: number; referrer: { id: number; login: string; display_name: string }; amount: string; entry_id: number } | null;
  clicked_at?: string | null;
  event_at: string | null;
  status_changed_at?: string;
  created_at: string;
  updated_at?: string;
  note?: string | null;
  raw?: unknown;
}

const STATUSES = [
  { value: 'pending', label: 'Pending' },
  { value: 'approved', label: 'Approved' },
  { value: 'declined', label: 'Declined' },
];

const REVIEW = [
  { value: 'held', label: 'Held for review' },
  { value: 'released', label: 'Released' },
  { value: 'declined', label: 'Declined on review' },
];

const HELD = [
  { value: 'false', label: 'Not held' },
  { value: 'true', label: 'Held' },
];

const MATCHING = [
  { value: 'true', label: 'Unmatched' },
  { value: 'false', label: 'Matched' },
];

const fields: Field<Order>[] = [
  {
    id: 'id',
    label: 'Order',
    type: 'integer',
    enableHiding: false,
    render: ({ item }) => <Link to={`/orders/${item.id}`}>#{item.id}</Link>,
  },
  {
    id: 'network',
    label: 'Network',
    enableSorting: false,
    getValue: ({ item }) => item.network,
    getElements: loadNetworks,
    filterBy: { operators: ['isAny', 'isNone'] },
  },
  {
    id: 'transaction_id',
    label: 'Transaction',
    enableSorting: false,
    filterBy: false,
    render: ({ item }) => <Link to={`/orders/${item.id}`}>{item.transaction_id}</Link>,
  },
  {
    id: 'member',
    label: 'Member',
    enableSorting: false,
    filterBy: false,
    getValue: ({ item }) => item.member?.login ?? '',
    render: ({ item }) => (item.member ? item.member.display_name || item.member.login : <em>unmatched</em>),
  },
  { id: 'status', label: 'Status', elements: STATUSES, filterBy: { operators: ['isAny', 'isNone'] } },
  {
    id: 'review',
    label: 'Review',
    enableSorting: false,
    elements: REVIEW,
    filterBy: { operators: ['is'] },
    getValue: ({ item }) => item.review?.state ?? '',
    render: ({ item }) =>
      item.review ? <span className={`ct-review is-${item.review.state}`}>{REVIEW.find((r) => r.value === item.review?.state)?.label}</span> : null,
  },
  {
    // The overview's figures leave held orders out; its links carry held=false. A primary filter:
    // always in sight, so a list opened from there shows it (and the filters bar with the others).
    id: 'held',
    label: 'Held',
    enableSorting: false,
    elements: HELD,
    filterBy: { operators: ['is'], isPrimary: true },
    getValue: ({ item }) => (item.review?.state === 'held' ? 'true' : 'false'),
  },
  {
    id: 'unmatched',
    label: 'Matching',
    enableSorting: false,
    elements: MATCHING,
    filterBy: { operators: ['is'] },
    getValue: ({ item }) => (item.member ? 'false' : 'true'),
  },
  { id: 'currency', label: 'Currency', enableSorting: false, filterBy: { operators: ['is'] } },
  { id: 'commission', label: 'Commission', filterBy: false, render: ({ item }) => <Money amount={item.commission} currency={item.currency} /> },
  { id: 'cashback', label: 'Cashback', filterBy: false, render: ({ item }) => <Money amount={item.cashback} currency={item.currency} /> },
  { id: 'created_at', label: 'Recorded', type: 'datetime', filterBy: { operators: ['after', 'before'] } },
];

const spec: ListSpec<Order> = {
  screen: '/orders',
  path: '/orders',
  fields,
  columns: ['network', 'transaction_id', 'member', 'status', 'commission', 'cashback', 'created_at'],
  sort: { field: 'id', direction: 'desc' },
  filters: [
    { field: 'status', kind: 'any' },
    { field: 'network', kind: 'any' },
    { field: 'review', kind: 'is' },
    { field: 'held', kind: 'is' },
    { field: 'unmatched', kind: 'is' },
    { field: 'currency', kind: 'is' },
  ],
  dateField: 'created_at',
  search: true,
  amounts: ['commission', 'cashback'],
  views: { param: 'status', values: STATUSES, countsPath: '/orders/counts' },
};

/** The held and unmatched queues, with how many wait in each (GET /orders/counts). */
function Queues({ query }: { query: URLSearchParams }) {
  const [counts, setCounts] = useState<{ held: number; unmatched: number } | null>(null);
  const [tick, setTick] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the tick is the request to count again.
  useEffect(() => {
    const total = (q: Record<string, string>) => api<{ total: number }>('/orders/counts', { query: q }).then((c) => c.total);
    Promise.all([total({ review: 'held' }), total({ unmatched: 'true' })]).then(
      ([held, unmatched]) => setCounts({ held, unmatched }),
      () => setCounts(null),
    );
  }, [tick]);
  useEffect(() => {
    const again = () => setTick((t) => t + 1);
    window.addEventListener('cashtrack:orders-changed', again);
    return () => window.removeEventListener('cashtrack:orders-changed', again);
  }, []);
  const current = query.get('review') === 'held' ? 'held' : query.get('unmatched') === 'true' ? 'unmatched' : null;
  return (
    <nav className="ct-views ct-queues" aria-label="Queues">
      <span className="ct-aside">Queues:</span>
      <Link to="/orders" query={{ review: 'held' }} className={current === 'held' ? 'is-current' : undefined}>
        Held for review{counts ? ` (${counts.held})` : ''}
      </Link>
      <Link to="/orders" query={{ unmatched: 'true' }} className={current === 'unmatched' ? 'is-current' : undefined}>
        Unmatched{counts ? ` (${counts.unmatched})` : ''}
      </Link>
    </nav>
  );
}

/** The best candidate owner of an unmatched order, with the one action that assigns it to them. */
function BestCandidate({ order, onAssign }: { order: Order; onAssign: (s: Suggestion) => void }) {
  const [best, setBest] = useState<Suggestion | null | undefined>(undefined);
  useEffect(() => {
    let live = true;
    api<{ items: Suggestion[] }>(`/orders/${order.id}/candidates`).then(
      (c) => live && setBest(c.items[0] ?? null),
      () => live && setBest(null),
    );
    return () => {
      live = false;
    };
  }, [order.id]);
  if (best === undefined) return <span className="ct-aside">…</span>;
  if (best === null) return <span className="ct-aside">No click</span>;
  const name = best.member.display_name || best.member.login;
  return (
    <span className="ct-candidate">
      <span title={evidenceText(best)}>
        {name} <span className="ct-aside">({evidenceText(best)})</span>
      </span>{' '}
      <Button variant="secondary" size="compact" onClick={() => onAssign(best)}>
        Assign to {name}
      </Button>
    </span>
  );
}

const ACTION_LABELS: Record<OrderActionKind, string> = { assign: 'Assign', release: 'Release', decline: 'Decline', status: 'Change status' };

export default function OrdersScreen({ rest, query }: ScreenProps) {
  if (rest[0])
    return (
      <Suspense fallback={null}>
        <OrderDetail id={rest[0]} />
      </Suspense>
    );
  return <OrdersList query={query} />;
}

function OrdersList({ query }: { query: URLSearchParams }) {
  const list = useListData(spec, query);
  const [open, setOpen] = useState<{ kind: OrderActionKind; order: Order; suggestion?: Suggestion } | null>(null);
  const [bulk, setBulk] = useState<{ kind: 'release' | 'decline'; orders: Order[] } | null>(null);
  // The unmatched queue shows each order's best candidate (its clicks) and assigns to it in one action.
  const unmatched = query.get('unmatched') === 'true';
  // The fields stay the same objects between renders: a new render function would remount the cells
  // (and lose the focus a closed modal returns to its button).
  const shown = useMemo<ListSpec<Order>>(
    () =>
      unmatched
        ? {
            ...spec,
            columnsKey: '/orders/unmatched',
            columns: ['network', 'transaction_id', 'commission', 'created_at', 'candidate'],
            fields: [
              ...fields,
              {
                id: 'candidate',
                label: 'Best candidate',
                enableSorting: false,
                filterBy: false,
                render: ({ item }) => <BestCandidate order={item} onAssign={(suggestion) => setOpen({ kind: 'assign', order: item, suggestion })} />,
              },
            ],
          }
        : spec,
    [unmatched],
  );
  const [entering, setEntering] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const memberId = query.get('member_id');
  const memberLabel = list.items.find((o) => o.member && String(o.member.id) === memberId)?.member;
  const actions: Action<Order>[] = [
    { id: 'view', label: 'View', isPrimary: false, callback: ([order]) => navigate(`/orders/${order.id}`) },
    ...(['assign', 'release', 'decline', 'status'] as OrderActionKind[]).map(
      (kind): Action<Order> => ({
        id: kind,
        label: ACTION_LABELS[kind],
        isPrimary: kind === 'assign' || kind === 'release',
        isEligible: (order) => orderAllows(order, kind),
        // Held orders are released or declined many at a time; the other actions need each order's own choice.
        supportsBulk: kind === 'release' || kind === 'decline',
        callback: (orders) => {
          if (orders.length > 1 && (kind === 'release' || kind === 'decline')) setBulk({ kind, orders });
          else setOpen({ kind, order: orders[0]! });
        },
      }),
    ),
  ];
  const changed = (message: string) => {
    setOpen(null);
    setDone(message);
    list.reload();
    window.dispatchEvent(new Event('cashtrack:orders-changed'));
  };
  const setMember = (id: string | null) => {
    const q = new URLSearchParams(query);
    if (id) q.set('member_id', id);
    else q.delete('member_id');
    q.delete('page');
    const s = q.toString();
    navigate(`/orders${s ? `?${s}` : ''}`, true);
  };
  return (
    <>
      <div className="ct-heading">
        <h1>Orders</h1>
        <Button __next40pxDefaultSize variant="secondary" onClick={() => setEntering(true)}>
          Enter an order
        </Button>
      </div>
      {done ? (
        <Notice status="success" onRemove={() => setDone(null)}>
          {done}
        </Notice>
      ) : null}
      <Queues query={query} />
      <div className="ct-list-tools">
        <MemberPicker
          label="Member"
          value={memberId}
          initialLabel={memberLabel ? `${memberLabel.display_name || memberLabel.login} (${memberLabel.login})` : undefined}
          onChange={(id) => setMember(id)}
        />
        <ExportButton kind="orders" query={query} />
      </div>
      <ListView spec={{ ...shown, actions }} query={query} list={list} />
      {open ? (
        <OrderActionModal
          kind={open.kind}
          order={open.order}
          suggestion={open.suggestion}
          onDone={(_, message) => changed(message)}
          onClose={() => setOpen(null)}
        />
      ) : null}
      {bulk ? (
        <BulkReviewModal
          kind={bulk.kind}
          orders={bulk.orders}
          onFinished={() => {
            list.reload();
            window.dispatchEvent(new Event('cashtrack:orders-changed'));
          }}
          onClose={() => setBulk(null)}
        />
      ) : null}
      {entering ? (
        <ManualOrderModal
          onDone={(order) => {
            setEntering(false);
            window.dispatchEvent(new Event('cashtrack:orders-changed'));
            navigate(`/orders/${order.id}`);
          }}
          onClose={() => setEntering(false)}
        />
      ) : null}
    </>
  );
}
