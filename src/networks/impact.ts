// impact.com Mediapartners API (reference/networks.md §4): HTTP Basic AccountSID:AuthToken, JSON
// only when asked (`Accept: application/json`, which the HTTP client always sends, so no XML is
// ever parsed), `Page`/`PageSize` with `@numpages`, numbers as strings, dotted action ids,
// Actions in windows of at most 45 days starting at most 3 years back, hourly quotas per group.
import { NetworkHttp, buildUrl } from './http.js';
import { NetworkError, isNetworkError } from './network-error.js';
import { PostbackParams, pickFields } from './postback.js';
import { PER_HOUR, RateLimiters } from './rate-limit.js';
import { discountFromText, walkPosition } from './coupon-values.js';
import { baseUrl, claimWords, hasSettings, mapStatus, requireSettings, type ModuleOptions } from './module-support.js';
import { linkFromTemplate } from './tracking-links.js';
import type {
  ClaimAnswer,
  ClaimChannel,
  ListPage,
  ModuleRuntime,
  NetworkAdvertiser,
  NetworkCoupon,
  NetworkModule,
  NetworkTransaction,
  TransactionStatus,
} from './types.js';
import {
  absoluteUrl,
  commissionRange,
  countryCodes,
  currencyCode,
  daysBefore,
  decimalAmount,
  domainOf,
  inclusiveEnd,
  isNegative,
  isoUtc,
  list,
  obj,
  parseDate,
  splitWindows,
  text,
  type Rec,
} from './values.js';

export const IMPACT_API = 'https://api.impact.com';
const REQUIRED = ['account_sid', 'auth_token'] as const;
const LIST_PAGE_SIZE = 1000;
/** The lists a coupon walk reads, in order. */
const IMPACT_COUPON_LISTS = ['ads', 'codes'] as const;
/** Documented default for /Actions (minimum 2,000); more than 10 pages is an error. */
const ACTIONS_PAGE_SIZE = 20_000;
const MAX_ACTION_PAGES = 10;
const LOOKBACK_DAYS = 3 * 365;
const MIN_SPLIT_MS = 3_600_000;

/**
 * Action states. PENDING waits for the locking date; APPROVED is locked and will pay; REVERSED
 * will not pay. LOCKED and CLEARED (older and clearing-event vocabulary: past the locking date,
 * cleared for payment) are approvals too.
 */
const STATUS_MAP: Record<string, TransactionStatus> = {
  PENDING: 'pending',
  APPROVED: 'approved',
  LOCKED: 'approved',
  CLEARED: 'approved',
  REVERSED: 'declined',
};

const POSTBACK_TEMPLATE = ['ActionId', 'Status', 'Amount', 'Payout', 'Currency', 'SubId1', 'SubId2', 'CampaignId', 'OID', 'EventDate']
  .map((m) => `${m}={${m}}`)
  .join('&');

/** Builds an impact.com module; `builtInModules` holds the production instance. */
export function createImpactModule(options: ModuleOptions = {}): NetworkModule {
  const http = new NetworkHttp({
    network: 'impact',
    name: 'impact.com',
    retry: options.retry,
    timeoutMs: options.timeoutMs,
    maxBodyBytes: options.maxBodyBytes,
  });
  // Hourly quotas per account (§4.1): performance detail (/Actions) 500, everything else 1,000.
  const createHttp = new NetworkHttp({
    network: 'impact',
    name: 'impact.com',
    retry: { ...options.retry, attempts: 1 },
    timeoutMs: options.timeoutMs,
    maxBodyBytes: options.maxBodyBytes,
  });
  const limiters = new RateLimiters({ default: { limit: 1000, perMs: PER_HOUR }, actions: { limit: 500, perMs: PER_HOUR }, ...options.rateLimits });

  async function call(rt: ModuleRuntime, group: 'default' | 'actions', path: string, query: Record<string, string | number | undefined> = {}): Promise<Rec> {
    const s = requireSettings(rt.settings, REQUIRED, 'impact', 'impact.com');
    const credentials = Buffer.from(`${s.account_sid}:${s.auth_token}`).toString('base64');
    const base = `${baseUrl(rt.settings, IMPACT_API, 'impact')}/Mediapartners/${encodeURIComponent(s.account_sid)}`;
    const res = await http.json(rt, {
      url: buildUrl(base, path, query),
      headers: { Authorization: `Basic ${credentials}` },
      bucket: limiters.bucket(group, s.account_sid),
      secrets: [s.auth_token, credentials],
    });
    return obj(res.data);
  }

  /**
   * Action inquiries (impact.com's claims): created form-encoded, read one at a time. A create is
   * sent once (not retried on a 5xx answer: it may have been taken; the claims poll files it again).
   */
  async function inquiryCall(rt: ModuleRuntime, path: string, form?: Record<string, string>): Promise<Rec> {
    const s = requireSettings(rt.settings, REQUIRED, 'impact', 'impact.com');
    const credentials = Buffer.from(`${s.account_sid}:${s.auth_token}`).toString('base64');
    const base = `${baseUrl(rt.settings, IMPACT_API, 'impact')}/Mediapartners/${encodeURIComponent(s.account_sid)}`;
    const res = await (form ? createHttp : http).json(rt, {
      method: form ? 'POST' : 'GET',
      url: buildUrl(base, path),
      headers: { Authorization: `Basic ${credentials}` },
      form,
      bucket: limiters.bucket('default', s.account_sid),
      secrets: [s.auth_token, credentials],
    });
    return obj(res.data);
  }

  const claims: ClaimChannel = {
    kind: 'api',
    async submit(rt, claim) {
      const form: Record<string, string> = {
        CampaignId: claim.advertiser_id,
        OrderId: claim.order_ref,
        TransactionDate: isoUtc(claim.purchased_at),
        TransactionAmount: claim.amount,
        InquiryType: 'UNTRACKED',
        MediaPartnerInquiryId: claim.reference,
        CustomerId: claim.customer_ref,
      };
      if (claim.expected_commission !== null) form.ExpectedPayout = claim.expected_commission;
      const notes = claimWords(claim, null, 1000);
      if (notes) form.InquiryNotes = notes;
      const created = await inquiryCall(rt, '/ActionInquiries', form);
      const id = /\/ActionInquiries\/([^/?#]+)$/.exec(text(created.Uri) ?? '')?.[1];
      if (text(created.Status)?.toUpperCase() !== 'OK' || !id)
        throw new NetworkError('svc_network_bad_response', 'impact.com answered the action inquiry without its Uri.', { network: 'impact' });
      // The inquiry as impact.com keeps it: its resolution deadline among others.
      return inquiryAnswer(await inquiryCall(rt, `/ActionInquiries/${encodeURIComponent(id)}`), id);
    },
    async answers(rt, filed) {
      const out: ClaimAnswer[] = [];
      for (const f of filed) {
        if (!f.network_ref) continue;
        out.push(inquiryAnswer(await inquiryCall(rt, `/ActionInquiries/${encodeURIComponent(f.network_ref)}`), f.network_ref));
      }
      return out;
    },
  };

  /** Walks `Page` from `first` to `@numpages`, yielding each page's `key` array and the number of the next page (null after the last). */
  async function* pages(
    rt: ModuleRuntime,
    path: string,
    key: string,
    query: Record<string, string | number | undefined>,
    first = 1,
    onTotal?: (total: number) => void,
  ): AsyncGenerator<{ items: unknown[]; next: number | null }> {
    for (let page = first; ; page++) {
      const body = await call(rt, 'default', path, { ...query, Page: page, PageSize: LIST_PAGE_SIZE });
      const items = itemsOf(body, key);
      const total = totalOf(body);
      if (page === first && total !== null) onTotal?.(total);
      const next = items.length === 0 || page >= numPages(body) ? null : page + 1;
      if (items.length) yield { items, next };
      if (next === null) return;
    }
  }

  /** Active campaigns from list position `after` (a page number; null: the first page). */
  async function* campaignPages(rt: ModuleRuntime, after: string | null): AsyncGenerator<ListPage<NetworkAdvertiser>> {
    if (after !== null && !/^[1-9]\d{0,14}$/.test(after)) throw new Error(`impact: "${String(after).slice(0, 40)}" is not a page of the campaign list`);
    const base = baseUrl(rt.settings, IMPACT_API, 'impact');
    const listed = pages(rt, '/Campaigns', 'Campaigns', { InsertionOrderStatus: 'Active' }, after === null ? 1 : Number(after), (total) =>
      rt.setTotal?.(total),
    );
    for await (const { items, next } of listed) {
      yield { items: items.map((c) => fromCampaign(obj(c), base)), next: next === null ? null : String(next) };
    }
  }

  /**
   * One window of /Actions; a window too busy for 10 pages is halved (down to an hour). `walk`
   * counts the records read so far; in the walk's last window it tells the walk's total.
   */
  async function* actions(rt: ModuleRuntime, from: Date, to: Date, walk: { read: number; last: boolean }): AsyncGenerator<NetworkTransaction[]> {
    const query = { ActionDateStart: isoUtc(from), ActionDateEnd: isoUtc(inclusiveEnd(to)), PageSize: ACTIONS_PAGE_SIZE };
    const first = await call(rt, 'actions', '/Actions', { ...query, Page: 1 });
    const total = numPages(first);
    if (total > MAX_ACTION_PAGES) {
      if (to.getTime() - from.getTime() <= MIN_SPLIT_MS)
        throw new NetworkError(
          'svc_network_bad_response',
          `impact.com reports ${total} pages of actions for one hour; at most ${MAX_ACTION_PAGES} can be read.`,
          { network: 'impact' },
        );
      const mid = new Date(from.getTime() + Math.floor((to.getTime() - from.getTime()) / 2000) * 1000);
      const last = walk.last;
      walk.last = false;
      yield* actions(rt, from, mid, walk);
      walk.last = last;
      yield* actions(rt, mid, to, walk);
      return;
    }
    const records = totalOf(first);
    if (walk.last && records !== null) rt.setTotal?.(walk.read + records);
    for (let page = 1, body = first; ; ) {
      const read = itemsOf(body, 'Actions');
      walk.read += read.length;
      const mapped = read.map((a) => fromAction(rt, obj(a))).filter((t): t is NetworkTransaction => t !== null);
      if (mapped.length) yield mapped;
      if (++page > total) return;
      body = await call(rt, 'actions', '/Actions', { ...query, Page: page });
    }
  }

  const module: NetworkModule = {
    paymentsInTransactions: true,
    id: 'impact',
    name: 'impact.com',
    defaultCurrency: 'USD',
    configKeys: [
      { name: 'account_sid', description: 'Account SID (Settings → API).', required: true, secret: false },
      { name: 'auth_token', description: 'Auth Token (Settings → API).', required: true, secret: true },
      {
        name: 'base_url',
        description: `API host (default ${IMPACT_API}); /Mediapartners/{SID} is added; auth_token is bound to its origin.`,
        required: false,
        secret: false,
        default: IMPACT_API,
        binds_secrets: true,
      },
    ],
    limits: { maxWindowDays: 45, maxLookbackDays: LOOKBACK_DAYS },
    statusMap: STATUS_MAP,
    postbackTemplate: POSTBACK_TEMPLATE,
    claims,

    isConfigured: (settings) => hasSettings(settings, REQUIRED),

    async *listAdvertisers(rt) {
      for await (const page of campaignPages(rt, null)) yield page.items;
    },

    listAdvertisersFrom: campaignPages,

    async getAdvertiser(rt, id) {
      if (!/^\d+$/.test(id)) return null;
      let campaign: Rec;
      try {
        campaign = await call(rt, 'default', `/Campaigns/${id}`);
      } catch (err) {
        if (isNetworkError(err, 'svc_network_not_found')) return null;
        throw err;
      }
      if (text(campaign.CampaignId) === null) return null;
      const advertiser = fromCampaign(campaign, baseUrl(rt.settings, IMPACT_API, 'impact'));
      // Rates live in PublicTerms; a programme without public terms keeps no range.
      let terms: Rec | null = null;
      try {
        terms = await call(rt, 'default', `/Campaigns/${id}/PublicTerms`);
      } catch (err) {
        if (!isNetworkError(err, 'svc_network_not_found')) throw err;
      }
      if (!terms) return advertiser;
      return { ...advertiser, commission: termsRange(terms), raw: { campaign, public_terms: terms } };
    },

    async *listTransactions(rt, window) {
      const oldest = new Date(daysBefore(rt.now(), LOOKBACK_DAYS).getTime() + 60_000);
      let from = window.from;
      if (from < oldest) {
        rt.log('warning', `impact.com keeps actions for 3 years: the window starts at ${oldest.toISOString()} instead of ${from.toISOString()}`, {
          network: 'impact',
        });
        from = oldest;
      }
      const windows = splitWindows(from, window.to, module.limits.maxWindowDays);
      const walk = { read: 0, last: false };
      for (const [i, w] of windows.entries()) {
        walk.last = i === windows.length - 1;
        yield* actions(rt, w.from, w.to, walk);
      }
    },

    // Coupon ads first (§4.4: a landing page, a tracking link, the deal's default code), then
    // the promo codes no ad carries (a code with its deal's discount, no landing page). Each
    // list pages by `Page`; the walk's position is `ads:N` or `codes:N`.
    async *coupons(rt, from) {
      const start = walkPosition(from.after, IMPACT_COUPON_LISTS, 'impact');
      // Codes the ads carried, per campaign: the promo code list repeats them.
      const carried = new Set<string>();
      let before = 0;
      if (start.list === 'ads') {
        const ads = pages(rt, '/Ads', 'Ads', { Type: 'COUPON' }, start.position ? Number(start.position) : 1, (total) => (before = total));
        for await (const { items, next } of ads) {
          const page = items.map((a) => fromAd(obj(a)));
          for (const c of page) if (c.code) carried.add(`${c.advertiser_id}\0${c.code.toUpperCase()}`);
          yield { items: page, next: next === null ? 'codes:1' : `ads:${next}` };
        }
      }
      const codes = pages(rt, '/PromoCodes', 'PromoCodes', {}, start.list === 'codes' && start.position ? Number(start.position) : 1, (total) =>
        rt.setTotal?.(before + total),
      );
      for await (const { items, next } of codes) {
        const page = items
          .map((p) => obj(p))
          // An inactive code no longer works: not listed, so a full refresh marks it removed.
          .filter(
            (p) => (text(p.State) ?? 'ACTIVE').toUpperCase() === 'ACTIVE' && !carried.has(`${text(p.CampaignId) ?? ''}\0${(text(p.Code) ?? '').toUpperCase()}`),
          )
          .map(fromPromoCode);
        yield { items: page, next: next === null ? null : `codes:${next}` };
      }
    },

    trackingLink(_settings, input) {
      // Links are {brand}.sjv.io/c/{partner}/{ad}/{campaign}: the ad id and vanity host come
      // only with the campaign's TrackingLink.
      return linkFromTemplate(
        {
          network: 'impact',
          name: 'impact.com',
          missing: "impact.com tracking links need the campaign's TrackingLink: sync the advertiser first.",
          notUrl: 'The stored impact.com tracking link is not a URL.',
          subIdParam: 'subId1',
          maxSubId: 100,
          targetParam: 'u',
          memberParam: 'subId2',
        },
        input,
      );
    },

    parsePostback(query, body) {
      const params = PostbackParams.read(query, body);
      const fields = pickFields(params, {
        transaction_id: ['ActionId'],
        status: ['Status'],
        sale_amount: ['Amount'],
        commission: ['Payout'],
        currency: ['Currency'],
        sub_id: ['SubId1'],
        member_ref: ['SubId2'],
        advertiser_id: ['CampaignId'],
        merchant_ref: ['OID', 'Oid'],
        event_time: ['EventDate'],
      });
      if (fields.status) fields.status = fields.status.toUpperCase();
      const at = parseDate(fields.event_time);
      if (at) fields.event_time = at.toISOString();
      return fields;
    },
  };
  return module;
}

function numPages(body: Rec): number {
  const n = Number(body['@numpages']);
  return Number.isFinite(n) && n >= 0 ? n : 1;
}

/** `@total`, the records of the whole list, or null when the answer has none. */
function totalOf(body: Rec): number | null {
  const n = Number(body['@total']);
  return body['@total'] !== undefined && body['@total'] !== '' && Number.isSafeInteger(n) && n >= 0 ? n : null;
}

function itemsOf(body: Rec, key: string): unknown[] {
  if (!Array.isArray(body[key])) throw new NetworkError('svc_network_bad_response', `impact.com answered a list without "${key}".`, { network: 'impact' });
  return body[key] as unknown[];
}

function fromCampaign(c: Rec, apiBase: string): NetworkAdvertiser {
  const site = c.CampaignUrl || c.AdvertiserUrl;
  return {
    id: String(text(c.CampaignId)),
    name: text(c.CampaignName) ?? text(c.AdvertiserName) ?? String(text(c.CampaignId)),
    domain: domainOf(site),
    site_url: absoluteUrl(site),
    // An API path (it needs the account's credentials to fetch), made absolute.
    logo_url: absoluteUrl(c.CampaignLogoUri, apiBase),
    tracking_template: absoluteUrl(c.TrackingLink),
    commission: null,
    categories: [],
    countries: countryCodes(list(c.ShippingRegions)),
    status: (text(c.ContractStatus) ?? 'Active').toLowerCase() === 'active' ? 'active' : 'inactive',
    validation_days: null,
    raw: c,
  };
}

function termsRange(terms: Rec): NetworkAdvertiser['commission'] {
  const rates: { value: unknown; percent: boolean }[] = [];
  let currency: string | null = null;
  for (const t of list(terms.PayoutTermsList)) {
    const term = obj(t);
    for (const k of ['PayoutPercentage', 'PayoutPercentageLowerLimit', 'PayoutPercentageUpperLimit'])
      if (text(term[k])) rates.push({ value: term[k], percent: true });
    for (const k of ['PayoutAmount', 'PayoutAmountLowerLimit', 'PayoutAmountUpperLimit'])
      if (text(term[k]) && Number(term[k]) > 0) rates.push({ value: term[k], percent: false });
    currency ??= text(term.PayoutCurrency)?.toUpperCase() ?? null;
  }
  return commissionRange(rates, currency);
}

function fromAction(rt: ModuleRuntime, a: Rec): NetworkTransaction | null {
  const id = text(a.Id);
  if (!id) {
    rt.log('error', 'impact: an action without an id was skipped', { network: 'impact' });
    return null;
  }
  const status = mapStatus(rt, 'impact', STATUS_MAP, a.State, id);
  if (!status) return null;
  const currency = currencyCode(a.Currency, 'USD');
  let sale = decimalAmount(a.Amount, currency);
  let commission = decimalAmount(a.Payout, currency);
  // A reversal that shows negative amounts (a delta) means nothing will be paid: zero, which the
  // orders service accepts on a decline; the deltas stay in the raw record.
  if (status === 'declined') {
    if (isNegative(sale)) sale = decimalAmount(0, currency);
    if (isNegative(commission)) commission = decimalAmount(0, currency);
  }
  return {
    transaction_id: id,
    status,
    advertiser_id: text(a.CampaignId),
    merchant_ref: text(a.Oid),
    sub_id: text(a.SubId1),
    member_ref: text(a.SubId2),
    sale_amount: sale,
    commission,
    currency,
    clicked_at: parseDate(a.ReferringDate),
    event_at: parseDate(a.EventDate),
    payment: status === 'approved' ? clearedPayment(rt, a.ClearedDate, commission, currency) : null,
    raw: a,
  };
}

/**
 * impact.com names no payment per action: an approved action's `ClearedDate` is when its payout
 * cleared from the brand's funding into the partner's impact.com balance (its "clearing date").
 * Once that date has passed the action counts as paid, under the payment id
 * `cleared:YYYY-MM-DD` (the clearing day: the actions cleared together); the amount is its payout.
 */
function clearedPayment(rt: ModuleRuntime, cleared: unknown, commission: string, currency: string): NetworkTransaction['payment'] {
  const at = parseDate(cleared);
  if (!at || at > rt.now()) return null;
  return { payment_id: `cleared:${at.toISOString().slice(0, 10)}`, paid_at: at, amount: commission, currency };
}

function fromAd(a: Rec): NetworkCoupon {
  return {
    id: text(a.Id) ?? '',
    advertiser_id: text(a.CampaignId) ?? '',
    // Ads' `Code` is the ad's HTML; the code to type is the deal's default promo code.
    code: text(a.DealDefaultPromoCode) ?? text(a.PromoCode),
    title: text(a.Name) ?? text(a.DealName) ?? '',
    description: text(a.Description),
    discount: dealDiscount(a) ?? discountFromText(a.Name),
    url: absoluteUrl(a.LandingPageUrl),
    tracking_url: absoluteUrl(a.TrackingLink),
    starts_at: parseDate(a.StartDate),
    // "" means open-ended.
    ends_at: parseDate(a.EndDate),
    raw: a,
  };
}

/** A promo code (ids prefixed `code:`, apart from the ads' ids) with its deal's name and discount. */
function fromPromoCode(p: Rec): NetworkCoupon {
  const code = text(p.Code);
  const discount = dealDiscount(p);
  return {
    id: text(p.Id) === null ? '' : `code:${text(p.Id)}`,
    advertiser_id: text(p.CampaignId) ?? '',
    code,
    title: text(p.DealName) ?? discount?.text ?? (code ? `Code ${code}` : ''),
    description: text(p.DealDescription),
    discount,
    url: null,
    starts_at: parseDate(p.StartDate),
    ends_at: parseDate(p.EndDate),
    raw: p,
  };
}

/** A deal's `DiscountType` with its amount or percent (numbers come as strings). */
function dealDiscount(r: Rec): NetworkCoupon['discount'] {
  const type = (text(r.DiscountType) ?? '').toUpperCase();
  const percent = text(r.DiscountPercent);
  const amount = text(r.DiscountAmount);
  const currency = text(r.DiscountCurrency);
  if (type.includes('PERCENT') && percent) return { type: 'percent', value: percent, currency: null, text: `${percent}% off` };
  if ((type === 'FIXED' || type.includes('AMOUNT')) && amount)
    return { type: 'amount', value: amount, currency, text: `${amount}${currency ? ` ${currency}` : ''} off` };
  if (type.includes('SHIPPING') || (text(r.DealType) ?? '').toUpperCase() === 'FREE_SHIPPING')
    return { type: 'free_shipping', value: null, currency: null, text: 'Free shipping' };
  return null;
}

/** ResolutionStatus of an action inquiry: `INCOMPLETE` wants more from the partner. */
const INQUIRY_STATUS: Record<string, ClaimAnswer['status']> = { UNRESOLVED: 'submitted', VALID: 'approved', DECLINED: 'declined', INCOMPLETE: 'incomplete' };

/** An action inquiry as impact.com shows it (numbers and dates as strings). */
function inquiryAnswer(body: Rec, id: string): ClaimAnswer {
  const word = (text(body.ResolutionStatus) ?? '').toUpperCase();
  const status = INQUIRY_STATUS[word];
  if (!status)
    throw new NetworkError(
      'svc_network_bad_response',
      `impact.com answered action inquiry ${id.slice(0, 40)} with the unknown status "${word.slice(0, 40)}".`,
      {
        network: 'impact',
      },
    );
  const reject = text(body.RejectReason);
  return {
    network_ref: text(body.Id) ?? id,
    status,
    network_status: word,
    reason: status === 'declined' || status === 'incomplete' ? (reject ?? null) : null,
    transaction_id: status === 'approved' ? text(body.ActionId) : null,
    deadline: parseDate(body.ResolutionDeadlineDate),
  };
}
