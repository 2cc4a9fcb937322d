// One coupon's editor: every field POST /coupons/{id} edits (text as plain text, the API strips
// markup whatever is sent; the discount, landing page, dates, exclusivity and regions), which
// fields are an administrator's or the AI's, each given back to the network on request, the
// API's validation errors at their field, the AI rewrite previewed before it is kept
// (POST /ai/coupon/{id}), and revert (POST /coupons/{id}/revert).
import { Button, CheckboxControl, SelectControl, Spinner, TextareaControl, TextControl } from '@wordpress/components';
import { type FormEvent, type ReactNode, useCallback, useEffect, useState } from 'react';
import { ActionModal } from '../lib/action-modal';
import { api, isApiError } from '../lib/api';
import { Link } from '../lib/link';
import { ScreenNotices, useScreenNotice } from '../lib/notices';
import { AiPreviewModal } from './ai-preview';
import type { Coupon } from './coupons';

interface Form {
  title: string;
  code: string;
  description: string;
  terms: string;
  discount_type: string;
  discount_value: string;
  discount_currency: string;
  discount_text: string;
  landing_url: string;
  starts_at: string;
  ends_at: string;
  exclusive: boolean;
  regions: string;
}
type Field = keyof Form;

const FIELDS: Field[] = [
  'title',
  'code',
  'description',
  'terms',
  'discount_type',
  'discount_value',
  'discount_currency',
  'discount_text',
  'landing_url',
  'starts_at',
  'ends_at',
  'exclusive',
  'regions',
];

const DISCOUNT_TYPES = [
  { value: 'percent', label: 'Percent off' },
  { value: 'amount', label: 'Amount off' },
  { value: 'free_shipping', label: 'Free shipping' },
  { value: 'other', label: 'Other' },
];

/** An instant as a datetime-local value in this browser's time zone ('' for none). */
function localInput(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

function formOf(c: Coupon): Form {
  return {
    title: c.title,
    code: c.code,
    description: c.description ?? '',
    terms: c.terms ?? '',
    discount_type: c.discount.type,
    discount_value: c.discount.value ?? '',
    discount_currency: c.discount.currency ?? '',
    discount_text: c.discount.text ?? '',
    landing_url: c.landing_url ?? '',
    starts_at: localInput(c.starts_at),
    ends_at: localInput(c.ends_at),
    exclusive: c.exclusive,
    regions: c.regions.join(', '),
  };
}

/** A field's value as POST /coupons/{id} takes it. */
function payloadValue(f: Field, form: Form): unknown {
  const v = form[f];
  if (typeof v === 'boolean') return v;
  switch (f) {
    case 'discount_value':
      return v.trim() === '' ? null : v.trim();
    case 'discount_currency':
      return v.trim() === '' ? null : v.trim().toUpperCase();
    case 'starts_at':
    case 'ends_at': {
      if (v === '') return null;
      const d = new Date(v);
      // An impossible date goes to the API as typed, so its refusal shows at the field.
      return Number.isNaN(d.getTime()) ? v : d.toISOString();
    }
    case 'regions':
      return v
        .split(/[\s,]+/)
        .map((r) => r.trim().toUpperCase())
        .filter(Boolean);
    default:
      return v;
  }
}

interface CouponProposal {
  title: string;
  description: string;
}

export function CouponEditor({ id }: { id: number }) {
  const [coupon, setCoupon] = useState<Coupon | null>(null);
  const [form, setForm] = useState<Form | null>(null);
  const [notice, say] = useScreenNotice();
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [modal, setModal] = useState<'ai' | 'revert' | null>(null);
  const show = useCallback(
    (c: Coupon, words: string | null) => {
      setCoupon(c);
      setForm(formOf(c));
      setFieldErrors({});
      if (words) say.success(words);
    },
    [say],
  );
  useEffect(() => {
    api<Coupon>(`/coupons/${id}`).then(
      (c) => show(c, null),
      (err: unknown) => say.error(err),
    );
  }, [id, show, say]);
  if (!coupon || !form)
    return (
      <>
        <h1>Coupon #{id}</h1>
        {notice ? <ScreenNotices notice={notice} onDismiss={say.clear} /> : <Spinner />}
      </>
    );
  const initial = formOf(coupon);
  const changed = FIELDS.filter((f) => form[f] !== initial[f]);
  const post = (data: Record<string, unknown>, words: string) => {
    setBusy(true);
    say.clear();
    api<Coupon>(`/coupons/${id}`, { method: 'POST', data }).then(
      (c) => {
        show(c, words);
        setBusy(false);
      },
      (err: unknown) => {
        say.error(err);
        const params = isApiError(err) ? err.data?.params : undefined;
        setFieldErrors(params && typeof params === 'object' ? (params as Record<string, string>) : {});
        setBusy(false);
      },
    );
  };
  const save = (event: FormEvent) => {
    event.preventDefault();
    if (!changed.length || busy) return;
    post(Object.fromEntries(changed.map((f) => [f, payloadValue(f, form)])), 'Coupon saved.');
  };
  const mark = (f: Field) => (coupon.ai_fields.includes(f) ? ' (written by the AI)' : coupon.edited_fields.includes(f) ? ' (edited)' : '');
  const set = (f: Field) => (v: string | boolean) => setForm({ ...form, [f]: v });
  // The API's refusal of a field, under it (announced with the field through aria-describedby).
  const help = (f: Field, words?: string): ReactNode => (fieldErrors[f] ? <span className="ct-field-error">{fieldErrors[f]}</span> : (words ?? undefined));
  const text = (f: Field, label: string, type: 'text' | 'url' | 'datetime-local' = 'text', words?: string) => (
    <TextControl
      __next40pxDefaultSize
      __nextHasNoMarginBottom
      label={`${label}${mark(f)}`}
      value={form[f] as string}
      type={type}
      help={help(f, words)}
      onChange={set(f)}
    />
  );
  const area = (f: Field, label: string, rows: number) => (
    <TextareaControl __nextHasNoMarginBottom label={`${label}${mark(f)}`} value={form[f] as string} rows={rows} help={help(f)} onChange={set(f)} />
  );
  return (
    <>
      <div className="ct-heading">
        <h1>Edit coupon #{coupon.id}</h1>
        <Link to="/coupons">All coupons</Link>
      </div>
      <ScreenNotices notice={notice} onDismiss={say.clear} />
      <div className="ct-editor">
        <form onSubmit={save} aria-label="Coupon">
          {text('title', 'Title')}
          {text('code', 'Code (empty for a deal)')}
          {area('description', 'Description', 5)}
          {area('terms', 'Terms', 3)}
          <fieldset className="ct-fieldset">
            <legend>Discount</legend>
            <SelectControl
              __next40pxDefaultSize
              __nextHasNoMarginBottom
              label={`Discount type${mark('discount_type')}`}
              value={form.discount_type}
              options={DISCOUNT_TYPES}
              help={help('discount_type')}
              onChange={set('discount_type')}
            />
            {text('discount_value', 'Discount value', 'text', 'A decimal number: the percent, or the amount.')}
            {text('discount_currency', 'Discount currency', 'text', 'ISO 4217 code of an amount, e.g. EUR; empty for a percent.')}
            {text('discount_text', 'Discount in words')}
          </fieldset>
          {text('landing_url', 'Landing page URL', 'url')}
          {text('starts_at', 'Starts', 'datetime-local', 'In your time zone; empty: from now on.')}
          {text('ends_at', 'Ends', 'datetime-local', 'In your time zone; empty: no end.')}
          {text('regions', 'Regions', 'text', 'Country codes separated by commas (DE, FR); empty: everywhere.')}
          <CheckboxControl
            __nextHasNoMarginBottom
            label={`Exclusive to this site${mark('exclusive')}`}
            checked={form.exclusive}
            help={help('exclusive')}
            onChange={set('exclusive')}
          />
          <p className="ct-aside">Text is kept as plain text: any markup is removed when it is saved.</p>
          <div className="ct-modal-buttons">
            <Button
              __next40pxDefaultSize
              variant="tertiary"
              onClick={() => {
                setForm(initial);
                setFieldErrors({});
              }}
              disabled={!changed.length || busy}
              accessibleWhenDisabled
            >
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
            <dd>{coupon.status} (from the dates)</dd>
            <dt>Shop</dt>
            <dd>{coupon.advertiser_name ?? coupon.advertiser}</dd>
            <dt>Network</dt>
            <dd>
              {coupon.network} ({coupon.coupon_id})
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
          onKept={(g) => {
            setModal(null);
            if (g.coupon) show(g.coupon, 'The AI rewrite is saved.');
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
