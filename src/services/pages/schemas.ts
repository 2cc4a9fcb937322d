// Input schemas of the shop page routes, shared with `cashtrack pages ...` and with the AI's
// answers (src/ai/outputs.ts holds a written page body to what an edit may be).
import Joi from 'joi';
import { anyOf, anyOfPattern, dateRange, id, lookupPaging, networkId, paging, sorting, type ListQuery, type Paging, lazySchemas } from '../../fields.js';
import type { BulkInput, MakeOptions } from './index.js';
import {
  MAX_BODY,
  MAX_EXCERPT,
  MAX_TITLE,
  PAGE_ORDERBY,
  PAGE_STATUSES,
  type PageCountFilters,
  type PageFilters,
  type PageOrderby,
  type PageStatus,
} from './rows.js';

export { PAGE_ORDERBY, PAGE_STATUSES };

const status = () => Joi.string().valid(...PAGE_STATUSES);
const template = () => Joi.string().max(64).description('Template name (default: pages.default_template).');

/** The list's filters other than the status ones: the counts per status take the same. */
const listFilters = {
  network: anyOfPattern(networkId()).description('Only pages of these networks (comma-separated or an array).'),
  advertiser: Joi.string().max(128).description("Only the page of this advertiser (the network's id)."),
  search: Joi.string().trim().max(200).allow('').description('Prefix of the title or the slug.'),
  ...dateRange('pages created (created_at)'),
};

/** Input schemas, shared with `cashtrack pages ...`. */
export const pageSchemas = lazySchemas(() => ({
  make: Joi.object<MakeOptions, true>({
    status: status().description('Status of the page (default: pages.default_status).'),
    template: template(),
  }),
  bulk: Joi.object<BulkInput, true>({
    network: networkId().description('Only advertisers of this network (default: all).'),
    status: status().description('Status of the pages made (default: pages.default_status).'),
    template: template(),
  }),
  list: Joi.object<ListQuery<PageFilters>, true>({
    ...paging,
    ...sorting(Object.keys(PAGE_ORDERBY) as PageOrderby[], 'date', 'desc'),
    status: anyOf(PAGE_STATUSES).description('Only pages in one of these statuses (comma-separated or an array).'),
    status_exclude: anyOf(PAGE_STATUSES).description('Only pages in none of these statuses.'),
    ...listFilters,
  }),
  counts: Joi.object<ListQuery<PageCountFilters>, true>(listFilters),
  pageId: Joi.object<{ id: number }, true>({ id: id().required() }),
  update: Joi.object<{ title?: string; slug?: string; body?: string; excerpt?: string; status?: PageStatus }, true>({
    title: Joi.string().trim().min(1).max(MAX_TITLE).description(`Plain text, at most ${MAX_TITLE} characters (markup is removed).`),
    slug: Joi.string().trim().min(1).max(200).description('Made a slug (transliterated, lower case) and unique with a -2, -3 suffix.'),
    body: Joi.string().allow('').max(MAX_BODY).description('HTML; sanitised before it is stored.'),
    excerpt: Joi.string().allow('').max(MAX_EXCERPT).description('Plain text (markup is removed).'),
    status: status(),
  }),
  lookup: Joi.object<Paging & { search: string }, true>({
    ...lookupPaging,
    search: Joi.string().allow('').max(200).default('').description('Prefix of the title or the slug.'),
  }),
}));
