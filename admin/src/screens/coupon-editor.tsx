// One coupon's editor: its text as plain text (the API strips markup whatever is sent), which
// fields are an administrator's or the AI's, each given back to the network on request, the AI
// rewrite previewed before it is kept (POST /ai/coupon/{id}), and revert (POST /coupons/{id}/revert).
import { Button, Notice, Spinner, TextareaControl, TextControl } from '@wordpress/components';
import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { ActionModal } from '../lib/action-modal';
import { api, errorMessage } from '../lib/api';
import { Link } from '../lib/link';
import { AiPreviewModal } from './ai-preview';
import type { Coupon } from './coupons';

const TEXT_FIELDS = ['title', 'code', 'description', 'terms', 'discount_text', 'landing_url'] as const;
type TextField = (typeof TEXT_FIELDS)[number];
type Form = Record<TextField, string>;

const LABELS: Record<TextField, string> = {
  title: 'Title',
  code: 'Code (empty for a deal)',
  description: 'Description',
  terms: 'Terms',
  discount_text: 'Discount in words',
  landing_url: 'Landing page URL',
};

function formOf(c: Coupon): Form {
  return {
    title: c.title,
    code: c.code,
    description: c.description ?? '',
    terms: c.terms ?? '',
    discount_text: c.discount.text ?? '',
    landing_url: c.landing_url ?? '',
  };
}

interface CouponProposal {
  title: string;
  description: string;
}

export function CouponEditor({ id }: { id: number }) {
  const [coupon, setCoupon] = useState<Coupon | null>(null);
  const [form, setForm] = useState<Form | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [modal, setModal] = useState<'ai' | 'revert' | null>(null);
  const show = useCallback((c: Coupon, words: string | null) => {
    setCoupon(c);
    setForm(formOf(c));
    setSaved(words);
  }, []);
  useEffect(() => {
    api<Coupon>(`/coupons/${id}`).then(
      (c) => show(c, null),
      (err: unknown) => setError(errorMessage(err)),
    );
  }, [id, show]);
  if (!coupon || !form)
    return (
      <>
        <h1>Coupon #{id}</h1>
        {error ? (
          <Notice status="error" isDismissible={false}>
            {error}
          </Notice>
        ) : (
          <Spinner />
        )}
      </>
    );
  const initial = formOf(coupon);
  const changed = TEXT_FIELDS.filter((f) => form[f] !== initial[f]);
  const post = (data: Record<string, unknown>, words: string) => {
    setBusy(true);
    setError(null);
    setSaved(null);
    api<Coupon>(`/coupons/${id}`, { method: 'POST', data }).then(
      (c) => {
        show(c, words);
        setBusy(false);
      },
      (err: unknown) => {
        setError(errorMessage(err));
        setBusy(false);
      },
    );
  };
  const save = (event: FormEvent) => {
    event.preventDefault();
    if (!changed.length || busy) return;
    post(Object.fromEntries(changed.map((f) => [f, form[f]])), 'Coupon saved.');
  };
  const mark = (f: TextField) => (coupon.ai_fields.includes(f) ? ' (written by the AI)' : coupon.edited_fields.includes(f) ? ' (edited)' : '');
  return (
    <>
      <div className="ct-heading">
        <h1>Edit coupon #{coupon.id}</h1>
        <Link to="/coupons">All coupons</Link>
      </div>
      {error ? (
        <Notice status="error" isDismissible={false}>
          {error}
        </Notice>
      ) : null}
      <div role="status">
        {saved ? (
          <Notice status="success" onRemove={() => setSaved(null)}>
            {saved}
          </Notice>
        ) : null}
      </div>
      <div className="ct-editor">
        <form onSubmit={save} aria-label="Coupon text">
          {TEXT_FIELDS.map((f) =>
            f === 'description' || f === 'terms' ? (
              <TextareaControl
                key={f}
                __nextHasNoMarginBottom
                label={`${LABELS[f]}${mark(f)}`}
                value={form[f]}
                rows={f === 'description' ? 5 : 3}
                onChange={(v) => setForm({ ...form, [f]: v })}
              />
            ) : (
              <TextControl
                key={f}
                __next40pxDefaultSize
                __nextHasNoMarginBottom
                label={`${LABELS[f]}${mark(f)}`}
                value={form[f]}
                type={f === 'landing_url' ? 'url' : 'text'}
                onChange={(v) => setForm({ ...form, [f]: v })}
              />
            ),
          )}
          <p className="ct-aside">Text is kept as plain text: any markup is removed when it is saved.</p>
          <div className="ct-modal-buttons">
            <Button __next40pxDefaultSize variant="tertiary" onClick={() => setForm(initial)} disabled={!changed.length || busy} accessibleWhenDisabled>
              Undo changes
            </Button>
            <Button __next40pxDefaultSize variant="primary" type="submit" isBusy={busy} disabled={!changed.length || busy} accessibleWhenDisabled>
              Save
            </Button>
          </div>
        </form>
        <div className="ct-panel">
          <h2>AI rewrite</h2>
          <p>The AI provider proposes a new title and description; you see it before anything is saved.</p>
          <Button variant="secondary" onClick={() => setModal('ai')} disabled={busy} accessibleWhenDisabled>
            Rewrite with AI…
          </Button>
          {coupon.ai ? (
            <p className="ct-aside">
              Last generation: {coupon.ai.outcome} by {coupon.ai.model}, {new Date(coupon.ai.at).toLocaleString()}.
            </p>
          ) : null}
          <Button variant="secondary" onClick={() => setModal('revert')} disabled={!coupon.original || busy} accessibleWhenDisabled>
            Revert the AI rewrite…
          </Button>
          {!coupon.original ? <p className="ct-aside">There is no text from before an AI rewrite to go back to.</p> : null}
          <h2>Owned by you</h2>
          {coupon.edited_fields.length ? (
            <ul className="ct-counts">
              {coupon.edited_fields.map((f) => (
                <li key={f}>
                  {f}{' '}
                  <Button variant="link" onClick={() => post({ reset: [f] }, `${f} given back to the network.`)} disabled={busy} accessibleWhenDisabled>
                    Give back to the network
                  </Button>
                </li>
              ))}
            </ul>
          ) : (
            <p className="ct-aside">No field edited here: a refresh from {coupon.network} updates all of them.</p>
          )}
          <h2>Coupon</h2>
          <dl className="ct-dl">
            <dt>Status</dt>
            <dd>{coupon.status}</dd>
            <dt>Shop</dt>
            <dd>{coupon.advertiser_name ?? coupon.advertiser}</dd>
            <dt>Network</dt>
            <dd>
              {coupon.network} ({coupon.coupon_id})
            </dd>
            <dt>Runs</dt>
            <dd>
              {coupon.starts_at ? new Date(coupon.starts_at).toLocaleDateString() : 'now'} –{' '}
              {coupon.ends_at ? new Date(coupon.ends_at).toLocaleDateString() : 'no end'}
            </dd>
          </dl>
        </div>
      </div>
      {modal === 'ai' ? (
        <AiPreviewModal<CouponProposal, Coupon>
          title={`AI rewrite of coupon #${coupon.id}`}
          path={`/ai/coupon/${coupon.id}`}
          renderProposal={(p) => (
            <div className="ct-compare">
              <div>
                <h3>Now</h3>
                <p className="ct-text">{coupon.title}</p>
                <p className="ct-text">{coupon.description || '(no description)'}</p>
              </div>
              <div>
                <h3>Proposed</h3>
                <p className="ct-text">{p.title}</p>
                <p className="ct-text">{p.description || '(no description)'}</p>
              </div>
            </div>
          )}
          onKept={(g, previewed) => {
            setModal(null);
            if (g.coupon) {
              const same = g.proposal.title === previewed.title && g.proposal.description === previewed.description;
              show(g.coupon, same ? 'The AI rewrite is saved.' : 'The AI rewrite is saved; the provider answered differently this time, so check the text.');
            }
          }}
          onClose={() => setModal(null)}
        />
      ) : null}
      {modal === 'revert' ? (
        <ActionModal<Coupon>
          title="Revert the AI rewrite?"
          submitLabel="Revert"
          request={() => ({ path: `/coupons/${coupon.id}/revert` })}
          onDone={(c) => {
            setModal(null);
            show(c, 'The text from before the AI rewrite is back.');
          }}
          onClose={() => setModal(null)}
        >
          <p>
            The {coupon.ai_fields.join(' and ') || 'rewritten'} text goes back to what it was before the AI rewrote it; anything written over it since is
            replaced too.
          </p>
        </ActionModal>
      ) : null}
    </>
  );
}
