// The SEPA channel of payout batches: an item goes when `sepaDestination` finds a usable IBAN (else
// it is held out of the batch with the reason), and the batch's file is the pain.001 from the
// site's debtor account (SepaSettingsStore; 409 svc_sepa_not_configured while it is not set, at
// creation too, so no SEPA batch is made that has no file). The bank's pain.002 answer comes back
// through PayoutBatchService.applyReport.
import type { PayoutChannel } from './channels.js';
import { pain001, sepaDestination, sepaMessageId } from './sepa.js';
import type { SepaSettingsStore } from './sepa-settings.js';

export function sepaChannel(settings: Pick<SepaSettingsStore, 'debtor'>): PayoutChannel {
  return {
    name: 'sepa',
    check(item) {
      const to = sepaDestination(item);
      return 'reason' in to ? to.reason : null;
    },
    async file(batch, items) {
      const { debtor, version } = await settings.debtor();
      return {
        name: `${sepaMessageId(batch.id).toLowerCase()}.xml`,
        type: 'application/xml; charset=utf-8',
        body: pain001({ id: batch.id, created_at: batch.created_at }, debtor, items, version),
      };
    },
  };
}
