// The AI proposal shown before it is kept: the modal asks for a dry run when it opens, shows the
// current text beside the proposal, and keeps it only when asked ("Keep it"), through the same
// route without dry_run. Nothing is saved until then; a refusal (no provider, the budget spent,
// a bad answer) is the API's message in words.
import { Button, Modal, Notice, Spinner } from '@wordpress/components';
import { type ReactNode, useEffect, useState } from 'react';
import { api, errorMessage } from '../lib/api';

/** What POST /ai/coupon/{id} and /ai/shop/{id} answer. */
export interface Generation<P, S = unknown> {
  kind: 'coupon' | 'shop';
  id: number;
  dry_run: boolean;
  saved: boolean;
  proposal: P;
  coupon?: S | null;
  page_id?: number | null;
  generation: { model: string; tokens: { prompt_tokens: number; completion_tokens: number; total_tokens: number }; attempts: number; duration_ms: number };
}

export function AiPreviewModal<P, S>({
  title,
  path,
  renderProposal,
  onKept,
  onClose,
}: {
  title: string;
  /** '/ai/coupon/42' or '/ai/shop/7'. */
  path: string;
  renderProposal: (proposal: P) => ReactNode;
  onKept: (result: Generation<P, S>, previewed: P) => void;
  onClose: () => void;
}) {
  const [preview, setPreview] = useState<Generation<P, S> | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [keeping, setKeeping] = useState(false);
  useEffect(() => {
    let live = true;
    api<Generation<P, S>>(path, { method: 'POST', data: { dry_run: true } }).then(
      (g) => live && setPreview(g),
      (err: unknown) => live && setError(errorMessage(err)),
    );
    return () => {
      live = false;
    };
  }, [path]);
  const keep = () => {
    if (!preview || keeping) return;
    setKeeping(true);
    setError(null);
    api<Generation<P, S>>(path, { method: 'POST', data: { dry_run: false } }).then(
      (g) => onKept(g, preview.proposal),
      (err: unknown) => {
        setError(errorMessage(err));
        setKeeping(false);
      },
    );
  };
  return (
    <Modal title={title} onRequestClose={keeping ? () => {} : onClose} size="large">
      <div className="ct-modal-form">
        {error ? (
          <Notice status="error" isDismissible={false}>
            {error}
          </Notice>
        ) : null}
        {!preview && !error ? (
          <p role="status">
            <Spinner /> Asking the AI provider for a proposal (nothing is saved yet)…
          </p>
        ) : null}
        {preview ? (
          <>
            <section aria-label="AI proposal">{renderProposal(preview.proposal)}</section>
            <p className="ct-aside">
              Proposed by {preview.generation.model} ({preview.generation.tokens.total_tokens} tokens). Nothing is saved until you keep it; keeping asks the
              provider once more and saves its answer, which you can revert.
            </p>
          </>
        ) : null}
        <div className="ct-modal-buttons">
          <Button __next40pxDefaultSize variant="tertiary" onClick={onClose} disabled={keeping}>
            Discard
          </Button>
          <Button __next40pxDefaultSize variant="primary" onClick={keep} isBusy={keeping} disabled={!preview || keeping} accessibleWhenDisabled>
            Keep it
          </Button>
        </div>
      </div>
    </Modal>
  );
}
