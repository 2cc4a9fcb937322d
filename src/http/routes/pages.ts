// Shop pages: POST /advertisers/{module}/{advertiser}/page (one page, 201), the bulk run at
// /advertisers/pages (GET state, POST start: 202 with the job, DELETE cancel), the pages
// themselves at /pages and /pages/{id}, and /lookup/pages (typeahead).
import { none } from '../../fields.js';
import { pageSchemas } from '../../services/pages/schemas.js';
import { advertiserSchemas } from '../../services/advertisers/schemas.js';
import { accepted, created, PagedResult, route, type RouteDef } from '../rest/types.js';

export const pagesRoutes: RouteDef[] = [
  route({
    id: 'advertisers.page',
    location: (page) => `/pages/${page.id}`,
    method: 'POST',
    path: '/advertisers/{module}/{advertiser}/page',
    auth: 'manage_options',
    description: "Make the advertiser's page from a template (201; 409 svc_page_exists naming the page it has; 409 svc_advertiser_inactive).",
    validate: { params: advertiserSchemas.key, payload: pageSchemas.make },
    handler: async ({ params, payload, actor }, ctx) => {
      const page = await ctx.pages.create(params.module, params.advertiser, payload, actor);
      return created(page);
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
    id: 'pages.counts',
    method: 'GET',
    path: '/pages/counts',
    auth: 'manage_options',
    description: "Pages per status under the list's other filters: {total, statuses} (the views row).",
    validate: { query: pageSchemas.counts },
    handler: ({ query }, ctx) => ctx.pages.counts(query),
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
    id: 'pages.revert',
    method: 'POST',
    path: '/pages/{id}/revert',
    auth: 'manage_options',
    description: "Restore the page body and the shop's description from before the AI wrote them (409 svc_nothing_to_revert when there is none).",
    validate: { params: pageSchemas.pageId, payload: none() },
    handler: ({ params, actor }, ctx) => ctx.pages.revert(params.id, actor),
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
