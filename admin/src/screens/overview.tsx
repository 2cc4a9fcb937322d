// Overview: what the site owes and what needs attention, each number a link to the list it counts.
import { Card, CardBody, CardHeader, Notice, SelectControl, Spinner } from '@wordpress/components';
import { useEffect, useState } from 'react';
import { api, errorMessage } from '../lib/api';
import { Link } from '../lib/link';
import { Money } from '../lib/money';
import { navigate } from '../lib/router';
import type { ScreenProps } from '../screens';

interface Overview {
  generated_at: string;
  currency: string;
  members: { total: number; with_balance: number };
  liabilities: { currency: string; available: string; pending: string; overdrawn: string; members_overdrawn: number }[];
  orders: {
    days: number;
    since: string;
    by_status: { status: string; currency: string; count: number; sale_amount: string; commission: string; cashback: string; margin: string | null }[];
  };
  payouts: { pending: { count: number; by_currency: { currency: string; count: number; amount: string }[] } };
  unmatched_orders: { count: number };
  held_orders: { count: number };
  ai: { configured: boolean; model: string | null; days: number; calls: number; tokens: { total_tokens: number } } | null;
}

const WINDOWS = [7, 30, 90, 365];

export default function OverviewScreen({ query }: ScreenProps) {
  const days = WINDOWS.includes(Number(query.get('days'))) ? Number(query.get('days')) : 30;
  const [data, setData] = useState<Overview | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setError(null);
    api<Overview>('/overview', { query: { days } }).then(setData, (err: unknown) => setError(errorMessage(err)));
  }, [days]);

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
          onChange={(value) => navigate(`/overview?days=${value}`, true)}
        />
      </div>
      {error ? (
        <Notice status="error" isDismissible={false}>
          {error}
        </Notice>
      ) : null}
      {!data ? (
        <Spinner />
      ) : (
        <div className="ct-cards">
          <Card>
            <CardHeader>
              <h2>What members are owed</h2>
            </CardHeader>
            <CardBody>
              {data.liabilities.length === 0 ? (
                <p>No balances yet.</p>
              ) : (
                <table className="ct-table">
                  <thead>
                    <tr>
                      <th scope="col">Currency</th>
                      <th scope="col" className="ct-num">
                        Available
                      </th>
                      <th scope="col" className="ct-num">
                        Pending
                      </th>
                      <th scope="col" className="ct-num">
                        Overdrawn
                      </th>
                    </tr>
                  </thead>
                  <tbody>
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
                  </tbody>
                </table>
              )}
            </CardBody>
          </Card>
          <Card>
            <CardHeader>
              <h2>Needs attention</h2>
            </CardHeader>
            <CardBody>
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
              </ul>
            </CardBody>
          </Card>
          <Card className="ct-wide">
            <CardHeader>
              <h2>Orders recorded in the last {data.orders.days} days</h2>
            </CardHeader>
            <CardBody>
              {data.orders.by_status.length === 0 ? (
                <p>No orders in this period.</p>
              ) : (
                <table className="ct-table">
                  <thead>
                    <tr>
                      <th scope="col">Status</th>
                      <th scope="col">Currency</th>
                      <th scope="col" className="ct-num">
                        Orders
                      </th>
                      <th scope="col" className="ct-num">
                        Sales
                      </th>
                      <th scope="col" className="ct-num">
                        Commission
                      </th>
                      <th scope="col" className="ct-num">
                        Cashback
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.orders.by_status.map((o) => (
                      <tr key={`${o.status}-${o.currency}`}>
                        <th scope="row">{o.status}</th>
                        <td>{o.currency}</td>
                        <td className="ct-num">
                          <Link to="/orders" query={{ status: o.status, currency: o.currency, after: data.orders.since }}>
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
                  </tbody>
                </table>
              )}
            </CardBody>
          </Card>
          <Card>
            <CardHeader>
              <h2>Members</h2>
            </CardHeader>
            <CardBody>
              <p>
                <Link to="/members">
                  <strong>{data.members.total}</strong> members
                </Link>
                , {data.members.with_balance} with a balance
              </p>
            </CardBody>
          </Card>
          {data.ai ? (
            <Card>
              <CardHeader>
                <h2>AI spend, last {data.ai.days} days</h2>
              </CardHeader>
              <CardBody>
                <p>
                  {data.ai.configured ? `${data.ai.model ?? ''}: ` : 'Not configured. '}
                  <strong>{data.ai.tokens.total_tokens.toLocaleString('en')}</strong> tokens in {data.ai.calls} calls
                </p>
              </CardBody>
            </Card>
          ) : null}
        </div>
      )}
    </>
  );
}
