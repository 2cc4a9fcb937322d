// The money actions of a member's page: a credit or debit (POST /ledger/adjustments) and the
// reversal of an entry (POST /ledger/entries/{id}/reverse), each in the action modal (one
// Idempotency-Key per modal, the API's refusal in words). Which entries can be reversed is the
// API's rule: a payout's entry is offered too, and the refusal says why not.
import { CheckboxControl, SelectControl, TextareaControl, TextControl } from '@wordpress/components';
import { useState } from 'react';
import { ActionModal } from '../lib/action-modal';
import { Money } from '../lib/money';

/** A ledger entry as GET /ledger/entries answers. */
export interface Entry {
  id: number;
  member_id: number;
  currency: string;
  type: 'cashback' | 'referral' | 'adjustment' | 'payout' | 'payout_return' | 'reversal';
  amount: string;
  balance_after: string;
  source: { type: string; id: string | null };
  order_id: number | null;
  reverses_id: number | null;
  reversed_by: number | null;
  note: string | null;
  actor: string;
  created_at: string;
}

export interface Balance {
  currency: string;
  available: string;
}

/** What POST /ledger/adjustments answers. */
export interface Adjusted {
  entry: Entry;
  balance: Balance;
}

// What the amount field accepts before the API checks the currency's exponent: digits, one dot.
const DECIMAL = /^\d+(\.\d+)?$/;
const CURRENCY = /^[A-Z]{3}$/;

export function AdjustModal({
  memberId,
  memberName,
  currency: initialCurrency,
  onDone,
  onClose,
}: {
  memberId: number;
  memberName: string;
  currency: string;
  onDone: (result: Adjusted, type: 'credit' | 'debit') => void;
  onClose: () => void;
}) {
  const [type, setType] = useState<'credit' | 'debit'>('credit');
  const [amount, setAmount] = useState('');
  const [currency, setCurrency] = useState(initialCurrency);
  const [note, setNote] = useState('');
  const [allowNegative, setAllowNegative] = useState(false);
  const amountOk = DECIMAL.test(amount.trim());
  const currencyOk = currency === '' || CURRENCY.test(currency);
  const ready = amountOk && currencyOk && note.trim().length > 0;
  const words = type === 'credit' ? 'Credit' : 'Debit';
  return (
    <ActionModal<Adjusted>
      title={`Credit or debit ${memberName}`}
      submitLabel={amountOk ? `${words} ${amount.trim()}${currency ? ` ${currency}` : ''}` : words}
      destructive={type === 'debit'}
      ready={ready}
      request={() => ({
        path: '/ledger/adjustments',
        data: {
          member_id: memberId,
          type,
          amount: amount.trim(),
          ...(currency ? { currency } : {}),
          note: note.trim(),
          ...(type === 'debit' && allowNegative ? { allow_negative: true } : {}),
        },
      })}
      onDone={(result) => onDone(result, type)}
      onClose={onClose}
    >
      <SelectControl
        __next40pxDefaultSize
        __nextHasNoMarginBottom
        label="Type"
        value={type}
        options={[
          { value: 'credit', label: 'Credit (add to the balance)' },
          { value: 'debit', label: 'Debit (take from the balance)' },
        ]}
        onChange={(value) => setType(value === 'debit' ? 'debit' : 'credit')}
      />
      <div className="ct-amount-row">
        <TextControl
          __next40pxDefaultSize
          __nextHasNoMarginBottom
          label="Amount"
          help="A decimal amount such as 12.50"
          inputMode="decimal"
          autoComplete="off"
          value={amount}
          onChange={setAmount}
        />
        <TextControl
          __next40pxDefaultSize
          __nextHasNoMarginBottom
          label="Currency"
          help={currencyOk ? 'Empty: the site currency' : 'Three capital letters, such as EUR'}
          maxLength={3}
          autoComplete="off"
          value={currency}
          onChange={(value) => setCurrency(value.toUpperCase())}
        />
      </div>
      <TextareaControl
        __nextHasNoMarginBottom
        label="Note (required)"
        help="Who asked for it and why, e.g. a ticket number."
        value={note}
        onChange={setNote}
        rows={2}
        required
      />
      {type === 'debit' ? (
        <CheckboxControl __nextHasNoMarginBottom label="Allow the balance to go below zero" checked={allowNegative} onChange={setAllowNegative} />
      ) : null}
    </ActionModal>
  );
}

export function ReverseModal({ entry, onDone, onClose }: { entry: Entry; onDone: (result: { reversal: Entry }) => void; onClose: () => void }) {
  const [note, setNote] = useState('');
  return (
    <ActionModal<{ reversal: Entry; original: Entry }>
      title={`Reverse entry #${entry.id}`}
      submitLabel="Reverse entry"
      destructive
      request={() => ({ path: `/ledger/entries/${entry.id}/reverse`, data: note.trim() ? { note: note.trim() } : {} })}
      onDone={onDone}
      onClose={onClose}
    >
      <p>
        This posts a reversal of the entry of <Money amount={entry.amount} currency={entry.currency} /> ({typeLabel(entry.type).toLowerCase()}
        {entry.note ? `: ${entry.note}` : ''}): a new entry of the opposite amount. Entries are never deleted, and a reversal cannot be undone.
      </p>
      <TextareaControl __nextHasNoMarginBottom label="Note (optional)" value={note} onChange={setNote} rows={2} />
    </ActionModal>
  );
}

export const ENTRY_TYPES = [
  { value: 'cashback', label: 'Cashback' },
  { value: 'referral', label: 'Referral' },
  { value: 'adjustment', label: 'Adjustment' },
  { value: 'payout', label: 'Payout' },
  { value: 'payout_return', label: 'Payout return' },
  { value: 'reversal', label: 'Reversal' },
];

export function typeLabel(type: string): string {
  return ENTRY_TYPES.find((t) => t.value === type)?.label ?? type;
}
