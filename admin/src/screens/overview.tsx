// Overview: what the site owes and what needs attention, each number a link to the list it counts.
import { SelectControl, Spinner } from '@wordpress/components';
import { useEffect, useMemo, useState } from 'react';
import { api } from '../lib/api';
import { ScreenNotices, useScreenNotice } from '../lib/notices';
import { Link } from '../lib/link';
import { Money } from '../lib/money';
import { navigate } from '../lib/router';
import type { ScreenProps } from '../screens';
import { FigureTable, SummaryCard } from './overview-card';
import { type ChartDay, DailyChart } from './overview-chart';
import { DailyTable, ErrorsCard, JobsRunning, type PostbackCounts, PostbacksCard } from './overview-parts';
import { type Liability, ReceivablesCard, type ReceivablesOverview } from './overview-receivables';
import './overview.css';

interface Overview {
  generated_at: string;
  currency: string;
  members: { total: number; with_balance: number };
  liabilities: Liability[];
  orders: {
    days: number;
    since: string;
    by_status: { status: string; currency: string; count: number; sale_amount: string; commission: string; cashback: string; margin: string | null }[];
    by_day: OrderDay[];
  };
  postbacks: { by_network: PostbackCounts[] };
  payouts: { pending: { count: number; by_currency: { currency: string; count: number; amount: string }[] } };
  unmatched_orders: { count: number };
  held_orders: { count: number };
  networks: { stalled: { network: string; stalled_since: string | null }[] };
  receivables: ReceivablesOverview;
  ai: { configured: boolean; model: string | null; days: number; calls: number; tokens: { total_tokens: number } } | null;
}

export interface OrderDay {
  day: string;
  currency: string;
  count: number;
  commission: string;
  cashback: string;
}

const WINDOWS = [7, 30, 90, 365];

/** Every UTC day from `since` to `until`, with the API's figures where it has some and zeros elsewhere. */
function everyDay(rows: OrderDay[], since: string, until: string): (ChartDay & { commission: string })[] {
  const byDay = new Map(rows.map((r) => [r.day, r]));
  const out: (ChartDay & { commission: string })[] = [];
  // A zero with the currency's decimals, as the API writes it ("0.00", "0" for JPY).
  const decimals = rows[0]?.cashback.split('.')[1]?.length ?? 0;
  const zero = decimals ? `0.${'0'.repeat(decimals)}` : '0';
  for (let t = Date.parse(`${since.slice(0, 10)}T00:00:00Z`); t <= Date.parse(until); t += 86_400_000) {
    const day = new Date(t).toISOString().slice(0, 10);
    const r = byDay.get(day);
    out.push(r ? { day, count: r.count, cashback: r.cashback, commission: r.commission } : { day, count: 0, cashback: zero, commission: zero });
  }
  return out;
}

export default function OverviewScreen({ query }: ScreenProps) {
  const days = WINDOWS.includes(Number(query.get('days'))) ? Number(query.get('days')) : 30;
  const [data, setData] = useState<Overview | null>(null);
  const [notice, say] = useScreenNotice();
  const currencies = useMemo(() => [...new Set(data?.orders.by_day.map((d) => d.currency) ?? [])].sort(), [data]);
  const asked = query.get('currency');
  const currency =
    asked && currencies.includes(asked) ? asked : data && currencies.includes(data.currency) ? data.currency : (currencies[0] ?? data?.currency ?? '');
  const series = useMemo(
    () =>
      data
        ? everyDay(
            data.orders.by_day.filter((d) => d.currency === currency),
            data.orders.since,
            data.generated_at,
          )
        : [],
    [data, currency],
  );
  useEffect(() => {
    say.clear();
    api<Overview>('/overview', { query: { days } }).then(setData, (err: unknown) => say.error(err));
  }, [days, say]);

  return (
    <>
      <div className="ct-heading">
        <h1>Overview</h1>
        <SelectControl
          __next40pxDefaultSize
          __nextHasNoMarginBottom
          label="Period"
          value={String(days)}
          options={WINDOWS.map((d) => ({ value: String(d), label: `Last ${d} days` }))}
          onChange={(value) => navigate(`/overview?days=${value}${asked ? `&currency=${asked}` : ''}`, true)}
        />
      </div>
      <ScreenNotices notice={notice} onDismiss={say.clear} />
      {!data ? (
        <Spinner />
      ) : (
        <div className="ct-cards">
          <SummaryCard title="What members are owed">
            <FigureTable
              columns={[{ label: 'Currency' }, { label: 'Available', num: true }, { label: 'Pending', num: true }, { label: 'Overdrawn', num: true }]}
              empty={data.liabilities.length === 0 ? 'No balances yet.' : null}
            >
              {data.liabilities.map((l) => (
                <tr key={l.currency}>
                  <th scope="row">{l.currency}</th>
                  <td className="ct-num">
                    <Link to="/members" query={{ currency: l.currency }}>
                      <Money amount={l.available} />
                    </Link>
                  </td>
                  <td className="ct-num">
                    <Money amount={l.pending} />
                  </td>
                  <td className="ct-num">
                    <Money amount={l.overdrawn} /> ({l.members_overdrawn})
                  </td>
                </tr>
              ))}
            </FigureTable>
          </SummaryCard>
          <SummaryCard title="Needs attention">
            <ul className="ct-counts">
              <li>
                <Link to="/orders" query={{ review: 'held' }}>
                  <strong>{data.held_orders.count}</strong> held orders
                </Link>
              </li>
              <li>
                <Link to="/orders" query={{ unmatched: 'true' }}>
                  <strong>{data.unmatched_orders.count}</strong> unmatched orders
                </Link>
              </li>
              <li className="ct-stalled-networks">
                <strong>{data.networks.stalled.length}</strong> stalled networks
                {data.networks.stalled.map((n, i) => (
                  <span key={n.network}>
                    {i ? ', ' : ': '}
                    <Link to={`/networks/${encodeURIComponent(n.network)}`}>{n.network}</Link>
                    <span className="ct-aside"> since {n.stalled_since}</span>
                  </span>
                ))}
              </li>
              <li>
                <Link to="/payouts" query={{ status: 'pending' }}>
                  <strong>{data.payouts.pending.count}</strong> payouts waiting
                </Link>
                {data.payouts.pending.by_currency.map((p) => (
                  <span key={p.currency} className="ct-aside">
                    {' '}
                    <Money amount={p.amount} currency={p.currency} />
                  </span>
                ))}
              </li>
              <li>
                <JobsRunning />
              </li>
            </ul>
          </SummaryCard>
          <SummaryCard
            className="ct-wide"
            title="Orders and cashback per day"
            aside={
              currencies.length > 1 ? (
                <SelectControl
                  __next40pxDefaultSize
                  __nextHasNoMarginBottom
                  label="Currency"
                  value={currency}
                  options={currencies.map((c) => ({ value: c, label: c }))}
                  onChange={(value) => navigate(`/overview?days=${days}&currency=${value}`, true)}
                />
              ) : null
            }
          >
            {currencies.length === 0 ? (
              <p>No orders in this period.</p>
            ) : (
              <div className="ct-daily">
                <DailyChart
                  days={series}
                  currency={currency}
                  label={`Orders and cashback in ${currency} per day over the last ${data.orders.days} days; the table beside it gives the figures.`}
                />
                <DailyTable days={series} currency={currency} />
              </div>
            )}
          </SummaryCard>
          <SummaryCard className="ct-wide" title={`Orders recorded in the last ${data.orders.days} days`}>
            <FigureTable
              columns={[
                { label: 'Status' },
                { label: 'Currency' },
                { label: 'Orders', num: true },
                { label: 'Sales', num: true },
                { label: 'Commission', num: true },
                { label: 'Cashback', num: true },
              ]}
              empty={data.orders.by_status.length === 0 ? 'No orders in this period.' : null}
            >
              {data.orders.by_status.map((o) => (
                <tr key={`${o.status}-${o.currency}`}>
                  <th scope="row">{o.status}</th>
                  <td>{o.currency}</td>
                  <td className="ct-num">
                    <Link to="/orders" query={{ status: o.status, currency: o.currency, held: 'false', after: data.orders.since }}>
                      {o.count}
                    </Link>
                  </td>
                  <td className="ct-num">
                    <Money amount={o.sale_amount} />
                  </td>
                  <td className="ct-num">
                    <Money amount={o.commission} />
                  </td>
                  <td className="ct-num">
                    <Money amount={o.cashback} />
                  </td>
                </tr>
              ))}
            </FigureTable>
          </SummaryCard>
          <ReceivablesCard receivables={data.receivables} />
          <SummaryCard title="Members">
            <p>
              <Link to="/members">
                <strong>{data.members.total}</strong> members
              </Link>
              , {data.members.with_balance} with a balance
            </p>
          </SummaryCard>
          <PostbacksCard networks={data.postbacks.by_network} since={data.orders.since} days={data.orders.days} />
          {data.ai ? (
            <SummaryCard title={`AI spend, last ${data.ai.days} days`}>
              <p>
                {data.ai.configured ? `${data.ai.model ?? ''}: ` : 'Not configured. '}
                <strong>{data.ai.tokens.total_tokens.toLocaleString('en')}</strong> tokens in {data.ai.calls} calls
              </p>
            </SummaryCard>
          ) : null}
          <ErrorsCard />
        </div>
      )}
    </>
  );
}
