// Admitad publisher API (reference/networks.md §2): OAuth2 client credentials (admitad-auth.ts),
// lists paged by limit/offset (at most 500) with `_meta.count`, protocol-relative images,
// `approved_but_stalled`, and "NOT REQUIRED" as a coupon's promo code.
import { AdmitadTokens, type AdmitadAccount } from './admitad-auth.js';
import { NetworkHttp, buildUrl } from './http.js';
import { NetworkError, isNetworkError } from './network-error.js';
import { PostbackParams, pickFields } from './postback.js';
import { RateLimiters } from './rate-limit.js';
import { baseUrl, claimWords, hasSettings, mapStatus, requireSettings, type ModuleOptions } from './module-support.js';
import { linkFromTemplate } from './tracking-links.js';
import { discountFromText } from './coupon-values.js';
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
  decimalAmount,
  dmyTime,
  domainOf,
  inclusiveEnd,
  list,
  obj,
  parseDate,
  splitWindows,
  text,
  type Rec,
} from './values.js';

export const ADMITAD_API = 'https://api.admitad.com';
const REQUIRED = ['client_id', 'client_secret', 'website_id'] as const;
const DEFAULT_SCOPE = 'advcampaigns_for_website statistics coupons_for_website deeplink_generator';
export const ADMITAD_PAGE_LIMIT = 500;

/**
 * Admitad's action statuses. `approved_but_stalled` (approved by the advertiser, payout held by
 * Admitad) stays `pending`: the member is credited when the money is actually coming.
 */
const STATUS_MAP: Record<string, TransactionStatus> = { pending: 'pending', approved: 'approved', declined: 'declined', approved_but_stalled: 'pending' };

/**
 * Parameter names are the macro names. `[[[action_id]]]` and `[[[status]]]` are not in the
 * reference's macro list but are what public Admitad postback configurations use; the action id
 * is the same `id` the statistics API reports, so postbacks and polling meet on one id.
 */
const POSTBACK_TEMPLATE = ['action_id', 'status', 'order_id', 'order_sum', 'payment_sum', 'currency', 'subid', 'offer_id', 'time']
  .map((m) => `${m}=[[[${m}]]]`)
  .join('&');

type Page = { results: unknown[]; count: number };

/** The scopes of the lost-orders tool (offered to cashback services): its own token, so the sync's scopes stay as set. */
const CLAIM_SCOPE = 'lost_orders manage_lost_orders';

/** The scope of the payments and their statements (`payments` access right): its own token, so the sync's scopes stay as set. */
const PAYMENT_SCOPE = 'payments';

/** Lost-order statuses: `processing` until the advertiser decides. */
const LOST_ORDER_STATUS: Record<string, ClaimAnswer['status']> = { processing: 'submitted', accepted: 'approved', rejected: 'declined' };

/** A lost order as Admitad answers it (create and read). */
function lostOrderAnswer(body: Rec): ClaimAnswer {
  const id = text(body.id);
  const word = text(body.status) ?? '';
  const status = LOST_ORDER_STATUS[word.toLowerCase()];
  if (!id || !status)
    throw new NetworkError('svc_network_bad_response', `Admitad answered a lost order without an id or with an unknown status "${word.slice(0, 40)}".`, {
      network: 'admitad',
    });
  const comment = text(body.comment);
  return {
    network_ref: id,
    status,
    network_status: word,
    reason: status === 'declined' ? (comment ? `Admitad rejected the lost order: ${comment}` : 'Admitad rejected the lost order.') : null,
    transaction_id: null,
    deadline: null,
  };
}

function dmy(d: Date): string {
  return dmyTime(d).slice(0, 10);
}

/** Builds an Admitad module; `builtInModules` holds the production instance. */
export function createAdmitadModule(options: ModuleOptions = {}): NetworkModule {
  const http = new NetworkHttp({ network: 'admitad', name: 'Admitad', retry: options.retry, timeoutMs: options.timeoutMs, maxBodyBytes: options.maxBodyBytes });
  // Creating a lost order twice would file the claim twice: one attempt, the claims poll files it again.
  const createHttp = new NetworkHttp({
    network: 'admitad',
    name: 'Admitad',
    retry: { ...options.retry, attempts: 1 },
    timeoutMs: options.timeoutMs,
    maxBodyBytes: options.maxBodyBytes,
  });
  const tokens = new AdmitadTokens(http);
  // The publisher API publishes no limit (§2.1): no client-side pacing, 429s are backed off.
  const limiters = new RateLimiters({ default: null, ...options.rateLimits });

  function account(rt: ModuleRuntime): AdmitadAccount & { websiteId: string; language: string } {
    const s = requireSettings(rt.settings, REQUIRED, 'admitad', 'Admitad');
    return {
      base: baseUrl(rt.settings, ADMITAD_API, 'admitad'),
      clientId: s.client_id,
      clientSecret: s.client_secret,
      websiteId: s.website_id,
      scope: rt.settings.scope?.trim() || DEFAULT_SCOPE,
      language: rt.settings.language?.trim() || 'en',
    };
  }

  /** A GET with the bearer token; a 401 renews the token once and repeats the call. */
  async function call(rt: ModuleRuntime, path: string, query: Record<string, string | number | undefined> = {}, scope?: string): Promise<unknown> {
    const a = scope ? { ...account(rt), scope } : account(rt);
    const url = buildUrl(a.base, path.replace('{w}', encodeURIComponent(a.websiteId)), { ...query, language: a.language });
    for (let round = 1; ; round++) {
      const access = await tokens.token(rt, a);
      try {
        const res = await http.json(rt, {
          url,
          headers: { Authorization: `Bearer ${access}` },
          bucket: limiters.bucket('default', a.clientId),
          secrets: tokens.secrets(a),
        });
        return res.data;
      } catch (err) {
        if (round === 1 && isNetworkError(err, 'svc_network_unauthorized') && err.upstreamStatus === 401) {
          rt.log('info', 'admitad: the access token was refused; renewing it', { network: 'admitad' });
          tokens.reject(a, access);
          continue;
        }
        throw err;
      }
    }
  }

  /**
   * A call of the lost-orders tool with its own token (scope `lost_orders manage_lost_orders`): a
   * multipart create or a GET of one lost order. A 401 renews the token once. A create is not
   * retried by the client on a 5xx answer (it may have been taken): the claims poll files it again.
   */
  async function claimCall(rt: ModuleRuntime, path: string, multipart?: NonNullable<Parameters<NetworkHttp['json']>[1]['multipart']>): Promise<Rec> {
    const a = { ...account(rt), scope: rt.settings.claims_scope?.trim() || CLAIM_SCOPE };
    const url = buildUrl(a.base, path, { language: a.language });
    for (let round = 1; ; round++) {
      const access = await tokens.token(rt, a);
      try {
        const res = await (multipart ? createHttp : http).json(rt, {
          method: multipart ? 'POST' : 'GET',
          url,
          headers: { Authorization: `Bearer ${access}` },
          multipart,
          bucket: limiters.bucket('default', a.clientId),
          secrets: tokens.secrets(a),
        });
        return obj(res.data);
      } catch (err) {
        if (round === 1 && isNetworkError(err, 'svc_network_unauthorized') && err.upstreamStatus === 401) {
          tokens.reject(a, access);
          continue;
        }
        throw err;
      }
    }
  }

  const claims: ClaimChannel = {
    kind: 'api',
    needsReceipt: true,
    async submit(rt, claim) {
      if (!claim.receipt) throw new NetworkError('svc_network_bad_request', 'Admitad takes a lost order only with the receipt.', { network: 'admitad' });
      const a = account(rt);
      const body = await claimCall(rt, '/lost_orders/create/', {
        fields: {
          advcampaign: claim.advertiser_id,
          website: a.websiteId,
          order_id: claim.order_ref.slice(0, 100),
          order_date: dmy(claim.purchased_at),
          order_price: claim.amount,
          comment: claimWords(claim, `Missing cashback claim ${claim.reference}`, 512)!,
          appeal_id: claim.reference.slice(0, 100),
          estimated_reward: claim.expected_commission ?? '0',
        },
        files: [{ name: 'receipt', filename: claim.receipt.filename, type: claim.receipt.type, data: claim.receipt.data }],
      });
      return lostOrderAnswer(body);
    },
    async answers(rt, filed) {
      const out: ClaimAnswer[] = [];
      for (const f of filed) {
        if (!f.network_ref || !/^\d{1,20}$/.test(f.network_ref)) continue;
        out.push(lostOrderAnswer(await claimCall(rt, `/lost_orders/${f.network_ref}/`)));
      }
      return out;
    },
  };

  /**
   * Walks a limit/offset list from `offset` to the end reported by `_meta.count`; each page comes
   * with the offset of the next one (null after the last).
   */
  async function* pages(
    rt: ModuleRuntime,
    path: string,
    query: Record<string, string | number | undefined>,
    offset = 0,
    onCount?: (count: number) => void,
    scope?: string,
  ): AsyncGenerator<{ results: unknown[]; next: number | null }> {
    for (let first = true; ; first = false) {
      const page = readPage(await call(rt, path, { ...query, limit: ADMITAD_PAGE_LIMIT, offset }, scope));
      if (first) onCount?.(page.count);
      offset += page.results.length;
      const next = page.results.length === 0 || offset >= page.count ? null : offset;
      if (page.results.length) yield { results: page.results, next };
      if (next === null) return;
    }
  }

  /** Joined campaigns from list position `after` (an offset; null: the start). */
  async function* advertiserPages(rt: ModuleRuntime, after: string | null): AsyncGenerator<ListPage<NetworkAdvertiser>> {
    if (after !== null && !/^\d{1,15}$/.test(after)) throw new Error(`admitad: "${String(after).slice(0, 40)}" is not a position in the campaign list`);
    const listed = pages(rt, '/advcampaigns/website/{w}/', { connection_status: 'active' }, after === null ? 0 : Number(after), (count) =>
      rt.setTotal?.(count),
    );
    for await (const { results, next } of listed) {
      yield { items: results.map((c) => fromCampaign(obj(c))), next: next === null ? null : String(next) };
    }
  }

  const module: NetworkModule = {
    id: 'admitad',
    name: 'Admitad',
    defaultCurrency: 'USD',
    configKeys: [
      { name: 'client_id', description: 'Application client id (Admitad account → API).', required: true, secret: false },
      { name: 'client_secret', description: 'Application client secret.', required: true, secret: true },
      { name: 'website_id', description: 'Ad space (website) id, w_id.', required: true, secret: false },
      { name: 'scope', description: `OAuth scopes (default "${DEFAULT_SCOPE}").`, required: false, secret: false },
      { name: 'language', description: 'Language of names and descriptions (default en).', required: false, secret: false },
      { name: 'claims_scope', description: `OAuth scopes of the lost-orders tool, for claims (default "${CLAIM_SCOPE}").`, required: false, secret: false },
      { name: 'payments_scope', description: `OAuth scopes of the payments statements (default "${PAYMENT_SCOPE}").`, required: false, secret: false },
      {
        name: 'base_url',
        description: `API base URL (default ${ADMITAD_API}); client_secret is bound to its origin.`,
        required: false,
        secret: false,
        default: ADMITAD_API,
        binds_secrets: true,
      },
    ],
    // No window limit is documented; 90 days keeps each window's offset walk short.
    limits: { maxWindowDays: 90, maxLookbackDays: null },
    statusMap: STATUS_MAP,
    postbackTemplate: POSTBACK_TEMPLATE,
    claims,

    isConfigured: (settings) => hasSettings(settings, REQUIRED),

    async *listAdvertisers(rt) {
      for await (const page of advertiserPages(rt, null)) yield page.items;
    },

    listAdvertisersFrom: advertiserPages,

    async getAdvertiser(rt, id) {
      if (!/^\d+$/.test(id)) return null;
      try {
        const campaign = obj(await call(rt, `/advcampaigns/${id}/website/{w}/`));
        return text(campaign.id) === null ? null : fromCampaign(campaign);
      } catch (err) {
        if (isNetworkError(err, 'svc_network_not_found')) return null;
        throw err;
      }
    },

    async *listTransactions(rt, window) {
      const websiteId = account(rt).websiteId;
      // By last status change (time-precise, and it catches approvals and declines), not by the
      // day-precise action date.
      const windows = splitWindows(window.from, window.to, module.limits.maxWindowDays);
      // Records of the windows walked before: with the last window's count, the walk's total.
      let before = 0;
      for (const [i, w] of windows.entries()) {
        const query = { website: websiteId, status_updated_start: dmyTime(w.from), status_updated_end: dmyTime(inclusiveEnd(w.to)) };
        const last = i === windows.length - 1;
        for await (const { results } of pages(rt, '/statistics/actions/', query, 0, last ? (count) => rt.setTotal?.(before + count) : undefined)) {
          before += results.length;
          const page = results.map((r) => fromAction(rt, obj(r))).filter((t): t is NetworkTransaction => t !== null);
          if (page.length) yield page;
        }
      }
    },

    /**
     * The payments statement: processed payments (`GET /payments/?has_statement=1`) made since
     * `since`, each with the actions it covers (`GET /payments/{id}/statement/?detailed=1`: one
     * row per action, its id the action id the statistics report, with the publisher's payment).
     */
    async *listPayments(rt, since) {
      const scope = rt.settings.payments_scope?.trim() || PAYMENT_SCOPE;
      for await (const { results } of pages(rt, '/payments/', { has_statement: 1 }, 0, undefined, scope)) {
        for (const p of results.map(obj)) {
          const paymentId = text(p.id);
          const paidAt = parseDate(p.datetime);
          if (!paymentId || !/^\d{1,20}$/.test(paymentId) || text(p.status) !== 'processed' || (paidAt && paidAt < since)) continue;
          for await (const statement of pages(rt, `/payments/${paymentId}/statement/`, { detailed: 1 }, 0, undefined, scope)) {
            const lines = statement.results.map(obj).flatMap((row) => {
              const actionId = text(row.id);
              if (!actionId) return [];
              const currency = currencyCode(row.currency, currencyCode(p.currency, 'USD'));
              return [
                {
                  transaction_id: actionId,
                  payment_id: paymentId,
                  paid_at: parseDate(row.datetime) ?? paidAt,
                  amount: decimalAmount(row.payment, currency),
                  currency,
                  raw: row,
                },
              ];
            });
            if (lines.length) yield lines;
          }
        }
      }
    },

    // Coupons of the ad space (§2.4), by offset; the list has no "changed since" filter, so
    // every refresh reads it whole.
    async *coupons(rt, from) {
      if (from.after !== null && !/^\d{1,15}$/.test(from.after))
        throw new Error(`admitad: "${String(from.after).slice(0, 40)}" is not a position in the coupon list`);
      const listed = pages(rt, '/coupons/website/{w}/', {}, from.after === null ? 0 : Number(from.after), (count) => rt.setTotal?.(count));
      for await (const { results, next } of listed) yield { items: results.map((c) => fromCoupon(obj(c))), next: next === null ? null : String(next) };
    },

    trackingLink(_settings, input) {
      // The link carries a hash per programme and ad space (`gotolink`), so it cannot be built
      // from ids: the advertiser's stored template is required.
      return linkFromTemplate(
        {
          network: 'admitad',
          name: 'Admitad',
          missing: "Admitad tracking links need the advertiser's gotolink: sync the advertiser first.",
          notUrl: 'The stored Admitad gotolink is not a URL.',
          subIdParam: 'subid',
          maxSubId: 50,
          targetParam: 'ulp',
          memberParam: 'subid1',
        },
        input,
      );
    },

    parsePostback(query, body) {
      const params = PostbackParams.read(query, body);
      const fields = pickFields(params, {
        transaction_id: ['action_id'],
        status: ['status'],
        sale_amount: ['order_sum'],
        commission: ['payment_sum'],
        currency: ['currency'],
        sub_id: ['subid'],
        member_ref: ['subid1'],
        advertiser_id: ['offer_id'],
        merchant_ref: ['order_id'],
        event_time: ['time'],
      });
      if (fields.status) fields.status = fields.status.toLowerCase();
      const at = parseDate(fields.event_time);
      if (at) fields.event_time = at.toISOString();
      return fields;
    },
  };
  return module;
}

function readPage(data: unknown): Page {
  const body = obj(data);
  if (!Array.isArray(body.results)) throw new NetworkError('svc_network_bad_response', 'Admitad answered a list without "results".', { network: 'admitad' });
  const count = Number(obj(body._meta).count);
  return { results: body.results, count: Number.isFinite(count) ? count : body.results.length };
}

/** " WW" and " INT" are Admitad's region suffixes on programme names, not part of the shop's name. */
function shopName(name: string): string {
  return name.replace(/\s+(WW|INT)$/, '').trim() || name;
}

function fromCampaign(c: Rec): NetworkAdvertiser {
  const currency = text(c.currency)?.toUpperCase() ?? null;
  const rates: { value: unknown; percent: boolean }[] = [];
  const holds: number[] = [];
  for (const action of list(c.actions_detail)) {
    const hold = Number(obj(action).hold_size);
    if (Number.isFinite(hold) && hold >= 0) holds.push(hold);
    for (const tariff of list(obj(action).tariffs))
      for (const rate of list(obj(tariff).rates))
        rates.push({ value: obj(rate).size, percent: obj(rate).is_percentage === true || obj(rate).is_percentage === 'true' });
  }
  if (!rates.length) {
    // Without details, `actions[].payment_size` is a summary such as "6%" or "5.00".
    for (const action of list(c.actions)) {
      const size = text(obj(action).payment_size);
      if (size) rates.push({ value: size.replace(/%$/, ''), percent: size.endsWith('%') });
    }
  }
  const avgHold = Number(c.avg_hold_time);
  const categories = list(c.categories)
    .map((x) => text(obj(x).name))
    .filter((x): x is string => x !== null);
  return {
    id: String(text(c.id)),
    name: shopName(text(c.name) ?? String(text(c.id))),
    domain: domainOf(c.site_url),
    site_url: absoluteUrl(c.site_url),
    logo_url: absoluteUrl(c.image),
    tracking_template: absoluteUrl(c.gotolink),
    commission: commissionRange(rates, currency),
    categories: [...new Set(categories)],
    countries: countryCodes(list(c.regions).map((r) => (typeof r === 'string' ? r : obj(r).region))),
    status: text(c.status) === 'active' && (text(c.connection_status) ?? 'active') === 'active' ? 'active' : 'inactive',
    validation_days: holds.length ? Math.max(...holds) : Number.isFinite(avgHold) && c.avg_hold_time !== null ? avgHold : null,
    raw: c,
  };
}

function fromAction(rt: ModuleRuntime, a: Rec): NetworkTransaction | null {
  const id = text(a.id) ?? text(a.action_id);
  if (!id) {
    rt.log('error', 'admitad: an action without an id was skipped', { network: 'admitad' });
    return null;
  }
  const status = mapStatus(rt, 'admitad', STATUS_MAP, a.status, id);
  if (!status) return null;
  const currency = currencyCode(a.currency, 'USD');
  return {
    transaction_id: id,
    status,
    advertiser_id: text(a.advcampaign_id),
    merchant_ref: text(a.order_id),
    sub_id: text(a.subid),
    member_ref: text(a.subid1),
    sale_amount: decimalAmount(a.cart, currency),
    commission: decimalAmount(a.payment, currency),
    currency,
    clicked_at: parseDate(a.click_date),
    event_at: parseDate(a.action_date),
    raw: a,
  };
}

/**
 * One coupon. Its dates carry no zone ("2024-03-31T23:59:59"); they are read as UTC (see
 * docs/operations.md: the reference gives no zone for them, and the module asks for UTC
 * wherever Admitad lets it choose).
 */
const NO_PROMOCODE = new Set(['NOT REQUIRED', 'НЕ НУЖЕН']);

function fromCoupon(c: Rec): NetworkCoupon {
  const campaign = obj(c.campaign);
  let landing: string | null = null;
  // goto_link is an untagged tracking link; the site wraps the landing page (`ulp`) in its own.
  const goto = absoluteUrl(c.goto_link);
  if (goto) landing = absoluteUrl(new URL(goto).searchParams.get('ulp'));
  const regions = list(c.regions).map((r) => (typeof r === 'string' ? r : obj(r).region));
  const code = text(c.promocode);
  return {
    id: text(c.id) ?? '',
    advertiser_id: text(campaign.id) ?? '',
    // "NOT REQUIRED" (or "НЕ НУЖЕН") in `promocode` means a deal: no code to type.
    code: code && !NO_PROMOCODE.has(code.toUpperCase()) ? code : null,
    title: text(c.name) ?? text(c.short_name) ?? '',
    description: text(c.description),
    discount: discountFromText(c.discount, text(campaign.currency)),
    url: landing ?? absoluteUrl(campaign.site_url),
    tracking_url: goto,
    starts_at: parseDate(c.date_start),
    ends_at: parseDate(c.date_end),
    exclusive: c.exclusive === true || c.exclusive === 'true',
    regions: countryCodes(regions),
    raw: c,
  };
}
