// Members' payouts: /payouts (list, create), /payouts/{id}, and the two ways a payout closes.
import Joi from 'joi';
import { amount, currency, id, none, note, paging } from '../../fields.js';
import { PAYOUT_STATUSES, type CreatePayoutInput, type PayoutFilters } from '../../services/payouts/index.js';
import { created, PagedResult, route, type RouteDef } from '../rest/types.js';

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
  complete: Joi.object<{ reference?: string | null }, true>({ reference: Joi.string().trim().max(191).allow('', null).description("The payment's reference, e.g. the PayPal transaction id.") }),
  cancel: Joi.object<{ reason: string }, true>({ reason: note().min(1).required().description('Why it is cancelled; the amount is credited back.') }),
  payoutId: Joi.object<{ id: number }, true>({ id: id().required() }),
};

export const payoutsRoutes: RouteDef[] = [
  route({
    id: 'payouts.list',
    method: 'GET',
    path: '/payouts',
    auth: 'manage_options',
    description: 'Payouts, newest first.',
    validate: { query: payoutSchemas.list },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.payouts.list(query);
      return new PagedResult(items, total, query.page, query.per_page);
    },
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
];
