// Clicks: members' visits to the shops through /go/, newest first, with what was kept of each (the
// rule shown, the address prefix, the browser hash), filtered by member, network and dates. The
// evidence support reads when an order arrives without its member.
import type { Field } from '@wordpress/dataviews';
import { ListView, type ListSpec, useListData } from '../lib/list';
import { navigate } from '../lib/router';
import type { ScreenProps } from '../screens';
import { MemberPicker } from './member-picker';
import { loadNetworks } from './order-actions';
import './orders.css';

export interface Click {
  id: string;
  member: { id: number; login: string; display_name: string } | null;
  network: string;
  advertiser: string;
  advertiser_name: string | null;
  coupon_id: number | null;
  url: string | null;
  cashback_rule: { type: string; value: string; currency: string | null } | null;
  ip_prefix: string | null;
  ua_hash: string | null;
  created_at: string;
}

/** "50% of commission", "5.00 EUR": the rule shown at the click. */
export function ruleText(rule: Click['cashback_rule']): string {
  if (!rule) return '—';
  if (rule.type === 'flat') return `${rule.value} ${rule.currency ?? ''}`.trim();
  return `${rule.value}% of ${rule.type === 'percent_sale' ? 'sale' : 'commission'}`;
}

const fields: Field<Click>[] = [
  { id: 'created_at', label: 'Clicked', type: 'datetime', enableHiding: false, filterBy: { operators: ['after', 'before'] } },
  { id: 'id', label: 'Click id', enableSorting: false, filterBy: false, render: ({ item }) => <code>{item.id}</code> },
  {
    id: 'member',
    label: 'Member',
    enableSorting: false,
    filterBy: false,
    getValue: ({ item }) => item.member?.login ?? '',
    render: ({ item }) => (item.member ? `${item.member.display_name || item.member.login} (${item.member.login})` : '—'),
  },
  { id: 'network', label: 'Network', enableSorting: false, getElements: loadNetworks, filterBy: { operators: ['is'] } },
  {
    id: 'shop',
    label: 'Shop',
    enableSorting: false,
    filterBy: false,
    getValue: ({ item }) => item.advertiser_name ?? item.advertiser,
  },
  { id: 'rule', label: 'Rate shown', enableSorting: false, filterBy: false, getValue: ({ item }) => ruleText(item.cashback_rule) },
  { id: 'url', label: 'Deep link', enableSorting: false, filterBy: false, getValue: ({ item }) => item.url ?? '' },
  { id: 'coupon_id', label: 'Coupon', enableSorting: false, filterBy: false, getValue: ({ item }) => (item.coupon_id ? `#${item.coupon_id}` : '') },
  { id: 'ip_prefix', label: 'Address', enableSorting: false, filterBy: false, getValue: ({ item }) => item.ip_prefix ?? '' },
  { id: 'ua_hash', label: 'Browser', enableSorting: false, filterBy: false, getValue: ({ item }) => (item.ua_hash ? item.ua_hash.slice(0, 8) : '') },
];

const spec: ListSpec<Click> = {
  screen: '/clicks',
  path: '/clicks',
  fields,
  columns: ['id', 'member', 'shop', 'rule', 'ip_prefix'],
  sort: { field: 'created_at', direction: 'desc' },
  filters: [{ field: 'network', kind: 'is' }],
  dateField: 'created_at',
  getItemId: (c) => c.id,
};

export default function ClicksScreen({ query }: ScreenProps) {
  const list = useListData(spec, query);
  const memberId = query.get('member_id');
  const shown = list.items.find((c) => c.member && String(c.member.id) === memberId)?.member;
  const setMember = (id: string | null) => {
    const q = new URLSearchParams(query);
    if (id) q.set('member_id', id);
    else q.delete('member_id');
    q.delete('page');
    const s = q.toString();
    navigate(`/clicks${s ? `?${s}` : ''}`, true);
  };
  return (
    <>
      <h1>Clicks</h1>
      <p className="ct-aside">Members' visits to the shops through their /go/ links. The click id is the sub-id the network reports back with the order.</p>
      <div className="ct-list-tools">
        <MemberPicker
          value={memberId}
          initialLabel={shown ? `${shown.display_name || shown.login} (${shown.login})` : undefined}
          onChange={(id) => setMember(id)}
        />
      </div>
      <ListView spec={spec} query={query} list={list} />
    </>
  );
}
