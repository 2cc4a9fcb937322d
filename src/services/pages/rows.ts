// Pages as rows: the statuses, the shape the API shows, and how a row becomes a page.
import { Database } from '../../db/database.js';
import { ListWhere, type OneOrMany } from '../../db/lists.js';
import { toInt, toIso } from '../../db/values.js';
import { ServiceError } from '../../errors.js';

export const PAGE_STATUSES = ['draft', 'publish'] as const;
export type PageStatus = (typeof PAGE_STATUSES)[number];

/** Longest title (characters); the REST and CLI input refuse a longer one. */
export const MAX_TITLE = 200;
/** Longest excerpt and body kept (characters). */
export const MAX_EXCERPT = 5000;
export const MAX_BODY = 500_000;

/** A shop page as the API and CLI show it. */
export interface Page {
  id: number;
  /** The advertiser's network and its id there. */
  module: string;
  advertiser: string;
  title: string;
  slug: string;
  /** The public address (`pages.link_template`), or null when none is configured. */
  link: string | null;
  status: PageStatus;
  excerpt: string;
  /** Sanitised HTML. */
  body: string;
  /** The template the page was made from. */
  template: string | null;
  /** Who made it: `user:<id>`, `cli`, `job:<id>`. */
  author: string;
  created_at: string;
  updated_at: string;
  /** When it was first published; null while it never was. */
  published_at: string | null;
  /**
   * The shop's text from before the first AI write since the last revert (the page body and the
   * advertiser's description): what `POST /pages/{id}/revert` restores. Null when there is none.
   */
  original: AiOriginal | null;
}

/** A page with the advertiser row it belongs to (the service's own view). */
/** What an AI write replaced: the page body and the advertiser's description. */
export interface AiOriginal {
  body: string;
  description: string | null;
}

/** The stored `ai_original` column, or null when it is missing or unreadable. */
export function aiOriginal(v: unknown): AiOriginal | null {
  if (v === null || v === undefined || v === '') return null;
  try {
    const o = JSON.parse(String(v)) as Record<string, unknown>;
    if (!o || typeof o.body !== 'string') return null;
    return { body: o.body, description: typeof o.description === 'string' ? o.description : null };
  } catch {
    return null;
  }
}

export interface PageRow extends Page {
  advertiser_id: number;
}

/**
 * The fields `GET /pages` sorts by, and the column each is. `date` and `updated` are the host
 * platform's names (and this list's first ones), kept beside the field names.
 */
export const PAGE_ORDERBY = {
  id: 'id',
  date: 'created_at',
  created_at: 'created_at',
  updated: 'updated_at',
  updated_at: 'updated_at',
  published_at: 'published_at',
  title: 'title',
  status: 'status',
} as const;
export type PageOrderby = keyof typeof PAGE_ORDERBY;

/** The filters of the page list and of its counts per status. */
export interface PageWhere {
  status?: OneOrMany<PageStatus>;
  status_exclude?: OneOrMany<PageStatus>;
  network?: OneOrMany<string>;
  advertiser?: string;
  search?: string;
  after?: Date;
  before?: Date;
}

export interface PageFilters extends PageWhere {
  /** Default date (newest first). */
  orderby?: PageOrderby;
  order?: 'asc' | 'desc';
  page: number;
  per_page: number;
}

/** The filters of `GET /pages/counts`: the list's, without paging, sort and the status ones. */
export type PageCountFilters = Omit<PageWhere, 'status' | 'status_exclude'>;

/** The WHERE of the page list and of its counts. */
export function pageWhere(f: PageWhere): ListWhere {
  const w = new ListWhere()
    .anyOf('status', f.status)
    .noneOf('status', f.status_exclude)
    .anyOf('module', f.network)
    .eq('advertiser', f.advertiser)
    .after('created_at', f.after)
    .before('created_at', f.before);
  const search = f.search?.trim();
  if (search) w.add("(title LIKE ? ESCAPE '!' OR slug LIKE ? ESCAPE '!')", Database.likePrefix(search), Database.likePrefix(search));
  return w;
}

export const PAGE_COLUMNS =
  'id, advertiser_id, module, advertiser, title, slug, body, excerpt, status, template, author, created_at, updated_at, published_at, ai_original';

/** The public address of a page from `pages.link_template`. */
export function pageLink(template: string | null, page: { id: number; slug: string }): string | null {
  if (!template) return null;
  return template.replace(/%SLUG%/g, encodeURIComponent(page.slug)).replace(/%ID%/g, String(page.id));
}

export function shapePage(r: Record<string, unknown>, linkTemplate: string | null): PageRow {
  const id = toInt(r.id);
  const slug = String(r.slug);
  return {
    id,
    module: String(r.module),
    advertiser: String(r.advertiser),
    advertiser_id: toInt(r.advertiser_id),
    title: String(r.title),
    slug,
    link: pageLink(linkTemplate, { id, slug }),
    status: r.status === 'publish' ? 'publish' : 'draft',
    excerpt: String(r.excerpt ?? ''),
    body: String(r.body ?? ''),
    template: r.template === null || r.template === undefined ? null : String(r.template),
    author: String(r.author),
    created_at: toIso(r.created_at)!,
    updated_at: toIso(r.updated_at)!,
    published_at: toIso(r.published_at),
    original: aiOriginal(r.ai_original),
  };
}

/** The page without its advertiser row id (what clients see). */
export function publicPage(row: PageRow): Page {
  const { advertiser_id: _omit, ...page } = row;
  return page;
}

export function pageNotFound(id: number): ServiceError {
  return new ServiceError('svc_page_not_found', `Page ${id} not found.`, 404, { id });
}

/** 409 svc_page_exists naming the advertiser's page. */
export function pageExists(page: Page | null, key: { module: string; advertiser: string }): ServiceError {
  return new ServiceError(
    'svc_page_exists',
    page
      ? `${key.module}/${key.advertiser} has a page already: ${page.id} "${page.title}" (${page.slug}).`
      : `${key.module}/${key.advertiser} has a page already.`,
    409,
    {
      module: key.module,
      advertiser: key.advertiser,
      page: page ? { id: page.id, title: page.title, slug: page.slug, status: page.status, link: page.link } : null,
    },
  );
}

export function invalidPage(field: string, message: string, extra: Record<string, unknown> = {}): ServiceError {
  return new ServiceError('svc_invalid_page', message, 400, { field, ...extra });
}

/** `text` cut to `max` characters (code points, as the database counts them). */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  return Array.from(text).slice(0, max).join('').trimEnd();
}
