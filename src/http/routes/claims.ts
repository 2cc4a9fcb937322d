// Missing-cashback claims: list (filters, orderby) and counts per status, one claim and its
// receipt image, a new claim (matched, filed with the network or left open), an administrator's
// change (note, decline with a reason, match to an order), and POST /claims/poll (a poll job: 202).
import { none } from '../../fields.js';
import { claimSchemas } from '../../services/claims/schemas.js';
import { accepted, created, PagedResult, RestResponse, route, type RouteDef } from '../rest/types.js';

export const claimsRoutes: RouteDef[] = [
  route({
    id: 'claims.list',
    method: 'GET',
    path: '/claims',
    auth: 'manage_options',
    description: 'Claims, newest first (orderby, order), filtered.',
    validate: { query: claimSchemas.list },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.claims.list(query);
      return new PagedResult(items, total, query.page, query.per_page);
    },
  }),
  route({
    id: 'claims.counts',
    method: 'GET',
    path: '/claims/counts',
    auth: 'manage_options',
    description: "Claims per status under the list's other filters: {total, statuses} (the views row).",
    validate: { query: claimSchemas.counts },
    handler: ({ query }, ctx) => ctx.claims.counts(query),
  }),
  route({
    id: 'claims.get',
    method: 'GET',
    path: '/claims/{id}',
    auth: 'manage_options',
    description: 'One claim.',
    validate: { params: claimSchemas.claimId, query: none() },
    handler: ({ params }, ctx) => ctx.claims.get(params.id),
  }),
  route({
    id: 'claims.receipt',
    method: 'GET',
    path: '/claims/{id}/receipt',
    auth: 'manage_options',
    description: "The claim's receipt image as base64 (administrators only; never on the public media path).",
    validate: { params: claimSchemas.claimId, query: none() },
    handler: ({ params }, ctx) => ctx.claims.receiptOf(params.id),
  }),
  route({
    id: 'claims.create',
    location: (claim) => `/claims/${claim.id}`,
    method: 'POST',
    path: '/claims',
    auth: 'manage_options',
    idempotent: true,
    description:
      "Take a member's claim: matched to an order we hold, else filed with the network, else left open (200 with duplicate: true for the same member, shop and order reference).",
    validate: { payload: claimSchemas.create },
    async handler({ payload, actor, idempotency }, ctx) {
      const claim = await ctx.claims.create(
        payload,
        actor,
        idempotency?.once((c: { duplicate: boolean }) => (c.duplicate ? 200 : 201)),
      );
      return claim.duplicate ? new RestResponse(claim, 200) : created(claim);
    },
  }),
  route({
    id: 'claims.update',
    method: 'POST',
    path: '/claims/{id}',
    auth: 'manage_options',
    description: 'Change a claim: its note, a decline with the reason, or a match to an order.',
    validate: { params: claimSchemas.claimId, payload: claimSchemas.update },
    handler: ({ params, payload, actor }, ctx) => ctx.claims.update(params.id, payload, actor),
  }),
  route({
    id: 'claims.poll',
    method: 'POST',
    path: '/claims/poll',
    auth: 'manage_options',
    description: "Start a claims poll job: the networks' answers, deadlines (202 with the job).",
    validate: { payload: none() },
    handler: async ({ actor }, ctx) => accepted(await ctx.claims.startPoll(actor)),
  }),
];
