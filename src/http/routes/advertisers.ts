// Advertisers: /advertisers (list), /advertisers/{module}/{advertiser} (one), its tracking link
// for a member (/link), POST /advertisers/sync (starts a sync job: 202), /lookup/advertisers
// (typeahead).
import Joi from 'joi';
import { currency, flag, lookupPaging, networkId, none, paging, type Paging } from '../../fields.js';
import { ADVERTISER_STATUSES, type AdvertiserFilters } from '../../services/advertisers/index.js';
import { CASHBACK_TYPES, type CashbackType } from '../../cashback-rule.js';
import { accepted, PagedResult, route, type RouteDef } from '../rest/types.js';

/** Input schemas, shared with `cashtrack advertisers ...`. */
export const advertiserSchemas = {
  list: Joi.object<AdvertiserFilters, true>({
    ...paging,
    network: networkId().description('Only this network.'),
    search: Joi.string().trim().max(191).allow('').description('Prefix of the name.'),
    status: Joi.string().valid(...ADVERTISER_STATUSES),
    has_page: flag().description('Only advertisers with (1) or without (0) a page.'),
    has_logo: flag().description('Only advertisers with (1) or without (0) a logo.'),
    orderby: Joi.string().valid('name', 'updated').default('name'),
    order: Joi.string().valid('asc', 'desc').default('asc'),
  }),
  key: Joi.object<{ module: string; advertiser: string }, true>({ module: networkId().required(), advertiser: Joi.string().max(128).required() }),
  link: Joi.object<{ member: string; url?: string }, true>({
    member: Joi.string().trim().min(1).max(191).required().description('The member credited: a user id, or a login or email.'),
    url: Joi.string().trim().max(2000).description("Target page (http or https, on the advertiser's domain when it is known); default: the advertiser's home page."),
  }),
  sync: Joi.object<{ network?: string }, true>({ network: networkId().description('Only this network (default: every enabled, configured network).') }),
  lookup: Joi.object<Paging & { search: string }, true>({ ...lookupPaging, search: Joi.string().allow('').max(191).default('').description('Prefix of the name.') }),
  cashback: Joi.object<{ type: CashbackType; value: string; currency?: string | null }, true>({
    type: Joi.string().valid(...CASHBACK_TYPES).required(),
    value: Joi.string().max(32).required(),
    currency: currency().allow(null).description('The currency of a flat amount (a percent rule has none).'),
  }),
};

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
