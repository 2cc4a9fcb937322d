// Coupons: /coupons (list), /coupons/{id} (one; POST edits), its link for a member (/link), the
// revert of an AI rewrite (/revert) and POST /coupons/refresh (starts a refresh job: 202).
import { none } from '../../fields.js';
import { couponSchemas } from '../../services/coupons/schemas.js';
import { accepted, PagedResult, route, type RouteDef } from '../rest/types.js';

/** Coupon routes. */
export const couponsRoutes: RouteDef[] = [
  route({
    id: 'coupons.list',
    method: 'GET',
    path: '/coupons',
    auth: 'manage_options',
    description: 'Coupons and deals, filtered and ordered (newest first by default).',
    validate: { query: couponSchemas.list },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.coupons.list(query);
      return new PagedResult(items, total, query.page, query.per_page);
    },
  }),
  route({
    id: 'coupons.counts',
    method: 'GET',
    path: '/coupons/counts',
    auth: 'manage_options',
    description: "Coupons per status as of now under the list's other filters: {total, statuses} (the views row).",
    validate: { query: couponSchemas.counts },
    handler: ({ query }, ctx) => ctx.coupons.counts(query),
  }),
  route({
    id: 'coupons.refresh',
    method: 'POST',
    path: '/coupons/refresh',
    auth: 'manage_options',
    description: 'Start a coupon refresh job (202 with the job; 409 svc_job_already_running while one is under way).',
    validate: { payload: couponSchemas.refresh },
    handler: async ({ payload, actor }, ctx) => accepted(await ctx.coupons.startRefresh(payload, actor)),
  }),
  route({
    id: 'coupons.get',
    method: 'GET',
    path: '/coupons/{id}',
    auth: 'manage_options',
    description: "One coupon, with the network's latest values of its edited fields and its raw record.",
    validate: { params: couponSchemas.id, query: none() },
    handler: ({ params }, ctx) => ctx.coupons.get(params.id),
  }),
  route({
    id: 'coupons.update',
    method: 'POST',
    path: '/coupons/{id}',
    auth: 'manage_options',
    description: 'Edit some fields (a refresh keeps them) and give others back to the network (`reset`).',
    validate: { params: couponSchemas.id, payload: couponSchemas.edit },
    handler: ({ params, payload, actor }, ctx) => ctx.coupons.update(params.id, payload, { actor }),
  }),
  route({
    id: 'coupons.revert',
    method: 'POST',
    path: '/coupons/{id}/revert',
    auth: 'manage_options',
    description: 'Restore the text from before the AI rewrite (409 svc_nothing_to_revert when there is none).',
    validate: { params: couponSchemas.id, payload: none() },
    handler: ({ params, actor }, ctx) => ctx.coupons.revert(params.id, { actor }),
  }),
  route({
    id: 'coupons.link',
    method: 'GET',
    path: '/coupons/{id}/link',
    auth: 'manage_options',
    description: "The link a member gets: the advertiser's tracking link crediting them, landing on the coupon's page.",
    validate: { params: couponSchemas.id, query: couponSchemas.link },
    handler: ({ params, query }, ctx) => ctx.coupons.link(params.id, query.member),
  }),
];
