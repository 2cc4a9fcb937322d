// AI content: POST /ai/shop/{id} (a shop's description and page body), POST /ai/coupon/{id} (a
// coupon's title and description), both with `dry_run` (the proposal is stored) or `proposal_id`
// (keep a stored proposal without asking the provider again); POST /ai/bulk (202 with the `ai.bulk`
// job); GET and POST /ai/settings (the provider; the API key is write-only).
import { aiSchemas } from '../../services/ai/schemas.js';
import { none } from '../../fields.js';
import { accepted, route, type RouteDef } from '../rest/types.js';

export const aiRoutes: RouteDef[] = [
  route({
    id: 'ai.shop',
    method: 'POST',
    path: '/ai/shop/{id}',
    auth: 'manage_options',
    description:
      "Generate an advertiser's description and page body (saved, the page created as a draft when missing; `dry_run`: only the proposal, stored for 24 hours; `proposal_id`: keep a stored proposal without asking the provider again).",
    validate: { params: aiSchemas.itemId, payload: aiSchemas.generate },
    handler: ({ params, payload, actor }, ctx) => ctx.ai.generateShop(params.id, payload, actor),
  }),
  route({
    id: 'ai.coupon',
    method: 'POST',
    path: '/ai/coupon/{id}',
    auth: 'manage_options',
    description:
      "Rewrite a coupon's title and description (the text from before is kept for revert; `dry_run`: only the proposal, stored for 24 hours; `proposal_id`: keep a stored proposal without asking the provider again).",
    validate: { params: aiSchemas.itemId, payload: aiSchemas.generate },
    handler: ({ params, payload, actor }, ctx) => ctx.ai.rewriteCoupon(params.id, payload, actor),
  }),
  route({
    id: 'ai.bulk',
    method: 'POST',
    path: '/ai/bulk',
    auth: 'manage_options',
    description: 'Start an `ai.bulk` job over shops or coupons (202 with the job; 409 svc_job_already_running when the same run is under way).',
    validate: { payload: aiSchemas.bulk },
    handler: async ({ payload, actor }, ctx) => accepted(await ctx.ai.startBulk(payload, actor)),
  }),
  route({
    id: 'ai.settings',
    method: 'GET',
    path: '/ai/settings',
    auth: 'manage_options',
    description: 'The AI provider settings (the API key only as set or not), what is missing, and the prompt tags.',
    validate: { query: none() },
    handler: (_input, ctx) => ctx.ai.settings(),
  }),
  route({
    id: 'ai.configure',
    method: 'POST',
    path: '/ai/settings',
    auth: 'manage_options',
    description: 'Store AI provider settings (null or "" gives a setting back to the configuration); `api_key` is write-only.',
    validate: { payload: aiSchemas.configure },
    handler: ({ payload, actor }, ctx) => ctx.ai.configure(payload, actor),
  }),
];
