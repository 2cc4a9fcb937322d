// The modal of every action that moves money or cannot be undone (a credit, a reversal, a payout's
// completion, a release): its note is required where the API requires one, it makes one
// Idempotency-Key when it opens, so a double click or a retry posts once, and a refusal is shown as
// the API's message in words. Escape closes it and focus returns where it was (the Modal's own).
import { Button, Modal, Notice } from '@wordpress/components';
import { type ReactNode, useState } from 'react';
import { api, errorMessage, isApiError } from './api';

export interface ActionModalProps<R> {
  title: string;
  /** The API call: path in the namespace and body. */
  request: () => { path: string; method?: 'POST' | 'DELETE'; data?: Record<string, unknown> };
  /** The submit button's words ("Credit 10.00 EUR"). */
  submitLabel: string;
  /** A destructive action's button is red. */
  destructive?: boolean;
  /** Whether the form is complete (required fields filled). */
  ready?: boolean;
  onDone: (result: R) => void;
  onClose: () => void;
  /** Told of each refusal too (a form that offers another way once refused, like a forced erasure). */
  onRefused?: (err: unknown) => void;
  children?: ReactNode;
}

export function ActionModal<R>({ title, request, submitLabel, destructive, ready = true, onDone, onClose, onRefused, children }: ActionModalProps<R>) {
  // One key for the life of this modal: every retry of this action is the same request to the API.
  // Only a refusal the API answered (a 4xx: nothing happened, and the key now replays that refusal)
  // makes a new one, so a corrected request (a smaller debit after svc_insufficient_funds) can run.
  const [key, setKey] = useState(() => crypto.randomUUID());
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = (event: React.FormEvent) => {
    event.preventDefault();
    if (busy || !ready) return;
    setBusy(true);
    setError(null);
    const { path, method = 'POST', data } = request();
    api<R>(path, { method, data, headers: { 'Idempotency-Key': key } }).then(
      (result) => onDone(result),
      (err: unknown) => {
        if (isRefusal(err)) setKey(crypto.randomUUID());
        setError(errorMessage(err));
        setBusy(false);
        onRefused?.(err);
      },
    );
  };
  return (
    <Modal title={title} onRequestClose={busy ? () => {} : onClose} size="medium">
      <form onSubmit={submit} className="ct-modal-form">
        {error ? (
          <Notice status="error" isDismissible={false}>
            {error}
          </Notice>
        ) : null}
        {children}
        <div className="ct-modal-buttons">
          <Button __next40pxDefaultSize variant="tertiary" onClick={onClose} disabled={busy}>
            Cancel
          </Button>
          <Button
            __next40pxDefaultSize
            variant="primary"
            isDestructive={destructive}
            type="submit"
            isBusy={busy}
            disabled={busy || !ready}
            accessibleWhenDisabled
          >
            {submitLabel}
          </Button>
        </div>
      </form>
    </Modal>
  );
}

/** A 4xx answer: the API refused and changed nothing (a key still in use, 409 svc_idempotency_key_in_use, is not one). */
function isRefusal(err: unknown): boolean {
  const status = isApiError(err) ? Number(err.data?.status) : 0;
  return status >= 400 && status < 500 && !(isApiError(err) && err.code === 'svc_idempotency_key_in_use');
}
