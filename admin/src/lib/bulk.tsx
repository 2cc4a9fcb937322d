// A row action on many rows at once (DataViews' bulk actions): one confirmation, then each row its
// own request, as the single-row action sends it, with its own Idempotency-Key made when the
// confirmation opens (a double click, or a retry by the API client, posts each row once). At most
// BULK_CONCURRENCY requests run at a time, so a hundred rows do not queue a hundred requests
// against the daemon; a progress line counts them, and at the end each row's outcome is listed,
// with the API's message in words for a row it refused. The list reloads once the run is over.
import { Button, Modal, Notice } from '@wordpress/components';
import { type ReactNode, useRef, useState } from 'react';
import { api, errorMessage, isApiError } from './api';

export const BULK_CONCURRENCY = 4;

export interface BulkRequest {
  path: string;
  method?: 'POST' | 'DELETE';
  data?: Record<string, unknown>;
}

export interface BulkActionModalProps<T> {
  title: string;
  items: T[];
  /** A row's name in the outcome list: "Order #12". */
  name: (item: T) => string;
  /** The row's request, as the single-row action sends it. */
  request: (item: T) => BulkRequest;
  /** The submit button's words ("Release 3 orders"). */
  submitLabel: string;
  /** What a row that succeeded became ("released"). */
  doneLabel: string;
  destructive?: boolean;
  /** Whether the form is complete (a required reason filled). */
  ready?: boolean;
  /** The run is over (the list reloads); the modal stays open on the outcomes. */
  onFinished: () => void;
  onClose: () => void;
  children?: ReactNode;
}

/** `refused`: the API answered no (nothing changed on that row); otherwise it could not be reached or failed. */
type Outcome = { ok: true } | { ok: false; refused: boolean; message: string };

/** Runs `work` on each index with at most `limit` at a time. */
async function pool(count: number, limit: number, work: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      await work(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
}

export function BulkActionModal<T>({
  title,
  items,
  name,
  request,
  submitLabel,
  doneLabel,
  destructive,
  ready = true,
  onFinished,
  onClose,
  children,
}: BulkActionModalProps<T>) {
  // One key per row for the life of this confirmation: a second click, or a request retried, is the same request.
  const [keys] = useState(() => items.map(() => crypto.randomUUID()));
  const [phase, setPhase] = useState<'confirm' | 'running' | 'done'>('confirm');
  const [outcomes, setOutcomes] = useState<(Outcome | undefined)[]>(() => items.map(() => undefined));
  const started = useRef(false);
  const submit = (event: React.FormEvent) => {
    event.preventDefault();
    if (started.current || !ready) return;
    started.current = true;
    setPhase('running');
    void pool(items.length, BULK_CONCURRENCY, async (index) => {
      const { path, method = 'POST', data } = request(items[index]!);
      let outcome: Outcome;
      try {
        await api(path, { method, data, headers: { 'Idempotency-Key': keys[index]! } });
        outcome = { ok: true };
      } catch (err) {
        outcome = { ok: false, refused: isApiError(err) && Number(err.data?.status) < 500, message: errorMessage(err) };
      }
      setOutcomes((all) => all.map((o, i) => (i === index ? outcome : o)));
    }).then(() => {
      setPhase('done');
      onFinished();
    });
  };
  const finished = outcomes.filter((o) => o !== undefined).length;
  const failed = outcomes.filter((o) => o && !o.ok).length;
  const running = phase === 'running';
  return (
    <Modal title={title} onRequestClose={running ? () => {} : onClose} size="medium">
      <form onSubmit={submit} className="ct-modal-form">
        {phase === 'confirm' ? children : null}
        {phase !== 'confirm' ? (
          <p className="ct-bulk-progress" role="status">
            {finished} of {items.length} done{failed ? `, ${failed} not changed` : ''}
            {phase === 'done' ? '.' : '…'}
          </p>
        ) : null}
        {phase === 'done' && failed ? (
          <Notice status="warning" isDismissible={false}>
            {failed === items.length ? 'No row was changed.' : `${items.length - failed} changed; the others are unchanged (see below why).`}
          </Notice>
        ) : null}
        {phase === 'done' ? (
          <ul className="ct-bulk-outcomes" aria-label="Outcome per row">
            {items.map((item, i) => {
              const o = outcomes[i];
              return (
                <li key={keys[i]} className={o?.ok ? undefined : 'ct-negative'}>
                  {name(item)}: {o === undefined ? '' : o.ok ? doneLabel : `${o.refused ? 'refused' : 'failed'}: ${o.message}`}
                </li>
              );
            })}
          </ul>
        ) : null}
        <div className="ct-modal-buttons">
          {phase === 'done' ? (
            <Button __next40pxDefaultSize variant="primary" onClick={onClose}>
              Done
            </Button>
          ) : (
            <>
              <Button __next40pxDefaultSize variant="tertiary" onClick={onClose} disabled={running}>
                Cancel
              </Button>
              <Button
                __next40pxDefaultSize
                variant="primary"
                isDestructive={destructive}
                type="submit"
                isBusy={running}
                disabled={running || !ready}
                accessibleWhenDisabled
              >
                {submitLabel}
              </Button>
            </>
          )}
        </div>
      </form>
    </Modal>
  );
}
