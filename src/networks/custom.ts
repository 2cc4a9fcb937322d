// A NetworkModule built from a custom network's definition: postbacks read by its parameter
// mapping, tracking links from its template, advertisers and transactions from its feeds.
import { ServiceError } from '../errors.js';
import { own } from '../objects.js';
import { atPath, feedRecords, type FeedOptions, type FeedRecord } from './custom-feeds.js';
import { fillTemplate, type CustomDefinition, type FeedDefinition, type PostbackField } from './custom-definition.js';
import { withoutTargetParam } from './tracking-links.js';
import { checkSubId, checkTarget } from './module-support.js';
import { PostbackParams } from './postback.js';
import { discountFromText } from './coupon-values.js';
import type {
  CouponWalk,
  DiscountType,
  ModuleRuntime,
  ModuleSettings,
  NetworkAdvertiser,
  NetworkCoupon,
  NetworkModule,
  NetworkTransaction,
  PostbackFields,
  TransactionStatus,
} from './types.js';
import { absoluteUrl, countryCodes, currencyCode, decimalAmount, domainOf, parseDate, text } from './values.js';

/** The definition's status word for a value, matched without regard to case. */
export function lookupStatus(map: Record<string, TransactionStatus>, word: string): TransactionStatus | null {
  if (Object.hasOwn(map, word)) return map[word];
  const lower = word.toLowerCase();
  for (const [k, v] of Object.entries(map)) if (k.toLowerCase() === lower) return v;
  return null;
}

/** A feed's discount type word → ours. */
const DISCOUNT_WORDS: Record<string, DiscountType> = {
  percent: 'percent',
  percentage: 'percent',
  '%': 'percent',
  amount: 'amount',
  fixed: 'amount',
  flat: 'amount',
  free_shipping: 'free_shipping',
  freeshipping: 'free_shipping',
  'free shipping': 'free_shipping',
  shipping: 'free_shipping',
  other: 'other',
};

function field(record: FeedRecord, feed: FeedDefinition, name: string): unknown {
  const source = own(feed.fields, name);
  if (typeof source !== 'string' || !source) return undefined;
  return Object.hasOwn(record, source) ? record[source] : atPath(record, source);
}

const PAID_WORDS = new Set(['1', 'true', 'yes', 'y', 'paid']);

/**
 * A transaction the feed says was paid: with `paid` mapped, when it is true ("1", "true", "yes",
 * "paid"); without, when `payment_id` has a value. The payment id is `payment_id`, else
 * `paid:YYYY-MM-DD` of `paid_at` (or `paid` when the feed gives no date either).
 */
function feedPayment(feed: FeedDefinition, r: FeedRecord, currency: string): NetworkTransaction['payment'] {
  const paymentId = text(field(r, feed, 'payment_id'));
  const flag = own(feed.fields, 'paid') ? PAID_WORDS.has(String(text(field(r, feed, 'paid')) ?? '').toLowerCase()) : paymentId !== null;
  if (!flag) return null;
  const paidAt = parseDate(field(r, feed, 'paid_at'));
  const amount = text(field(r, feed, 'paid_amount'));
  return {
    payment_id: (paymentId ?? (paidAt ? `paid:${paidAt.toISOString().slice(0, 10)}` : 'paid')).slice(0, 191),
    paid_at: paidAt,
    amount: amount === null ? null : decimalAmount(amount, currency),
    currency,
  };
}

function listOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.map((v) => text(v)).filter((v): v is string => v !== null);
  const s = text(value);
  return s
    ? s
        .split(/[,;|]/)
        .map((p) => p.trim())
        .filter(Boolean)
    : [];
}

export function customModule(id: string, def: CustomDefinition, options: FeedOptions = {}): NetworkModule {
  const configKeys = (def.settings ?? []).map((s) => ({
    name: s.name,
    description: s.description ?? '',
    required: s.required ?? false,
    secret: s.secret ?? false,
  }));
  const secretNames = new Set(configKeys.filter((k) => k.secret).map((k) => k.name));
  const params = def.postback?.params ?? {};

  const toAdvertiser = (feed: FeedDefinition, r: FeedRecord): NetworkAdvertiser | null => {
    const advertiserId = text(field(r, feed, 'id'));
    const name = text(field(r, feed, 'name'));
    if (!advertiserId || !name) return null;
    const status = text(field(r, feed, 'status'));
    const active = !feed.active_values?.length || status === null || feed.active_values.some((v) => v.toLowerCase() === status.toLowerCase());
    const currency = text(field(r, feed, 'commission_currency'));
    const min = text(field(r, feed, 'commission_min'));
    const max = text(field(r, feed, 'commission_max')) ?? min;
    const type = text(field(r, feed, 'commission_type'))?.toLowerCase();
    const siteUrl = absoluteUrl(field(r, feed, 'site_url'));
    const days = Number(text(field(r, feed, 'validation_days')));
    return {
      id: advertiserId,
      name,
      domain: domainOf(field(r, feed, 'domain')) ?? domainOf(siteUrl),
      site_url: siteUrl,
      logo_url: absoluteUrl(field(r, feed, 'logo_url')),
      tracking_template: text(field(r, feed, 'tracking_template')),
      commission:
        min === null
          ? null
          : {
              type: type === 'flat' ? 'flat' : type === 'mixed' ? 'mixed' : 'percent',
              min,
              max,
              currency: type === 'flat' ? (currency ?? def.currency) : null,
            },
      categories: listOf(field(r, feed, 'categories')),
      countries: countryCodes(listOf(field(r, feed, 'countries'))),
      status: active ? 'active' : 'inactive',
      validation_days: Number.isSafeInteger(days) && days >= 0 ? days : null,
      raw: r,
    };
  };

  /** A record of the transactions feed inside `window` (a record without a time is inside), else null. */
  const toTransaction = (feed: FeedDefinition, r: FeedRecord, rt: ModuleRuntime, window: { from: Date; to: Date }): NetworkTransaction | null => {
    const transactionId = text(field(r, feed, 'transaction_id'));
    if (!transactionId) return null;
    const eventAt = parseDate(field(r, feed, 'event_at'));
    if (eventAt !== null && (eventAt < window.from || eventAt >= window.to)) return null;
    const word = text(field(r, feed, 'status'));
    // A record without a status is pending, as a postback without one is. A word the mapping lacks
    // is not guessed: a network that adds a word ("chargeback", "paid") must not turn into pending
    // money. The record is left out and logged as an error, as the built-in modules do and as a
    // postback with that word is refused; the next poll records it once the word is mapped.
    const status = word === null ? 'pending' : lookupStatus(def.statuses, word);
    if (status === null) {
      rt.log('error', `${id}: transaction ${transactionId.slice(0, 64)} has the unknown status "${word!.slice(0, 40)}"; skipped`, {
        network: id,
        transaction_id: transactionId.slice(0, 191),
        status: word!.slice(0, 40),
      });
      return null;
    }
    const currency = currencyCode(field(r, feed, 'currency'), def.currency);
    return {
      transaction_id: transactionId,
      status,
      advertiser_id: text(field(r, feed, 'advertiser_id')),
      merchant_ref: text(field(r, feed, 'merchant_ref')),
      sub_id: text(field(r, feed, 'sub_id')),
      sale_amount: decimalAmount(field(r, feed, 'sale_amount'), currency),
      commission: decimalAmount(field(r, feed, 'commission'), currency),
      currency,
      clicked_at: parseDate(field(r, feed, 'clicked_at')),
      event_at: eventAt,
      payment: feedPayment(feed, r, currency),
      raw: r,
    };
  };

  const toCoupon = (feed: FeedDefinition, r: FeedRecord): NetworkCoupon => {
    const typed = text(field(r, feed, 'discount_type'))?.toLowerCase() ?? null;
    const type = typed === null ? null : Object.hasOwn(DISCOUNT_WORDS, typed) ? DISCOUNT_WORDS[typed] : 'other';
    const value = text(field(r, feed, 'discount_value'));
    const words = text(field(r, feed, 'discount'));
    const exclusive = text(field(r, feed, 'exclusive'))?.toLowerCase();
    return {
      id: text(field(r, feed, 'coupon_id')) ?? '',
      advertiser_id: text(field(r, feed, 'advertiser_id')) ?? '',
      code: text(field(r, feed, 'code')),
      title: text(field(r, feed, 'title')) ?? '',
      description: text(field(r, feed, 'description')),
      terms: text(field(r, feed, 'terms')),
      // A typed discount when the feed has one; else read from its text ("10%", "5 EUR").
      discount: type
        ? { type, value, currency: type === 'amount' ? currencyCode(field(r, feed, 'discount_currency'), def.currency) : null, text: words }
        : discountFromText(words ?? value, def.currency),
      url: absoluteUrl(field(r, feed, 'url')),
      tracking_url: absoluteUrl(field(r, feed, 'tracking_url')),
      starts_at: parseDate(field(r, feed, 'starts_at')),
      ends_at: parseDate(field(r, feed, 'ends_at')),
      exclusive: exclusive === 'true' || exclusive === '1' || exclusive === 'yes',
      regions: countryCodes(listOf(field(r, feed, 'regions'))),
      raw: r,
    };
  };

  const paidFields = def.feeds?.transactions?.fields ?? {};
  const module: NetworkModule = {
    custom: true,
    paymentsMapping: def.payments ?? null,
    paymentsInTransactions: !!(own(paidFields, 'paid') || own(paidFields, 'payment_id')),
    id,
    name: def.name,
    defaultCurrency: def.currency,
    configKeys,
    isConfigured(settings: ModuleSettings) {
      return configKeys.every((k) => !k.required || (settings[k.name] ?? '') !== '');
    },
    async *listAdvertisers(rt: ModuleRuntime) {
      const feed = def.feeds?.advertisers;
      if (!feed) return;
      for await (const page of feedRecords(id, def.name, feed, rt, {}, secretNames, options)) {
        const items = page.map((r) => toAdvertiser(feed, r)).filter((a): a is NetworkAdvertiser => a !== null);
        if (items.length) yield items;
      }
    },
    async getAdvertiser(rt: ModuleRuntime, advertiserId: string) {
      for await (const page of module.listAdvertisers(rt)) {
        const found = page.find((a) => a.id === advertiserId);
        if (found) return found;
      }
      return null;
    },
    async *listTransactions(rt: ModuleRuntime, window: { from: Date; to: Date }) {
      const feed = def.feeds?.transactions;
      if (!feed) return;
      const day = (d: Date) => d.toISOString().slice(0, 10);
      for await (const page of feedRecords(id, def.name, feed, rt, { from: day(window.from), to: day(window.to) }, secretNames, options)) {
        const items = page.map((r) => toTransaction(feed, r, rt, window)).filter((t): t is NetworkTransaction => t !== null);
        if (items.length) yield items;
      }
    },
    limits: { maxWindowDays: 366, maxLookbackDays: null },
    /**
     * The `coupons` feed, in pages; a position is the number of records read. A feed comes whole
     * with every request, so a resumed walk fetches it again and skips what was stored.
     */
    async *coupons(rt: ModuleRuntime, from: CouponWalk) {
      const feed = def.feeds?.coupons;
      if (!feed) return;
      if (from.after !== null && !/^\d{1,15}$/.test(from.after))
        throw new Error(`${id}: "${String(from.after).slice(0, 40)}" is not a position in the coupon feed`);
      const skip = from.after === null ? 0 : Number(from.after);
      let read = 0;
      for await (const page of feedRecords(id, def.name, feed, rt, {}, secretNames, options)) {
        const start = read;
        read += page.length;
        if (read <= skip) continue;
        yield { items: page.slice(Math.max(0, skip - start)).map((r) => toCoupon(feed, r)), next: String(read) };
      }
      // The feed's end: nothing after it.
      yield { items: [], next: null };
    },
    trackingLink(settings: ModuleSettings, input: { advertiser_id: string; sub_id: string; url: string | null }) {
      const template = def.tracking_link?.trim();
      if (!template)
        throw new ServiceError('svc_tracking_link_unavailable', `${def.name} has no tracking_link template: add one to its definition.`, 409, {
          network: id,
          advertiser: input.advertiser_id,
        });
      const subId = checkSubId(input.sub_id, 191, def.name);
      const target = checkTarget(input.url);
      // Without {url} the template cannot carry a target: a link to the home page would silently
      // drop what was asked for.
      if (target && !/\{url\}/.test(template))
        throw new ServiceError('svc_deeplink_unsupported', `${def.name}'s tracking_link has no {url} placeholder: it cannot deep-link.`, 409, { network: id });
      const values: Record<string, string | null> = { sub_id: subId, url: target ?? '', advertiser_id: input.advertiser_id };
      for (const k of configKeys) if (!k.secret) values[`settings.${k.name}`] = settings[k.name] ?? '';
      return fillTemplate(target ? template : withoutTargetParam(template), values);
    },
    parsePostback(query, body): PostbackFields {
      const p = PostbackParams.read(query, body);
      const out: PostbackFields = {};
      for (const [name, param] of Object.entries(params) as [PostbackField, string][]) {
        const value = p.get(param);
        if (value !== undefined) out[name] = value;
      }
      return out;
    },
    statusMap: def.statuses,
    postbackTemplate: Object.entries(params)
      .map(([name, param]) => `${encodeURIComponent(param)}={${name}}`)
      .join('&'),
  };
  return module;
}
