// Advertisers: /advertisers (list), /advertisers/{module}/{advertiser} (one), its tracking link
// for a member (/link), its cashback override (/cashback), POST /advertisers/sync (starts a sync job: 202), /lookup/advertisers
// (typeahead).
import { none } from '../../fields.js';
import { advertiserSchemas } from '../../services/advertisers/schemas.js';
import { accepted, PagedResult, route, type RouteDef } from '../rest/types.js';

export const advertisersRoutes: RouteDef[] = [
  route({
    id: 'advertisers.list',
    method: 'GET',
    path: '/advertisers',
    auth: 'manage_options',
    description: 'Advertisers, by name or last update.',
    validate: { query: advertiserSchemas.list },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.advertisers.list(query);
      return new PagedResult(items, total, query.page, query.per_page);
    },
  }),
  route({
    id: 'advertisers.counts',
    method: 'GET',
    path: '/advertisers/counts',
    auth: 'manage_options',
    description: "Advertisers per status under the list's other filters: {total, statuses} (the views row).",
    validate: { query: advertiserSchemas.counts },
    handler: ({ query }, ctx) => ctx.advertisers.counts(query),
  }),
  route({
    id: 'advertisers.get',
    method: 'GET',
    path: '/advertisers/{module}/{advertiser}',
    auth: 'manage_options',
    description: 'One advertiser, with its raw network record and cashback rule.',
    validate: { params: advertiserSchemas.key, query: none() },
    handler: ({ params }, ctx) => ctx.advertisers.get(params.module, params.advertiser),
  }),
  route({
    id: 'advertisers.link',
    method: 'GET',
    path: '/advertisers/{module}/{advertiser}/link',
    auth: 'manage_options',
    description: "The network's tracking link crediting a member for a visit to the advertiser, optionally deep-linking to `url`.",
    validate: { params: advertiserSchemas.key, query: advertiserSchemas.link },
    handler: ({ params, query }, ctx) => ctx.advertisers.trackingLink(params.module, params.advertiser, { member: query.member, url: query.url ?? null }),
  }),
  route({
    id: 'advertisers.cashback.set',
    method: 'POST',
    path: '/advertisers/{module}/{advertiser}/cashback',
    auth: 'manage_options',
    description: "Set the advertiser's member cashback override, as `cashtrack advertisers set-cashback` does; answers the advertiser.",
    validate: { params: advertiserSchemas.key, payload: advertiserSchemas.cashback },
    handler: ({ params, payload, actor }, ctx) =>
      ctx.advertisers.setCashback(params.module, params.advertiser, payload.type, payload.value, actor, payload.currency ?? null),
  }),
  route({
    id: 'advertisers.cashback.remove',
    method: 'DELETE',
    path: '/advertisers/{module}/{advertiser}/cashback',
    auth: 'manage_options',
    description: "Remove the advertiser's cashback override (the network's rule, else the site default, applies again); answers the advertiser.",
    validate: { params: advertiserSchemas.key, query: none(), payload: none() },
    handler: ({ params, actor }, ctx) => ctx.advertisers.removeCashback(params.module, params.advertiser, actor),
  }),
  route({
    id: 'advertisers.sync',
    method: 'POST',
    path: '/advertisers/sync',
    auth: 'manage_options',
    description: 'Start an advertiser sync job (202 with the job; 409 svc_job_already_running when the same sync is under way).',
    validate: { payload: advertiserSchemas.sync },
    handler: async ({ payload, actor }, ctx) => accepted(await ctx.advertisers.startSync(payload, actor)),
  }),
  route({
    id: 'lookup.advertisers',
    method: 'GET',
    path: '/lookup/advertisers',
    auth: 'manage_options',
    description: 'Advertisers whose name starts with the search, by name, at most 20 a page: `{id: "module/advertiser", label}`.',
    validate: { query: advertiserSchemas.lookup },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.advertisers.lookup(query.search, { page: query.page, per_page: query.per_page });
      return new PagedResult(items, total, query.page, query.per_page);
    },
  }),
];
