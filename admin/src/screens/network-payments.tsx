// The network page's Payments panel: the payment lines the network reported (GET
// /networks/{id}/payments), those for transactions we do not know, and for a custom network with
// a `payments` mapping the CSV import of its payment report with each line's outcome.
import { Button, Card, CardBody, CardHeader, Spinner } from '@wordpress/components';
import { useCallback, useEffect, useId, useState } from 'react';
import { api, apiPage, type Page } from '../lib/api';
import { Link } from '../lib/link';
import { ScreenNotices, useScreenNotice } from '../lib/notices';
import type { Network } from './networks';

interface PaymentLine {
  id: number;
  payment_id: string;
  transaction_id: string;
  order_id: number | null;
  amount: string | null;
  currency: string | null;
  paid_at: string;
  source: string;
}

interface ImportResult {
  line: number;
  transaction_id: string;
  payment_id: string;
  result: 'recorded' | 'already' | 'unknown' | 'conflict' | 'invalid';
  order_id: number | null;
  released?: boolean;
  error?: { code: string; message: string };
}

interface ImportSummary {
  recorded: number;
  already: number;
  unknown: number;
  conflict: number;
  invalid: number;
  released: number;
  results: ImportResult[];
}

function LinesTable({ page, caption }: { page: Page<PaymentLine> | null; caption: string }) {
  if (!page) return <Spinner />;
  if (page.items.length === 0) return <p>None.</p>;
  return (
    <table className="widefat striped">
      <caption className="screen-reader-text">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Paid</th>
          <th scope="col">Payment</th>
          <th scope="col">Transaction</th>
          <th scope="col">Order</th>
          <th scope="col">Amount</th>
          <th scope="col">Source</th>
        </tr>
      </thead>
      <tbody>
        {page.items.map((p) => (
          <tr key={p.id}>
            <td>{p.paid_at.slice(0, 10)}</td>
            <td>{p.payment_id}</td>
            <td>{p.transaction_id}</td>
            <td>{p.order_id === null ? 'unknown' : <Link to={`/orders/${p.order_id}`}>#{p.order_id}</Link>}</td>
            <td>{p.amount === null ? '' : `${p.amount} ${p.currency}`}</td>
            <td>{p.source}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The Payments panel of one network. */
export function NetworkPayments({ network }: { network: Network }) {
  const base = `/networks/${encodeURIComponent(network.id)}/payments`;
  const [recent, setRecent] = useState<Page<PaymentLine> | null>(null);
  const [unknown, setUnknown] = useState<Page<PaymentLine> | null>(null);
  const [notice, notices] = useScreenNotice();
  const [csv, setCsv] = useState<{ name: string; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const [summary, setSummary] = useState<ImportSummary | null>(null);
  const fileId = useId();
  const mapped = network.kind === 'custom' && !!(network.definition as { payments?: unknown } | null | undefined)?.payments;

  const load = useCallback(() => {
    apiPage<PaymentLine>(base, { per_page: 10 }).then(setRecent, notices.error);
    apiPage<PaymentLine>(base, { per_page: 10, unknown: 1 }).then(setUnknown, notices.error);
  }, [base, notices]);
  useEffect(load, [load]);

  const readFile = (file: File | undefined) => {
    if (!file) return setCsv(null);
    file.text().then((text) => setCsv({ name: file.name, text }), notices.error);
  };
  const upload = async () => {
    if (!csv) return;
    setBusy(true);
    try {
      const s = await api<ImportSummary>(`${base}/import`, { method: 'POST', data: { csv: csv.text } });
      setSummary(s);
      notices.success(`${s.recorded} recorded, ${s.already} already on file, ${s.unknown} unknown, ${s.conflict} conflict(s), ${s.invalid} invalid.`);
      load();
    } catch (err) {
      notices.error(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Card className="ct-wide">
      <CardHeader>
        <h2>Payments</h2>
        <Button variant="link" onClick={load}>
          Refresh
        </Button>
      </CardHeader>
      <CardBody>
        <ScreenNotices notice={notice} onDismiss={notices.clear} />
        <h3>Recent payment lines{recent ? ` (${recent.total})` : ''}</h3>
        <LinesTable page={recent} caption="Recent payment lines" />
        <h3>Unknown transactions{unknown ? ` (${unknown.total})` : ''}</h3>
        <p className="ct-aside">Payments for transactions not on file: kept, and matched when the order arrives.</p>
        <LinesTable page={unknown} caption="Payment lines for unknown transactions" />
        {mapped ? (
          <>
            <h3>Import a payment report</h3>
            <div className="ct-file-field">
              <label htmlFor={fileId}>Payment report (CSV, read by the definition's payments mapping)</label>
              <input id={fileId} type="file" accept=".csv,text/csv,text/plain" onChange={(e) => readFile(e.currentTarget.files?.[0])} />
            </div>
            <Button variant="primary" onClick={upload} disabled={!csv || busy} isBusy={busy}>
              Import
            </Button>
            {summary ? (
              <table className="widefat striped">
                <caption className="screen-reader-text">Import results</caption>
                <thead>
                  <tr>
                    <th scope="col">Line</th>
                    <th scope="col">Transaction</th>
                    <th scope="col">Payment</th>
                    <th scope="col">Result</th>
                  </tr>
                </thead>
                <tbody>
                  {summary.results.map((r) => (
                    <tr key={r.line}>
                      <td>{r.line}</td>
                      <td>{r.transaction_id}</td>
                      <td>{r.payment_id}</td>
                      <td>
                        {r.result}
                        {r.released ? ' (cashback released)' : ''}
                        {r.error ? `: ${r.error.message}` : ''}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            ) : null}
          </>
        ) : network.kind === 'custom' ? (
          <p>Add a "payments" mapping to the definition to import this network's payment reports.</p>
        ) : null}
      </CardBody>
    </Card>
  );
}
