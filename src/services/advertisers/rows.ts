// Advertisers as rows: the statuses, the shape the API and CLI show, and how a row becomes one.
import { toInt, toIso } from '../../db/values.js';
import { ServiceError } from '../../errors.js';
import type { ScopedCashbackRule } from '../cashback/index.js';
import type { AiGeneration } from '../ai/index.js';

export const ADVERTISER_STATUSES = ['active', 'inactive'] as const;
export type AdvertiserStatus = (typeof ADVERTISER_STATUSES)[number];

export interface Advertiser {
  /** The advertiser's number here (`POST /ai/shop/{id}`, `/lookup/advertisers?search=42`). */
  id: number;
  module: string;
  advertiser: string;
  /** The name shown: the override when there is one, else the network's. */
  name: string;
  network_name: string;
  name_override: string | null;
  domain: string | null;
  site_url: string | null;
  logo_url: string | null;
  local_logo: string | null;
  /** The local logo's public URL (`<public base>/media/<sha256>.<ext>`), or null while there is none. */
  logo: string | null;
  tracking_template: string | null;
  commission: { type: string; min: string | null; max: string | null; currency: string | null } | null;
  validation_days: number | null;
  categories: string[];
  countries: string[];
  status: AdvertiserStatus;
  page_id: number | null;
  description: string | null;
  created_at: string | null;
  updated_at: string | null;
}

export interface AdvertiserDetail extends Advertiser {
  raw: unknown;
  cashback_rule: ScopedCashbackRule;
  /** The last AI generation of the shop's content (model, tokens, when), or null. */
  ai: AiGeneration | null;
}

export const COLUMNS =
  'id, module, advertiser, name, name_override, domain, site_url, logo_url, local_logo, tracking_template, commission_type, commission_min, commission_max, commission_currency, validation_days, categories, countries, status, page_id, description, created_at, updated_at';

export function json<T>(v: unknown, fallback: T): T {
  if (typeof v !== 'string' || !v) return fallback;
  try {
    return JSON.parse(v) as T;
  } catch {
    return fallback;
  }
}

export function shape(r: Record<string, unknown>, mediaUrl?: (name: string | null) => string | null): Advertiser {
  const str = (v: unknown) => (v === null || v === undefined ? null : String(v));
  return {
    id: toInt(r.id),
    module: String(r.module),
    advertiser: String(r.advertiser),
    name: str(r.name_override) ?? String(r.name),
    network_name: String(r.name),
    name_override: str(r.name_override),
    domain: str(r.domain),
    site_url: str(r.site_url),
    logo_url: str(r.logo_url),
    local_logo: str(r.local_logo),
    logo: mediaUrl ? mediaUrl(str(r.local_logo)) : null,
    tracking_template: str(r.tracking_template),
    commission: r.commission_type
      ? { type: String(r.commission_type), min: str(r.commission_min), max: str(r.commission_max), currency: str(r.commission_currency) }
      : null,
    validation_days: r.validation_days === null || r.validation_days === undefined ? null : toInt(r.validation_days),
    categories: json<string[]>(r.categories, []),
    countries: json<string[]>(r.countries, []),
    status: r.status === 'inactive' ? 'inactive' : 'active',
    page_id: r.page_id === null || r.page_id === undefined ? null : toInt(r.page_id),
    description: str(r.description),
    created_at: toIso(r.created_at),
    updated_at: toIso(r.updated_at),
  };
}

export function notFound(module: string, advertiser: string): ServiceError {
  return new ServiceError('svc_advertiser_not_found', 'Advertiser not found.', 404, {
    module: String(module).slice(0, 64),
    advertiser: String(advertiser).slice(0, 128),
  });
}
