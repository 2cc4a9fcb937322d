// "File a claim" from a member's page: the member's missing cashback (shop, order reference,
// purchase, amount, note, receipt image) posted to POST /claims with one Idempotency-Key for the
// life of the modal. The answer says what became of it: matched to an order, filed with the
// network, or open for support with the reason.
import { SelectControl, TextareaControl, TextControl } from '@wordpress/components';
import { useEffect, useId, useState } from 'react';
import { ActionModal } from '../lib/action-modal';
import { api } from '../lib/api';
import type { Claim } from './claims';

const MAX_RECEIPT = 5 * 1024 * 1024;

export function FileClaimModal({
  memberId,
  memberName,
  currency,
  onDone,
  onClose,
}: {
  memberId: string;
  memberName: string;
  currency: string;
  onDone: (claim: Claim & { duplicate: boolean }) => void;
  onClose: () => void;
}) {
  const [networks, setNetworks] = useState<{ value: string; label: string }[]>([]);
  const [network, setNetwork] = useState('');
  const [advertiser, setAdvertiser] = useState('');
  const [orderRef, setOrderRef] = useState('');
  const [purchased, setPurchased] = useState('');
  const [amount, setAmount] = useState('');
  const [cur, setCur] = useState(currency);
  const [note, setNote] = useState('');
  const [receipt, setReceipt] = useState<string | null>(null);
  const [receiptError, setReceiptError] = useState<string | null>(null);
  const fileId = useId();
  useEffect(() => {
    api<{ id: string; name: string }[]>('/networks', { query: { per_page: 100 } }).then(
      (list) => {
        setNetworks(list.map((n) => ({ value: n.id, label: n.name })));
        setNetwork((current) => current || list[0]?.id || '');
      },
      () => setNetworks([]),
    );
  }, []);
  const readReceipt = (file: File | undefined) => {
    setReceipt(null);
    setReceiptError(null);
    if (!file) return;
    if (file.size > MAX_RECEIPT) return setReceiptError('The receipt is larger than 5 MB.');
    const reader = new FileReader();
    reader.onload = () => setReceipt(typeof reader.result === 'string' ? reader.result : null);
    reader.onerror = () => setReceiptError('The file could not be read.');
    reader.readAsDataURL(file);
  };
  const ready = Boolean(network && advertiser.trim() && orderRef.trim() && purchased && amount.trim() && !receiptError);
  return (
    <ActionModal<Claim & { duplicate: boolean }>
      title={`File a claim for ${memberName}`}
      submitLabel="File the claim"
      ready={ready}
      request={() => ({
        path: '/claims',
        data: {
          member_id: Number(memberId),
          network,
          advertiser: advertiser.trim(),
          order_ref: orderRef.trim(),
          purchased_at: new Date(purchased).toISOString(),
          amount: amount.trim(),
          ...(cur.trim() ? { currency: cur.trim().toUpperCase() } : {}),
          ...(note.trim() ? { note: note.trim() } : {}),
          ...(receipt ? { receipt } : {}),
        },
      })}
      onDone={onDone}
      onClose={onClose}
    >
      <p>The member bought and no cashback was tracked. cashtrack matches the claim to an order it holds first, else files it with the network.</p>
      <SelectControl __next40pxDefaultSize __nextHasNoMarginBottom label="Network" value={network} options={networks} onChange={setNetwork} />
      <TextControl
        __next40pxDefaultSize
        __nextHasNoMarginBottom
        label="Shop (the network's advertiser id, required)"
        value={advertiser}
        onChange={setAdvertiser}
        maxLength={128}
        required
      />
      <TextControl
        __next40pxDefaultSize
        __nextHasNoMarginBottom
        label="Shop's order reference (required)"
        help="As on the member's order confirmation."
        value={orderRef}
        onChange={setOrderRef}
        maxLength={191}
        required
      />
      <TextControl
        __next40pxDefaultSize
        __nextHasNoMarginBottom
        label="Purchased (required)"
        type="datetime-local"
        value={purchased}
        onChange={setPurchased}
        required
      />
      <div className="ct-form-row">
        <TextControl
          __next40pxDefaultSize
          __nextHasNoMarginBottom
          label="Amount paid (required)"
          help="A decimal amount such as 120.00."
          value={amount}
          onChange={setAmount}
          inputMode="decimal"
          required
        />
        <TextControl __next40pxDefaultSize __nextHasNoMarginBottom label="Currency" value={cur} onChange={setCur} maxLength={3} />
      </div>
      <TextareaControl __nextHasNoMarginBottom label="Note" value={note} onChange={setNote} maxLength={1000} rows={2} />
      <div className="ct-file-field">
        <label htmlFor={fileId}>Receipt image (PNG, JPEG, GIF or WebP)</label>
        <input id={fileId} type="file" accept="image/png,image/jpeg,image/gif,image/webp" onChange={(e) => readReceipt(e.currentTarget.files?.[0])} />
        {receiptError ? <p className="ct-field-error">{receiptError}</p> : null}
      </div>
    </ActionModal>
  );
}
