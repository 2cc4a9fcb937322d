// Where a tracking link may send a member: an http(s) URL of bounded length, on the advertiser's
// own domain when it is known. The network redirects to whatever the link carries, so a link to
// another site would hand the site's name (and a member's click) to a third party. Also the link a
// network gave at sync, filled with the sub id and target (Admitad, impact.com: `linkFromTemplate`).
import { ServiceError } from '../errors.js';
import { checkSubId, checkTarget } from './module-support.js';
import { domainOf } from './values.js';

/** The longest target URL a link may carry (networks and browsers cut longer links). */
export const MAX_TARGET_URL = 2000;

function invalid(message: string): ServiceError {
  return new ServiceError('svc_invalid_url', `Invalid target URL: ${message}.`, 400, { params: { url: message } });
}

/** The target as a parsed URL, null when none was given; 400 svc_invalid_url otherwise. */
export function parseLinkTarget(url: unknown): URL | null {
  if (url === null || url === undefined) return null;
  if (typeof url !== 'string') throw invalid('url must be a string');
  const text = url.trim();
  if (text === '') return null;
  if (text.length > MAX_TARGET_URL) throw invalid(`url must be at most ${MAX_TARGET_URL} characters`);
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw invalid('url is not a valid absolute URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw invalid('url must be an http or https URL');
  if (!parsed.hostname) throw invalid('url has no host');
  // `https://shop.example@evil.example/` reads as the shop to a person and goes elsewhere.
  if (parsed.username || parsed.password) throw invalid('url must not carry a user name or password');
  if (parsed.toString().length > MAX_TARGET_URL) throw invalid(`url must be at most ${MAX_TARGET_URL} characters once encoded`);
  return parsed;
}

/** 400 svc_invalid_url unless `target` is on `domain` or one of its subdomains (no domain: any host). */
export function checkTargetDomain(target: URL, domain: string | null): void {
  const base = domainOf(domain);
  if (!base) return;
  const host = target.hostname.toLowerCase().replace(/\.$/, '');
  if (host === base || host.endsWith(`.${base}`)) return;
  throw invalid(`url must be on ${base} or one of its subdomains`);
}

/**
 * A link template for a link without a target: the query parameter whose whole value is `{url}`
 * is left out, rather than sent empty (`url=`), which some networks read as a target and send
 * the member nowhere. A `{url}` anywhere else is filled with nothing, as before.
 */
export function withoutTargetParam(template: string): string {
  const q = template.indexOf('?');
  if (q < 0) return template;
  const hash = template.indexOf('#', q);
  const end = hash < 0 ? template.length : hash;
  const kept = template
    .slice(q + 1, end)
    .split('&')
    .filter((p) => !/^[^=]*=\{url\}$/.test(p));
  return template.slice(0, q) + (kept.some((p) => p !== '') ? `?${kept.join('&')}` : '') + template.slice(end);
}

/** How a network whose links cannot be built from ids (Admitad, impact.com) fills the link it gave at sync. */
export interface TemplateLinkSpec {
  /** The network's id, in the errors' data. */
  network: string;
  /** The network's name, in the sub id's error. */
  name: string;
  /** The message when the advertiser has no stored link (what to sync to get one). */
  missing: string;
  /** The message when the stored link is not a URL. */
  notUrl: string;
  /** The query parameter that carries the sub id, and the longest sub id the network keeps. */
  subIdParam: string;
  maxSubId: number;
  /** The query parameter that carries a deep link's target. */
  targetParam: string;
  /** The query parameter that carries the member beside a click id (`member_ref`). */
  memberParam?: string;
}

/**
 * The advertiser's stored tracking link with the member's sub id and, for a deep link, the target
 * set as query parameters. 409 svc_tracking_link_unavailable when there is no stored link or it is
 * not a URL; 400 svc_invalid_sub_id or svc_invalid_url for a bad sub id or target.
 */
export function linkFromTemplate(
  spec: TemplateLinkSpec,
  input: { advertiser_id: string; sub_id: string; url: string | null; tracking_template?: string | null; member_ref?: string | null },
): string {
  const template = input.tracking_template?.trim();
  if (!template) throw new ServiceError('svc_tracking_link_unavailable', spec.missing, 409, { network: spec.network, advertiser: input.advertiser_id });
  let url: URL;
  try {
    url = new URL(template);
  } catch {
    throw new ServiceError('svc_tracking_link_unavailable', spec.notUrl, 409, { network: spec.network, advertiser: input.advertiser_id });
  }
  url.searchParams.set(spec.subIdParam, checkSubId(input.sub_id, spec.maxSubId, spec.name));
  if (spec.memberParam && input.member_ref) url.searchParams.set(spec.memberParam, checkSubId(input.member_ref, spec.maxSubId, spec.name));
  const target = checkTarget(input.url);
  if (target) url.searchParams.set(spec.targetParam, target);
  return url.toString();
}
