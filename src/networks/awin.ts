// Awin publisher API (reference/networks.md §1): a UI-issued bearer token, bare JSON arrays
// without paging, transactions in windows of at most 31 days, 20 calls a minute per user.
import { ServiceError } from '../errors.js';
import { NetworkHttp, buildUrl } from './http.js';
import { NetworkError, isNetworkError } from './network-error.js';
import { PostbackParams, parsePostbackJson, pickFields, type PostbackQuery } from './postback.js';
import { PER_MINUTE, RateLimiters } from './rate-limit.js';
import { discountFromText, walkPosition } from './coupon-values.js';
import { baseUrl, checkSubId, claimWords, checkTarget, hasSettings, mapStatus, requireSettings, type ModuleOptions } from './module-support.js';
import type {
  ClaimAnswer,
  ClaimChannel,
  NetworkClaim,
  ModuleRuntime,
  ModuleSettings,
  NetworkAdvertiser,
  NetworkCoupon,
  NetworkModule,
  NetworkTransaction,
  PostbackFields,
  TransactionStatus,
} from './types.js';
import {
  absoluteUrl,
  chunk,
  commissionRange,
  countryCodes,
  currencyCode,
  decimalAmount,
  domainOf,
  inclusiveEnd,
  isoLocalUtc,
  list,
  obj,
  parseDate,
  splitWindows,
  text,
  type Rec,
} from './values.js';

export const AWIN_API = 'https://api.awin.com';
export const AWIN_LINKS = 'https://www.awin1.com';
const REQUIRED = ['api_token', 'publisher_id'] as const;
const PROMOTIONS_PAGE_SIZE = 200;
/** The promotion lists a coupon walk reads, in order (`status` filter values). */
const AWIN_COUPON_LISTS = ['upcoming', 'active'] as const;
/** Joined programmes come in one array; the module hands them on in batches of this size. */
const ADVERTISER_BATCH = 500;

/**
 * Awin's commissionStatus words. `deleted` (removed by Awin or the advertiser) is treated as a
 * decline: it will never be paid, and an earlier approval must be reversed.
 */
const STATUS_MAP: Record<string, TransactionStatus> = { pending: 'pending', approved: 'approved', declined: 'declined', deleted: 'declined' };

/**
 * Transaction Notifications carry no status (they fire when a transaction is recorded), so a
 * postback is `pending` unless the publisher adds a `status` parameter of their own. Parameter
 * names are the macro names, so the URL reads `transactionId=!!!transactionId!!!&…`.
 */
const POSTBACK_TEMPLATE = ['transactionId', 'transactionDate', 'transactionAmount', 'transactionCurrency', 'commission', 'merchantId', 'clickRef', 'clickRef2']
  .map((m) => `${m}=!!!${m}!!!`)
  .join('&');

/** Builds an Awin module; `builtInModules` holds the production instance. */
export function createAwinModule(options: ModuleOptions = {}): NetworkModule {
  const http = new NetworkHttp({ network: 'awin', name: 'Awin', retry: options.retry, timeoutMs: options.timeoutMs, maxBodyBytes: options.maxBodyBytes });
  // 20 calls a minute per user (§1.1): the token is the user; the publisher id stands in for it.
  const limiters = new RateLimiters({ default: { limit: 20, perMs: PER_MINUTE }, ...options.rateLimits });

  function account(settings: ModuleSettings) {
    const s = requireSettings(settings, REQUIRED, 'awin', 'Awin');
    return { base: baseUrl(settings, AWIN_API, 'awin'), publisherId: s.publisher_id, token: s.api_token };
  }

  async function call<T>(rt: ModuleRuntime, path: string, query: Record<string, string | undefined> = {}, json?: unknown): Promise<T> {
    const a = account(rt.settings);
    const res = await http.json<T>(rt, {
      method: json === undefined ? 'GET' : 'POST',
      url: buildUrl(a.base, path.replace('{pid}', encodeURIComponent(a.publisherId)), query),
      headers: { Authorization: `Bearer ${a.token}` },
      json,
      bucket: limiters.bucket('default', a.publisherId),
      secrets: [a.token],
    });
    return res.data;
  }

  const module: NetworkModule = {
    paymentsInTransactions: true,
    id: 'awin',
    name: 'Awin',
    defaultCurrency: 'GBP',
    configKeys: [
      { name: 'api_token', description: 'API token from ui.awin.com/awin-api (sent as a bearer token).', required: true, secret: true },
      { name: 'publisher_id', description: 'Your Awin publisher id.', required: true, secret: false },
      {
        name: 'base_url',
        description: `API base URL (default ${AWIN_API}); api_token is bound to its origin.`,
        required: false,
        secret: false,
        default: AWIN_API,
        binds_secrets: true,
      },
      { name: 'link_base_url', description: `Tracking link host (default ${AWIN_LINKS}).`, required: false, secret: false },
    ],
    limits: { maxWindowDays: 31, maxLookbackDays: null },
    statusMap: STATUS_MAP,
    postbackTemplate: POSTBACK_TEMPLATE,
    // Transaction queries (claims) go in batches: `claims.export` writes the upload file; the
    // answers are the query transactions the transactions API then lists (`transactionQueryId`).
    claims: {
      kind: 'file',
      exportFile: (settings, claims) => transactionQueriesFile(settings, claims),
      async answers(rt, filed) {
        if (filed.length === 0) return [];
        const from = new Date(Math.min(...filed.map((f) => f.purchased_at.getTime())) - 86_400_000);
        const byOrder = new Map(filed.map((f) => [`${f.advertiser_id}\0${f.order_ref}`, f]));
        const out: ClaimAnswer[] = [];
        for await (const page of module.listTransactions(rt, { from, to: rt.now() })) {
          for (const t of page) {
            const raw = obj(t.raw);
            const query = text(raw.transactionQueryId);
            const f = byOrder.get(`${t.advertiser_id ?? ''}\0${t.merchant_ref ?? ''}`);
            if (!f || !query || query === '0') continue;
            out.push({
              network_ref: query,
              reference: f.reference,
              status: t.status === 'pending' ? 'submitted' : t.status,
              network_status: text(raw.commissionStatus) ?? t.status,
              reason: t.status === 'declined' ? (text(raw.declineReason) ?? null) : null,
              transaction_id: t.transaction_id,
              deadline: null,
            });
          }
        }
        return out;
      },
    } satisfies ClaimChannel,

    isConfigured: (settings) => hasSettings(settings, REQUIRED),

    async *listAdvertisers(rt) {
      // One bare array of every joined programme (no paging). Commission ranges and validation
      // days need one programmedetails call each, which 20 calls a minute cannot afford for a
      // whole catalogue: getAdvertiser fills them in for one advertiser.
      const programmes = await call<unknown>(rt, '/publishers/{pid}/programmes', { relationship: 'joined' });
      if (!Array.isArray(programmes)) throw badShape('the programme list is not an array');
      rt.setTotal?.(programmes.length);
      for (const batch of chunk(programmes, ADVERTISER_BATCH)) yield batch.map((p) => fromProgramme(obj(p)));
    },

    async getAdvertiser(rt, id) {
      if (!/^\d+$/.test(id)) return null;
      let details: Rec;
      try {
        details = obj(await call<unknown>(rt, '/publishers/{pid}/programmedetails', { advertiserId: id }));
      } catch (err) {
        if (isNetworkError(err, 'svc_network_not_found')) return null;
        throw err;
      }
      const info = obj(details.programmeInfo);
      if (text(info.id) === null) return null;
      return fromDetails(details);
    },

    async *listTransactions(rt, window) {
      const windows = splitWindows(window.from, window.to, module.limits.maxWindowDays);
      // Each window comes whole: the last one's rows and those of the windows before are the walk's total.
      let before = 0;
      for (const [i, w] of windows.entries()) {
        const rows = await call<unknown>(rt, '/publishers/{pid}/transactions/', {
          startDate: isoLocalUtc(w.from),
          endDate: isoLocalUtc(inclusiveEnd(w.to)),
          timezone: 'UTC',
          dateType: 'transaction',
        });
        if (!Array.isArray(rows)) throw badShape('the transaction list is not an array');
        if (i === windows.length - 1) rt.setTotal?.(before + rows.length);
        before += rows.length;
        const page = rows.map((r) => fromTransaction(rt, obj(r))).filter((t): t is NetworkTransaction => t !== null);
        if (page.length) yield page;
      }
    },

    // Promotions and vouchers (§1.4): the upcoming ones, then the active ones (the default
    // `active` status leaves out coupons that start later). With `updatedSince` (a date: Awin
    // filters by day), only those changed since: the refresh is then incremental.
    couponsSince: true,
    async *coupons(rt, from) {
      const start = walkPosition(from.after, AWIN_COUPON_LISTS, 'awin');
      const since = from.updatedSince ? from.updatedSince.toISOString().slice(0, 10) : undefined;
      let before = 0;
      for (let l = AWIN_COUPON_LISTS.indexOf(start.list); l < AWIN_COUPON_LISTS.length; l++) {
        const status = AWIN_COUPON_LISTS[l];
        const last = l === AWIN_COUPON_LISTS.length - 1;
        const first = status === start.list && start.position ? Number(start.position) : 1;
        for (let page = first; ; page++) {
          const res = obj(
            await call<unknown>(
              rt,
              '/publisher/{pid}/promotions',
              {},
              {
                filters: { membership: 'joined', status, type: 'all', ...(since ? { updatedSince: since } : {}) },
                pagination: { page, pageSize: PROMOTIONS_PAGE_SIZE },
              },
            ),
          );
          if (!Array.isArray(res.data)) throw badShape('the promotion list has no data array');
          const total = Number(obj(res.pagination).total);
          if (!Number.isSafeInteger(total) || total < 0) throw badShape('the promotion list has no pagination total');
          // The walk's size is known once its last list tells its own.
          if (last && page === first) rt.setTotal?.(before + total);
          const more = res.data.length > 0 && page * PROMOTIONS_PAGE_SIZE < total;
          const next = more ? `${status}:${page + 1}` : last ? null : `${AWIN_COUPON_LISTS[l + 1]}:1`;
          yield { items: res.data.map((p) => fromPromotion(obj(p))), next };
          if (!more) {
            before += total;
            break;
          }
        }
      }
    },

    trackingLink(settings, input) {
      const { publisher_id } = requireSettings(settings, ['publisher_id'], 'awin', 'Awin');
      const links = baseUrl(settings, AWIN_LINKS, 'awin', 'link_base_url');
      const subId = checkSubId(input.sub_id, 50, 'Awin');
      const target = checkTarget(input.url);
      const mid = encodeURIComponent(String(input.advertiser_id).trim());
      const aff = encodeURIComponent(publisher_id);
      // Parameter names must be lower case in links (§1.5); Awin wants `ued` last.
      // The member beside a click id, in the second click reference.
      const refs = `clickref=${encodeURIComponent(subId)}${input.member_ref ? `&clickref2=${encodeURIComponent(checkSubId(input.member_ref, 50, 'Awin'))}` : ''}`;
      if (!target) return `${links}/awclick.php?mid=${mid}&id=${aff}&${refs}`;
      return `${links}/cread.php?awinmid=${mid}&awinaffid=${aff}&${refs}&ued=${encodeURIComponent(target)}`;
    },

    parsePostback(query, body) {
      return parseAwinPostback(query, body);
    },
  };
  return module;
}

/**
 * GET notifications: the macro names as parameters (see the template). POST notifications: the
 * form field `AwinTransactionPush` holding a JSON object with the same keys.
 */
export function parseAwinPostback(query: PostbackQuery, body: unknown): PostbackFields {
  // The push holds the whole notification (with the basket when product data is switched on), so
  // it is longer than one value may be; the endpoint's body limit bounds it.
  const documents = { documents: ['AwinTransactionPush'] };
  const outer = PostbackParams.readWith(documents, query, body);
  const push = outer.get('AwinTransactionPush');
  let params = outer;
  if (push !== undefined) {
    const parsed = parsePostbackJson(push, 'AwinTransactionPush');
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
      throw new ServiceError('svc_postback_invalid_body', 'AwinTransactionPush is not a JSON object.', 400);
    params = PostbackParams.readWith(documents, query, body, parsed);
  }
  const fields = pickFields(params, {
    transaction_id: ['transactionId'],
    status: ['status', 'commissionStatus'],
    sale_amount: ['transactionAmount'],
    commission: ['commission'],
    currency: ['transactionCurrency'],
    sub_id: ['clickRef'],
    member_ref: ['clickRef2'],
    advertiser_id: ['merchantId'],
    merchant_ref: ['orderRef'],
    event_time: ['transactionDate'],
  });
  fields.status ??= 'pending';
  // transactionDate is UTC "%Y-%m-%d %H:%i:%s" without a zone: hand on an unambiguous ISO time.
  const at = parseDate(fields.event_time);
  if (at) fields.event_time = at.toISOString();
  return fields;
}

function badShape(what: string) {
  return new NetworkError('svc_network_bad_response', `Awin answered with an unexpected shape: ${what}.`, { network: 'awin' });
}

function activeWord(value: unknown, ok: string[]): boolean {
  const s = text(value);
  return s === null || ok.includes(s.toLowerCase());
}

function fromProgramme(p: Rec): NetworkAdvertiser {
  const domains = list(p.validDomains)
    .map((d) => text(obj(d).domain))
    .filter((d): d is string => d !== null);
  const sector = typeof p.primarySector === 'string' ? p.primarySector : text(obj(p.primarySector).name);
  return {
    id: String(text(p.id)),
    name: text(p.name) ?? String(text(p.id)),
    domain: domainOf(domains[0] ?? p.displayUrl),
    site_url: absoluteUrl(p.displayUrl),
    logo_url: absoluteUrl(p.logoUrl),
    tracking_template: absoluteUrl(p.clickThroughUrl),
    commission: null,
    categories: sector ? [sector] : [],
    countries: countryCodes([obj(p.primaryRegion).countryCode]),
    status: activeWord(p.status, ['active']) ? 'active' : 'inactive',
    validation_days: null,
    raw: p,
  };
}

function fromDetails(details: Rec): NetworkAdvertiser {
  const info = obj(details.programmeInfo);
  const base = fromProgramme(info);
  const currency = text(info.currencyCode)?.toUpperCase() ?? null;
  const rates = list(details.commissionRange).flatMap((r) => {
    const range = obj(r);
    const percent = text(range.type)?.toLowerCase() === 'percentage';
    return [
      { value: range.min, percent },
      { value: range.max, percent },
    ];
  });
  const days = Number(obj(details.kpi).validationDays);
  return {
    ...base,
    commission: commissionRange(rates, currency),
    status: base.status === 'active' && activeWord(info.membershipStatus, ['joined', 'active']) ? 'active' : 'inactive',
    validation_days: Number.isFinite(days) && days >= 0 ? Math.round(days) : null,
    raw: details,
  };
}

function fromTransaction(rt: ModuleRuntime, t: Rec): NetworkTransaction | null {
  const id = text(t.id);
  if (!id) {
    rt.log('error', 'awin: a transaction without an id was skipped', { network: 'awin' });
    return null;
  }
  const status = mapStatus(rt, 'awin', STATUS_MAP, t.commissionStatus, id);
  if (!status) return null;
  const commission = obj(t.commissionAmount);
  const sale = obj(t.saleAmount);
  const currency = currencyCode(commission.currency ?? sale.currency, 'GBP');
  return {
    transaction_id: id,
    status,
    advertiser_id: text(t.advertiserId),
    merchant_ref: text(t.orderRef),
    sub_id: text(obj(t.clickRefs).clickRef),
    member_ref: text(obj(t.clickRefs).clickRef2),
    sale_amount: decimalAmount(sale.amount, currency),
    commission: decimalAmount(commission.amount, currency),
    currency,
    clicked_at: parseDate(t.clickDate),
    event_at: parseDate(t.transactionDate),
    payment: awinPayment(t, currency),
    raw: t,
  };
}

/**
 * Awin marks a transaction paid to the publisher (`paidToPublisher`) and names the payment
 * (`paymentId`, 0 or absent until paid). It gives no payment date on the transaction: the line
 * takes the time it was read. The amount paid is the transaction's commission.
 */
function awinPayment(t: Rec, currency: string): NetworkTransaction['payment'] {
  const paid = t.paidToPublisher === true || t.paidToPublisher === 'true' || t.paidToPublisher === 1;
  const paymentId = text(t.paymentId);
  if (!paid || !paymentId || paymentId === '0') return null;
  return { payment_id: paymentId, paid_at: null, amount: decimalAmount(obj(t.commissionAmount).amount, currency), currency };
}

function fromPromotion(p: Rec): NetworkCoupon {
  const voucher = obj(p.voucher);
  const regions = obj(p.regions);
  return {
    id: text(p.promotionId) ?? '',
    advertiser_id: text(obj(p.advertiser).id) ?? '',
    code: text(voucher.code),
    title: text(p.title) ?? '',
    description: text(p.description),
    terms: text(p.terms),
    // Awin states the discount only in words: the title says it ("15% off trainers").
    discount: discountFromText(p.title),
    // The landing page: the site wraps it in its own tracking link with the member's sub id.
    url: absoluteUrl(p.url),
    tracking_url: absoluteUrl(p.urlTracking),
    starts_at: parseDate(p.startDate),
    ends_at: parseDate(p.endDate),
    exclusive: voucher.exclusive === true,
    regions: regions.all === true ? [] : countryCodes(list(regions.list).map((r) => obj(r).countryCode)),
    raw: p,
  };
}

/** A CSV field: quoted when it holds a comma, a quote or a line break (inner quotes doubled). */
function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/**
 * Awin's transaction-queries upload file (the documented data specification): one `untracked`
 * query per claim, `enquiry_id` our claim id, the click reference (the click, else the member),
 * the date as `YYYY-MM-DD HH:MM:SS` (UTC), the member as the customer reference and the shop's
 * order reference.
 */
function transactionQueriesFile(
  settings: ModuleSettings,
  claims: NetworkClaim[],
): { filename: string; contentType: string; body: string; references: string[] } {
  const { publisher_id } = requireSettings(settings, ['publisher_id'], 'awin', 'Awin');
  const header = ['enquiry_id', 'merchant_id', 'type', 'click_ref', 'amount', 'commission', 'date', 'customer_reference', 'reference', 'description'];
  const lines = [header.join(',')];
  for (const c of claims) {
    const date = `${c.purchased_at.toISOString().slice(0, 10)} ${c.purchased_at.toISOString().slice(11, 19)}`;
    lines.push(
      [
        c.reference,
        c.advertiser_id,
        'untracked',
        c.click_ref ?? c.customer_ref,
        c.amount,
        c.expected_commission ?? '0.00',
        date,
        c.customer_ref,
        c.order_ref,
        (claimWords(c, null, 255) ?? '').replace(/\s+/g, ' '),
      ]
        .map(csvField)
        .join(','),
    );
  }
  const refs = claims.map((c) => c.reference);
  const ids = refs.map(Number).sort((a, b) => a - b);
  return {
    filename: `awin-transaction-queries-${publisher_id.replace(/[^A-Za-z0-9_-]/g, '')}-${ids[0]}-${ids[ids.length - 1]}.csv`,
    contentType: 'text/csv',
    body: `${lines.join('\r\n')}\r\n`,
    references: refs,
  };
}
