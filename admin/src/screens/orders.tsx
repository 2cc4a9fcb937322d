// Orders: every order the networks reported or support entered, with the views row by status, the
// held and unmatched queues as filters, and the money in each order's currency.
import type { Field } from '@wordpress/dataviews';
import { ListView, type ListSpec, useListData } from '../lib/list';
import { Money } from '../lib/money';
import type { ScreenProps } from '../screens';

export interface Order {
  id: number;
  network: string;
  transaction_id: string;
  merchant_ref: string | null;
  advertiser: string | null;
  member: { id: number; login: string; display_name: string } | null;
  sale_amount: string;
  commission: string;
  cashback: string;
  currency: string;
  status: 'pending' | 'approved' | 'declined';
  source: string;
  review: { state: string; reason: string } | null;
  created_at: string;
  event_at: string | null;
}

const STATUSES = [
  { value: 'pending', label: 'Pending' },
  { value: 'approved', label: 'Approved' },
  { value: 'declined', label: 'Declined' },
];

const fields: Field<Order>[] = [
  { id: 'id', label: 'Order', type: 'integer', enableHiding: false, render: ({ item }) => <>#{item.id}</> },
  { id: 'network', label: 'Network', enableSorting: false, getValue: ({ item }) => item.network, filterBy: { operators: ['isAny', 'isNone'] }, elements: [] },
  { id: 'transaction_id', label: 'Transaction', enableSorting: false },
  {
    id: 'member',
    label: 'Member',
    enableSorting: false,
    getValue: ({ item }) => item.member?.login ?? '',
    render: ({ item }) => (item.member ? <>{item.member.display_name || item.member.login}</> : <em>unmatched</em>),
  },
  { id: 'status', label: 'Status', elements: STATUSES, filterBy: { operators: ['isAny', 'isNone'] } },
  { id: 'commission', label: 'Commission', render: ({ item }) => <Money amount={item.commission} currency={item.currency} /> },
  { id: 'cashback', label: 'Cashback', render: ({ item }) => <Money amount={item.cashback} currency={item.currency} /> },
  { id: 'created_at', label: 'Recorded', type: 'datetime' },
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
  ],
  dateField: 'created_at',
  search: true,
  amounts: ['commission', 'cashback'],
  views: { param: 'status', values: STATUSES, countsPath: '/orders/counts' },
};

export default function OrdersScreen({ query }: ScreenProps) {
  const list = useListData(spec, query);
  return (
    <>
      <h1>Orders</h1>
      <ListView spec={spec} query={query} list={list} />
    </>
  );
}
