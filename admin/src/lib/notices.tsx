// How a screen says how an action went: one notice at a time under the heading, WordPress's
// `Notice` (which announces its text to screen readers through @wordpress/a11y: politely for a
// success, assertively for an error), dismissible. A refusal shows the API's message in words,
// with its code only as a detail for whoever reports it.
import { Notice } from '@wordpress/components';
import { useMemo, useState } from 'react';
import { errorMessage, isApiError } from './api';

export interface ScreenNotice {
  status: 'success' | 'error' | 'warning' | 'info';
  text: string;
  /** The API's error code, shown as a detail. */
  code?: string;
}

/** The notice for a refusal: the API's message (or a plain sentence when the server was not reached). */
export function errorNotice(err: unknown): ScreenNotice {
  return { status: 'error', text: errorMessage(err), code: isApiError(err) ? err.code : undefined };
}

export interface NoticeActions {
  success: (text: string) => void;
  warning: (text: string) => void;
  error: (err: unknown) => void;
  clear: () => void;
  /** Takes an error away (a reload that worked), leaving a success in place. */
  clearError: () => void;
}

/** A screen's notice and the (stable) ways to set it. */
export function useScreenNotice(): [ScreenNotice | null, NoticeActions] {
  const [notice, setNotice] = useState<ScreenNotice | null>(null);
  const actions = useMemo<NoticeActions>(
    () => ({
      success: (text) => setNotice({ status: 'success', text }),
      warning: (text) => setNotice({ status: 'warning', text }),
      error: (err) => setNotice(errorNotice(err)),
      clear: () => setNotice(null),
      clearError: () => setNotice((n) => (n?.status === 'error' ? null : n)),
    }),
    [],
  );
  return [notice, actions];
}

/** The screen's notice, or nothing. */
export function ScreenNotices({ notice, onDismiss }: { notice: ScreenNotice | null; onDismiss: () => void }) {
  if (!notice) return null;
  return (
    <div className="ct-notices">
      <Notice status={notice.status} onRemove={onDismiss} spokenMessage={notice.text}>
        <span>{notice.text}</span>
        {notice.code ? <span className="ct-notice-code"> ({notice.code})</span> : null}
      </Notice>
    </div>
  );
}
