// The PayPal channel of payout batches: each item goes to the member's PayPal e-mail address (the
// payout's details; anything else is held out of the batch with the reason), the batch is sent
// once through the Payouts API (paypal.ts) and its items are read back until each is final.
//
// Never twice: the PayPal batch is known by `sender_batch_id` = `cashtrack-batch-<id>`, and the
// create request carries PayPal-Request-Id = the same stable id, so a send repeated for any reason
// (a retry after a dropped connection, a second click, a restart) either gets PayPal's first answer
// back or PayPal's "sender_batch_id already used", which the client follows to the first batch.
import Joi from 'joi';
import { ServiceError } from '../../errors.js';
import type { PayoutChannel } from './channels.js';
import type { PayPalSettings } from './paypal-settings.js';
import { toItemResults } from './paypal.js';

/** The PayPal sender_batch_id (and PayPal-Request-Id) of our batch: stable, so PayPal pays a batch once. */
export const paypalSenderBatchId = (batchId: number): string => `cashtrack-batch-${batchId}`;

const EMAIL = Joi.string().max(127).email({ tlds: false });

/** The receiver of an item, or why there is none. */
export function paypalReceiver(details: string | null): { receiver: string } | { reason: string } {
  const text = details?.trim();
  if (!text) return { reason: 'The payout has no payment details: give the PayPal e-mail address.' };
  if (EMAIL.validate(text).error) return { reason: 'The payment details are not a PayPal e-mail address (at most 127 characters).' };
  return { receiver: text };
}

export function paypalChannel(settings: Pick<PayPalSettings, 'client'>): PayoutChannel {
  return {
    name: 'paypal',
    check(item) {
      const to = paypalReceiver(item.details);
      return 'reason' in to ? to.reason : null;
    },
    async send(batch, items) {
      const payItems = items.map((i) => {
        const to = paypalReceiver(i.details);
        // The batch held such an item out when it was made; its details were changed since.
        if ('reason' in to)
          throw new ServiceError('svc_paypal_item_invalid', `Payout ${i.payout_id} cannot go by PayPal: ${to.reason}`, 409, { payout_id: i.payout_id });
        return { sender_item_id: i.item_ref, receiver: to.receiver, amount: { value: i.amount, currency: i.currency }, note: `Payout ${i.payout_id}` };
      });
      const client = await settings.client();
      const id = paypalSenderBatchId(batch.id);
      const created = await client.createBatch(id, payItems, { requestId: id, emailSubject: 'You have a payout' });
      return { provider_batch_id: created.payout_batch_id, provider_status: created.batch_status };
    },
    async status(providerBatchId) {
      const client = await settings.client();
      const read = await client.readBatch(providerBatchId);
      return { provider_batch_id: providerBatchId, provider_status: read.batch_status, results: toItemResults(read.items) };
    },
  };
}
