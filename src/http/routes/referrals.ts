// Referrals: who referred whom, what the referrer earned, adding and ending a referral.
import { none } from '../../fields.js';
import { referralSchemas } from '../../services/referrals/schemas.js';
import { created, PagedResult, route, type RouteDef } from '../rest/types.js';

export const referralsRoutes: RouteDef[] = [
  route({
    id: 'referrals.list',
    method: 'GET',
    path: '/referrals',
    auth: 'manage_options',
    description: 'Referrals with what each referrer earned, newest first.',
    validate: { query: referralSchemas.list },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.referrals.list(query);
      return new PagedResult(items, total, query.page, query.per_page);
    },
  }),
  route({
    id: 'referrals.create',
    location: (referral) => `/referrals/${referral.referee.id}`,
    method: 'POST',
    path: '/referrals',
    auth: 'manage_options',
    idempotent: true,
    description: 'Make a member the referrer of another (one live referrer each, no cycles).',
    validate: { payload: referralSchemas.create },
    async handler({ payload, actor, idempotency }, ctx) {
      return created(await ctx.referrals.add(payload, actor, idempotency?.once(201)));
    },
  }),
  route({
    id: 'referrals.get',
    method: 'GET',
    path: '/referrals/{referee_id}',
    auth: 'manage_options',
    description: "A member's live referral (404 svc_referral_not_found when the member has none).",
    validate: { params: referralSchemas.referee, query: none() },
    handler: ({ params }, ctx) => ctx.referrals.liveOf(params.referee_id),
  }),
  route({
    id: 'referrals.remove',
    method: 'DELETE',
    path: '/referrals/{referee_id}',
    auth: 'manage_options',
    description: "End a member's live referral: future cashback only, past credits stay.",
    validate: { params: referralSchemas.referee, payload: none() },
    handler: ({ params, actor }, ctx) => ctx.referrals.remove(params.referee_id, actor),
  }),
];
