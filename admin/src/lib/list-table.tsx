// DataViews over one list's rows: the heavy half of lib/list.tsx, in a chunk of its own that the
// list screens load on demand (their requests do not wait for it).
import { DataViews, type View } from '@wordpress/dataviews';
import type { ComponentType } from 'react';
import type { ListSpec, ListState } from './list';
import '@wordpress/dataviews/build-style/style.css';

// DataViews' props depend on whether the item type has an id, which a generic list cannot tell the compiler.
const ListDataViews = DataViews as unknown as ComponentType<Record<string, unknown>>;

export interface ListTableProps {
  spec: ListSpec<unknown>;
  view: View;
  onChangeView: (next: View) => void;
  list: ListState<unknown>;
  pageSizes: number[];
}

export default function ListTable({ spec, view, onChangeView, list, pageSizes }: ListTableProps) {
  return (
    <ListDataViews
      getItemId={spec.getItemId ?? ((item: unknown) => String((item as { id: unknown }).id))}
      data={list.items}
      fields={spec.fields}
      view={view}
      onChangeView={onChangeView}
      isLoading={list.loading}
      paginationInfo={{ totalItems: list.total, totalPages: list.totalPages }}
      defaultLayouts={spec.activity ? { activity: {} } : { table: {} }}
      actions={spec.actions ?? []}
      search={spec.search ?? false}
      config={{ perPageSizes: pageSizes }}
    />
  );
}
