// Pages rendered from templates, before they are stored: an advertiser's tag values (its cashback
// as a member reads it, its network's name, its coupon count), the template's title, excerpt and
// body, the `cashtrack.page.body` filter, the sanitiser, and the slug the page starts from. One
// batch reads the cashback rules and coupon counts once for all its advertisers.
import type { Config, PageTemplate } from '../../config/index.js';
import { ServiceError } from '../../errors.js';
import { HOOKS, type HookBus } from '../../hooks/index.js';
import type { PageSource } from '../advertisers/index.js';
import { ruleKey, type CashbackRuleService, type ScopedCashbackRule } from '../cashback/index.js';
import type { LogService } from '../logs/index.js';
import type { NetworkService } from '../networks/index.js';
import { cashbackText, pageTags } from './render.js';
import { cutText, MAX_EXCERPT, MAX_TITLE, type PageStatus } from './rows.js';
import { sanitizeBody, sanitizeText } from './sanitize.js';
import { slugBase } from './slugs.js';
import { escapeHtml, renderTemplate } from './templates.js';

/** Coupons per advertiser row id, for `%COUPONS_COUNT%` (the coupons domain's read model). */
export interface CouponCounter {
  countActive(advertiserIds: number[]): Promise<Map<number, number>>;
}

/** A page ready to insert, but for its final slug (`base` is where the slug starts from). */
export interface Draft {
  source: PageSource;
  base: string;
  title: string;
  body: string;
  excerpt: string;
  status: PageStatus;
  template: string;
}

export interface PageDraftsDeps {
  logger: LogService;
  hooks: HookBus;
  cashback: CashbackRuleService;
  networks: Pick<NetworkService, 'module'>;
  config: Config['pages'];
  /** The site currency (a flat cashback rule without one is in it). */
  currency: string;
  /** `%COUPONS_COUNT%` (0 when the counts cannot be read). */
  couponCounts: CouponCounter;
}

export const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err)).slice(0, 300);

/** Renders advertisers' pages from a template. */
export class PageDrafts {
  constructor(private readonly deps: PageDraftsDeps) {}

  /** Renders each advertiser's page; an advertiser that cannot be rendered is returned in `failed`. */
  async draft(
    sources: PageSource[],
    chosen: { name: string; template: PageTemplate },
    status: PageStatus,
  ): Promise<{ drafts: Draft[]; failed: { source: PageSource; error: unknown }[] }> {
    const { template } = chosen;
    const rules = await this.rules(sources);
    const coupons = await this.deps.couponCounts.countActive(sources.map((s) => s.id)).catch((err: unknown) => {
      this.deps.logger.warning('pages', 'Coupon counts unavailable; pages say 0', { error: errorText(err) });
      return new Map<number, number>();
    });
    const names = new Map<string, string>();
    const drafts: Draft[] = [];
    const failed: { source: PageSource; error: unknown }[] = [];
    for (const source of sources) {
      try {
        const rule = rules.get(ruleKey(source.module, source.advertiser));
        if (!rule)
          throw new ServiceError('svc_invalid_cashback_rule', `No cashback rule resolves for ${source.module}/${source.advertiser}.`, 400, {
            field: 'advertiser',
          });
        if (!names.has(source.module)) names.set(source.module, await this.networkName(source.module));
        const tags = pageTags(source, {
          cashback: cashbackText(rule, source.commission, this.deps.currency),
          network: names.get(source.module)!,
          coupons: coupons.get(source.id) ?? 0,
        });
        const title =
          cutText(sanitizeText(renderTemplate(template.title, tags)), MAX_TITLE) ||
          cutText(sanitizeText(source.name), MAX_TITLE) ||
          source.advertiser.slice(0, MAX_TITLE);
        const excerpt = cutText(sanitizeText(renderTemplate(template.excerpt, tags)), MAX_EXCERPT);
        // Values go into HTML escaped, but the description, which is the administrator's HTML.
        const html = renderTemplate(template.body, tags, { escape: (value, tag) => (tag === 'DESCRIPTION' ? value : escapeHtml(value)) });
        const filtered = this.deps.hooks.applyFilters<unknown>(HOOKS.pageBody, html, {
          advertiser: { module: source.module, advertiser: source.advertiser, name: source.name },
          template: chosen.name,
        });
        if (typeof filtered !== 'string')
          this.deps.logger.warning('pages', 'A page body filter returned no string; it was ignored', { module: source.module, advertiser: source.advertiser });
        const body = sanitizeBody(typeof filtered === 'string' ? filtered : html);
        drafts.push({ source, base: slugBase({ ...source, name: sanitizeText(source.name) }), title, body, excerpt, status, template: chosen.name });
      } catch (err) {
        failed.push({ source, error: err });
      }
    }
    return { drafts, failed };
  }

  /** The effective cashback rule of each source; one that cannot be resolved is left out. */
  private async rules(sources: PageSource[]): Promise<Map<string, ScopedCashbackRule>> {
    const pairs = sources.map((s) => ({ network: s.module, advertiser: s.advertiser }));
    try {
      return await this.deps.cashback.resolveMany(pairs);
    } catch {
      // An id the rules refuse (not printable ASCII) spoils a batch read: resolve one by one.
      const out = new Map<string, ScopedCashbackRule>();
      for (const p of pairs) {
        try {
          out.set(ruleKey(p.network, p.advertiser), await this.deps.cashback.resolve(p.network, p.advertiser));
        } catch {
          // Left out: that advertiser fails, the others go on.
        }
      }
      return out;
    }
  }

  private async networkName(id: string): Promise<string> {
    try {
      return (await this.deps.networks.module(id)).name;
    } catch {
      return id;
    }
  }
}
