// One claim (GET /claims/{id}): its evidence (the member's order reference, purchase and amount,
// the receipt image, the click with its time and the rate shown then, the order it ended on), how it was filed, the network's reference and answer,
// its deadline, and the actions it allows now: decline with the reason, match to an order.
import { Button, Card, CardBody, CardHeader, Notice, Spinner, TextareaControl, TextControl } from '@wordpress/components';
import { useCallback, useEffect, useState } from 'react';
import { ActionModal } from '../lib/action-modal';
import { api, errorMessage } from '../lib/api';
import { Link } from '../lib/link';
import { Money } from '../lib/money';
import { ScreenNotices, useScreenNotice } from '../lib/notices';
import { CLAIM_STATUSES, type Claim } from './claims';
import { ruleText } from './clicks';

interface Receipt {
  type: string;
  width: number;
  height: number;
  data: string;
}

const LIVE = ['open', 'submitted', 'expired'];

function when(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}

export default function ClaimDetail({ id }: { id: string }) {
  const [claim, setClaim] = useState<Claim | null>(null);
  const [receipt, setReceipt] = useState<Receipt | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState<'decline' | 'match' | null>(null);
  const [notice, say] = useScreenNotice();
  const load = useCallback(() => {
    api<Claim>(`/claims/${encodeURIComponent(id)}`).then(
      (c) => {
        setClaim(c);
        setError(null);
        if (c.receipt) api<Receipt>(`/claims/${c.id}/receipt`).then(setReceipt, () => setReceipt(null));
      },
      (err: unknown) => setError(errorMessage(err)),
    );
  }, [id]);
  useEffect(load, [load]);
  if (error)
    return (
      <>
        <h1>Claim #{id}</h1>
        <Notice status="error" isDismissible={false}>
          {error}
        </Notice>
        <p>
          <Link to="/claims">All claims</Link>
        </p>
      </>
    );
  if (!claim) return <Spinner />;
  const status = CLAIM_STATUSES.find((s) => s.value === claim.status)?.label ?? claim.status;
  const rows: [string, React.ReactNode][] = [
    ['Member', <Link key="m" to={`/members/${claim.member.id}`}>{`${claim.member.display_name || claim.member.login} (${claim.member.login})`}</Link>],
    ['Network', claim.network],
    ['Shop (advertiser id)', claim.advertiser],
    ['Shop’s order reference', claim.order_ref],
    ['Purchased', when(claim.purchased_at)],
    ['Amount', <Money key="a" amount={claim.amount} currency={claim.currency} />],
    [
      'Click',
      claim.click
        ? `${when(claim.click.created_at)}, rate shown ${ruleText(claim.click.cashback_rule)} (click ${claim.click.id})`
        : claim.click_id
          ? `${claim.click_id} (no longer on file)`
          : 'None',
    ],
    ['Note', claim.note ?? '—'],
    ['Order', claim.order_id === null ? 'None yet' : <Link key="o" to={`/orders/${claim.order_id}`}>{`Order #${claim.order_id}`}</Link>],
    ['Claimed', `${when(claim.created_at)} by ${claim.actor}`],
  ];
  const network: [string, React.ReactNode][] = [
    ['Filed', claim.channel === 'api' ? 'Through the network’s API' : claim.channel === 'file' ? 'In the network’s claims file' : 'Not filed'],
    ['Network reference', claim.network_ref ?? '—'],
    ['Network’s answer', claim.network_status ?? '—'],
    ['Claims file', claim.export_file ?? '—'],
    ['Submitted', when(claim.submitted_at)],
    ['Last checked', when(claim.checked_at)],
    ['Deadline', `${when(claim.deadline_at)}${claim.warned_at ? ' (warned)' : ''}`],
    ['Resolved', when(claim.resolved_at)],
  ];
  return (
    <>
      <div className="ct-heading">
        <h1>Claim #{claim.id}</h1>
        <div className="ct-buttons">
          {LIVE.includes(claim.status) || (claim.status === 'approved' && claim.order_id === null) ? (
            <Button __next40pxDefaultSize variant="primary" onClick={() => setOpen('match')}>
              Match to an order
            </Button>
          ) : null}
          {LIVE.includes(claim.status) ? (
            <Button __next40pxDefaultSize variant="secondary" isDestructive onClick={() => setOpen('decline')}>
              Decline
            </Button>
          ) : null}
        </div>
      </div>
      <p>
        <Link to="/claims">All claims</Link>
      </p>
      <ScreenNotices notice={notice} onDismiss={say.clear} />
      <Notice status={claim.status === 'open' || claim.status === 'expired' ? 'warning' : 'info'} isDismissible={false}>
        {status}
        {claim.reason ? `: ${claim.reason}` : ''}
      </Notice>
      <div className="ct-order-cards">
        <Card>
          <CardHeader>
            <h2>The member’s claim</h2>
          </CardHeader>
          <CardBody>
            <Rows rows={rows} />
          </CardBody>
        </Card>
        <Card>
          <CardHeader>
            <h2>With the network</h2>
          </CardHeader>
          <CardBody>
            <Rows rows={network} />
          </CardBody>
        </Card>
        <Card>
          <CardHeader>
            <h2>Receipt</h2>
          </CardHeader>
          <CardBody>
            {!claim.receipt ? (
              <p>No receipt was given.</p>
            ) : receipt ? (
              <img
                className="ct-receipt"
                src={`data:${receipt.type};base64,${receipt.data}`}
                width={receipt.width}
                height={receipt.height}
                alt={`Receipt of claim ${claim.id} for order ${claim.order_ref}`}
              />
            ) : (
              <Spinner />
            )}
          </CardBody>
        </Card>
      </div>
      {open ? (
        <ClaimActionModal
          kind={open}
          claim={claim}
          onClose={() => setOpen(null)}
          onDone={(c, message) => {
            setOpen(null);
            say.success(message);
            setClaim(c);
          }}
        />
      ) : null}
    </>
  );
}

function Rows({ rows }: { rows: [string, React.ReactNode][] }) {
  return (
    <dl className="ct-dl">
      {rows.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function ClaimActionModal({
  kind,
  claim,
  onDone,
  onClose,
}: {
  kind: 'decline' | 'match';
  claim: Claim;
  onDone: (claim: Claim, message: string) => void;
  onClose: () => void;
}) {
  const [reason, setReason] = useState('');
  const [orderId, setOrderId] = useState('');
  if (kind === 'decline')
    return (
      <ActionModal<Claim>
        title={`Decline claim #${claim.id}`}
        submitLabel="Decline the claim"
        destructive
        ready={reason.trim().length > 0}
        request={() => ({ path: `/claims/${claim.id}`, data: { status: 'declined', reason: reason.trim() } })}
        onDone={(c) => onDone(c, `Claim #${c.id} is declined.`)}
        onClose={onClose}
      >
        <p>
          The member’s claim for order {claim.order_ref} ({claim.amount} {claim.currency}) is refused. The site shows the member the reason.
        </p>
        <TextareaControl __nextHasNoMarginBottom label="Reason (required)" value={reason} onChange={setReason} maxLength={500} required rows={3} />
      </ActionModal>
    );
  const valid = /^\d{1,15}$/.test(orderId.trim());
  return (
    <ActionModal<Claim>
      title={`Match claim #${claim.id} to an order`}
      submitLabel="Match"
      ready={valid}
      request={() => ({ path: `/claims/${claim.id}`, data: { order_id: Number(orderId.trim()) } })}
      onDone={(c) => onDone(c, `Claim #${c.id} is matched to order #${c.order_id}.`)}
      onClose={onClose}
    >
      <p>
        An order of {claim.network} shop {claim.advertiser} without a member becomes the member’s, and its cashback follows; an order already the member’s
        answers the claim.
      </p>
      <TextControl
        __next40pxDefaultSize
        __nextHasNoMarginBottom
        label="Order number (required)"
        help="The order's number in cashtrack, from the unmatched orders."
        value={orderId}
        onChange={setOrderId}
        inputMode="numeric"
        required
      />
    </ActionModal>
  );
}
