// Claims: members' "I bought and it did not track", with the views row by status (and its counts),
// filters by network, member and dates, search by order reference, and each claim's page
// (claim-detail.tsx). New claims are filed from a member's page (claim-file.tsx).
import type { Field } from '@wordpress/dataviews';
import { lazy, Suspense } from 'react';
import { Link } from '../lib/link';
import { ListView, type ListSpec, useListData } from '../lib/list';
import { Money } from '../lib/money';
import { navigate } from '../lib/router';
import type { ScreenProps } from '../screens';
import { MemberPicker } from './member-picker';
import './orders.css';

const ClaimDetail = lazy(() => import('./claim-detail'));

export interface Claim {
  id: number;
  member: { id: number; login: string; display_name: string };
  network: string;
  advertiser: string;
  order_ref: string;
  purchased_at: string;
  amount: string;
  currency: string;
  note: string | null;
  receipt: boolean;
  click_id: string | null;
  /** The click as evidence (null: none, or pruned). */
  click: { id: string; created_at: string; cashback_rule: { type: string; value: string; currency: string | null } | null } | null;
  status: 'open' | 'submitted' | 'matched' | 'approved' | 'declined' | 'expired';
  reason: string | null;
  order_id: number | null;
  channel: 'api' | 'file' | null;
  network_ref: string | null;
  network_status: string | null;
  export_file: string | null;
  deadline_at: string | null;
  warned_at: string | null;
  submitted_at: string | null;
  resolved_at: string | null;
  checked_at: string | null;
  actor: string;
  created_at: string;
  updated_at: string;
}

export const CLAIM_STATUSES = [
  { value: 'open', label: 'Open' },
  { value: 'submitted', label: 'Submitted' },
  { value: 'matched', label: 'Matched' },
  { value: 'approved', label: 'Approved' },
  { value: 'declined', label: 'Declined' },
  { value: 'expired', label: 'Expired' },
];

const fields: Field<Claim>[] = [
  {
    id: 'id',
    label: 'Claim',
    type: 'integer',
    enableHiding: false,
    filterBy: false,
    render: ({ item }) => <Link to={`/claims/${item.id}`}>#{item.id}</Link>,
  },
  {
    id: 'member',
    label: 'Member',
    enableSorting: false,
    filterBy: false,
    getValue: ({ item }) => item.member.login,
    render: ({ item }) => (
      <span>
        {item.member.display_name || item.member.login} <span className="ct-aside">({item.member.login})</span>
      </span>
    ),
  },
  { id: 'network', label: 'Network', enableSorting: false, filterBy: { operators: ['isAny'] }, getValue: ({ item }) => item.network },
  { id: 'advertiser', label: 'Shop', enableSorting: false, filterBy: false },
  { id: 'order_ref', label: 'Order reference', enableSorting: false, filterBy: false },
  { id: 'amount', label: 'Amount', filterBy: false, render: ({ item }) => <Money amount={item.amount} currency={item.currency} /> },
  { id: 'status', label: 'Status', elements: CLAIM_STATUSES, filterBy: { operators: ['isAny'] } },
  { id: 'reason', label: 'Reason', enableSorting: false, filterBy: false, getValue: ({ item }) => item.reason ?? '' },
  { id: 'network_ref', label: 'Network reference', enableSorting: false, filterBy: false, getValue: ({ item }) => item.network_ref ?? '' },
  { id: 'purchased_at', label: 'Purchased', type: 'datetime', filterBy: false },
  { id: 'deadline_at', label: 'Deadline', type: 'datetime', filterBy: false },
  { id: 'created_at', label: 'Claimed', type: 'datetime', filterBy: { operators: ['after', 'before'] } },
];

const spec: ListSpec<Claim> = {
  screen: '/claims',
  path: '/claims',
  fields,
  columns: ['id', 'member', 'advertiser', 'order_ref', 'amount', 'status', 'reason', 'deadline_at'],
  sort: { field: 'id', direction: 'desc' },
  filters: [
    { field: 'status', kind: 'any' },
    { field: 'network', kind: 'any' },
  ],
  dateField: 'created_at',
  search: true,
  amounts: ['amount'],
  views: { param: 'status', values: CLAIM_STATUSES, countsPath: '/claims/counts' },
};

export default function ClaimsScreen({ rest, query }: ScreenProps) {
  if (rest[0])
    return (
      <Suspense fallback={null}>
        <ClaimDetail id={rest[0]} />
      </Suspense>
    );
  return <ClaimsList query={query} />;
}

function ClaimsList({ query }: { query: URLSearchParams }) {
  const list = useListData(spec, query);
  const memberId = query.get('member_id');
  const shown = list.items.find((c) => String(c.member.id) === memberId);
  const setMember = (id: string | null) => {
    const q = new URLSearchParams(query);
    if (id) q.set('member_id', id);
    else q.delete('member_id');
    q.delete('page');
    const s = q.toString();
    navigate(`/claims${s ? `?${s}` : ''}`, true);
  };
  return (
    <>
      <h1>Claims</h1>
      <p className="ct-muted">
        Members’ missing cashback. Each claim is matched to an order we hold, else filed with its network, else left open here with the reason. File a new claim
        from the member’s page.
      </p>
      <div className="ct-list-tools">
        <MemberPicker
          value={memberId}
          initialLabel={shown ? `${shown.member.display_name || shown.member.login} (${shown.member.login})` : undefined}
          onChange={(id) => setMember(id)}
        />
      </div>
      <ListView
        spec={{
          ...spec,
          actions: [
            {
              id: 'open',
              label: 'Open',
              isPrimary: true,
              callback: ([claim]) => navigate(`/claims/${claim.id}`),
            },
          ],
        }}
        query={query}
        list={list}
      />
    </>
  );
}
