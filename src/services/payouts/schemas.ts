// Input schemas of the payout routes, shared with `cashtrack payouts ...`.
import Joi from 'joi';
import { amount, currency, id, note, paging } from '../../fields.js';
import { PAYOUT_STATUSES, type CreatePayoutInput, type PayoutFilters } from './index.js';

export { PAYOUT_STATUSES };

/** Input schemas, shared with `cashtrack payouts ...`. */
export const payoutSchemas = {
  list: Joi.object<PayoutFilters, true>({
    ...paging,
    status: Joi.string().valid(...PAYOUT_STATUSES),
    member_id: id().description('Only this member.'),
    currency: currency(),
  }),
  create: Joi.object<CreatePayoutInput, true>({
    member_id: id().required(),
    amount: amount().required().description('Decimal string in the currency, e.g. "25.00".'),
    currency: currency(),
    method: Joi.string().trim().min(1).max(64).required().description('How the money is sent, e.g. paypal or bank_transfer.'),
    details: Joi.string().trim().max(1000).allow('', null).description('Where it is sent (PayPal address, IBAN...). Shown to administrators, never logged.'),
    note: note().allow('', null),
  }),
  complete: Joi.object<{ reference?: string | null }, true>({
    reference: Joi.string().trim().max(191).allow('', null).description("The payment's reference, e.g. the PayPal transaction id."),
  }),
  cancel: Joi.object<{ reason: string }, true>({ reason: note().min(1).required().description('Why it is cancelled; the amount is credited back.') }),
  payoutId: Joi.object<{ id: number }, true>({ id: id().required() }),
};
