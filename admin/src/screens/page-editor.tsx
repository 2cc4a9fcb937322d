// One shop page's editor. The body is HTML that the API sanitises on save (its allowlist: no
// script, style, form or event attribute); the preview shows what was stored, with images left
// out (they would load from other origins, which these screens never ask for). The AI content is
// previewed before it is kept (POST /ai/shop/{id}), and reverted with a confirmation
// (POST /pages/{id}/revert: the body and the shop's description from before the AI wrote them).
import { Button, SelectControl, Spinner, TextareaControl, TextControl } from '@wordpress/components';
import { type FormEvent, useCallback, useEffect, useMemo, useState } from 'react';
import { ActionModal } from '../lib/action-modal';
import { api } from '../lib/api';
import { Link } from '../lib/link';
import { ScreenNotices, useScreenNotice } from '../lib/notices';
import { navigate } from '../lib/router';
import { AiPreviewModal } from './ai-preview';
import { PAGE_STATUSES, type ShopPage } from './pages';

const FIELDS = ['title', 'slug', 'excerpt', 'status', 'body'] as const;
type Form = Pick<ShopPage, (typeof FIELDS)[number]>;

function formOf(p: ShopPage): Form {
  return { title: p.title, slug: p.slug, excerpt: p.excerpt ?? '', status: p.status, body: p.body ?? '' };
}

/** Sanitised HTML (the API's), parsed inertly, with each image replaced by its alt text. */
export function HtmlPreview({ html, label }: { html: string; label: string }) {
  const safe = useMemo(() => {
    const doc = new DOMParser().parseFromString(html, 'text/html');
    for (const img of Array.from(doc.querySelectorAll('img'))) {
      const alt = img.getAttribute('alt');
      img.replaceWith(doc.createTextNode(alt ? `[image: ${alt}]` : '[image]'));
    }
    // Headings inside the preview sit below the screen's own.
    for (const h of Array.from(doc.querySelectorAll('h1, h2, h3, h4, h5, h6'))) {
      const p = doc.createElement('p');
      p.innerHTML = `<strong>${h.innerHTML}</strong>`;
      h.replaceWith(p);
    }
    return doc.body.innerHTML;
  }, [html]);
  // biome-ignore lint/security/noDangerouslySetInnerHtml: the API sanitised it (its page allowlist) and images are taken out above.
  return <section className="ct-html-preview" aria-label={label} dangerouslySetInnerHTML={{ __html: safe }} />;
}

interface ShopProposal {
  description: string;
  body: string;
}

export function PageEditor({ id }: { id: number }) {
  const [page, setPage] = useState<ShopPage | null>(null);
  const [form, setForm] = useState<Form | null>(null);
  const [notice, say] = useScreenNotice();
  const [busy, setBusy] = useState(false);
  const [modal, setModal] = useState<'ai' | 'delete' | 'revert' | null>(null);
  const [shopId, setShopId] = useState<number | null>(null);
  const show = useCallback(
    (p: ShopPage, words: string | null) => {
      setPage(p);
      setForm(formOf(p));
      if (words) say.success(words);
    },
    [say],
  );
  const load = useCallback(
    (words: string | null) =>
      api<ShopPage>(`/pages/${id}`).then(
        (p) => show(p, words),
        (err: unknown) => say.error(err),
      ),
    [id, show, say],
  );
  useEffect(() => {
    void load(null);
  }, [load]);
  // The AI writes for the shop (its number), not for the page: find the shop of the page.
  const pageModule = page?.module;
  const pageAdvertiser = page?.advertiser;
  useEffect(() => {
    if (!pageModule || !pageAdvertiser) return;
    api<{ id: number }>(`/advertisers/${encodeURIComponent(pageModule)}/${encodeURIComponent(pageAdvertiser)}`).then(
      (a) => setShopId(a.id),
      () => setShopId(null),
    );
  }, [pageModule, pageAdvertiser]);
  if (!page || !form)
    return (
      <>
        <h1>Page #{id}</h1>
        {notice ? <ScreenNotices notice={notice} onDismiss={say.clear} /> : <Spinner />}
      </>
    );
  const initial = formOf(page);
  const changed = FIELDS.filter((f) => form[f] !== initial[f]);
  const save = (event: FormEvent) => {
    event.preventDefault();
    if (!changed.length || busy) return;
    setBusy(true);
    say.clear();
    api<ShopPage>(`/pages/${id}`, { method: 'POST', data: Object.fromEntries(changed.map((f) => [f, form[f]])) }).then(
      (p) => {
        show(p, p.body !== form.body ? 'Page saved. The body was cleaned on the way in: see the HTML below.' : 'Page saved.');
        setBusy(false);
      },
      (err: unknown) => {
        say.error(err);
        setBusy(false);
      },
    );
  };
  return (
    <>
      <div className="ct-heading">
        <h1>Edit page #{page.id}</h1>
        <Link to="/pages">All pages</Link>
      </div>
      <ScreenNotices notice={notice} onDismiss={say.clear} />
      <div className="ct-editor">
        <form onSubmit={save} aria-label="Page">
          <TextControl __next40pxDefaultSize __nextHasNoMarginBottom label="Title" value={form.title} onChange={(v) => setForm({ ...form, title: v })} />
          <TextControl __next40pxDefaultSize __nextHasNoMarginBottom label="Slug" value={form.slug} onChange={(v) => setForm({ ...form, slug: v })} />
          <SelectControl
            __next40pxDefaultSize
            __nextHasNoMarginBottom
            label="Status"
            value={form.status}
            options={PAGE_STATUSES}
            onChange={(v) => setForm({ ...form, status: v as ShopPage['status'] })}
          />
          <TextareaControl
            __nextHasNoMarginBottom
            label="Excerpt (plain text)"
            rows={2}
            value={form.excerpt}
            onChange={(v) => setForm({ ...form, excerpt: v })}
          />
          <div className="ct-code-area">
            <TextareaControl
              __nextHasNoMarginBottom
              label="Body (HTML, sanitised when saved)"
              rows={14}
              value={form.body}
              onChange={(v) => setForm({ ...form, body: v })}
            />
          </div>
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
          <h2>Stored body</h2>
          <HtmlPreview html={page.body ?? ''} label="Stored body, as visitors see it" />
          <dl className="ct-dl">
            <dt>Shop</dt>
            <dd>
              {page.module} / {page.advertiser}
            </dd>
            <dt>Address</dt>
            <dd>{page.link ?? 'no link template configured'}</dd>
            <dt>Template</dt>
            <dd>{page.template}</dd>
            <dt>Published</dt>
            <dd>{page.published_at ? new Date(page.published_at).toLocaleString() : 'never'}</dd>
          </dl>
          <h2>AI content</h2>
          <p>The AI provider proposes a new body for this page and a description for the shop; you see them before anything is saved.</p>
          <Button variant="secondary" onClick={() => setModal('ai')} disabled={shopId === null || busy} accessibleWhenDisabled>
            Write with AI…
          </Button>
          <Button variant="secondary" onClick={() => setModal('revert')} disabled={!page.original || busy} accessibleWhenDisabled>
            Revert the AI content…
          </Button>
          {!page.original ? <p className="ct-aside">There is no text from before an AI write to go back to.</p> : null}
          <h2>Delete</h2>
          <Button variant="secondary" isDestructive onClick={() => setModal('delete')} disabled={busy} accessibleWhenDisabled>
            Delete this page…
          </Button>
        </div>
      </div>
      {modal === 'ai' && shopId !== null ? (
        <AiPreviewModal<ShopProposal, never>
          title={`AI content for ${page.title}`}
          path={`/ai/shop/${shopId}`}
          renderProposal={(p) => (
            <div className="ct-compare">
              <div>
                <h3>Shop description</h3>
                <p className="ct-text">{p.description}</p>
              </div>
              <div>
                <h3>Page body</h3>
                <HtmlPreview html={p.body} label="Proposed page body" />
              </div>
            </div>
          )}
          onKept={() => {
            setModal(null);
            void load('The AI content is saved.');
          }}
          onClose={() => setModal(null)}
        />
      ) : null}
      {modal === 'revert' ? (
        <ActionModal<ShopPage>
          title="Revert the AI content?"
          submitLabel="Revert"
          request={() => ({ path: `/pages/${page.id}/revert` })}
          onDone={(p) => {
            setModal(null);
            show(p, "The page body and the shop's description from before the AI wrote them are back.");
          }}
          onClose={() => setModal(null)}
        >
          <p>
            The page body and the shop's description go back to what they were before the AI first wrote them; anything written over them since is replaced too.
          </p>
        </ActionModal>
      ) : null}
      {modal === 'delete' ? (
        <ActionModal<{ deleted: boolean }>
          title="Delete this page?"
          submitLabel="Delete for good"
          destructive
          request={() => ({ path: `/pages/${page.id}`, method: 'DELETE' })}
          onDone={() => navigate('/pages')}
          onClose={() => setModal(null)}
        >
          <p>
            {page.title} ({page.slug}) is deleted for good; the shop may get a new page later.
          </p>
        </ActionModal>
      ) : null}
    </>
  );
}
