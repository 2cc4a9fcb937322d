// The overview's Receivables card: what the networks still owe per currency, by days since
// approval, beside what members are owed in that currency, and the variances per network, each
// network a link to its page (where the variances are listed).
import { Link } from '../lib/link';
import { CountedMoneyCell, Money } from '../lib/money';
import { FigureTable, SummaryCard } from './overview-card';

export interface Figure {
  count: number;
  commission: string;
}

export interface Liability {
  currency: string;
  available: string;
  pending: string;
  overdrawn: string;
  members_overdrawn: number;
  owed: string;
}

export interface Bucket extends Figure {
  bucket: '0-30' | '31-60' | '61-90' | 'over_90';
}

/** The overview's `receivables` section. */
export interface ReceivablesOverview {
  by_network: { network: string; currency: string; unpaid: Figure; buckets: Bucket[]; overdue: Figure }[];
  by_currency: { currency: string; unpaid: Figure; buckets: Bucket[]; overdue: Figure; liabilities: Liability | null }[];
  variances: { network: string; mismatched: number; unknown: number; overdue: number }[];
}

/** The age buckets' column headings, in the API's order. */
export const BUCKET_LABELS: Record<Bucket['bucket'], string> = { '0-30': '0–30 days', '31-60': '31–60 days', '61-90': '61–90 days', over_90: 'Over 90 days' };

export function ReceivablesCard({ receivables }: { receivables: ReceivablesOverview }) {
  const columns = [{ label: 'Unpaid', num: true }, ...Object.values(BUCKET_LABELS).map((label) => ({ label, num: true }))];
  return (
    <SummaryCard className="ct-wide ct-receivables" title="Receivables: approved commission the networks have not paid">
      <FigureTable
        columns={[{ label: 'Currency' }, ...columns, { label: 'Past the terms', num: true }, { label: 'Members are owed', num: true }]}
        empty={receivables.by_currency.length === 0 ? 'Nothing owed: every approved order is paid.' : null}
      >
        {receivables.by_currency.map((c) => (
          <tr key={c.currency}>
            <th scope="row">{c.currency}</th>
            <CountedMoneyCell figure={c.unpaid} />
            {c.buckets.map((b) => (
              <td key={b.bucket} className="ct-num">
                <Money amount={b.commission} />
              </td>
            ))}
            <CountedMoneyCell figure={c.overdue} />
            <td className="ct-num">
              <Money amount={c.liabilities?.owed ?? null} />
            </td>
          </tr>
        ))}
      </FigureTable>
      {receivables.by_network.length ? (
        <>
          <h3>Per network</h3>
          <FigureTable columns={[{ label: 'Network' }, { label: 'Currency' }, ...columns]}>
            {receivables.by_network.map((n) => (
              <tr key={`${n.network}-${n.currency}`}>
                <th scope="row">
                  <Link to={`/networks/${encodeURIComponent(n.network)}`}>{n.network}</Link>
                </th>
                <td>{n.currency}</td>
                <CountedMoneyCell figure={n.unpaid} />
                {n.buckets.map((b) => (
                  <td key={b.bucket} className="ct-num">
                    <Money amount={b.commission} />
                  </td>
                ))}
              </tr>
            ))}
          </FigureTable>
        </>
      ) : null}
      <h3>Variances</h3>
      <FigureTable
        columns={[
          { label: 'Network' },
          { label: 'Paid amounts that differ', num: true },
          { label: 'Unknown transactions paid', num: true },
          { label: 'Unpaid past the terms', num: true },
        ]}
        empty={receivables.variances.length === 0 ? 'None.' : null}
      >
        {receivables.variances.map((v) => (
          <tr key={v.network}>
            <th scope="row">
              <Link to={`/networks/${encodeURIComponent(v.network)}`}>{v.network}</Link>
            </th>
            <td className="ct-num">{v.mismatched}</td>
            <td className="ct-num">{v.unknown}</td>
            <td className="ct-num">{v.overdue}</td>
          </tr>
        ))}
      </FigureTable>
    </SummaryCard>
  );
}
