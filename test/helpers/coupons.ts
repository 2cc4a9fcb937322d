// Coupons placed straight into the table, for tests of reads and edits that need no network.
import type { Context } from '../../src/context.js';
import type { CouponWalk, NetworkCoupon, NetworkModule } from '../../src/networks/types.js';

let next = 1;

/** Inserts a coupon row (network values as given) and answers its id. */
export async function insertCoupon(ctx: Context, values: Record<string, unknown> = {}): Promise<number> {
  const now = ctx.clock.now();
  const row: Record<string, unknown> = {
    network: 'awin',
    advertiser: '1001',
    coupon_id: `t-${process.pid}-${next++}`,
    code: 'SAVE10',
    title: 'Ten percent off',
    description: 'On everything',
    terms: null,
    discount_type: 'percent',
    discount_value: '10',
    discount_currency: null,
    discount_text: '10%',
    landing_url: 'https://shop.example/sale',
    network_url: null,
    starts_at: null,
    ends_at: null,
    exclusive: 0,
    regions: '[]',
    status: 'active',
    last_seen_refresh: 0,
    created_at: now,
    updated_at: now,
    ...values,
  };
  const cols = Object.keys(row);
  const { insertId } = await ctx.db.execute(`INSERT INTO coupons (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`, Object.values(row));
  return insertId!;
}

/** A coupon as a test's network lists it (defaults fill the rest). */
export function networkCoupon(id: string | number, fields: Partial<NetworkCoupon> = {}): NetworkCoupon {
  return {
    id: String(id),
    advertiser_id: '501',
    code: `CODE${id}`,
    title: `Deal ${id}`,
    description: 'Everything',
    terms: null,
    discount: { type: 'percent', value: '10', currency: null, text: '10%' },
    url: 'https://shop.example/sale',
    tracking_url: null,
    starts_at: null,
    ends_at: null,
    exclusive: false,
    regions: [],
    raw: { id },
    ...fields,
  };
}

export interface CouponSource {
  /** The coupons the network lists now, page by page (tests change it between refreshes). */
  pages: NetworkCoupon[][];
  /** Every walk's start: `after` and `updatedSince` as the refresh asked. */
  walks: CouponWalk[];
  /** Throws this once at page `at` (0-based) of the next walk. */
  failAt?: { at: number; error: Error } | null;
}

/**
 * A network module whose coupons come from `source`, with positions (page numbers) and, when
 * `since`, the incremental capability. Tracking links are plain templates.
 */
export function couponModule(id: string, source: CouponSource, options: { since?: boolean; coupons?: boolean } = {}): NetworkModule {
  const module: NetworkModule = {
    id,
    name: `Coupons ${id}`,
    defaultCurrency: 'EUR',
    configKeys: [{ name: 'publisherId', description: 'Publisher id', required: true, secret: false }],
    isConfigured: (s) => !!s.publisherId,
    async *listAdvertisers() {},
    async getAdvertiser() {
      return null;
    },
    async *listTransactions() {},
    limits: { maxWindowDays: 31, maxLookbackDays: null },
    trackingLink: (s, i) =>
      `https://go.example/c?pub=${s.publisherId}&adv=${i.advertiser_id}&sub=${encodeURIComponent(i.sub_id)}${i.url ? `&url=${encodeURIComponent(i.url)}` : ''}`,
    parsePostback: () => ({}),
    statusMap: {},
  };
  if (options.coupons !== false) {
    module.couponsSince = options.since === true;
    module.coupons = async function* (rt, from) {
      source.walks.push(from);
      rt.setTotal?.(source.pages.reduce((n, p) => n + p.length, 0));
      for (let i = from.after === null ? 0 : Number(from.after); i < source.pages.length; i++) {
        if (source.failAt && source.failAt.at === i) {
          const { error } = source.failAt;
          source.failAt = null;
          throw error;
        }
        yield { items: source.pages[i], next: i + 1 < source.pages.length ? String(i + 1) : null };
      }
    };
  }
  return module;
}
