// "Export" on a list screen: POST /exports with the list's current filters (the URL query holds the
// API's own parameter names; paging and sort are not filters), then the Exports screen, where the
// file appears with its download link once written. A refusal is shown in words.
import { Button } from '@wordpress/components';
import { useState } from 'react';
import { api } from './api';
import { ScreenNotices, useScreenNotice } from './notices';
import { navigate } from './router';

const NOT_FILTERS = new Set(['page', 'per_page', 'orderby', 'order']);

/** The list's filters as an export takes them: the query without paging and sort, with the list's fixed ones. */
export function listFilters(query: URLSearchParams, fixed: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = { ...fixed };
  for (const [k, v] of query) if (!NOT_FILTERS.has(k) && v !== '') out[k] = v;
  return out;
}

export function ExportButton({
  kind,
  query,
  fixed,
}: {
  kind: 'orders' | 'payouts' | 'ledger_entries';
  query: URLSearchParams;
  fixed?: Record<string, string>;
}) {
  const [busy, setBusy] = useState(false);
  const [notice, notices] = useScreenNotice();
  const start = () => {
    if (busy) return;
    setBusy(true);
    api<{ id: number }>('/exports', { method: 'POST', data: { kind, format: 'csv', ...listFilters(query, fixed) } }).then(
      (exp) => navigate(`/exports?created=${exp.id}`),
      (err: unknown) => {
        notices.error(err);
        setBusy(false);
      },
    );
  };
  return (
    <>
      <Button __next40pxDefaultSize variant="secondary" onClick={start} isBusy={busy} disabled={busy} description="A CSV file of every row under these filters">
        Export
      </Button>
      <ScreenNotices notice={notice} onDismiss={notices.clear} />
    </>
  );
}
