// Member balances and ledger entries: /ledger/members, /ledger/entries, adjustments and reversals.
import Joi from 'joi';
import { ENTRY_TYPES } from '../../services/ledger/index.js';
import { paging } from '../rest/schema.js';
import { created, PagedResult, type RouteDef } from '../rest/types.js';

const amount = Joi.string().max(40).description('Decimal string in the currency, e.g. "12.50".');
const currency = Joi.string().pattern(/^[A-Z]{3}$/).description('ISO 4217 code (default: the site currency).');
const note = Joi.string().trim().max(500);

/** Input schemas, shared with `cashtrack ledger ...`. */
export const ledgerSchemas = {
  members: Joi.object({
    ...paging,
    search: Joi.string().max(191).description('Prefix of the login, email or display name.'),
    currency,
    min_balance: amount.description('Only members whose available balance is at least this.'),
    orderby: Joi.string().valid('available', 'pending', 'name', 'last_entry_at').default('available'),
    order: Joi.string().valid('asc', 'desc').description('Default: desc (asc for name).'),
  }),
  entries: Joi.object({
    ...paging,
    member_id: Joi.number().integer().min(1).required().description('The member whose ledger to list.'),
    type: Joi.string().valid(...ENTRY_TYPES),
    currency,
  }),
  adjustment: Joi.object({
    member_id: Joi.number().integer().min(1).required(),
    type: Joi.string().valid('credit', 'debit').required(),
    amount: amount.required(),
    currency,
    note: note.min(1).required().description('Who asked for it and why.'),
    allow_negative: Joi.boolean().default(false).description('Let a debit take the balance below zero.'),
  }),
  reverse: Joi.object({ note: note.allow('') }),
  entryId: Joi.object({ id: Joi.number().integer().min(1).max(Number.MAX_SAFE_INTEGER).required() }),
};

export const ledgerRoutes: RouteDef[] = [
  {
    id: 'ledger.members',
    method: 'GET',
    path: '/ledger/members',
    auth: 'manage_options',
    description: 'Balances per member and currency.',
    validate: { query: ledgerSchemas.members },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.ledger.listMembers(query as never);
      return new PagedResult(items, total, query.page, query.per_page);
    },
  },
  {
    id: 'ledger.entries',
    method: 'GET',
    path: '/ledger/entries',
    auth: 'manage_options',
    description: "One member's ledger, newest first.",
    validate: { query: ledgerSchemas.entries },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.ledger.listEntries(query as never);
      return new PagedResult(items, total, query.page, query.per_page);
    },
  },
  {
    id: 'ledger.entry',
    method: 'GET',
    path: '/ledger/entries/{id}',
    auth: 'manage_options',
    description: 'One ledger entry.',
    validate: { params: ledgerSchemas.entryId, query: Joi.object({}) },
    handler: ({ params }, ctx) => ctx.ledger.getEntry(params.id),
  },
  {
    id: 'ledger.adjust',
    method: 'POST',
    path: '/ledger/adjustments',
    auth: 'manage_options',
    idempotent: true,
    description: 'Credit or debit a member.',
    validate: { payload: ledgerSchemas.adjustment },
    async handler({ payload, actor, idempotency }, ctx) {
      return created(await ctx.ledger.adjust(payload as never, actor, idempotency?.once(201)));
    },
  },
  {
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
  },
];
