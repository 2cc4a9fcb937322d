// Input schemas of the ledger routes, shared with `cashtrack ledger ...`.
import Joi from 'joi';
import { amount, anyOf, anyOfPattern, currency, dateRange, id, note, paging, sorting, type ListQuery, lazySchemas } from '../../fields.js';
import { ENTRY_ORDERBY, type EntryFilters, type EntryOrderby, type LedgerService, type MemberFilters } from './index.js';
import { ENTRY_TYPES } from './rows.js';

/** What the member balances can be ordered by. */
export const MEMBER_ORDERBY = ['available', 'pending', 'name', 'last_entry_at'] as const;

export type { EntryFilters };
export { ENTRY_ORDERBY, ENTRY_TYPES };
/** A credit or debit by an administrator. */
export type AdjustmentInput = Parameters<LedgerService['adjust']>[0];

/** Input schemas, shared with `cashtrack ledger ...`. */
export const ledgerSchemas = lazySchemas(() => ({
  members: Joi.object<MemberFilters, true>({
    ...paging,
    member_id: id().description("Only this member's balances (one row per currency)."),
    search: Joi.string().max(191).description('Prefix of the login, email or display name.'),
    currency: currency(),
    min_balance: amount().description('Only members whose available balance is at least this.'),
    orderby: Joi.string()
      .valid(...MEMBER_ORDERBY)
      .default('available'),
    order: Joi.string().valid('asc', 'desc').description('Default: desc (asc for name).'),
  }),
  entries: Joi.object<ListQuery<EntryFilters>, true>({
    ...paging,
    ...sorting(Object.keys(ENTRY_ORDERBY) as EntryOrderby[], 'id', 'desc'),
    member_id: id().required().description('The member whose ledger to list.'),
    type: anyOf(ENTRY_TYPES).description('Only entries of one of these types (comma-separated or an array).'),
    type_exclude: anyOf(ENTRY_TYPES).description('Only entries of none of these types.'),
    currency: anyOfPattern(currency(), 20).description('Only these currencies (comma-separated or an array).'),
    ...dateRange('entries posted (created_at)'),
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
}));
