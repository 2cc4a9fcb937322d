// The overview's smaller cards: the per-day table beside the chart, jobs running, postbacks per
// network and the latest errors of the log. Each number links to the list it counts, filtered
// with the API's own parameter names.
import { Spinner } from '@wordpress/components';
import { useEffect, useState } from 'react';
import { apiPage, type Page } from '../lib/api';
import { errorNotice, type ScreenNotice, ScreenNotices } from '../lib/notices';
import { Link } from '../lib/link';
import { Money } from '../lib/money';
import { FigureTable, SummaryCard } from './overview-card';
import type { ChartDay } from './overview-chart';

const DAY = 86_400_000;

/**
 * The orders list's bounds for one UTC day (`after` and `before` are strict). The links add
 * `held=false`: the chart counts no order held for review, nor does the list it opens.
 */
function dayBounds(day: string): { after: string; before: string } {
  const start = Date.parse(`${day}T00:00:00Z`);
  return { after: new Date(start - 1).toISOString(), before: new Date(start + DAY).toISOString() };
}

/** The figures the chart draws, newest day first, days with orders only. */
export function DailyTable({ days, currency }: { days: (ChartDay & { commission: string })[]; currency: string }) {
  const rows = days.filter((d) => d.count > 0).reverse();
  return (
    // A scrolling box is reached with the keyboard to scroll it (WCAG 2.1.1; axe scrollable-region-focusable).
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus to be scrolled without a mouse.
    <section className="ct-daily-table" tabIndex={0} aria-label={`Orders per day in ${currency}`}>
      <FigureTable columns={[{ label: 'Day (UTC)' }, { label: 'Orders', num: true }, { label: 'Commission', num: true }, { label: 'Cashback', num: true }]}>
        {rows.map((d) => (
          <tr key={d.day}>
            <th scope="row">{d.day}</th>
            <td className="ct-num">
              <Link to="/orders" query={{ currency, held: 'false', ...dayBounds(d.day) }}>
                {d.count}
              </Link>
            </td>
            <td className="ct-num">
              <Money amount={d.commission} />
            </td>
            <td className="ct-num">
              <Money amount={d.cashback} />
            </td>
          </tr>
        ))}
      </FigureTable>
    </section>
  );
}

/** A list's first page, loaded once: its rows, its total, or the refusal in words. */
function useFirstPage<T>(path: string, query: Record<string, unknown>): { page: Page<T> | null; error: ScreenNotice | null; dismiss: () => void } {
  const [page, setPage] = useState<Page<T> | null>(null);
  const [error, setError] = useState<ScreenNotice | null>(null);
  const key = JSON.stringify(query);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the query is compared by its JSON (a literal is new on every render).
  useEffect(() => {
    apiPage<T>(path, query).then(setPage, (err: unknown) => setError(errorNotice(err)));
  }, [path, key]);
  return { page, error, dismiss: () => setError(null) };
}

interface Job {
  id: number;
  type: string;
  progress: { total: number | null; done: number };
}

/** Jobs running now (GET /jobs?status=running): the count and what they are. */
export function JobsRunning() {
  const { page, error } = useFirstPage<Job>('/jobs', { status: 'running', per_page: 5 });
  if (error) return <span className="ct-aside">Jobs: {error.text}</span>;
  if (!page) return <Spinner />;
  return (
    <>
      <Link to="/jobs" query={{ status: 'running' }}>
        <strong>{page.total}</strong> jobs running
      </Link>
      {page.items.length ? (
        <span className="ct-aside"> {page.items.map((j) => `${j.type} ${j.progress.done}${j.progress.total ? `/${j.progress.total}` : ''}`).join(', ')}</span>
      ) : null}
    </>
  );
}

export interface PostbackCounts {
  network: string;
  accepted: number;
  duplicate: number;
  rejected: number;
  error: number;
}

const OUTCOMES = ['accepted', 'duplicate', 'rejected', 'error'] as const;

/** Postbacks per network and outcome over the window, each count a link to that network's postbacks. */
export function PostbacksCard({ networks, since, days }: { networks: PostbackCounts[]; since: string; days: number }) {
  return (
    <SummaryCard className="ct-postbacks" title={`Postbacks, last ${days} days`}>
      <FigureTable
        columns={[{ label: 'Network' }, ...OUTCOMES.map((o) => ({ label: o[0].toUpperCase() + o.slice(1), num: true }))]}
        empty={networks.length === 0 ? 'No postbacks in this period.' : null}
      >
        {networks.map((n) => (
          <tr key={n.network}>
            <th scope="row">
              <Link to={`/networks/${encodeURIComponent(n.network)}`}>{n.network}</Link>
            </th>
            {OUTCOMES.map((o) => (
              <td key={o} className={o === 'rejected' && n[o] > 0 ? 'ct-num ct-negative' : 'ct-num'}>
                <Link to={`/networks/${encodeURIComponent(n.network)}`} query={{ outcome: o, test: 'false', after: since }}>
                  {n[o]}
                </Link>
              </td>
            ))}
          </tr>
        ))}
      </FigureTable>
    </SummaryCard>
  );
}

interface LogEntry {
  id: number;
  time: string;
  source: string;
  message: string;
}

/** The latest errors of the log (GET /logs?level=error&per_page=5). */
export function ErrorsCard() {
  const { page, error, dismiss } = useFirstPage<LogEntry>('/logs', { level: 'error', per_page: 5 });
  return (
    <SummaryCard
      className="ct-wide"
      title="Latest errors"
      aside={
        page ? (
          <Link to="/log" query={{ level: 'error' }}>
            <strong>{page.total}</strong> errors in the log
          </Link>
        ) : null
      }
    >
      {error ? (
        <ScreenNotices notice={error} onDismiss={dismiss} />
      ) : !page ? (
        <Spinner />
      ) : page.items.length === 0 ? (
        <p>No errors in the log.</p>
      ) : (
        <ul className="ct-errors">
          {page.items.map((e) => (
            <li key={e.id}>
              <time dateTime={e.time}>{e.time.replace('T', ' ').slice(0, 19)}</time> <span className="ct-aside">{e.source}</span>{' '}
              <Link to={`/log/${e.id}`}>{e.message}</Link>
            </li>
          ))}
        </ul>
      )}
    </SummaryCard>
  );
}
