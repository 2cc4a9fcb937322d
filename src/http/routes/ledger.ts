// Member balances and ledger entries: /ledger/members, /ledger/entries, adjustments and reversals.
import { ledgerSchemas } from '../../services/ledger/schemas.js';
import { none } from '../../fields.js';
import { created, PagedResult, route, type RouteDef } from '../rest/types.js';

export const ledgerRoutes: RouteDef[] = [
  route({
    id: 'ledger.members',
    method: 'GET',
    path: '/ledger/members',
    auth: 'manage_options',
    description: 'Balances per member and currency.',
    validate: { query: ledgerSchemas.members },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.ledger.listMembers(query);
      return new PagedResult(items, total, query.page, query.per_page);
    },
  }),
  route({
    id: 'ledger.entries',
    method: 'GET',
    path: '/ledger/entries',
    auth: 'manage_options',
    description: "One member's ledger, newest first.",
    validate: { query: ledgerSchemas.entries },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.ledger.listEntries(query);
      return new PagedResult(items, total, query.page, query.per_page);
    },
  }),
  route({
    id: 'ledger.entry',
    method: 'GET',
    path: '/ledger/entries/{id}',
    auth: 'manage_options',
    description: 'One ledger entry.',
    validate: { params: ledgerSchemas.entryId, query: none() },
    handler: ({ params }, ctx) => ctx.ledger.getEntry(params.id),
  }),
  route({
    id: 'ledger.adjust',
    location: ({ entry }) => `/ledger/entries/${entry.id}`,
    method: 'POST',
    path: '/ledger/adjustments',
    auth: 'manage_options',
    idempotent: true,
    description: 'Credit or debit a member.',
    validate: { payload: ledgerSchemas.adjustment },
    async handler({ payload, actor, idempotency }, ctx) {
      return created(await ctx.ledger.adjust(payload, actor, idempotency?.once(201)));
    },
  }),
  route({
    id: 'ledger.reverse',
    location: ({ reversal }) => `/ledger/entries/${reversal.id}`,
    method: 'POST',
    path: '/ledger/entries/{id}/reverse',
    auth: 'manage_options',
    idempotent: true,
    description: 'Reverse an entry (not a payout, not a reversal, at most once).',
    validate: { params: ledgerSchemas.entryId, payload: ledgerSchemas.reverse },
    async handler({ params, payload, actor, idempotency }, ctx) {
      return created(await ctx.ledger.reverse(params.id, payload.note ?? null, actor, idempotency?.once(201)));
    },
  }),
];
