// Shop pages: the list (views by status, search by title or slug, dates) and, at
// /admin/pages/{id}, the editor: title, slug, excerpt, status and the body as sanitised HTML,
// the shop's AI content previewed before it is kept, and delete.
import type { Field } from '@wordpress/dataviews';
import { ListView, type ListSpec, useListData } from '../lib/list';
import { Link } from '../lib/link';
import type { ScreenProps } from '../screens';
import { PageEditor } from './page-editor';
import './content.css';

export interface ShopPage {
  id: number;
  module: string;
  advertiser: string;
  title: string;
  slug: string;
  link: string | null;
  status: 'draft' | 'publish';
  excerpt: string;
  body: string;
  template: string;
  author: string;
  created_at: string;
  updated_at: string;
  published_at: string | null;
  /** The shop's text from before the AI wrote over it (what revert restores), or null. */
  original: { body: string; description: string | null } | null;
}

export const PAGE_STATUSES = [
  { value: 'publish', label: 'Published' },
  { value: 'draft', label: 'Draft' },
];

const fields: Field<ShopPage>[] = [
  { id: 'id', label: 'Page', type: 'integer', render: ({ item }) => <>#{item.id}</> },
  { id: 'title', label: 'Title', enableHiding: false, render: ({ item }) => <Link to={`/pages/${item.id}`}>{item.title}</Link> },
  { id: 'slug', label: 'Slug', enableSorting: false },
  { id: 'module', label: 'Network', enableSorting: false },
  { id: 'advertiser', label: 'Advertiser', enableSorting: false },
  { id: 'status', label: 'Status', elements: PAGE_STATUSES, filterBy: { operators: ['isAny', 'isNone'] } },
  { id: 'created_at', label: 'Created', type: 'datetime' },
  { id: 'updated_at', label: 'Updated', type: 'datetime' },
  { id: 'published_at', label: 'Published', type: 'datetime' },
];

const spec: ListSpec<ShopPage> = {
  screen: '/pages',
  path: '/pages',
  fields,
  columns: ['title', 'slug', 'module', 'status', 'updated_at'],
  sort: { field: 'date', direction: 'desc' },
  filters: [{ field: 'status', kind: 'any' }],
  dateField: 'created_at',
  search: true,
  views: { param: 'status', values: PAGE_STATUSES, countsPath: '/pages/counts' },
};

function PageList({ query }: { query: URLSearchParams }) {
  const list = useListData(spec, query);
  return (
    <>
      <h1>Pages</h1>
      <ListView spec={spec} query={query} list={list} />
    </>
  );
}

export default function PagesScreen({ rest, query }: ScreenProps) {
  const id = rest[0] && /^\d+$/.test(rest[0]) ? Number(rest[0]) : null;
  return id ? <PageEditor id={id} /> : <PageList query={query} />;
}
