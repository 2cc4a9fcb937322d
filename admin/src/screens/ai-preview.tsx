// The AI proposal shown before it is kept: the modal asks for a dry run when it opens (the API
// stores the proposal), shows the current text beside it, and keeps it only when asked ("Keep
// it") by sending the proposal's id to the same route: exactly the text shown is saved and the
// provider is not asked again. Nothing is saved until then; a refusal (no provider, the budget
// spent, a bad answer, the text changed since the proposal) is the API's message in words.
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
  /** The stored proposal (a dry run's), kept with `{proposal_id}`. */
  proposal_id: string | null;
  expires_at: string | null;
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
  onKept: (result: Generation<P, S>) => void;
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
    if (!preview?.proposal_id || keeping) return;
    setKeeping(true);
    setError(null);
    api<Generation<P, S>>(path, { method: 'POST', data: { proposal_id: preview.proposal_id } }).then(
      (g) => onKept(g),
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
              Proposed by {preview.generation.model} ({preview.generation.tokens.total_tokens} tokens). Nothing is saved until you keep it; keeping saves
              exactly this text, without asking the provider again, and you can revert it.
            </p>
          </>
        ) : null}
        <div className="ct-modal-buttons">
          <Button __next40pxDefaultSize variant="tertiary" onClick={onClose} disabled={keeping}>
            Discard
          </Button>
          <Button __next40pxDefaultSize variant="primary" onClick={keep} isBusy={keeping} disabled={!preview?.proposal_id || keeping} accessibleWhenDisabled>
            Keep it
          </Button>
        </div>
      </div>
    </Modal>
  );
}
