// Member balances and ledger entries: /ledger/members, /ledger/entries, adjustments and reversals.
import Joi from 'joi';
import { ENTRY_TYPES, type LedgerService, type MemberFilters } from '../../services/ledger/index.js';
import { amount, currency, id, none, note, paging } from '../../fields.js';
import { created, PagedResult, route, type RouteDef } from '../rest/types.js';

/** What `GET /ledger/entries` and `cashtrack ledger entries` ask the service for. */
export type EntryFilters = Parameters<LedgerService['listEntries']>[0];
/** A credit or debit by an administrator. */
export type AdjustmentInput = Parameters<LedgerService['adjust']>[0];

/** Input schemas, shared with `cashtrack ledger ...`. */
export const ledgerSchemas = {
  members: Joi.object<MemberFilters, true>({
    ...paging,
    search: Joi.string().max(191).description('Prefix of the login, email or display name.'),
    currency: currency(),
    min_balance: amount().description('Only members whose available balance is at least this.'),
    orderby: Joi.string().valid('available', 'pending', 'name', 'last_entry_at').default('available'),
    order: Joi.string().valid('asc', 'desc').description('Default: desc (asc for name).'),
  }),
  entries: Joi.object<EntryFilters, true>({
    ...paging,
    member_id: id().required().description('The member whose ledger to list.'),
    type: Joi.string().valid(...ENTRY_TYPES),
    currency: currency(),
  }),
  adjustment: Joi.object<AdjustmentInput, true>({
    member_id: id().required(),
    type: Joi.string().valid('credit', 'debit').required(),
    amount: amount().required(),
    currency: currency(),
    note: note().min(1).required().description('Who asked for it and why.'),
    allow_negative: Joi.boolean().default(false).description('Let a debit take the balance below zero.'),
  }),
  reverse: Joi.object<{ note?: string }, true>({ note: note().allow('') }),
  entryId: Joi.object<{ id: number }, true>({ id: id().required() }),
};

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
