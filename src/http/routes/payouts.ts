// Members' payouts: /payouts (list, create), /payouts/{id}, and the two ways a payout closes;
// GET and POST /payouts/paypal/settings (the PayPal Payouts account; the client secret is write-only).
import { none } from '../../fields.js';
import { payoutSchemas } from '../../services/payouts/schemas.js';
import { created, PagedResult, route, type RouteDef } from '../rest/types.js';

export const payoutsRoutes: RouteDef[] = [
  route({
    id: 'payouts.list',
    method: 'GET',
    path: '/payouts',
    auth: 'manage_options',
    description: 'Payouts, newest first (orderby, order), filtered.',
    validate: { query: payoutSchemas.list },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.payouts.list(query);
      return new PagedResult(items, total, query.page, query.per_page);
    },
  }),
  route({
    id: 'payouts.counts',
    method: 'GET',
    path: '/payouts/counts',
    auth: 'manage_options',
    description: "Payouts per status under the list's other filters: {total, statuses} (the views row).",
    validate: { query: payoutSchemas.counts },
    handler: ({ query }, ctx) => ctx.payouts.counts(query),
  }),
  route({
    id: 'payouts.get',
    method: 'GET',
    path: '/payouts/{id}',
    auth: 'manage_options',
    description: 'One payout.',
    validate: { params: payoutSchemas.payoutId, query: none() },
    handler: ({ params }, ctx) => ctx.payouts.get(params.id),
  }),
  route({
    id: 'payouts.create',
    location: ({ payout }) => `/payouts/${payout.id}`,
    method: 'POST',
    path: '/payouts',
    auth: 'manage_options',
    idempotent: true,
    description: "Pay a member out: the amount is debited from the member's balance at once.",
    validate: { payload: payoutSchemas.create },
    async handler({ payload, actor, idempotency }, ctx) {
      return created(await ctx.payouts.create(payload, actor, idempotency?.once(201)));
    },
  }),
  route({
    id: 'payouts.complete',
    method: 'POST',
    path: '/payouts/{id}/complete',
    auth: 'manage_options',
    idempotent: true,
    description: 'Mark a pending payout paid.',
    validate: { params: payoutSchemas.payoutId, payload: payoutSchemas.complete },
    handler: ({ params, payload, actor, idempotency }, ctx) => ctx.payouts.complete(params.id, payload, actor, idempotency?.once(200)),
  }),
  route({
    id: 'payouts.cancel',
    method: 'POST',
    path: '/payouts/{id}/cancel',
    auth: 'manage_options',
    idempotent: true,
    description: 'Cancel a pending payout and credit its amount back.',
    validate: { params: payoutSchemas.payoutId, payload: payoutSchemas.cancel },
    handler: ({ params, payload, actor, idempotency }, ctx) => ctx.payouts.cancel(params.id, payload, actor, idempotency?.once(200)),
  }),
  route({
    id: 'payouts.paypal.settings',
    method: 'GET',
    path: '/payouts/paypal/settings',
    auth: 'manage_options',
    description: 'The PayPal Payouts account: client_id, environment, the API origin used, the client secret only as set or not, and what is missing.',
    validate: { query: none() },
    handler: (_input, ctx) => ctx.paypal.view(),
  }),
  route({
    id: 'payouts.paypal.configure',
    method: 'POST',
    path: '/payouts/paypal/settings',
    auth: 'manage_options',
    description: 'Store PayPal Payouts settings (null or "" removes one); `client_secret` is write-only.',
    validate: { payload: payoutSchemas.paypalSettings },
    handler: ({ payload, actor }, ctx) => ctx.paypal.configure(payload, actor),
  }),
];
