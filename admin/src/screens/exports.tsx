// Exports: files of a list's rows (orders, ledger entries, payouts, balances, clicks, claims) under
// that list's filters, as CSV or JSON Lines. The list shows each export's status, rows and size,
// when its file expires, and a download link once written (the browser streams the file from the
// authenticated GET /exports/{id}/file); "New export" chooses the kind, the format and the main
// filters; Delete removes an export with its file. While one is being written the list follows it.
import { Button, SelectControl, TextControl } from '@wordpress/components';
import type { Action, Field } from '@wordpress/dataviews';
import { useEffect, useMemo, useState } from 'react';
import { ActionModal } from '../lib/action-modal';
import { downloadUrl } from '../lib/api';
import { ListView, type ListSpec, useListData } from '../lib/list';
import { ScreenNotices, useScreenNotice } from '../lib/notices';
import type { ScreenProps } from '../screens';
import { MemberPicker } from './member-picker';
import './orders.css';

export interface Export {
  id: number;
  kind: string;
  format: 'csv' | 'jsonl';
  filters: Record<string, unknown>;
  status: 'queued' | 'running' | 'done' | 'failed' | 'cancelled';
  rows: number;
  bytes: number;
  file_name: string | null;
  job_id: number | null;
  actor: string;
  created_at: string;
  finished_at: string | null;
  expires_at: string | null;
  error: string | null;
}

const KINDS = [
  { value: 'orders', label: 'Orders' },
  { value: 'ledger_entries', label: 'Ledger entries' },
  { value: 'payouts', label: 'Payouts' },
  { value: 'balances', label: 'Balances' },
  { value: 'clicks', label: 'Clicks' },
  { value: 'claims', label: 'Claims' },
];
const STATUSES = [
  { value: 'queued', label: 'Queued' },
  { value: 'running', label: 'Running' },
  { value: 'done', label: 'Done' },
  { value: 'failed', label: 'Failed' },
  { value: 'cancelled', label: 'Cancelled' },
];
const FORMATS: { value: string; label: string }[] = [
  { value: 'csv', label: 'CSV (spreadsheets)' },
  { value: 'jsonl', label: 'JSON Lines' },
];
/** The statuses each kind's list filters by (none for balances and clicks). */
const KIND_STATUSES: Record<string, string[]> = {
  orders: ['pending', 'approved', 'declined'],
  payouts: ['pending', 'paid', 'cancelled'],
  claims: ['open', 'matched', 'submitted', 'approved', 'declined', 'expired'],
};
/** Kinds whose list takes a date range (created_at). */
const DATED = new Set(['orders', 'ledger_entries', 'payouts', 'clicks', 'claims']);

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

const fields: Field<Export>[] = [
  { id: 'id', label: 'Export', type: 'integer', enableHiding: false, filterBy: false, render: ({ item }) => <>#{item.id}</> },
  { id: 'kind', label: 'Kind', elements: KINDS, enableSorting: false, filterBy: { operators: ['isAny'] } },
  { id: 'format', label: 'Format', enableSorting: false, filterBy: false, getValue: ({ item }) => item.format.toUpperCase() },
  { id: 'status', label: 'Status', elements: STATUSES, enableSorting: false, filterBy: { operators: ['isAny'] } },
  {
    id: 'filters',
    label: 'Filters',
    enableSorting: false,
    filterBy: false,
    getValue: ({ item }) =>
      Object.entries(item.filters)
        .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : String(v)}`)
        .join(' ') || 'none',
  },
  { id: 'rows', label: 'Rows', type: 'integer', enableSorting: false, filterBy: false },
  { id: 'bytes', label: 'Size', enableSorting: false, filterBy: false, getValue: ({ item }) => (item.status === 'done' ? size(item.bytes) : '') },
  {
    id: 'file',
    label: 'File',
    enableSorting: false,
    filterBy: false,
    render: ({ item }) =>
      item.status === 'done' && item.file_name ? (
        <a href={downloadUrl(`/exports/${item.id}/file`)} download={item.file_name}>
          Download {item.file_name}
        </a>
      ) : item.error ? (
        <span className="ct-negative">{item.error}</span>
      ) : (
        <span className="ct-aside">{item.status === 'queued' || item.status === 'running' ? 'Being written…' : ''}</span>
      ),
  },
  { id: 'created_at', label: 'Requested', type: 'datetime', filterBy: false },
  { id: 'expires_at', label: 'Expires', type: 'datetime', enableSorting: false, filterBy: false },
];

const spec: ListSpec<Export> = {
  screen: '/exports',
  path: '/exports',
  fields,
  columns: ['kind', 'format', 'status', 'filters', 'rows', 'bytes', 'file', 'created_at', 'expires_at'],
  sort: { field: 'id', direction: 'desc' },
  filters: [
    { field: 'status', kind: 'any' },
    { field: 'kind', kind: 'any' },
  ],
};

export default function ExportsScreen({ query }: ScreenProps) {
  const listQuery = useMemo(() => {
    const q = new URLSearchParams(query);
    q.delete('created');
    return q;
  }, [query]);
  const list = useListData(spec, listQuery);
  const [notice, notices] = useScreenNotice();
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<Export | null>(null);
  const created = query.get('created');
  useEffect(() => {
    if (created) notices.success(`Export #${created} requested: its file appears below once written.`);
  }, [created, notices]);
  const actions = useMemo<Action<Export>[]>(
    () => [{ id: 'delete', label: 'Delete', isDestructive: true, callback: ([item]) => setDeleting(item ?? null) }],
    [],
  );
  // While an export on screen is being written, the list follows it.
  const live = list.items.some((e) => e.status === 'queued' || e.status === 'running');
  const { reload } = list;
  useEffect(() => {
    if (!live) return;
    const timer = window.setInterval(reload, 1000);
    return () => window.clearInterval(timer);
  }, [live, reload]);
  return (
    <>
      <h1>Exports</h1>
      <ScreenNotices notice={notice} onDismiss={notices.clear} />
      <p className="ct-aside">
        Files of a list's rows under that list's filters, for the accountant or a spreadsheet. Each file is kept for a few days (exports.retention_days), then
        deleted.
      </p>
      <div className="ct-list-tools">
        <Button __next40pxDefaultSize variant="primary" onClick={() => setCreating(true)}>
          New export
        </Button>
      </div>
      <ListView spec={{ ...spec, actions }} query={listQuery} list={list} />
      {creating ? (
        <NewExportModal
          onDone={(exp) => {
            setCreating(false);
            notices.success(`Export #${exp.id} requested: its file appears below once written.`);
            reload();
          }}
          onClose={() => setCreating(false)}
        />
      ) : null}
      {deleting ? (
        <ActionModal<unknown>
          title={`Delete export #${deleting.id}?`}
          submitLabel="Delete the export and its file"
          destructive
          request={() => ({ path: `/exports/${deleting.id}`, method: 'DELETE' })}
          onDone={() => {
            setDeleting(null);
            notices.success(`Export #${deleting.id} deleted.`);
            reload();
          }}
          onClose={() => setDeleting(null)}
        >
          <p>The file is deleted too{deleting.status === 'queued' || deleting.status === 'running' ? ', and the export stops' : ''}.</p>
        </ActionModal>
      ) : null}
    </>
  );
}

function NewExportModal({ onDone, onClose }: { onDone: (exp: Export) => void; onClose: () => void }) {
  const [kind, setKind] = useState('orders');
  const [format, setFormat] = useState('csv');
  const [status, setStatus] = useState('');
  const [currency, setCurrency] = useState('');
  const [memberId, setMemberId] = useState<string | null>(null);
  const [after, setAfter] = useState('');
  const [before, setBefore] = useState('');
  const statuses = KIND_STATUSES[kind] ?? [];
  const data = () => {
    const d: Record<string, unknown> = { kind, format };
    if (status && statuses.includes(status)) d.status = status;
    if (currency.trim()) d.currency = currency.trim().toUpperCase();
    if (memberId) d.member_id = Number(memberId);
    if (after && DATED.has(kind)) d.after = new Date(`${after}T00:00:00Z`).toISOString();
    if (before && DATED.has(kind)) d.before = new Date(`${before}T00:00:00Z`).toISOString();
    return d;
  };
  return (
    <ActionModal<Export>
      title="New export"
      submitLabel="Start the export"
      request={() => ({ path: '/exports', data: data() })}
      onDone={onDone}
      onClose={onClose}
    >
      <SelectControl __next40pxDefaultSize __nextHasNoMarginBottom label="What" value={kind} options={KINDS} onChange={setKind} />
      <SelectControl __next40pxDefaultSize __nextHasNoMarginBottom label="Format" value={format} options={FORMATS} onChange={setFormat} />
      {statuses.length ? (
        <SelectControl
          __next40pxDefaultSize
          __nextHasNoMarginBottom
          label="Status"
          value={status}
          options={[{ value: '', label: 'Any' }, ...statuses.map((s) => ({ value: s, label: s }))]}
          onChange={setStatus}
        />
      ) : null}
      <MemberPicker label="Member (optional)" value={memberId} onChange={setMemberId} />
      {kind !== 'clicks' ? (
        <TextControl __next40pxDefaultSize __nextHasNoMarginBottom label="Currency (optional)" value={currency} onChange={setCurrency} maxLength={3} />
      ) : null}
      {DATED.has(kind) ? (
        <>
          <TextControl __next40pxDefaultSize __nextHasNoMarginBottom type="date" label="Created after (UTC)" value={after} onChange={setAfter} />
          <TextControl __next40pxDefaultSize __nextHasNoMarginBottom type="date" label="Created before (UTC)" value={before} onChange={setBefore} />
        </>
      ) : null}
    </ActionModal>
  );
}
