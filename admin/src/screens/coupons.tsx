// Coupons: the list (views by status as of now, search, filters by type, AI-written and edited)
// and, at /admin/coupons/{id}, the editor: plain-text fields, each edited field given back to the
// network on request, the AI rewrite previewed before it is kept, and revert.
import type { Action, Field } from '@wordpress/dataviews';
import { useState } from 'react';
import { BulkActionModal } from '../lib/bulk';
import { ListView, type ListSpec, useListData } from '../lib/list';
import { Link } from '../lib/link';
import type { ScreenProps } from '../screens';
import { CouponEditor } from './coupon-editor';
import './content.css';

export interface Coupon {
  id: number;
  network: string;
  advertiser: string;
  advertiser_name: string | null;
  coupon_id: string;
  type: 'code' | 'deal';
  code: string;
  title: string;
  description: string | null;
  terms: string | null;
  discount: { type: string; value: string | null; currency: string | null; text: string | null };
  landing_url: string | null;
  network_url: string | null;
  starts_at: string | null;
  ends_at: string | null;
  exclusive: boolean;
  regions: string[];
  status: 'active' | 'scheduled' | 'expired' | 'removed';
  edited_fields: string[];
  ai_fields: string[];
  original: Record<string, string | null> | null;
  network_values?: Record<string, unknown>;
  ai?: { model: string; tokens: { total_tokens: number }; outcome: string; at: string } | null;
  created_at: string;
  updated_at: string;
  removed_at: string | null;
}

export const COUPON_STATUSES = [
  { value: 'active', label: 'Active' },
  { value: 'scheduled', label: 'Scheduled' },
  { value: 'expired', label: 'Expired' },
  { value: 'removed', label: 'Removed' },
];

const YES_NO = [
  { value: '1', label: 'Yes' },
  { value: '0', label: 'No' },
];

const fields: Field<Coupon>[] = [
  { id: 'id', label: 'Coupon', type: 'integer', enableHiding: false, render: ({ item }) => <>#{item.id}</> },
  {
    id: 'title',
    label: 'Title',
    enableHiding: false,
    render: ({ item }) => (
      <>
        <Link to={`/coupons/${item.id}`}>{item.title}</Link>
        {item.edited_fields.length ? <span className="ct-badge"> edited</span> : null}
        {item.ai_fields.length ? <span className="ct-badge"> AI</span> : null}
      </>
    ),
  },
  { id: 'advertiser_name', label: 'Shop', enableSorting: false, getValue: ({ item }) => item.advertiser_name ?? item.advertiser },
  { id: 'network', label: 'Network', enableSorting: false },
  {
    id: 'type',
    label: 'Type',
    enableSorting: false,
    elements: [
      { value: 'code', label: 'Code' },
      { value: 'deal', label: 'Deal' },
    ],
    filterBy: { operators: ['is'] },
  },
  { id: 'code', label: 'Code', enableSorting: false, render: ({ item }) => (item.code ? <code>{item.code}</code> : <span className="ct-aside">no code</span>) },
  { id: 'status', label: 'Status', enableSorting: false, elements: COUPON_STATUSES, filterBy: { operators: ['isAny', 'isNone'] } },
  {
    id: 'ai',
    label: 'AI-written',
    enableSorting: false,
    elements: YES_NO,
    filterBy: { operators: ['is'] },
    getValue: ({ item }) => (item.ai_fields.length ? '1' : '0'),
  },
  {
    id: 'edited',
    label: 'Edited',
    enableSorting: false,
    elements: YES_NO,
    filterBy: { operators: ['is'] },
    getValue: ({ item }) => (item.edited_fields.length ? '1' : '0'),
  },
  { id: 'starts_at', label: 'Starts', type: 'datetime' },
  { id: 'ends_at', label: 'Ends', type: 'datetime' },
  { id: 'created_at', label: 'Imported', type: 'datetime' },
  { id: 'updated_at', label: 'Updated', type: 'datetime' },
];

const spec: ListSpec<Coupon> = {
  screen: '/coupons',
  path: '/coupons',
  fields,
  columns: ['title', 'advertiser_name', 'network', 'code', 'status', 'ends_at'],
  sort: { field: 'id', direction: 'desc' },
  filters: [
    { field: 'status', kind: 'any' },
    { field: 'type', kind: 'is' },
    { field: 'ai', kind: 'is' },
    { field: 'edited', kind: 'is' },
  ],
  dateField: 'created_at',
  search: true,
  views: { param: 'status', values: COUPON_STATUSES, countsPath: '/coupons/counts' },
};

function CouponList({ query }: { query: URLSearchParams }) {
  const list = useListData(spec, query);
  const [reverting, setReverting] = useState<Coupon[] | null>(null);
  const actions: Action<Coupon>[] = [
    {
      id: 'revert',
      label: 'Revert the AI text',
      isEligible: (c) => c.original !== null && c.original !== undefined,
      supportsBulk: true,
      callback: (items) => setReverting(items),
    },
  ];
  return (
    <>
      <h1>Coupons</h1>
      <ListView spec={{ ...spec, actions }} query={query} list={list} />
      {reverting ? (
        <BulkActionModal<Coupon>
          title={reverting.length > 1 ? `Revert ${reverting.length} coupons` : `Revert coupon #${reverting[0]!.id}`}
          items={reverting}
          name={(c) => `Coupon #${c.id} (${c.title})`}
          request={(c) => ({ path: `/coupons/${c.id}/revert` })}
          submitLabel={reverting.length > 1 ? `Revert ${reverting.length} coupons` : 'Revert'}
          doneLabel="reverted"
          onFinished={list.reload}
          onClose={() => setReverting(null)}
        >
          <p>
            The text from before the AI rewrite comes back: a field the network owned goes back to the network's latest value, text an administrator had written
            comes back as their edit. Whatever replaced the AI text since is replaced in turn.
          </p>
        </BulkActionModal>
      ) : null}
    </>
  );
}

export default function CouponsScreen({ rest, query }: ScreenProps) {
  const id = rest[0] && /^\d+$/.test(rest[0]) ? Number(rest[0]) : null;
  return id ? <CouponEditor id={id} /> : <CouponList query={query} />;
}
