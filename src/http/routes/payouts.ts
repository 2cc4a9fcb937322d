// Members' payouts: /payouts (list, create), /payouts/{id}, and the two ways a payout closes;
// GET and POST /payouts/paypal/settings (the PayPal Payouts account; the client secret is write-only);
// and payout batches, /payouts/batches (services/payouts/batches.ts).
import { none } from '../../fields.js';
import { payoutSchemas } from '../../services/payouts/schemas.js';
import { created, PagedResult, RestResponse, route, type RouteDef } from '../rest/types.js';

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
  route({
    id: 'payouts.batches.list',
    method: 'GET',
    path: '/payouts/batches',
    auth: 'manage_options',
    description: 'Payout batches, newest first, filtered by status, method and currency.',
    validate: { query: payoutSchemas.batchList },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.payoutBatches.list(query);
      return new PagedResult(items, total, query.page, query.per_page);
    },
  }),
  route({
    id: 'payouts.batches.preview',
    method: 'POST',
    path: '/payouts/batches/preview',
    auth: 'manage_options',
    description: 'What a batch made now from these filters or payouts would hold, and which payouts it would hold out and why; writes nothing.',
    validate: { payload: payoutSchemas.batchCreate },
    handler: ({ payload }, ctx) => ctx.payoutBatches.preview(payload),
  }),
  route({
    id: 'payouts.batches.create',
    location: ({ batch }) => `/payouts/batches/${batch.id}`,
    method: 'POST',
    path: '/payouts/batches',
    auth: 'manage_options',
    idempotent: true,
    description: 'Make a batch of pending payouts of one method and currency, from filters or a list (made once per Idempotency-Key).',
    validate: { payload: payoutSchemas.batchCreate },
    async handler({ payload, actor, idempotency }, ctx) {
      return created(await ctx.payoutBatches.create(payload, actor, idempotency?.once(201)));
    },
  }),
  route({
    id: 'payouts.batches.get',
    method: 'GET',
    path: '/payouts/batches/{id}',
    auth: 'manage_options',
    description: 'One payout batch with its items and the payouts held out of it (with reasons).',
    validate: { params: payoutSchemas.batchId, query: none() },
    handler: ({ params }, ctx) => ctx.payoutBatches.get(params.id),
  }),
  route({
    id: 'payouts.batches.file',
    method: 'GET',
    path: '/payouts/batches/{id}/file',
    auth: 'manage_options',
    description: "The batch's file (CSV; SEPA pain.001) as a download.",
    validate: { params: payoutSchemas.batchId, query: none() },
    async handler({ params }, ctx) {
      const file = await ctx.payoutBatches.file(params.id);
      return new RestResponse(file.body, 200, {
        'Content-Type': file.type,
        'Content-Disposition': `attachment; filename="${file.name.replace(/[^\w.-]/g, '_')}"`,
        'Cache-Control': 'no-store',
      });
    },
  }),
  route({
    id: 'payouts.batches.send',
    method: 'POST',
    path: '/payouts/batches/{id}/send',
    auth: 'manage_options',
    idempotent: true,
    description:
      'Send an open batch: a file batch is marked sent (its file taken to the bank or tool); a PayPal batch is handed to PayPal (never paid twice, however often sent) and followed by the payouts.batch_status job.',
    validate: { params: payoutSchemas.batchId, payload: none() },
    handler: ({ params, actor, idempotency }, ctx) => ctx.payoutBatches.send(params.id, actor, idempotency?.once(200)),
  }),
  route({
    id: 'payouts.batches.paid',
    method: 'POST',
    path: '/payouts/batches/{id}/paid',
    auth: 'manage_options',
    description: 'Mark every item of the batch still pending paid (optional reference).',
    validate: { params: payoutSchemas.batchId, payload: payoutSchemas.batchPaid },
    handler: ({ params, payload, actor }, ctx) => ctx.payoutBatches.markPaid(params.id, payload, actor),
  }),
  route({
    id: 'payouts.batches.results',
    method: 'POST',
    path: '/payouts/batches/{id}/results',
    auth: 'manage_options',
    description:
      "Apply a result CSV (item_ref or payout_id, status paid|failed, reference, reason) or a SEPA batch's pain.002 status report: paid items close paid, failed ones are cancelled and credited back, once each.",
    validate: { params: payoutSchemas.batchId, payload: payoutSchemas.batchResults },
    handler: ({ params, payload, actor }, ctx) => ctx.payoutBatches.applyUpload(params.id, payload, actor),
  }),
  route({
    id: 'payouts.batches.cancel',
    method: 'POST',
    path: '/payouts/batches/{id}/cancel',
    auth: 'manage_options',
    description: 'Cancel a batch not yet sent: its payouts leave it, still pending.',
    validate: { params: payoutSchemas.batchId, payload: none() },
    handler: ({ params, actor }, ctx) => ctx.payoutBatches.cancel(params.id, actor),
  }),
];
