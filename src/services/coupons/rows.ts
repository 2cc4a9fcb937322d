// The coupon as the API answers it, read from a `coupons` row, and the rules every reader shares:
// the status a coupon has at a given instant (computed from its dates, never trusted from the
// stored column alone) and the SQL that filters by it.
import { toInt, toIso } from '../../db/values.js';
import type { DiscountType } from '../../networks/types.js';

export const COUPON_STATUSES = ['active', 'scheduled', 'expired', 'removed'] as const;
export type CouponStatus = (typeof COUPON_STATUSES)[number];

/** The fields a network fills and an administrator may edit (and reset back to the network). */
export const COUPON_FIELDS = [
  'code',
  'title',
  'description',
  'terms',
  'discount_type',
  'discount_value',
  'discount_currency',
  'discount_text',
  'landing_url',
  'starts_at',
  'ends_at',
  'exclusive',
  'regions',
] as const;
export type CouponField = (typeof COUPON_FIELDS)[number];

/** The fields an AI rewrite writes (and `revert` restores). */
export const AI_FIELDS = ['title', 'description'] as const;
export type AiField = (typeof AI_FIELDS)[number];

/** The fields `GET /coupons` sorts by (each its own column; ties by id). */
export const COUPON_ORDERBY = ['id', 'title', 'starts_at', 'ends_at', 'created_at', 'updated_at'] as const;

export interface Coupon {
  id: number;
  network: string;
  /** The network's advertiser id (`GET /advertisers/{network}/{advertiser}`). */
  advertiser: string;
  /** The advertiser's name as the catalog shows it, when the advertiser is on file. */
  advertiser_name: string | null;
  coupon_id: string;
  /** `code` when there is a code to type, `deal` otherwise. */
  type: 'code' | 'deal';
  code: string;
  title: string;
  description: string | null;
  terms: string | null;
  discount: { type: DiscountType; value: string | null; currency: string | null; text: string | null };
  landing_url: string | null;
  network_url: string | null;
  starts_at: string | null;
  ends_at: string | null;
  exclusive: boolean;
  regions: string[];
  status: CouponStatus;
  /** Fields an administrator edited: a refresh leaves them alone until they are reset. */
  edited_fields: CouponField[];
  /** Fields whose text the AI wrote: a refresh leaves them alone until they are reverted or reset. */
  ai_fields: AiField[];
  /** The text from before the first AI rewrite of each rewritten field (what `revert` restores), or null when there is nothing to revert. */
  original: Partial<Record<AiField, string | null>> | null;
  created_at: string | null;
  updated_at: string | null;
  removed_at: string | null;
}

export interface CouponDetail extends Coupon {
  /** The network's latest values of the edited and AI-written fields (what a reset gives back). */
  network_values: Partial<Record<CouponField, unknown>>;
  raw: unknown;
  /** The last AI generation of the coupon's text (model, tokens, outcome, when), or null. */
  ai: { model: string; tokens: { prompt_tokens: number; completion_tokens: number; total_tokens: number }; outcome: string; at: string | null } | null;
}

/** Columns of the list (the detail adds network_values and raw). `c` is the coupons table. */
export const LIST_COLUMNS = [
  'id',
  'network',
  'advertiser',
  'coupon_id',
  'code',
  'title',
  'description',
  'terms',
  'discount_type',
  'discount_value',
  'discount_currency',
  'discount_text',
  'landing_url',
  'network_url',
  'starts_at',
  'ends_at',
  'exclusive',
  'regions',
  'status',
  'edited_fields',
  'ai_fields',
  'original_title',
  'original_description',
  'original_owners',
  'created_at',
  'updated_at',
  'removed_at',
]
  .map((c) => `c.${c}`)
  .join(', ');

export function parseJson<T>(v: unknown, fallback: T): T {
  if (typeof v !== 'string' || !v) return fallback;
  try {
    return JSON.parse(v) as T;
  } catch {
    return fallback;
  }
}

export function fieldList<T extends string>(v: unknown, allowed: readonly T[]): T[] {
  const list = parseJson<unknown>(v, []);
  return Array.isArray(list) ? (list.filter((f) => (allowed as readonly unknown[]).includes(f)) as T[]) : [];
}

/**
 * What a coupon is at `now`: removed when the network stopped listing it; expired once its end
 * has passed, or when it ends before it starts (it can never be used); scheduled before its
 * start; active otherwise.
 */
export function statusAt(stored: unknown, startsAt: Date | null, endsAt: Date | null, now: Date): CouponStatus {
  if (stored === 'removed') return 'removed';
  if (endsAt && (endsAt.getTime() <= now.getTime() || (startsAt && endsAt.getTime() < startsAt.getTime()))) return 'expired';
  if (startsAt && startsAt.getTime() > now.getTime()) return 'scheduled';
  return 'active';
}

/** The WHERE condition and its parameters for coupons in `status` at `now` (columns prefixed with `p`). */
export function statusCondition(status: CouponStatus, now: Date, p = 'c.'): { sql: string; params: unknown[] } {
  switch (status) {
    case 'removed':
      return { sql: `${p}status = 'removed'`, params: [] };
    case 'expired':
      return {
        sql: `(${p}status <> 'removed' AND ${p}ends_at IS NOT NULL AND (${p}ends_at <= ? OR (${p}starts_at IS NOT NULL AND ${p}ends_at < ${p}starts_at)))`,
        params: [now],
      };
    case 'scheduled':
      return {
        sql: `(${p}status <> 'removed' AND ${p}starts_at IS NOT NULL AND ${p}starts_at > ? AND (${p}ends_at IS NULL OR ${p}ends_at >= ${p}starts_at))`,
        params: [now],
      };
    case 'active':
      return {
        sql: `(${p}status <> 'removed' AND (${p}starts_at IS NULL OR ${p}starts_at <= ?) AND (${p}ends_at IS NULL OR ${p}ends_at > ?))`,
        params: [now, now],
      };
  }
}

export type OriginalOwners = Partial<Record<AiField, 'network' | 'edited'>>;

/** Which fields have an original (from before the first AI rewrite), and who owned it. */
export function originalOwners(v: unknown): OriginalOwners {
  const o = parseJson<unknown>(v, {});
  const out: OriginalOwners = {};
  if (o && typeof o === 'object' && !Array.isArray(o)) {
    for (const f of AI_FIELDS) {
      const owner = (o as Record<string, unknown>)[f];
      if (owner === 'network' || owner === 'edited') out[f] = owner;
    }
  }
  return out;
}

const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

function dateOf(v: unknown): Date | null {
  const iso = toIso(v);
  return iso ? new Date(iso) : null;
}

export function shapeCoupon(r: Record<string, unknown>, now: Date): Coupon {
  const startsAt = dateOf(r.starts_at);
  const endsAt = dateOf(r.ends_at);
  const code = str(r.code) ?? '';
  const owners = originalOwners(r.original_owners);
  const original: Partial<Record<AiField, string | null>> = {};
  if (owners.title) original.title = str(r.original_title);
  if (owners.description) original.description = str(r.original_description);
  const regions = parseJson<unknown>(r.regions, []);
  return {
    id: toInt(r.id),
    network: String(r.network),
    advertiser: String(r.advertiser),
    advertiser_name: str(r.advertiser_name),
    coupon_id: String(r.coupon_id),
    type: code === '' ? 'deal' : 'code',
    code,
    title: String(r.title ?? ''),
    description: str(r.description),
    terms: str(r.terms),
    discount: {
      type: (str(r.discount_type) ?? 'other') as DiscountType,
      value: str(r.discount_value),
      currency: str(r.discount_currency),
      text: str(r.discount_text),
    },
    landing_url: str(r.landing_url),
    network_url: str(r.network_url),
    starts_at: startsAt ? startsAt.toISOString() : null,
    ends_at: endsAt ? endsAt.toISOString() : null,
    exclusive: r.exclusive === true || Number(r.exclusive) === 1,
    regions: Array.isArray(regions) ? regions.map(String) : [],
    status: statusAt(r.status, startsAt, endsAt, now),
    edited_fields: fieldList(r.edited_fields, COUPON_FIELDS),
    ai_fields: fieldList(r.ai_fields, AI_FIELDS),
    original: Object.keys(original).length ? original : null,
    created_at: toIso(r.created_at),
    updated_at: toIso(r.updated_at),
    removed_at: toIso(r.removed_at),
  };
}
