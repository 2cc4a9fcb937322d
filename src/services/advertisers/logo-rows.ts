// The advertiser columns the logo fetch reads, and the scope of a bulk logo run, as SQL: the
// read side of AdvertiserService's logo methods (the service stays the table's only writer).
import { toInt } from '../../db/values.js';

/** What the logo fetch needs of an advertiser. */
export interface LogoTarget {
  id: number;
  module: string;
  advertiser: string;
  logo_url: string | null;
  site_url: string | null;
  domain: string | null;
  local_logo: string | null;
  status: 'active' | 'inactive';
}

/** Which advertisers a bulk logo run covers. */
export interface LogoScope {
  network?: string;
  status?: 'active' | 'inactive';
  /** Only those without a local logo. */
  missing: boolean;
}

export const LOGO_COLUMNS = 'id, module, advertiser, logo_url, site_url, domain, local_logo, status';

export function logoTarget(r: Record<string, unknown>): LogoTarget {
  const str = (v: unknown) => (v === null || v === undefined || v === '' ? null : String(v));
  return {
    id: toInt(r.id),
    module: String(r.module),
    advertiser: String(r.advertiser),
    logo_url: str(r.logo_url),
    site_url: str(r.site_url),
    domain: str(r.domain),
    local_logo: str(r.local_logo),
    status: r.status === 'inactive' ? 'inactive' : 'active',
  };
}

export function logoWhere(scope: LogoScope): { clause: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  if (scope.network) where.push('module = ?'), params.push(scope.network);
  if (scope.status) where.push('status = ?'), params.push(scope.status);
  if (scope.missing) where.push('local_logo IS NULL');
  return { clause: where.length ? `WHERE ${where.join(' AND ')}` : '', params };
}
