// Shop logos: where an advertiser's logo comes from and how it becomes local media. Sources, in
// order, the first image wins: the network's logo URL, the icons the shop's home page links
// (best first, at most MAX_ICONS), then `/favicon.ico` of the site. Every request goes through the
// outbound guard; every answer through the image pipeline. When nothing gives an image the answer
// is 422 svc_logo_not_found listing each attempt and why it failed. The media row and the
// advertiser's reference to it are written in one transaction, so a failure leaves neither.
import type { Config } from '../../config/index.js';
import type { Database } from '../../db/database.js';
import { ServiceError } from '../../errors.js';
import { HOOKS, type HookBus } from '../../hooks/index.js';
import type { OutboundGuard, OutboundResponse } from '../../outbound/index.js';
import type { AdvertiserService, LogoTarget } from '../advertisers/index.js';
import type { LogService } from '../logs/index.js';
import { processImage, type Media, type MediaService, type ProcessedImage } from '../media/index.js';
import type { HostLimiter } from './host-limiter.js';
import { findIcons } from './site-icons.js';
import type { WebhookEvents } from '../webhooks/index.js';

export { LOGOS_BULK_JOB, LogoBulkService, type LogoBulkCounts, type LogoBulkParams, type LogoBulkState } from './bulk.js';

export type LogoSource = 'network' | 'icon' | 'favicon';

/** One source tried and why it gave no logo. */
export interface LogoAttempt {
  source: LogoSource | 'home';
  url: string;
  /** A `svc_fetch_blocked` reason, `http_status`, `not_html` or `host_unreachable` (an earlier request to the host timed out or failed). */
  reason: string;
  status?: number;
}

export interface LogoResult {
  module: string;
  advertiser: string;
  /** The local logo's public URL. */
  logo: string;
  media: Media;
  /** Where this logo came from (null: the logo on file was kept). */
  source: LogoSource | null;
  source_url: string | null;
  /** True when this call fetched and set the logo; false when it kept the one on file (no `force`). */
  fetched: boolean;
}

export interface FetchLogoOptions {
  /** Fetch again although the advertiser has a logo. */
  force?: boolean;
  actor: string;
  signal?: AbortSignal;
  /** The bulk run's per-host limit, shared by its fetches. */
  limiter?: HostLimiter;
}

export interface LogoServiceDeps {
  db: Database;
  logger: LogService;
  hooks: HookBus;
  /** The fetched logo is written to the webhook outbox with the advertiser's change; the hook fires after commit. */
  events: WebhookEvents;
  advertisers: AdvertiserService;
  media: MediaService;
  outbound: Pick<OutboundGuard, 'fetch'>;
  limits: Config['logos'];
}

/** Icons of the home page tried, at most (the favicon comes after them). */
const MAX_ICONS = 4;
/** Reasons that say the host itself is not answering: other URLs on it are not tried. */
const HOST_DOWN = new Set(['timeout', 'connection_failed']);
const USER_AGENT = 'Mozilla/5.0 (compatible; cashtrack logo fetcher)';

/** The home page of a shop: its site URL, else https on its domain. */
export function homePage(target: Pick<LogoTarget, 'site_url' | 'domain'>): string | null {
  if (target.site_url) return target.site_url;
  if (!target.domain) return null;
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(target.domain) ? target.domain : `https://${target.domain.replace(/^\/+/, '')}/`;
}

function hostOf(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}

function blockedReason(err: unknown): string | null {
  return err instanceof ServiceError && err.code === 'svc_fetch_blocked' ? String(err.data.reason ?? 'blocked') : null;
}

/** Fetches advertisers' logos into local media (one at a time here; in bulk through logos/bulk.ts). */
export class LogoService {
  constructor(private readonly deps: LogoServiceDeps) {}

  /**
   * The advertiser's logo: the one on file unless `force` (or it names no stored media), else
   * fetched from its sources and stored. 404 svc_advertiser_not_found; 422 svc_logo_not_found with
   * `data.tried` when no source gives an image.
   */
  async fetch(module: string, advertiser: string, options: FetchLogoOptions): Promise<LogoResult> {
    const { advertisers, media, db, logger } = this.deps;
    const target = await advertisers.logoTarget(module, advertiser);
    if (!options.force && target.local_logo) {
      const existing = await media.find(target.local_logo.split('.')[0]);
      if (existing && existing.name === target.local_logo) {
        return {
          module: target.module,
          advertiser: target.advertiser,
          logo: existing.url,
          media: existing,
          source: null,
          source_url: existing.source_url,
          fetched: false,
        };
      }
    }
    const found = await this.discover(target, options);
    const logoResult = (file: Omit<Awaited<ReturnType<MediaService['store']>>, 'created'>): LogoResult => ({
      module: target.module,
      advertiser: target.advertiser,
      logo: file.url,
      media: file,
      source: found.source,
      source_url: found.url,
      fetched: true,
    });
    const stored = await db.transaction(async (t) => {
      const row = await media.store(found.image, found.url, t);
      await advertisers.setLocalLogo(target.module, target.advertiser, row.name, t);
      const { created: _created, ...file } = row;
      await this.deps.events.emit(t, HOOKS.logoFetched, logoResult(file), { actor: options.actor });
      return row;
    });
    const { created, ...file } = stored;
    const result = logoResult(file);
    logger.info('logos', 'Logo fetched', {
      module: target.module,
      advertiser: target.advertiser,
      source: found.source,
      url: found.url.slice(0, 500),
      media: file.name,
      new_file: created,
      actor: options.actor,
    });
    return result;
  }

  /** Tries the sources in order; the first image wins. */
  private async discover(target: LogoTarget, options: FetchLogoOptions): Promise<{ image: ProcessedImage; url: string; source: LogoSource }> {
    const tried: LogoAttempt[] = [];
    const down = new Set<string>();
    const attempt = async (source: LogoSource, url: string): Promise<ProcessedImage | null> => {
      const res = await this.get(source, url, options, tried, down, 'image/png,image/jpeg,image/gif,image/webp,image/x-icon;q=0.8,*/*;q=0.1');
      if (!res) return null;
      try {
        return await processImage(res.body, {
          maxInputPixels: this.deps.limits.max_input_pixels,
          maxSize: this.deps.limits.max_size,
          maxStoredBytes: this.deps.limits.max_stored_bytes,
        });
      } catch (err) {
        const reason = blockedReason(err);
        if (!reason) throw err;
        tried.push({ source, url: res.url, reason });
        return null;
      }
    };
    if (target.logo_url) {
      const image = await attempt('network', target.logo_url);
      if (image) return { image, url: target.logo_url, source: 'network' };
    }
    const home = homePage(target);
    if (home) {
      let origin: string | null = null;
      try {
        origin = new URL(home).origin;
      } catch {
        // The guard names the bad URL below.
      }
      const page = await this.get('home', home, options, tried, down, 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1', this.deps.limits.max_html_bytes);
      const icons: string[] = [];
      if (page) {
        origin = new URL(page.url).origin;
        const type = page.headers['content-type'] ?? '';
        if (type && !/html/i.test(type)) tried.push({ source: 'home', url: page.url, reason: 'not_html' });
        else for (const icon of findIcons(page.body.toString('utf8'), page.url).slice(0, MAX_ICONS)) icons.push(icon.url);
      }
      for (const url of icons) {
        const image = await attempt('icon', url);
        if (image) return { image, url, source: 'icon' };
      }
      const favicon = origin && origin !== 'null' ? `${origin}/favicon.ico` : null;
      if (favicon && !icons.includes(favicon)) {
        const image = await attempt('favicon', favicon);
        if (image) return { image, url: favicon, source: 'favicon' };
      }
    }
    const message = tried.length
      ? `No logo found for ${target.module}/${target.advertiser}: ${tried.map((t) => `${t.source} ${t.reason}`).join(', ')}.`
      : `No logo found for ${target.module}/${target.advertiser}: the network gives no logo URL and the advertiser has no site or domain.`;
    this.deps.logger.warning('logos', 'No logo found', {
      module: target.module,
      advertiser: target.advertiser,
      tried: tried.map((t) => ({ ...t, url: t.url.slice(0, 300) })),
    });
    throw new ServiceError('svc_logo_not_found', message, 422, { module: target.module, advertiser: target.advertiser, tried });
  }

  /** One GET through the guard (and the bulk run's per-host limit); null, with the reason in `tried`, when it gives nothing usable. */
  private async get(
    source: LogoAttempt['source'],
    url: string,
    options: FetchLogoOptions,
    tried: LogoAttempt[],
    down: Set<string>,
    accept: string,
    maxBytes?: number,
  ): Promise<OutboundResponse | null> {
    const host = hostOf(url);
    if (host && down.has(host)) {
      tried.push({ source, url, reason: 'host_unreachable' });
      return null;
    }
    const { limits, outbound } = this.deps;
    const request = () =>
      outbound.fetch(url, {
        headers: { 'user-agent': USER_AGENT, accept },
        connectTimeoutMs: limits.connect_timeout_ms,
        timeoutMs: limits.timeout_ms,
        signal: options.signal,
        ...(maxBytes ? { maxBytes } : {}),
      });
    let res: OutboundResponse;
    try {
      res = host && options.limiter ? await options.limiter.run(host, request) : await request();
    } catch (err) {
      options.signal?.throwIfAborted();
      const reason = blockedReason(err);
      if (!reason) throw err;
      if (host && HOST_DOWN.has(reason)) down.add(host);
      tried.push({ source, url, reason });
      return null;
    }
    if (res.status < 200 || res.status > 299) {
      tried.push({ source, url, reason: 'http_status', status: res.status });
      return null;
    }
    return res;
  }
}
