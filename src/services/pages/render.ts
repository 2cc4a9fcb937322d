// What a page says about its shop: the tag values of an advertiser, and the cashback as a member
// reads it ("up to 5%"), both computed the same way for one page and for a bulk run.
import { currencyExponent } from '../../money.js';
import type { PageSource } from '../advertisers/index.js';
import type { CashbackRule } from '../../cashback-rule.js';
import type { PageTemplateTag } from '../../config/template-tags.js';

/** A decimal string cut (not rounded) to `digits` decimals, without trailing zeros: a member is never promised more. */
function decimal(value: number, digits: number): string {
  if (!Number.isFinite(value) || value <= 0) return '';
  const scale = 10 ** digits;
  // The epsilon absorbs binary noise (0.1 * 3 = 0.30000000000000004 must stay 0.3, 2.9999999 of 3 too).
  const cut = Math.floor(value * scale + 1e-7) / scale;
  if (cut <= 0) return '';
  const text = cut.toFixed(digits);
  return digits > 0 ? text.replace(/\.?0+$/, '') : text;
}

const number = (text: string | null | undefined): number | null => {
  if (text === null || text === undefined || !/^\s*\d+(\.\d+)?\s*$/.test(text)) return null;
  return Number(text);
};

/** `5` / `up to 5` from a range: a range reads "up to" its top, one value reads as itself. */
function range(min: number | null, max: number | null, format: (n: number) => string): string {
  const top = max ?? min;
  if (top === null) return '';
  const text = format(top);
  if (!text) return '';
  return min !== null && max !== null && max > min ? `up to ${text}` : text;
}

/**
 * The member's cashback as a page shows it: a percent of the sale as that percent ("3%"), a
 * percent of the commission applied to the network's commission range ("up to 5%", "2.50 EUR"),
 * a flat rule as its amount ("5.00 USD"). Empty when it cannot be told (no commission known, a
 * mixed commission, nothing to give).
 */
export function cashbackText(rule: CashbackRule, commission: PageSource['commission'], siteCurrency: string): string {
  const value = number(rule.value);
  if (value === null) return '';
  if (rule.type === 'percent_sale') {
    const text = decimal(value, 2);
    return text ? `${text}%` : '';
  }
  if (rule.type === 'flat') {
    const currency = rule.currency ?? siteCurrency;
    const text = decimal(value, safeExponent(currency));
    return text ? `${Number(text).toFixed(safeExponent(currency))} ${currency}` : '';
  }
  if (!commission) return '';
  const share = value / 100;
  const min = number(commission.min);
  const max = number(commission.max);
  if (commission.type === 'percent')
    return range(min === null ? null : min * share, max === null ? null : max * share, (n) => (decimal(n, 2) ? `${decimal(n, 2)}%` : ''));
  if (commission.type === 'flat' && commission.currency) {
    const currency = commission.currency;
    const digits = safeExponent(currency);
    return range(min === null ? null : min * share, max === null ? null : max * share, (n) =>
      decimal(n, digits) ? `${Number(decimal(n, digits)).toFixed(digits)} ${currency}` : '',
    );
  }
  return '';
}

function safeExponent(currency: string): number {
  try {
    return currencyExponent(currency);
  } catch {
    return 2;
  }
}

/** The host of a URL without `www.`, or null. */
function hostOf(url: string | null): string | null {
  if (!url) return null;
  try {
    const host = new URL(url).hostname;
    return host ? host.replace(/^www\./i, '') : null;
  } catch {
    return null;
  }
}

/** A URL a page may link to: http(s) only (a network's odd value renders empty rather than reach the sanitiser). */
function webUrl(url: string | null): string {
  if (!url) return '';
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.toString() : '';
  } catch {
    return url.startsWith('/') && !url.startsWith('//') ? url : '';
  }
}

/** Everything a template can say about a shop, by tag. */
export function pageTags(source: PageSource, extra: { cashback: string; network: string; coupons: number }): Record<PageTemplateTag, string> {
  const tracking = source.tracking_template && !/\{\{|\{[a-z_]+\}/i.test(source.tracking_template) ? webUrl(source.tracking_template) : '';
  return {
    NAME: source.name,
    DOMAIN: source.domain ?? hostOf(source.site_url) ?? '',
    CASHBACK: extra.cashback,
    DESCRIPTION: source.description ?? '',
    LOGO: webUrl(source.logo),
    COUPONS_COUNT: String(extra.coupons),
    URL: webUrl(source.site_url),
    TRACKING_URL: tracking,
    NETWORK: extra.network,
  };
}
