// Log: the plugin log (GET /logs) with filters by level, source, dates and words, the views row
// by level, one entry's detail in a modal, and a live tail: while "Live" is on, the screen asks
// every few seconds whether entries newer than the newest it knows exist (after_id), and reloads.
import { Button, Modal, ToggleControl } from '@wordpress/components';
import type { Action, Field } from '@wordpress/dataviews';
import { useEffect, useRef, useState } from 'react';
import { apiPage } from '../lib/api';
import { ListView, type ListSpec, useListData } from '../lib/list';
import { navigate } from '../lib/router';
import type { ScreenProps } from '../screens';
import './content.css';

export interface LogEntry {
  id: number;
  time: string;
  level: 'debug' | 'info' | 'warning' | 'error';
  source: string;
  message: string;
  context: Record<string, unknown> | null;
  request_id: string | null;
}

const LEVELS = [
  { value: 'error', label: 'Error' },
  { value: 'warning', label: 'Warning' },
  { value: 'info', label: 'Info' },
  { value: 'debug', label: 'Debug' },
];

const SOURCES = [
  'advertisers',
  'ai',
  'auth',
  'cashback',
  'coupons',
  'daemon',
  'db',
  'hooks',
  'http',
  'jobs',
  'ledger',
  'logos',
  'logs',
  'networks',
  'orders',
  'pages',
  'payouts',
  'postbacks',
  'referrals',
  'schedules',
  'users',
  'webhooks',
].map((s) => ({ value: s, label: s }));

/** "2026-11-22 12:05:17.301" (UTC, as stored: the log is read to the millisecond). */
function logTime(iso: string): string {
  return `${iso.replace('T', ' ').replace('Z', '')} UTC`;
}

const fields: Field<LogEntry>[] = [
  { id: 'id', label: 'Entry', type: 'integer', enableHiding: false, render: ({ item }) => <>#{item.id}</> },
  { id: 'time', label: 'Time', type: 'datetime', render: ({ item }) => <span className="ct-money">{logTime(item.time)}</span> },
  {
    id: 'level',
    label: 'Level',
    elements: LEVELS,
    enableSorting: false,
    filterBy: { operators: ['isAny', 'isNone'] },
    render: ({ item }) => <span className={`ct-level-${item.level}`}>{item.level}</span>,
  },
  { id: 'source', label: 'Source', elements: SOURCES, enableSorting: false, filterBy: { operators: ['isAny'] } },
  { id: 'message', label: 'Message', enableSorting: false, enableHiding: false },
  { id: 'request_id', label: 'Request', enableSorting: false },
];

/** One entry in full: its context as the API shows it (secrets already redacted). */
function EntryDetail({ entry }: { entry: LogEntry }) {
  return (
    <>
      <dl className="ct-dl">
        <dt>Time</dt>
        <dd>{logTime(entry.time)}</dd>
        <dt>Level</dt>
        <dd className={`ct-level-${entry.level}`}>{entry.level}</dd>
        <dt>Source</dt>
        <dd>{entry.source}</dd>
        <dt>Message</dt>
        <dd>{entry.message}</dd>
        <dt>Request</dt>
        <dd>{entry.request_id ?? '—'}</dd>
      </dl>
      <h2 className="ct-detail-heading">Context</h2>
      <pre className="ct-pre">{entry.context ? JSON.stringify(entry.context, null, 2) : 'none'}</pre>
    </>
  );
}

const detailAction: Action<LogEntry> = {
  id: 'detail',
  label: 'Details',
  isPrimary: true,
  modalHeader: (items) => `Log entry #${items[0]?.id}`,
  RenderModal: ({ items, closeModal }) => (
    <>
      <EntryDetail entry={items[0]!} />
      <div className="ct-modal-buttons">
        <Button variant="secondary" onClick={() => closeModal?.()}>
          Close
        </Button>
      </div>
    </>
  ),
};

const spec: ListSpec<LogEntry> = {
  screen: '/log',
  path: '/logs',
  fields,
  columns: ['time', 'level', 'source', 'message'],
  sort: { field: 'id', direction: 'desc' },
  filters: [
    { field: 'level', kind: 'any' },
    { field: 'source', kind: 'any' },
  ],
  dateField: 'time',
  search: true,
  views: { param: 'level', values: LEVELS, countsPath: '/logs/counts' },
  actions: [detailAction],
};

const POLL_MS = 3000;

/** The filters of the view (not its paging or sort), for the live tail's question. */
function filtersOf(query: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of query) if (!['page', 'per_page', 'orderby', 'order'].includes(k)) out[k] = v;
  return out;
}

export default function LogScreen({ query, rest }: ScreenProps) {
  const list = useListData(spec, query);
  const [live, setLive] = useState(false);
  const [news, setNews] = useState<string>('');
  const newest = useRef<number | null>(null);
  const filterKey = JSON.stringify(filtersOf(query));
  const { reload } = list;
  // biome-ignore lint/correctness/useExhaustiveDependencies: the filters (as a key) and the toggle are the tail.
  useEffect(() => {
    if (!live) return;
    let stopped = false;
    const filters = JSON.parse(filterKey) as Record<string, string>;
    newest.current = null;
    const ask = async () => {
      const q: Record<string, unknown> = { ...filters, orderby: 'id', order: 'desc', per_page: 1 };
      if (newest.current !== null) q.after_id = newest.current;
      const page = await apiPage<LogEntry>('/logs', q);
      if (stopped) return;
      const top = page.items[0];
      if (newest.current !== null && top) {
        setNews(`${page.total} new ${page.total === 1 ? 'entry' : 'entries'}`);
        reload();
      }
      if (top) newest.current = top.id;
      else if (newest.current === null) newest.current = 0;
    };
    ask().catch(() => {});
    const timer = window.setInterval(() => {
      ask().catch(() => {});
    }, POLL_MS);
    return () => {
      stopped = true;
      window.clearInterval(timer);
    };
  }, [live, filterKey]);
  const toggleLive = (on: boolean) => {
    setLive(on);
    setNews('');
    if (on && (query.get('page') || query.get('orderby') || query.get('order'))) {
      // A tail reads newest first, from the first page.
      const q = new URLSearchParams(query);
      for (const k of ['page', 'orderby', 'order']) q.delete(k);
      const s = q.toString();
      navigate(`/log${s ? `?${s}` : ''}`, true);
    }
  };
  // /admin/log/{id}: one entry, opened from a link (the log has no route per entry: the first after id - 1).
  const linked = rest[0] && /^\d+$/.test(rest[0]) ? Number(rest[0]) : null;
  const [linkedEntry, setLinkedEntry] = useState<LogEntry | null>(null);
  useEffect(() => {
    setLinkedEntry(null);
    if (!linked) return;
    apiPage<LogEntry>('/logs', { after_id: linked - 1, orderby: 'id', order: 'asc', per_page: 1 }).then(
      (page) => setLinkedEntry(page.items[0]?.id === linked ? page.items[0] : null),
      () => setLinkedEntry(null),
    );
  }, [linked]);
  return (
    <>
      <h1>Log</h1>
      <div className="ct-toolbar">
        <ToggleControl
          __nextHasNoMarginBottom
          label="Live"
          help={`Checks for new entries every ${POLL_MS / 1000} seconds.`}
          checked={live}
          onChange={toggleLive}
        />
        <span role="status" className="ct-aside">
          {live ? news || 'Following the log…' : ''}
        </span>
      </div>
      <ListView spec={spec} query={query} list={list} />
      {linkedEntry ? (
        <Modal title={`Log entry #${linkedEntry.id}`} onRequestClose={() => navigate(`/log${query.toString() ? `?${query}` : ''}`, true)}>
          <EntryDetail entry={linkedEntry} />
        </Modal>
      ) : null}
    </>
  );
}
