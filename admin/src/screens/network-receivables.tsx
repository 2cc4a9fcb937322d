// A network's receivables (GET /networks/{id}/receivables): per currency the approved commission it
// has not paid, by age, beside what members are owed in that currency; and the variances (paid
// amounts that differ, payments for transactions we do not know, orders unpaid past the terms),
// each list capped by the API with its full count.
import { Card, CardBody, CardHeader, Notice, Spinner } from '@wordpress/components';
import { useEffect, useState } from 'react';
import { api, errorMessage } from '../lib/api';
import { Link } from '../lib/link';
import { CountedMoneyCell, Money } from '../lib/money';
import { FigureTable } from './overview-card';
import { BUCKET_LABELS, type Bucket, type Figure, type Liability } from './overview-receivables';

interface Receivables {
  network: string;
  payment_terms_days: number;
  currencies: { currency: string; approved: Figure; paid: Figure; unpaid: Figure; buckets: Bucket[]; overdue: Figure; liabilities: Liability | null }[];
  variances: {
    limit: number;
    mismatched: {
      count: number;
      items: {
        order_id: number;
        transaction_id: string;
        status: string;
        currency: string;
        commission: string;
        paid_currency: string;
        paid: string;
        difference: string | null;
      }[];
    };
    unknown: {
      count: number;
      items: {
        id: number;
        payment_id: string;
        transaction_id: string;
        amount: string | null;
        amount_minor: number | null;
        currency: string | null;
        paid_at: string;
      }[];
    };
    overdue: {
      count: number;
      items: { order_id: number; transaction_id: string; currency: string; commission: string; approved_at: string; age_days: number }[];
    };
  };
}

/** "3 of 25 shown" when the API capped the list. */
function Shown({ list }: { list: { count: number; items: unknown[] } }) {
  return list.items.length < list.count ? <p className="ct-aside">{`The first ${list.items.length} of ${list.count}.`}</p> : null;
}

export function ReceivablesPanel({ network }: { network: string }) {
  const [data, setData] = useState<Receivables | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api<Receivables>(`/networks/${encodeURIComponent(network)}/receivables`, { query: { limit: 50 } }).then(setData, (err: unknown) =>
      setError(errorMessage(err)),
    );
  }, [network]);

  return (
    <Card className="ct-wide ct-receivables">
      <CardHeader>
        <h2>Receivables</h2>
        {data ? <span className="ct-aside">Payment terms: {data.payment_terms_days} days</span> : null}
      </CardHeader>
      <CardBody>
        {error ? (
          <Notice status="error" isDismissible={false}>
            {error}
          </Notice>
        ) : !data ? (
          <Spinner />
        ) : (
          <>
            <h3>Approved commission not yet paid, by days since approval</h3>
            <FigureTable
              columns={[
                { label: 'Currency' },
                { label: 'Unpaid orders', num: true },
                { label: 'Unpaid', num: true },
                ...Object.values(BUCKET_LABELS).map((label) => ({ label, num: true })),
                { label: 'Past the terms', num: true },
                { label: 'Paid', num: true },
                { label: 'Members are owed', num: true },
              ]}
              empty={data.currencies.length === 0 ? 'No approved orders from this network yet.' : null}
            >
              {data.currencies.map((c) => (
                <tr key={c.currency}>
                  <th scope="row">{c.currency}</th>
                  <td className="ct-num">{c.unpaid.count}</td>
                  <td className="ct-num">
                    <Money amount={c.unpaid.commission} />
                  </td>
                  {c.buckets.map((b) => (
                    <CountedMoneyCell key={b.bucket} figure={b} />
                  ))}
                  <CountedMoneyCell figure={c.overdue} />
                  <CountedMoneyCell figure={c.paid} />
                  <td className="ct-num">
                    <Money amount={c.liabilities?.owed ?? null} />
                  </td>
                </tr>
              ))}
            </FigureTable>

            <h3>Paid amounts that differ from the commission ({data.variances.mismatched.count})</h3>
            <FigureTable
              columns={[
                { label: 'Order' },
                { label: 'Transaction' },
                { label: 'Status' },
                { label: 'Commission', num: true },
                { label: 'Paid', num: true },
                { label: 'Difference', num: true },
              ]}
              empty={data.variances.mismatched.count === 0 ? 'None.' : null}
            >
              {data.variances.mismatched.items.map((m) => (
                <tr key={`${m.order_id}-${m.paid_currency}`}>
                  <th scope="row">
                    <Link to={`/orders/${m.order_id}`}>#{m.order_id}</Link>
                  </th>
                  <td>{m.transaction_id}</td>
                  <td>{m.status}</td>
                  <td className="ct-num">
                    <Money amount={m.commission} currency={m.currency} />
                  </td>
                  <td className="ct-num">
                    <Money amount={m.paid} currency={m.paid_currency} />
                  </td>
                  <td className="ct-num">{m.difference === null ? 'other currency' : <Money amount={m.difference} />}</td>
                </tr>
              ))}
            </FigureTable>
            <Shown list={data.variances.mismatched} />

            <h3>Payments for transactions we do not know ({data.variances.unknown.count})</h3>
            <FigureTable
              columns={[{ label: 'Transaction' }, { label: 'Payment' }, { label: 'Amount', num: true }, { label: 'Paid at' }]}
              empty={data.variances.unknown.count === 0 ? 'None.' : null}
            >
              {data.variances.unknown.items.map((u) => (
                <tr key={u.id}>
                  <th scope="row">{u.transaction_id}</th>
                  <td>{u.payment_id}</td>
                  <td className="ct-num">
                    {u.amount !== null ? (
                      <Money amount={u.amount} currency={u.currency} />
                    ) : u.amount_minor !== null ? (
                      `${u.amount_minor} (minor units, no currency)`
                    ) : (
                      <Money amount={null} />
                    )}
                  </td>
                  <td>{u.paid_at}</td>
                </tr>
              ))}
            </FigureTable>
            <Shown list={data.variances.unknown} />

            <h3>
              Unpaid past the terms of {data.payment_terms_days} days ({data.variances.overdue.count})
            </h3>
            <FigureTable
              columns={[{ label: 'Order' }, { label: 'Transaction' }, { label: 'Commission', num: true }, { label: 'Approved' }, { label: 'Days', num: true }]}
              empty={data.variances.overdue.count === 0 ? 'None.' : null}
            >
              {data.variances.overdue.items.map((o) => (
                <tr key={o.order_id}>
                  <th scope="row">
                    <Link to={`/orders/${o.order_id}`}>#{o.order_id}</Link>
                  </th>
                  <td>{o.transaction_id}</td>
                  <td className="ct-num">
                    <Money amount={o.commission} currency={o.currency} />
                  </td>
                  <td>{o.approved_at}</td>
                  <td className="ct-num">{o.age_days}</td>
                </tr>
              ))}
            </FigureTable>
            <Shown list={data.variances.overdue} />
          </>
        )}
      </CardBody>
    </Card>
  );
}
