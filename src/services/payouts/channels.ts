// How a batch's payouts leave: a channel per way of paying. File channels (CSV here; SEPA's
// pain.001 in sepa.ts) make the file finance downloads and imports into its bank or tool; an API
// channel (PayPal Payouts, paypal.ts) sends the items itself. The batch service knows channels
// only through this seam: `check` holds an item out of a batch (a bad IBAN), `file` writes one
// (async: SEPA's needs the site's debtor account from the settings), and an API channel's `send`
// and `status` hand the items to the provider and read back what became of them.
import { csvText } from '../../csv-cells.js';
import { ServiceError } from '../../errors.js';

/** One payout as a channel sees it. */
export interface BatchItem {
  payout_id: number;
  member_id: number;
  login: string;
  display_name: string;
  amount: string;
  amount_minor: number;
  currency: string;
  method: string;
  details: string | null;
  /** our id for the item, unique forever: `${batchId}-${payoutId}` */
  item_ref: string;
}

/** What became of one item, from a provider's answer or an uploaded result file. */
export interface ItemResult {
  item_ref: string;
  outcome: 'paid' | 'failed' | 'pending';
  reference?: string | null;
  reason?: string | null;
}

export type ChannelName = 'csv' | 'sepa' | 'paypal';

/** A batch's file: what finance downloads and imports into its bank or tool. */
export interface BatchFile {
  name: string;
  type: string;
  body: string;
}

/** What a provider said of a batch: its own id and status. */
export interface ProviderBatch {
  provider_batch_id: string;
  provider_status: string;
}

export interface PayoutChannel {
  name: ChannelName;
  /** null if the item can go, else why it is held out of the batch (e.g. a bad IBAN). */
  check(item: BatchItem): string | null;
  /** file channels: the file finance downloads (made at creation too: a batch whose file cannot be made is not made) */
  file?(batch: { id: number; created_at: string; currency: string }, items: BatchItem[]): Promise<BatchFile>;
  /**
   * API channels: hands the batch to the provider. Sending the same batch again must never pay
   * twice (the provider knows the batch by an id made from ours) and answers the same provider batch.
   */
  send?(batch: { id: number; currency: string }, items: BatchItem[]): Promise<ProviderBatch>;
  /** API channels: the provider's status of a batch sent, and each item's result. */
  status?(providerBatchId: string): Promise<ProviderBatch & { results: ItemResult[] }>;
}

/** The channels other than CSV that are installed (src/context.ts installs SEPA and PayPal). */
export type ExtraChannels = Partial<Record<'sepa' | 'paypal', PayoutChannel>>;

/** Our id for a batch item: unique forever, so a provider never confuses two sends of one payout. */
export const itemRef = (batchId: number, payoutId: number): string => `${batchId}-${payoutId}`;

/** The columns of a batch's CSV file, in order. */
export const CSV_COLUMNS = ['item_ref', 'payout_id', 'member_id', 'login', 'name', 'amount', 'currency', 'method', 'details'] as const;

/**
 * Any method without a channel of its own: an RFC 4180 CSV (through `csvText`, whose formula
 * guard neutralises a member's `=HYPERLINK(...)` name), one row per item.
 */
export const csvChannel: PayoutChannel = {
  name: 'csv',
  check: () => null,
  async file(batch, items) {
    const rows = items.map((i) => [i.item_ref, i.payout_id, i.member_id, i.login, i.display_name, i.amount, i.currency, i.method, i.details ?? '']);
    return { name: `payout-batch-${batch.id}.csv`, type: 'text/csv; charset=utf-8', body: csvText(CSV_COLUMNS, rows) };
  },
};

/**
 * The channel of a batch's method: `paypal` goes through the PayPal API, `sepa` (EUR only) as a
 * pain.001 file, any other method as CSV. 409 svc_payout_channel_currency for SEPA in another
 * currency; 409 svc_payout_channel_unavailable when the channel is not installed.
 */
export function channelFor(method: string, currency: string, extra: ExtraChannels = {}): PayoutChannel {
  const m = method.trim().toLowerCase();
  if (m !== 'paypal' && m !== 'sepa') return csvChannel;
  if (m === 'sepa' && currency !== 'EUR')
    throw new ServiceError('svc_payout_channel_currency', `SEPA credit transfers are in EUR only; these payouts are in ${currency}.`, 409, {
      method,
      currency,
    });
  const channel = extra[m];
  if (!channel)
    throw new ServiceError('svc_payout_channel_unavailable', `Batches of ${m} payouts are not possible: the ${m} channel is not installed.`, 409, {
      method,
      channel: m,
    });
  return channel;
}
