// A member's data requests from their page: "Export data" downloads GET /members/{id}/data (the
// answer to an access request), "Erase member" posts POST /members/{id}/erase after a confirmation
// that says what is kept and what goes; refused for a positive balance or a pending payout, it
// offers the forced erasure, which needs a note.
import { CheckboxControl, TextareaControl } from '@wordpress/components';
import { useState } from 'react';
import { ActionModal } from '../lib/action-modal';
import { apiDownload, isApiError } from '../lib/api';

/** What an erasure answers. */
export interface Erasure {
  member: { id: number; login: string };
  erased_at: string;
  written_off: { id: number; amount: string; currency: string }[];
  payouts_cancelled: number[];
}

const FORCEABLE = ['svc_member_has_balance', 'svc_member_payout_in_flight'];

/** Saves the member's export as the file the API names. */
export async function downloadMemberData(id: number): Promise<string> {
  const { blob, filename } = await apiDownload(`/members/${id}/data`);
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  return filename;
}

export function EraseModal({
  memberId,
  memberName,
  onDone,
  onClose,
}: {
  memberId: number;
  memberName: string;
  onDone: (result: Erasure) => void;
  onClose: () => void;
}) {
  const [refused, setRefused] = useState(false);
  const [force, setForce] = useState(false);
  const [note, setNote] = useState('');
  return (
    <ActionModal<Erasure>
      title={`Erase ${memberName}`}
      submitLabel={force ? 'Force erasure' : 'Erase member'}
      destructive
      ready={!force || note.trim() !== ''}
      request={() => ({ path: `/members/${memberId}/erase`, data: force ? { force: true, note: note.trim() } : {} })}
      onRefused={(err) => {
        if (isApiError(err) && FORCEABLE.includes(err.code)) setRefused(true);
      }}
      onDone={onDone}
      onClose={onClose}
    >
      <p>
        <strong>Removed:</strong> the login, e-mail and display name (replaced by erased-{memberId}), the password, sessions and application passwords, payout
        account details, click addresses, claim notes and receipts, and the member's name wherever the log and stored messages quote it. The account is disabled
        for good.
      </p>
      <p>
        <strong>Kept:</strong> every amount: ledger entries, balances, orders, payouts, referrals, clicks and claims, under the placeholder, so the books still
        add up.
      </p>
      {refused ? (
        <>
          <CheckboxControl __nextHasNoMarginBottom label="Force: cancel pending payouts and write the balance off" checked={force} onChange={setForce} />
          {force ? <TextareaControl __nextHasNoMarginBottom label="Note (required)" value={note} onChange={setNote} rows={2} /> : null}
        </>
      ) : null}
    </ActionModal>
  );
}
