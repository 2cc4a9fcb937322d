// One order (GET /orders/{id}): its amounts, member, review and history dates, the network's
// record as received (secrets redacted by the API), and the actions it allows now.
import { Button, Card, CardBody, CardHeader, Notice, Spinner } from '@wordpress/components';
import { useCallback, useEffect, useState } from 'react';
import { api, errorMessage } from '../lib/api';
import { Link } from '../lib/link';
import { Money } from '../lib/money';
import { OrderActionModal, type OrderActionKind, orderAllows, reviewReason } from './order-actions';
import type { Order } from './orders';

const ACTIONS: { kind: OrderActionKind; label: string }[] = [
  { kind: 'assign', label: 'Assign to a member' },
  { kind: 'release', label: 'Release' },
  { kind: 'decline', label: 'Decline' },
  { kind: 'status', label: 'Change status' },
];

function when(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}

export default function OrderDetail({ id }: { id: string }) {
  const [order, setOrder] = useState<Order | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState<OrderActionKind | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const load = useCallback(() => {
    api<Order>(`/orders/${encodeURIComponent(id)}`).then(
      (o) => {
        setOrder(o);
        setError(null);
      },
      (err: unknown) => setError(errorMessage(err)),
    );
  }, [id]);
  useEffect(load, [load]);
  if (error)
    return (
      <>
        <h1>Order #{id}</h1>
        <Notice status="error" isDismissible={false}>
          {error}
        </Notice>
        <p>
          <Link to="/orders">All orders</Link>
        </p>
      </>
    );
  if (!order) return <Spinner />;
  const rows: [string, React.ReactNode][] = [
    ['Network', order.network],
    ['Transaction', order.transaction_id],
    ['Shop’s order reference', order.merchant_ref ?? '—'],
    ['Advertiser', order.advertiser ?? '—'],
    ['Member', order.member ? `${order.member.display_name || order.member.login} (${order.member.login})` : 'Unmatched'],
    ['Sub id', order.sub_id ?? '—'],
    ['Click', order.click_id ? <code key="k">{order.click_id}</code> : '—'],
    ['Status', order.status],
    ['Source', order.source],
    ['Sale amount', <Money key="s" amount={order.sale_amount} currency={order.currency} />],
    ['Commission', <Money key="c" amount={order.commission} currency={order.currency} />],
    ['Cashback', <Money key="b" amount={order.cashback} currency={order.currency} />],
    [
      'Cashback rule',
      order.cashback_rule
        ? `${order.cashback_rule.type.replace(/_/g, ' ')} ${order.cashback_rule.value}${order.cashback_rule.currency ? ` ${order.cashback_rule.currency}` : ''}`
        : '—',
    ],
    ['Referral credit', order.referral ? <Money key="r" amount={order.referral.amount} currency={order.currency} /> : '—'],
    ['Clicked', when(order.clicked_at)],
    ['Purchased', when(order.event_at)],
    ['Recorded', when(order.created_at)],
    ['Status changed', when(order.status_changed_at)],
    ['Note', order.note ?? '—'],
  ];
  return (
    <>
      <div className="ct-heading">
        <h1>Order #{order.id}</h1>
        <div className="ct-buttons">
          {ACTIONS.filter((a) => orderAllows(order, a.kind)).map((a) => (
            <Button key={a.kind} __next40pxDefaultSize variant={a.kind === 'decline' ? 'secondary' : 'primary'} onClick={() => setOpen(a.kind)}>
              {a.label}
            </Button>
          ))}
        </div>
      </div>
      <p>
        <Link to="/orders">All orders</Link>
      </p>
      {done ? (
        <Notice status="success" onRemove={() => setDone(null)}>
          {done}
        </Notice>
      ) : null}
      {order.review ? (
        <Notice status={order.review.state === 'held' ? 'warning' : 'info'} isDismissible={false}>
          {order.review.state === 'held'
            ? `Held for review: ${reviewReason(order.review.reason)}. It has no effect on any balance until it is released.`
            : `Reviewed (${reviewReason(order.review.reason)}): ${order.review.state}${order.review.reviewed_by ? ` by ${order.review.reviewed_by}` : ''}, ${when(order.review.reviewed_at)}.`}
        </Notice>
      ) : null}
      <div className="ct-order-cards">
        <Card>
          <CardHeader>
            <h2>Details</h2>
          </CardHeader>
          <CardBody>
            <dl className="ct-dl">
              {rows.map(([label, value]) => (
                <div key={label}>
                  <dt>{label}</dt>
                  <dd>{value}</dd>
                </div>
              ))}
            </dl>
          </CardBody>
        </Card>
        <Card>
          <CardHeader>
            <h2>The network’s record</h2>
          </CardHeader>
          <CardBody>
            {order.raw ? (
              // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard.
              <section className="ct-raw" aria-label="The network's record as received" tabIndex={0}>
                <pre>{JSON.stringify(order.raw, null, 2)}</pre>
              </section>
            ) : (
              <p>None: entered by hand.</p>
            )}
          </CardBody>
        </Card>
      </div>
      {open ? (
        <OrderActionModal
          kind={open}
          order={order}
          onDone={(o, message) => {
            setOpen(null);
            setDone(message);
            setOrder((prev) => ({ ...o, raw: prev?.raw }));
            load();
          }}
          onClose={() => setOpen(null)}
        />
      ) : null}
    </>
  );
}
