// Shop pages: POST /advertisers/{module}/{advertiser}/page (one page, 201), the bulk run at
// /advertisers/pages (GET state, POST start: 202 with the job, DELETE cancel), the pages
// themselves at /pages and /pages/{id}, and /lookup/pages (typeahead).
import Joi from 'joi';
import { id, lookupPaging, networkId, none, paging, type Paging } from '../../schemas/fields.js';
import { MAX_BODY, MAX_EXCERPT, MAX_TITLE, PAGE_STATUSES, type BulkInput, type MakeOptions, type PageFilters, type PageStatus } from '../../services/pages/index.js';
import { accepted, created, PagedResult, route, type RouteDef } from '../rest/types.js';
import { advertiserSchemas } from './advertisers.js';

const status = () => Joi.string().valid(...PAGE_STATUSES);
const template = () => Joi.string().max(64).description('Template name (default: pages.default_template).');

/** Input schemas, shared with `cashtrack pages ...`. */
export const pageSchemas = {
  make: Joi.object<MakeOptions, true>({
    status: status().description('Status of the page (default: pages.default_status).'),
    template: template(),
  }),
  bulk: Joi.object<BulkInput, true>({
    network: networkId().description('Only advertisers of this network (default: all).'),
    status: status().description('Status of the pages made (default: pages.default_status).'),
    template: template(),
  }),
  list: Joi.object<PageFilters, true>({
    ...paging,
    status: status(),
    network: networkId().description('Only pages of this network.'),
    advertiser: Joi.string().max(128).description("Only the page of this advertiser (the network's id)."),
    search: Joi.string().trim().max(200).allow('').description('Prefix of the title or the slug.'),
    orderby: Joi.string().valid('date', 'title', 'updated').default('date'),
    order: Joi.string().valid('asc', 'desc').default('desc'),
  }),
  pageId: Joi.object<{ id: number }, true>({ id: id().required() }),
  update: Joi.object<{ title?: string; slug?: string; body?: string; excerpt?: string; status?: PageStatus }, true>({
    title: Joi.string().trim().min(1).max(MAX_TITLE).description(`Plain text, at most ${MAX_TITLE} characters (markup is removed).`),
    slug: Joi.string().trim().min(1).max(200).description('Made a slug (transliterated, lower case) and unique with a -2, -3 suffix.'),
    body: Joi.string().allow('').max(MAX_BODY).description('HTML; sanitised before it is stored.'),
    excerpt: Joi.string().allow('').max(MAX_EXCERPT).description('Plain text (markup is removed).'),
    status: status(),
  }),
  lookup: Joi.object<Paging & { search: string }, true>({ ...lookupPaging, search: Joi.string().allow('').max(200).default('').description('Prefix of the title or the slug.') }),
};

export const pagesRoutes: RouteDef[] = [
  route({
    id: 'advertisers.page',
    method: 'POST',
    path: '/advertisers/{module}/{advertiser}/page',
    auth: 'manage_options',
    description: "Make the advertiser's page from a template (201; 409 svc_page_exists naming the page it has; 409 svc_advertiser_inactive).",
    validate: { params: advertiserSchemas.key, payload: pageSchemas.make },
    handler: async ({ params, payload, actor }, ctx) => {
      const page = await ctx.pages.create(params.module, params.advertiser, payload, actor);
      return created(page, `/pages/${page.id}`);
    },
  }),
  route({
    id: 'advertisers.pages.state',
    method: 'GET',
    path: '/advertisers/pages',
    auth: 'manage_options',
    description: 'The bulk page run: the latest pages.bulk job with its progress, and how many active advertisers have and lack a page.',
    validate: { query: none() },
    handler: (_input, ctx) => ctx.pages.bulkState(),
  }),
  route({
    id: 'advertisers.pages.start',
    method: 'POST',
    path: '/advertisers/pages',
    auth: 'manage_options',
    description: 'Start a pages.bulk job making a page for every active advertiser without one (202 with the job; 409 svc_job_already_running while one runs).',
    validate: { payload: pageSchemas.bulk },
    handler: async ({ payload, actor }, ctx) => accepted(await ctx.pages.startBulk(payload, actor)),
  }),
  route({
    id: 'advertisers.pages.cancel',
    method: 'DELETE',
    path: '/advertisers/pages',
    auth: 'manage_options',
    description: 'Cancel the running pages.bulk job (409 svc_job_not_running when none runs).',
    validate: { payload: none() },
    handler: ({ actor }, ctx) => ctx.pages.cancelBulk(actor),
  }),
  route({
    id: 'pages.list',
    method: 'GET',
    path: '/pages',
    auth: 'manage_options',
    description: 'Shop pages, newest first, filtered by status, network, advertiser or a title/slug prefix.',
    validate: { query: pageSchemas.list },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.pages.list(query);
      return new PagedResult(items, total, query.page, query.per_page);
    },
  }),
  route({
    id: 'pages.get',
    method: 'GET',
    path: '/pages/{id}',
    auth: 'manage_options',
    description: 'One shop page.',
    validate: { params: pageSchemas.pageId, query: none() },
    handler: ({ params }, ctx) => ctx.pages.get(params.id),
  }),
  route({
    id: 'pages.update',
    method: 'POST',
    path: '/pages/{id}',
    auth: 'manage_options',
    description: 'Change a page: any of title, slug, body (sanitised), excerpt, status.',
    validate: { params: pageSchemas.pageId, payload: pageSchemas.update },
    handler: ({ params, payload, actor }, ctx) => ctx.pages.update(params.id, payload, actor),
  }),
  route({
    id: 'pages.delete',
    method: 'DELETE',
    path: '/pages/{id}',
    auth: 'manage_options',
    description: 'Delete a page for good: `{deleted: true, previous}`.',
    validate: { params: pageSchemas.pageId, payload: none() },
    handler: ({ params, actor }, ctx) => ctx.pages.remove(params.id, actor),
  }),
  route({
    id: 'lookup.pages',
    method: 'GET',
    path: '/lookup/pages',
    auth: 'manage_options',
    description: 'Pages whose title or slug starts with the search, by title, at most 20 a page: `{id, label}`.',
    validate: { query: pageSchemas.lookup },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.pages.lookup(query.search, { page: query.page, per_page: query.per_page });
      return new PagedResult(items, total, query.page, query.per_page);
    },
  }),
];
