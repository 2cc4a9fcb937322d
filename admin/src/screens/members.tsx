// Members: every member's balance per currency (GET /ledger/members), the user lookup to jump to
// anyone (members without entries included: the one member picker), and each row a link to the member's page.
// `/members?currency=EUR` (the overview's link) is the currency filter.
import type { Field } from '@wordpress/dataviews';
import { Link } from '../lib/link';
import { ListView, type ListSpec, useListData } from '../lib/list';
import { Money } from '../lib/money';
import { navigate } from '../lib/router';
import type { ScreenProps } from '../screens';
import MemberScreen from './member';
import { MemberPicker } from './member-picker';
import './members.css';

/** A row of GET /ledger/members: one member in one currency. */
export interface MemberBalance {
  member_id: number;
  login: string;
  display_name: string;
  email: string;
  currency: string;
  available: string;
  pending: string;
  lifetime_earned: string;
  lifetime_paid: string;
  last_entry_at: string | null;
}

const fields: Field<MemberBalance>[] = [
  {
    id: 'name',
    label: 'Member',
    enableHiding: false,
    getValue: ({ item }) => item.display_name || item.login,
    render: ({ item }) => (
      <span className="ct-member-cell">
        <Link to={`/members/${item.member_id}`}>{item.display_name || item.login}</Link>
        <span className="ct-muted">
          {item.login} · {item.email}
        </span>
      </span>
    ),
  },
  // The API takes one currency: a code typed in (EUR), as the overview's links give it.
  { id: 'currency', label: 'Currency', type: 'text', enableSorting: false, filterBy: { operators: ['is'] } },
  { id: 'available', label: 'Available', render: ({ item }) => <Money amount={item.available} /> },
  { id: 'pending', label: 'Pending', render: ({ item }) => <Money amount={item.pending} /> },
  { id: 'lifetime_earned', label: 'Earned', enableSorting: false, render: ({ item }) => <Money amount={item.lifetime_earned} /> },
  { id: 'lifetime_paid', label: 'Paid out', enableSorting: false, render: ({ item }) => <Money amount={item.lifetime_paid} /> },
  { id: 'last_entry_at', label: 'Last entry', type: 'datetime', filterBy: false },
];

const spec: ListSpec<MemberBalance> = {
  screen: '/members',
  path: '/ledger/members',
  fields,
  columns: ['name', 'currency', 'available', 'pending', 'lifetime_earned', 'lifetime_paid', 'last_entry_at'],
  sort: { field: 'available', direction: 'desc' },
  filters: [{ field: 'currency', kind: 'is' }],
  search: true,
  amounts: ['available', 'pending', 'lifetime_earned', 'lifetime_paid'],
  getItemId: (item) => `${item.member_id}-${item.currency}`,
};

/** /members is the list, /members/{id} a member's page. */
export default function MembersScreen({ rest, query }: ScreenProps) {
  if (rest[0]) return <MemberScreen rest={rest} query={query} />;
  return <MembersList query={query} />;
}

function MembersList({ query }: { query: URLSearchParams }) {
  const list = useListData(spec, query);
  return (
    <>
      <div className="ct-heading">
        <h1>Members</h1>
        <FindMember />
      </div>
      <ListView spec={spec} query={query} list={list} />
    </>
  );
}

/** The member picker as a finder: any user, with or without a balance; choosing one opens their page. */
export function FindMember() {
  return (
    <div className="ct-find-member">
      <MemberPicker
        label="Find a member (login, email or name)"
        value={null}
        onChange={(value) => {
          if (value) navigate(`/members/${value}`);
        }}
      />
    </div>
  );
}
