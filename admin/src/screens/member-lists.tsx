// The member's page's list tabs: their orders (GET /orders?member_id=) and payouts
// (GET /payouts?member_id=), each a list with its views row. Referrals: member-referrals.tsx.
import { useMemo } from 'react';
import { ListView, type ListSpec, useListData } from '../lib/list';
import { Money } from '../lib/money';
import type { Order } from './orders';

const ORDER_STATUSES = [
  { value: 'pending', label: 'Pending' },
  { value: 'approved', label: 'Approved' },
  { value: 'declined', label: 'Declined' },
];

export function OrdersTab({ id, query }: { id: number; query: URLSearchParams }) {
  const spec = useMemo<ListSpec<Order>>(
    () => ({
      screen: `/members/${id}/orders`,
      columnsKey: '/members/orders',
      path: '/orders',
      fields: [
        { id: 'id', label: 'Order', type: 'integer', enableHiding: false, filterBy: false, render: ({ item }) => <>#{item.id}</> },
        { id: 'network', label: 'Network', enableSorting: false, filterBy: false },
        { id: 'transaction_id', label: 'Transaction', enableSorting: false, filterBy: false },
        { id: 'advertiser', label: 'Shop', enableSorting: false, filterBy: false, render: ({ item }) => <>{item.advertiser ?? '—'}</> },
        { id: 'status', label: 'Status', elements: ORDER_STATUSES, filterBy: { operators: ['isAny', 'isNone'] } },
        { id: 'commission', label: 'Commission', filterBy: false, render: ({ item }) => <Money amount={item.commission} currency={item.currency} /> },
        { id: 'cashback', label: 'Cashback', filterBy: false, render: ({ item }) => <Money amount={item.cashback} currency={item.currency} /> },
        { id: 'created_at', label: 'Recorded', type: 'datetime', filterBy: { operators: ['after', 'before'] } },
      ],
      columns: ['network', 'transaction_id', 'advertiser', 'status', 'commission', 'cashback', 'created_at'],
      sort: { field: 'id', direction: 'desc' },
      filters: [{ field: 'status', kind: 'any' }],
      dateField: 'created_at',
      search: true,
      amounts: ['commission', 'cashback'],
      fixed: { member_id: String(id) },
      views: { param: 'status', values: ORDER_STATUSES, countsPath: '/orders/counts' },
    }),
    [id],
  );
  const list = useListData(spec, query);
  return <ListView spec={spec} query={query} list={list} />;
}

/** A payout as GET /payouts answers. */
interface Payout {
  id: number;
  amount: string;
  currency: string;
  method: string;
  status: 'pending' | 'paid' | 'cancelled';
  reference: string | null;
  reason: string | null;
  created_at: string;
  closed_at: string | null;
}

const PAYOUT_STATUSES = [
  { value: 'pending', label: 'Pending' },
  { value: 'paid', label: 'Paid' },
  { value: 'cancelled', label: 'Cancelled' },
];

export function PayoutsTab({ id, query }: { id: number; query: URLSearchParams }) {
  const spec = useMemo<ListSpec<Payout>>(
    () => ({
      screen: `/members/${id}/payouts`,
      columnsKey: '/members/payouts',
      path: '/payouts',
      fields: [
        { id: 'id', label: 'Payout', type: 'integer', enableHiding: false, filterBy: false, render: ({ item }) => <>#{item.id}</> },
        { id: 'amount', label: 'Amount', filterBy: false, render: ({ item }) => <Money amount={item.amount} currency={item.currency} /> },
        { id: 'method', label: 'Method', enableSorting: false, filterBy: false },
        { id: 'status', label: 'Status', elements: PAYOUT_STATUSES, filterBy: { operators: ['isAny', 'isNone'] } },
        {
          id: 'reference',
          label: 'Reference or reason',
          enableSorting: false,
          filterBy: false,
          getValue: ({ item }) => item.reference ?? item.reason ?? '',
        },
        { id: 'created_at', label: 'Requested', type: 'datetime', filterBy: { operators: ['after', 'before'] } },
        { id: 'closed_at', label: 'Closed', type: 'datetime', enableSorting: false, filterBy: false },
      ],
      columns: ['amount', 'method', 'status', 'reference', 'created_at', 'closed_at'],
      sort: { field: 'id', direction: 'desc' },
      filters: [{ field: 'status', kind: 'any' }],
      dateField: 'created_at',
      amounts: ['amount'],
      fixed: { member_id: String(id) },
      views: { param: 'status', values: PAYOUT_STATUSES, countsPath: '/payouts/counts' },
    }),
    [id],
  );
  const list = useListData(spec, query);
  return <ListView spec={spec} query={query} list={list} />;
}
