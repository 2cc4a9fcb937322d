// One shop (an advertiser): what the network says of it, its cashback override, a member's
// tracking link, its page, its logo and its AI content (a dry run shown first, then generated and
// saved).
import { Button, Card, CardBody, CardHeader, Notice, SelectControl, Spinner, TextControl } from '@wordpress/components';
import { useCallback, useEffect, useState } from 'react';
import { api, errorMessage } from '../lib/api';
import { Link } from '../lib/link';
import { AiCard, LogoCard, Said, type Say } from './shop-content';

/** An advertiser as GET /advertisers answers it. */
export interface Advertiser {
  id: number;
  module: string;
  advertiser: string;
  name: string;
  network_name: string;
  name_override: string | null;
  domain: string | null;
  site_url: string | null;
  logo_url: string | null;
  logo: string | null;
  commission: { type: string; min: string | null; max: string | null; currency: string | null } | null;
  validation_days: number | null;
  categories: string[];
  countries: string[];
  status: 'active' | 'inactive';
  page_id: number | null;
  description: string | null;
  created_at: string | null;
  updated_at: string | null;
}

export const commissionText = (c: Advertiser['commission']) => {
  if (!c) return '—';
  const range = c.min && c.max && c.min !== c.max ? `${c.min}–${c.max}` : (c.max ?? c.min ?? '');
  return `${range}${c.type === 'percent' ? '%' : c.currency ? ` ${c.currency}` : ''}`;
};

interface Rule {
  type: 'percent_commission' | 'percent_sale' | 'flat';
  value: string;
  currency: string | null;
  source: 'advertiser' | 'network' | 'default';
}

export interface Detail extends Advertiser {
  cashback_rule: Rule;
  ai: { model: string; tokens: { total_tokens: number }; outcome: string; at: string } | null;
}

interface Page {
  id: number;
  title: string;
  slug: string;
  link: string | null;
  status: 'draft' | 'publish';
  updated_at: string;
}

export const ruleText = (r: { type: string; value: string; currency: string | null }) =>
  r.type === 'flat' ? `${r.value} ${r.currency ?? ''} per order` : `${r.value}% of the ${r.type === 'percent_sale' ? 'sale' : 'commission'}`;

export function ShopScreen({ module, advertiser }: { module: string; advertiser: string }) {
  const path = `/advertisers/${encodeURIComponent(module)}/${encodeURIComponent(advertiser)}`;
  const [shop, setShop] = useState<Detail | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(() => {
    api<Detail>(path).then(setShop, (err: unknown) => setError(errorMessage(err)));
  }, [path]);
  useEffect(load, [load]);
  if (error)
    return (
      <>
        <h1>Shop</h1>
        <Notice status="error" isDismissible={false}>
          {error}
        </Notice>
      </>
    );
  if (!shop) return <Spinner />;
  return (
    <>
      <p className="ct-breadcrumb">
        <Link to="/shops">Shops</Link>
      </p>
      <h1>
        {shop.name} <span className="ct-aside">({shop.name_override ? `${shop.network_name} at ${shop.module}` : shop.module})</span>
      </h1>
      <div className="ct-cards">
        <Card>
          <CardHeader>
            <h2>At the network</h2>
          </CardHeader>
          <CardBody>
            <dl className="ct-facts">
              <dt>Network</dt>
              <dd>
                <Link to={`/networks/${encodeURIComponent(shop.module)}`}>{shop.module}</Link>, id {shop.advertiser}
              </dd>
              <dt>Status</dt>
              <dd>{shop.status}</dd>
              <dt>Site</dt>
              <dd className="ct-break">{shop.site_url ?? shop.domain ?? '—'}</dd>
              <dt>Commission</dt>
              <dd>{commissionText(shop.commission)}</dd>
              <dt>Validation</dt>
              <dd>{shop.validation_days !== null ? `${shop.validation_days} days` : '—'}</dd>
              <dt>Categories</dt>
              <dd>{shop.categories.join(', ') || '—'}</dd>
              <dt>Countries</dt>
              <dd>{shop.countries.join(', ') || '—'}</dd>
              <dt>Updated</dt>
              <dd>{shop.updated_at ?? '—'}</dd>
            </dl>
          </CardBody>
        </Card>
        <CashbackCard shop={shop} path={path} onSaved={setShop} />
        <LinkCard path={path} />
        <PageCard shop={shop} path={path} onChanged={load} />
        <LogoCard shop={shop} path={path} onChanged={load} />
        <AiCard shop={shop} onChanged={load} />
      </div>
    </>
  );
}

function CashbackCard({ shop, path, onSaved }: { shop: Detail; path: string; onSaved: (d: Detail) => void }) {
  const rule = shop.cashback_rule;
  const [type, setType] = useState<Rule['type']>(rule.type);
  const [value, setValue] = useState(rule.value);
  const [currency, setCurrency] = useState(rule.currency ?? '');
  const [busy, setBusy] = useState(false);
  const [say, setSay] = useState<Say>(null);
  const call = (method: 'POST' | 'DELETE', data?: Record<string, unknown>) => {
    setBusy(true);
    setSay(null);
    api<Detail>(`${path}/cashback`, { method, data }).then(
      (d) => {
        setBusy(false);
        setSay({ status: 'success', text: method === 'DELETE' ? 'Override removed.' : 'Override saved.' });
        onSaved(d);
      },
      (err: unknown) => {
        setBusy(false);
        setSay({ status: 'error', text: errorMessage(err) });
      },
    );
  };
  const sources = { advertiser: "this shop's override", network: "the network's rule", default: "the site's default" };
  return (
    <Card>
      <CardHeader>
        <h2>Cashback</h2>
      </CardHeader>
      <CardBody>
        <form
          className="ct-form"
          onSubmit={(event) => {
            event.preventDefault();
            call('POST', { type, value, ...(type === 'flat' && currency ? { currency } : {}) });
          }}
        >
          <p>
            Members get <strong>{ruleText(rule)}</strong> ({sources[rule.source]}). Orders already recorded keep their rule.
          </p>
          <Said say={say} />
          <div className="ct-row">
            <SelectControl
              __next40pxDefaultSize
              __nextHasNoMarginBottom
              label="Override type"
              value={type}
              options={[
                { value: 'percent_commission', label: '% of the commission' },
                { value: 'percent_sale', label: '% of the sale' },
                { value: 'flat', label: 'Flat amount' },
              ]}
              onChange={(v) => setType(v as Rule['type'])}
            />
            <TextControl __next40pxDefaultSize __nextHasNoMarginBottom label="Value" value={value} onChange={setValue} />
            {type === 'flat' ? <TextControl __next40pxDefaultSize __nextHasNoMarginBottom label="Currency" value={currency} onChange={setCurrency} /> : null}
          </div>
          <div className="ct-buttons">
            <Button __next40pxDefaultSize variant="primary" type="submit" isBusy={busy} disabled={busy || !value} accessibleWhenDisabled>
              Save override
            </Button>
            {rule.source === 'advertiser' ? (
              <Button __next40pxDefaultSize variant="secondary" isDestructive disabled={busy} onClick={() => call('DELETE')}>
                Remove override
              </Button>
            ) : null}
          </div>
        </form>
      </CardBody>
    </Card>
  );
}

function LinkCard({ path }: { path: string }) {
  const [member, setMember] = useState('');
  const [target, setTarget] = useState('');
  const [link, setLink] = useState<string | null>(null);
  const [say, setSay] = useState<Say>(null);
  return (
    <Card>
      <CardHeader>
        <h2>Tracking link</h2>
      </CardHeader>
      <CardBody>
        <form
          className="ct-form"
          onSubmit={(event) => {
            event.preventDefault();
            setSay(null);
            setLink(null);
            api<{ url: string }>(`${path}/link`, { query: { member, url: target || undefined } }).then(
              (r) => setLink(r.url),
              (err: unknown) => setSay({ status: 'error', text: errorMessage(err) }),
            );
          }}
        >
          <p className="ct-aside">The link that credits a member's visit to this shop.</p>
          <TextControl __next40pxDefaultSize __nextHasNoMarginBottom label="Member (id, login or email)" value={member} onChange={setMember} />
          <TextControl __next40pxDefaultSize __nextHasNoMarginBottom label="Page at the shop (optional)" type="url" value={target} onChange={setTarget} />
          <div>
            <Button __next40pxDefaultSize variant="secondary" type="submit" disabled={!member} accessibleWhenDisabled>
              Make the link
            </Button>
          </div>
          <Said say={say} />
          {link ? <TextControl __next40pxDefaultSize __nextHasNoMarginBottom label="Tracking link" readOnly value={link} onChange={() => {}} /> : null}
        </form>
      </CardBody>
    </Card>
  );
}

function PageCard({ shop, path, onChanged }: { shop: Detail; path: string; onChanged: () => void }) {
  const [page, setPage] = useState<Page | null>(null);
  const [say, setSay] = useState<Say>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (shop.page_id) api<Page>(`/pages/${shop.page_id}`).then(setPage, (err: unknown) => setSay({ status: 'error', text: errorMessage(err) }));
    else setPage(null);
  }, [shop.page_id]);
  const make = () => {
    setBusy(true);
    setSay(null);
    api<Page>(`${path}/page`, { method: 'POST', data: {} }).then(
      () => {
        setBusy(false);
        onChanged();
      },
      (err: unknown) => {
        setBusy(false);
        setSay({ status: 'error', text: errorMessage(err) });
      },
    );
  };
  return (
    <Card>
      <CardHeader>
        <h2>Page</h2>
      </CardHeader>
      <CardBody>
        <div className="ct-form">
          <Said say={say} />
          {page ? (
            <dl className="ct-facts">
              <dt>Title</dt>
              <dd>
                <Link to={`/pages/${page.id}`}>{page.title}</Link>
              </dd>
              <dt>Status</dt>
              <dd>{page.status === 'publish' ? 'Published' : 'Draft'}</dd>
              <dt>Address</dt>
              <dd className="ct-break">{page.link ?? page.slug}</dd>
              <dt>Updated</dt>
              <dd>{page.updated_at}</dd>
            </dl>
          ) : shop.page_id ? null : (
            <>
              <p>This shop has no page yet.</p>
              <div>
                <Button __next40pxDefaultSize variant="secondary" onClick={make} isBusy={busy} disabled={busy} accessibleWhenDisabled>
                  Make its page
                </Button>
              </div>
            </>
          )}
        </div>
      </CardBody>
    </Card>
  );
}
