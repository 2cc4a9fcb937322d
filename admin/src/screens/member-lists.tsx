// The member's page's other tabs: their orders (GET /orders?member_id=), payouts
// (GET /payouts?member_id=), each a list with its views row, and referrals both ways (GET /referrals).
import { Card, CardBody, CardHeader, Notice, Spinner } from '@wordpress/components';
import { useEffect, useMemo, useState } from 'react';
import { api, errorMessage } from '../lib/api';
import { Link } from '../lib/link';
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

/** A referral as GET /referrals answers. */
interface Referral {
  id: number;
  referrer: { id: number; login: string; display_name: string };
  referee: { id: number; login: string; display_name: string };
  since: string;
  ended_at: string | null;
  active: boolean;
  earned: { currency: string; amount: string }[];
}

export function ReferralsTab({ id }: { id: number }) {
  const [referredBy, setReferredBy] = useState<Referral[] | null>(null);
  const [referred, setReferred] = useState<Referral[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const fail = (err: unknown) => setError(errorMessage(err));
    api<Referral[]>('/referrals', { query: { referee_id: id, per_page: 100 } }).then(setReferredBy, fail);
    api<Referral[]>('/referrals', { query: { referrer_id: id, per_page: 100 } }).then(setReferred, fail);
  }, [id]);
  if (error)
    return (
      <Notice status="error" isDismissible={false}>
        {error}
      </Notice>
    );
  if (!referredBy || !referred) return <Spinner />;
  return (
    <div className="ct-cards">
      <Card>
        <CardHeader>
          <h2>Referred by</h2>
        </CardHeader>
        <CardBody>
          <ReferralTable referrals={referredBy} who="referrer" empty="Nobody referred this member." />
        </CardBody>
      </Card>
      <Card>
        <CardHeader>
          <h2>Members they referred</h2>
        </CardHeader>
        <CardBody>
          <ReferralTable referrals={referred} who="referee" empty="This member has referred nobody." />
        </CardBody>
      </Card>
    </div>
  );
}

function ReferralTable({ referrals, who, empty }: { referrals: Referral[]; who: 'referrer' | 'referee'; empty: string }) {
  if (referrals.length === 0) return <p>{empty}</p>;
  return (
    <table className="ct-table">
      <thead>
        <tr>
          <th scope="col">Member</th>
          <th scope="col">Since</th>
          <th scope="col">State</th>
          <th scope="col" className="ct-num">
            Referral credits
          </th>
        </tr>
      </thead>
      <tbody>
        {referrals.map((r) => {
          const m = r[who];
          return (
            <tr key={r.id}>
              <td>
                <Link to={`/members/${m.id}`}>{m.display_name || m.login}</Link>
              </td>
              <td>{new Date(r.since).toLocaleDateString()}</td>
              <td>{r.active ? 'Active' : `Ended ${new Date(r.ended_at ?? r.since).toLocaleDateString()}`}</td>
              <td className="ct-num">
                {r.earned.length === 0
                  ? '—'
                  : r.earned.map((e) => (
                      <div key={e.currency}>
                        <Money amount={e.amount} currency={e.currency} />
                      </div>
                    ))}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
