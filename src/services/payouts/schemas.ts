// Input schemas of the payout routes, shared with `cashtrack payouts ...`.
import Joi from 'joi';
import { amount, anyOf, anyOfPattern, currency, dateRange, dateTime, id, idList, note, paging, sorting, type ListQuery, lazySchemas } from '../../fields.js';
import {
  BATCH_ORDERBY,
  BATCH_STATUSES,
  MAX_BATCH_ITEMS,
  PAYOUT_ORDERBY,
  PAYOUT_STATUSES,
  type BatchFilters,
  type BatchOrderby,
  type CreateBatchInput,
  type CreatePayoutInput,
  type PayoutCountFilters,
  type PayoutFilters,
  type PayoutOrderby,
} from './index.js';

export { BATCH_ORDERBY, BATCH_STATUSES, PAYOUT_ORDERBY, PAYOUT_STATUSES };

const method = () => Joi.string().trim().min(1).max(64);

/** The list's filters other than the status ones: the counts per status take the same. */
const listFilters = {
  member_id: id().description('Only this member.'),
  currency: anyOfPattern(currency(), 20).description('Only these currencies (comma-separated or an array).'),
  method: anyOfPattern(method(), 20).description('Only these methods (comma-separated or an array).'),
  ...dateRange('payouts requested (created_at)'),
};

/** Input schemas, shared with `cashtrack payouts ...`. */
export const payoutSchemas = lazySchemas(() => ({
  list: Joi.object<ListQuery<PayoutFilters>, true>({
    ...paging,
    ...sorting(Object.keys(PAYOUT_ORDERBY) as PayoutOrderby[], 'id', 'desc'),
    status: anyOf(PAYOUT_STATUSES).description('Only payouts in one of these statuses (comma-separated or an array).'),
    status_exclude: anyOf(PAYOUT_STATUSES).description('Only payouts in none of these statuses.'),
    ...listFilters,
  }),
  counts: Joi.object<ListQuery<PayoutCountFilters>, true>(listFilters),
  create: Joi.object<CreatePayoutInput, true>({
    member_id: id().required(),
    amount: amount().required().description('Decimal string in the currency, e.g. "25.00".'),
    currency: currency(),
    method: method().required().description('How the money is sent, e.g. paypal or bank_transfer.'),
    details: Joi.string().trim().max(1000).allow('', null).description('Where it is sent (PayPal address, IBAN...). Shown to administrators, never logged.'),
    note: note().allow('', null),
  }),
  complete: Joi.object<{ reference?: string | null }, true>({
    reference: Joi.string().trim().max(191).allow('', null).description("The payment's reference, e.g. the PayPal transaction id."),
  }),
  cancel: Joi.object<{ reason: string }, true>({ reason: note().min(1).required().description('Why it is cancelled; the amount is credited back.') }),
  payoutId: Joi.object<{ id: number }, true>({ id: id().required() }),
  paypalSettings: Joi.object<Record<string, string | null>, true>()
    .pattern(/^[a-z_]{1,64}$/, Joi.alternatives(Joi.string().max(4096).allow(''), Joi.valid(null)))
    .min(1)
    .description(
      'PayPal Payouts settings by name: client_id, client_secret (write-only), environment (sandbox or live), base_url (an override of the environment\'s API origin); null or "" removes one.',
    ),
  batchId: Joi.object<{ id: number }, true>({ id: id().required() }),
  batchList: Joi.object<ListQuery<BatchFilters>, true>({
    ...paging,
    ...sorting(Object.keys(BATCH_ORDERBY) as BatchOrderby[], 'id', 'desc'),
    status: anyOf(BATCH_STATUSES).description('Only batches in one of these statuses.'),
    method: anyOfPattern(method(), 20).description('Only these methods.'),
    currency: anyOfPattern(currency(), 20).description('Only these currencies.'),
  }),
  batchCreate: Joi.object<CreateBatchInput, true>({
    payout_ids: idList(MAX_BATCH_ITEMS).description('These payouts (all pending, of one method and currency); else the filters choose.'),
    method: method().description('Only payouts of this method (required without payout_ids).'),
    currency: currency().description('Only payouts in this currency (default: the site currency).'),
    member_id: id().description("Only this member's payouts."),
    before: dateTime().description('Only payouts requested strictly before this instant (ISO 8601).'),
    max_items: Joi.number()
      .integer()
      .min(1)
      .max(MAX_BATCH_ITEMS)
      .description(`At most this many payouts, oldest first (default 1000, at most ${MAX_BATCH_ITEMS}).`),
    override: idList(MAX_BATCH_ITEMS).description('Payouts held for a shared destination to put in anyway (needs override_note).'),
    override_note: note().allow('', null).description('Why the held payouts in `override` may go (logged).'),
    note: note().allow('', null).description('A note for administrators.'),
  }).or('payout_ids', 'method'),
  batchPaid: Joi.object<{ reference?: string | null }, true>({
    reference: Joi.string().trim().max(191).allow('', null).description("The payment's reference (the bank's transfer reference)."),
  }),
  batchResults: Joi.object<{ csv?: string; pain002?: string }, true>({
    csv: Joi.string()
      .min(1)
      .max(5_000_000)
      .description('The result CSV: item_ref or payout_id, status (paid|failed), reference, reason (an XML document here is read as a pain.002).'),
    pain002: Joi.string().min(1).max(10_485_760).description("The bank's pain.002 status report (XML) on a SEPA batch's file."),
  }).xor('csv', 'pain002'),
}));
