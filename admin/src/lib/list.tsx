// Every list screen: DataViews over a paged REST list. The view (search, filters, sort, page, per
// page) lives in the URL query under the API's own parameter names, so the address bar, a copied
// link and the API request are one and the same; column choices are kept per list in localStorage.
// Rows come a page at a time (X-WP-Total / X-WP-TotalPages), never the whole table.
//
// DataViews itself (with what it takes of @wordpress/components and @wordpress/ui, the biggest
// chunk of the app) is in list-table.tsx, loaded on demand: a list screen's own chunk is small, so
// its requests (the rows, the views row's counts) start while DataViews still loads, not after it;
// and the shell (app.tsx) fetches that chunk when the browser is idle, so a list opened from the
// menu usually finds it loaded.
import { Notice, Spinner } from '@wordpress/components';
import type { Action, Field, Filter, View } from '@wordpress/dataviews';
import { lazy, Suspense, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { api, apiPage, errorMessage } from './api';
import { useFocusReturn } from './focus-return';
import { Link } from './link';
import { navigate } from './router';

const ListTable = lazy(() => import('./list-table'));

/** How one filterable field maps to the API: `status=a,b` (is any of) and `status_exclude=a,b` (is none of). */
export interface FilterParam {
  field: string;
  /** The API's parameter (default: the field id). */
  param?: string;
  /** `any`: isAny and isNone (multi-value lists); `is`: one value (booleans, ids). */
  kind: 'any' | 'is';
}

export interface ListSpec<T> {
  /** The screen's path under /admin: '/orders'. */
  screen: string;
  /** The API list: '/orders'. */
  path: string;
  fields: Field<T>[];
  /** Columns shown until the user picks others. */
  columns: string[];
  /** The API's default sort, as the list's initial view. */
  sort: { field: string; direction: 'asc' | 'desc' };
  /** false for a list the API does not sort (no orderby/order sent; the columns do not offer it). */
  sortable?: boolean;
  filters?: FilterParam[];
  /** Date range on the list's dated column: `after` / `before` (strict, ISO 8601). */
  dateField?: string;
  search?: boolean;
  /** The views row: the status field, its values with labels, and the counts route. */
  views?: { param: string; values: { value: string; label: string }[]; countsPath: string };
  /** Parameters every request carries, not shown as filters (e.g. a member's id on their page). */
  fixed?: Record<string, string>;
  actions?: Action<T>[];
  getItemId?: (item: T) => string;
  perPage?: number;
  /** Columns of amounts: right-aligned, as money is. */
  amounts?: string[];
  /** Where the column choices are kept (default: the screen's path; one key for the lists of every member's page). */
  columnsKey?: string;
  /** A timeline (a member's ledger) instead of a table: DataViews' activity layout with these fields. */
  activity?: { titleField: string; descriptionField?: string; mediaField?: string };
}

const PAGE_SIZES = [10, 20, 50, 100];
const OPERATOR_PARAM: Record<string, string> = { isAny: '', isNone: '_exclude', is: '' };

/** The view a URL query describes. */
export function viewFromQuery<T>(spec: ListSpec<T>, query: URLSearchParams): View {
  const filters: Filter[] = [];
  for (const f of spec.filters ?? []) {
    const param = f.param ?? f.field;
    const any = query.get(param);
    const none = query.get(`${param}_exclude`);
    if (any) filters.push({ field: f.field, operator: f.kind === 'any' ? 'isAny' : 'is', value: f.kind === 'any' ? any.split(',') : any });
    if (none && f.kind === 'any') filters.push({ field: f.field, operator: 'isNone', value: none.split(',') });
  }
  if (spec.dateField) {
    const after = query.get('after');
    const before = query.get('before');
    if (after) filters.push({ field: spec.dateField, operator: 'after', value: after });
    if (before) filters.push({ field: spec.dateField, operator: 'before', value: before });
  }
  const perPage = Number(query.get('per_page'));
  const direction = query.get('order');
  const layout = spec.activity ? { type: 'activity' as const, ...spec.activity, layout: { density: 'balanced' as const } } : { type: 'table' as const };
  return {
    ...layout,
    search: query.get('search') ?? '',
    filters,
    page: Math.max(1, Number(query.get('page')) || 1),
    perPage: PAGE_SIZES.includes(perPage) ? perPage : (spec.perPage ?? 20),
    sort: { field: query.get('orderby') ?? spec.sort.field, direction: direction === 'asc' || direction === 'desc' ? direction : spec.sort.direction },
    fields: storedColumns(spec) ?? spec.columns,
    ...(spec.activity ? {} : { layout: { styles: Object.fromEntries((spec.amounts ?? []).map((f) => [f, { align: 'end' as const }])) } }),
  } as View;
}

/** The URL query (and API query) of a view. */
export function queryFromView<T>(spec: ListSpec<T>, view: View, keep: URLSearchParams = new URLSearchParams()): URLSearchParams {
  const q = new URLSearchParams();
  // Parameters the view does not own (the views row's status when no filter names it, say) are kept.
  for (const [k, v] of keep) if (!ownedParams(spec).has(k)) q.set(k, v);
  if (view.search) q.set('search', view.search);
  for (const filter of view.filters ?? []) {
    const spec_ = spec.filters?.find((f) => f.field === filter.field);
    const value = Array.isArray(filter.value) ? filter.value.join(',') : String(filter.value ?? '');
    if (!value) continue;
    if (spec_) {
      const suffix = OPERATOR_PARAM[filter.operator ?? 'is'];
      if (suffix !== undefined) q.set(`${spec_.param ?? spec_.field}${suffix}`, value);
    } else if (filter.field === spec.dateField && (filter.operator === 'after' || filter.operator === 'before')) {
      q.set(filter.operator, value);
    }
  }
  if (view.sort && (view.sort.field !== spec.sort.field || view.sort.direction !== spec.sort.direction)) {
    q.set('orderby', view.sort.field);
    q.set('order', view.sort.direction);
  }
  if ((view.page ?? 1) > 1) q.set('page', String(view.page));
  if (view.perPage && view.perPage !== (spec.perPage ?? 20)) q.set('per_page', String(view.perPage));
  return q;
}

function ownedParams<T>(spec: ListSpec<T>): Set<string> {
  const owned = new Set(['search', 'orderby', 'order', 'page', 'per_page', 'after', 'before']);
  for (const f of spec.filters ?? []) {
    owned.add(f.param ?? f.field);
    owned.add(`${f.param ?? f.field}_exclude`);
  }
  return owned;
}

function storedColumns<T>(spec: ListSpec<T>): string[] | null {
  try {
    const raw = window.localStorage.getItem(`cashtrack.columns.${spec.columnsKey ?? spec.screen}`);
    const parsed: unknown = raw ? JSON.parse(raw) : null;
    return Array.isArray(parsed) && parsed.every((c) => typeof c === 'string') ? (parsed as string[]) : null;
  } catch {
    return null;
  }
}

function apiQuery<T>(spec: ListSpec<T>, q: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = { ...spec.fixed };
  for (const [k, v] of q) out[k] = v;
  if (!out.per_page) out.per_page = String(spec.perPage ?? 20);
  if (!out.orderby && spec.sortable !== false) {
    out.orderby = spec.sort.field;
    out.order = spec.sort.direction;
  }
  return out;
}

export interface ListState<T> {
  items: T[];
  total: number;
  totalPages: number;
  loading: boolean;
  error: string | null;
  reload: () => void;
  /** Counts reloads, so what depends on the rows (the views row's counts) refetches with them. */
  version: number;
}

/** The rows of the view the URL describes, fetched again whenever it changes. */
export function useListData<T>(spec: ListSpec<T>, query: URLSearchParams): ListState<T> {
  const [state, setState] = useState<Omit<ListState<T>, 'reload' | 'version'>>({ items: [], total: 0, totalPages: 0, loading: true, error: null });
  const [tick, setTick] = useState(0);
  const key = query.toString();
  // biome-ignore lint/correctness/useExhaustiveDependencies: the query string and the reload tick are the request.
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    apiPage<T>(spec.path, apiQuery(spec, query)).then(
      (page) => live && setState({ items: page.items, total: page.total, totalPages: page.totalPages, loading: false, error: null }),
      (err: unknown) => live && setState({ items: [], total: 0, totalPages: 0, loading: false, error: errorMessage(err) }),
    );
    return () => {
      live = false;
    };
  }, [spec.path, key, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload, version: tick };
}

/** The views row: All | Pending (3) | Approved (12) ..., each a link that keeps the other filters. */
function ViewsRow<T>({ spec, query, version }: { spec: ListSpec<T>; query: URLSearchParams; version: number }) {
  const views = spec.views!;
  const [counts, setCounts] = useState<{ total: number; statuses: Record<string, number> } | null>(null);
  const rest = new URLSearchParams(query);
  rest.delete(views.param);
  rest.delete(`${views.param}_exclude`);
  rest.delete('page');
  const restKey = rest.toString();
  // biome-ignore lint/correctness/useExhaustiveDependencies: the other filters are the request.
  useEffect(() => {
    const q: Record<string, string> = { ...spec.fixed };
    for (const [k, v] of rest) if (!['orderby', 'order', 'per_page', 'page'].includes(k)) q[k] = v;
    api<{ total: number; statuses: Record<string, number> }>(views.countsPath, { query: q }).then(setCounts, () => setCounts(null));
  }, [restKey, views.countsPath, version]);
  const current = query.get(views.param);
  const link = (value: string | null) => {
    const q = new URLSearchParams(rest);
    if (value) q.set(views.param, value);
    return Object.fromEntries(q);
  };
  return (
    <nav className="ct-views" aria-label="Views">
      <Link to={spec.screen} query={link(null)} className={current ? undefined : 'is-current'}>
        All{counts ? ` (${counts.total})` : ''}
      </Link>
      {views.values.map((v) => (
        <Link key={v.value} to={spec.screen} query={link(v.value)} className={current === v.value ? 'is-current' : undefined}>
          {v.label}
          {counts ? ` (${counts.statuses[v.value] ?? 0})` : ''}
        </Link>
      ))}
    </nav>
  );
}

/** A list screen's body: the views row, DataViews over the API, and the refusal of a bad request in words. */
export function ListView<T>({ spec, query, list }: { spec: ListSpec<T>; query: URLSearchParams; list: ListState<T> }) {
  const view = useMemo(() => viewFromQuery(spec, query), [spec, query]);
  const onChangeView = (next: View) => {
    if (next.fields && JSON.stringify(next.fields) !== JSON.stringify(view.fields)) {
      window.localStorage.setItem(`cashtrack.columns.${spec.columnsKey ?? spec.screen}`, JSON.stringify(next.fields));
    }
    const changedFilters = JSON.stringify(next.filters) !== JSON.stringify(view.filters) || next.search !== view.search;
    const q = queryFromView(spec, changedFilters ? { ...next, page: 1 } : next, query);
    const s = q.toString();
    navigate(`${spec.screen}${s ? `?${s}` : ''}`, true);
  };
  // A row action's modal closed by Escape or Cancel gives focus back to the row's button that opened it.
  const root = useRef<HTMLDivElement>(null);
  useFocusReturn(root);
  return (
    <div ref={root} className="ct-list">
      {spec.views ? <ViewsRow spec={spec} query={query} version={list.version} /> : null}
      {list.error ? (
        <Notice status="error" isDismissible={false}>
          {list.error}
        </Notice>
      ) : null}
      <Suspense fallback={<Spinner />}>
        <ListTable spec={spec as ListSpec<unknown>} view={view} onChangeView={onChangeView} list={list as ListState<unknown>} pageSizes={PAGE_SIZES} />
      </Suspense>
    </div>
  );
}
