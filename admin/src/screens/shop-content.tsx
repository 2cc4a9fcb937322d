// A shop's logo (fetched again on demand; the sources tried when none gave an image) and its AI
// content (a dry run shown as a proposal first, then kept as it was shown without asking the
// provider again, or generated and saved at once).
import { Button, Card, CardBody, CardHeader, Notice } from '@wordpress/components';
import { useState } from 'react';
import { api, errorMessage, isApiError } from '../lib/api';
import type { Detail } from './shop';

export type Say = { status: 'success' | 'error' | 'warning'; text: string } | null;

export function Said({ say }: { say: Say }) {
  return say ? (
    <Notice status={say.status} isDismissible={false}>
      {say.text}
    </Notice>
  ) : null;
}

export function LogoCard({ shop, path, onChanged }: { shop: Detail; path: string; onChanged: () => void }) {
  const [say, setSay] = useState<Say>(null);
  const [tried, setTried] = useState<{ source: string; url: string; reason: string }[]>([]);
  const [busy, setBusy] = useState(false);
  const fetchLogo = () => {
    setBusy(true);
    setSay(null);
    setTried([]);
    api<{ fetched: boolean; source: string | null }>(`${path}/logo`, { method: 'POST', data: { force: true } }).then(
      (r) => {
        setBusy(false);
        setSay({ status: 'success', text: r.fetched ? `Logo fetched (${r.source}).` : 'The logo on file is kept.' });
        onChanged();
      },
      (err: unknown) => {
        setBusy(false);
        setSay({ status: 'error', text: errorMessage(err) });
        const list = isApiError(err) ? err.data?.tried : undefined;
        setTried(Array.isArray(list) ? (list as typeof tried) : []);
      },
    );
  };
  return (
    <Card>
      <CardHeader>
        <h2>Logo</h2>
      </CardHeader>
      <CardBody>
        <div className="ct-form">
          {shop.logo ? <img className="ct-logo" src={shop.logo} alt={`${shop.name} logo`} /> : <p>No logo yet.</p>}
          <Said say={say} />
          {tried.length ? (
            <ul className="ct-field-errors" aria-label="Sources tried">
              {tried.map((t) => (
                <li key={`${t.source}-${t.url}`}>
                  {t.source}: {t.url} ({t.reason})
                </li>
              ))}
            </ul>
          ) : null}
          <div>
            <Button __next40pxDefaultSize variant="secondary" onClick={fetchLogo} isBusy={busy} disabled={busy} accessibleWhenDisabled>
              {shop.logo ? 'Fetch it again' : 'Fetch the logo'}
            </Button>
          </div>
        </div>
      </CardBody>
    </Card>
  );
}

interface Generation {
  proposal: { description: string; body: string };
  proposal_id: string | null;
  generation: { model: string; tokens: { total_tokens: number } };
}

export function AiCard({ shop, onChanged }: { shop: Detail; onChanged: () => void }) {
  const [say, setSay] = useState<Say>(null);
  const [busy, setBusy] = useState(false);
  const [proposal, setProposal] = useState<Generation | null>(null);
  /** A dry run, a generation saved at once, or the shown proposal kept (`keep`: no new call to the provider). */
  const generate = (mode: 'preview' | 'save' | 'keep') => {
    setBusy(true);
    setSay(null);
    const data = mode === 'preview' ? { dry_run: true } : mode === 'keep' ? { proposal_id: proposal?.proposal_id } : {};
    api<Generation>(`/ai/shop/${shop.id}`, { method: 'POST', data }).then(
      (g) => {
        setBusy(false);
        if (mode === 'preview') setProposal(g);
        else {
          setProposal(null);
          setSay({
            status: 'success',
            text:
              mode === 'keep'
                ? 'Saved: the description and the page body you previewed.'
                : `Saved: the description and the page body (${g.generation.tokens.total_tokens} tokens).`,
          });
          onChanged();
        }
      },
      (err: unknown) => {
        setBusy(false);
        setSay({ status: 'error', text: errorMessage(err) });
      },
    );
  };
  return (
    <Card className="ct-wide">
      <CardHeader>
        <h2>AI content</h2>
      </CardHeader>
      <CardBody>
        <div className="ct-form">
          <p>{shop.description ?? <em>No description yet.</em>}</p>
          <p className="ct-aside">
            {shop.ai ? `Last generation: ${shop.ai.outcome} with ${shop.ai.model}, ${shop.ai.tokens.total_tokens} tokens, ${shop.ai.at}.` : 'Never generated.'}
          </p>
          <Said say={say} />
          {proposal ? (
            <section aria-label="Proposal">
              <h3>Proposal ({proposal.generation.tokens.total_tokens} tokens, not saved)</h3>
              <p>{proposal.proposal.description}</p>
              <pre className="ct-pre">{proposal.proposal.body}</pre>
            </section>
          ) : null}
          <div className="ct-buttons">
            <Button __next40pxDefaultSize variant="secondary" onClick={() => generate('preview')} isBusy={busy} disabled={busy} accessibleWhenDisabled>
              Preview (dry run)
            </Button>
            {proposal?.proposal_id ? (
              <Button __next40pxDefaultSize variant="primary" onClick={() => generate('keep')} disabled={busy} accessibleWhenDisabled>
                Keep this proposal
              </Button>
            ) : null}
            <Button
              __next40pxDefaultSize
              variant={proposal?.proposal_id ? 'secondary' : 'primary'}
              onClick={() => generate('save')}
              disabled={busy}
              accessibleWhenDisabled
            >
              Generate and save
            </Button>
          </div>
        </div>
      </CardBody>
    </Card>
  );
}
