import type { OutboundGuard } from '../outbound/index.js';
import type { PaymentsMapping } from './custom-definition.js';

// What every network module provides, built-in (Awin, Admitad, impact.com) or custom (data). The
// services (advertiser sync, order polling, postbacks, coupons) speak only this interface.

/** A programme the site has joined, as the network describes it (ids are strings). */
export interface NetworkAdvertiser {
  id: string;
  name: string;
  domain: string | null;
  site_url: string | null;
  logo_url: string | null;
  /** Deeplink template of the network for this advertiser, if it gives one. */
  tracking_template: string | null;
  /** Commission as the network states it: decimal strings; percent values without the % sign. */
  commission: { type: 'percent' | 'flat' | 'mixed'; min: string | null; max: string | null; currency: string | null } | null;
  categories: string[];
  countries: string[];
  status: 'active' | 'inactive';
  validation_days: number | null;
  /** The network's own record, for the raw column (secrets never appear in it). */
  raw: unknown;
}

export type TransactionStatus = 'pending' | 'approved' | 'declined';

/** One conversion as a network reports it, normalised. Amounts are decimal strings. */
export interface NetworkTransaction {
  transaction_id: string;
  status: TransactionStatus;
  advertiser_id: string | null;
  merchant_ref: string | null;
  sub_id: string | null;
  /** The member fallback field beside a click id (Awin clickRef2, Admitad subid1, impact.com SubId2), when the module reads one. */
  member_ref?: string | null;
  sale_amount: string;
  commission: string;
  currency: string;
  clicked_at: Date | null;
  event_at: Date | null;
  /** The network says it has paid this transaction to us (Awin's paidToPublisher, impact.com's past ClearedDate, a custom feed's paid fields). */
  payment?: Omit<NetworkPaymentLine, 'transaction_id' | 'raw'> | null;
  raw: unknown;
}

/** One transaction a network paid us under one payment. Amounts are decimal strings. */
export interface NetworkPaymentLine {
  transaction_id: string;
  payment_id: string;
  /** When the network paid it (null: unknown, the time it was read). */
  paid_at: Date | null;
  /** What was paid for the transaction, when the network says it, with its currency. */
  amount?: string | null;
  currency?: string | null;
  raw?: unknown;
}

/** A missing-cashback claim as a network's claim channel files it. Amounts are decimal strings. */
export interface NetworkClaim {
  /** Our claim id, sent as the network's "your own reference" field where it has one. */
  reference: string;
  advertiser_id: string;
  order_ref: string;
  purchased_at: Date;
  amount: string;
  currency: string;
  /** The commission the site expects (the advertiser's rate applied), when known. */
  expected_commission: string | null;
  /** The member, as the customer reference (an id, never a name or an address). */
  customer_ref: string;
  click_ref: string | null;
  /** When the member clicked (the claim's click, on file), or null. */
  clicked_at: Date | null;
  note: string | null;
  receipt: { data: Buffer; type: string; filename: string } | null;
}

/** The network's word on a filed claim. */
export interface ClaimAnswer {
  /** The network's own reference of the claim (its inquiry or lost-order id). */
  network_ref: string;
  /** Our reference of the claim, when the answer was found by it rather than by `network_ref`. */
  reference?: string;
  /** `submitted`: not decided yet; `incomplete`: the network wants more from support. */
  status: 'submitted' | 'approved' | 'declined' | 'incomplete';
  /** The network's status word, as it said it. */
  network_status: string;
  /** Why it was declined (or is incomplete), in the network's words. */
  reason: string | null;
  /** The transaction the network created for an approved claim, when it says. */
  transaction_id: string | null;
  /** The network's own resolution deadline, when it gives one. */
  deadline: Date | null;
}

/** A filed claim whose answer is to be read. */
export interface FiledClaim {
  reference: string;
  network_ref: string | null;
  advertiser_id: string;
  order_ref: string;
  purchased_at: Date;
  submitted_at: Date;
}

/**
 * A network's claim channel: an API that takes one claim at a time (`submit`), or a batch upload
 * file (`exportFile`) the site sends in by hand or FTP; `answers` reads what the network decided.
 */
export interface ClaimChannel {
  kind: 'api' | 'file';
  /** The channel refuses a claim without a receipt (Admitad). */
  needsReceipt?: boolean;
  submit?(rt: ModuleRuntime, claim: NetworkClaim): Promise<ClaimAnswer>;
  exportFile?(settings: ModuleSettings, claims: NetworkClaim[]): { filename: string; contentType: string; body: string; references: string[] };
  /** The answers to these filed claims; a claim the network says nothing of yet is left out. */
  answers(rt: ModuleRuntime, claims: FiledClaim[]): Promise<ClaimAnswer[]>;
}

export const DISCOUNT_TYPES = ['percent', 'amount', 'free_shipping', 'other'] as const;
export type DiscountType = (typeof DISCOUNT_TYPES)[number];

/**
 * One coupon or deal as a network lists it, normalised. Text may still carry the network's HTML
 * (the coupon service turns it into plain text); dates are instants (each module knows its
 * network's zone).
 */
export interface NetworkCoupon {
  id: string;
  advertiser_id: string;
  /** The code to type at checkout; null or '' for a deal. */
  code: string | null;
  title: string;
  description: string | null;
  terms?: string | null;
  /** The discount as the network states it: a decimal string value, percent without the % sign. */
  discount?: { type: DiscountType; value: string | null; currency: string | null; text: string | null } | null;
  /** The landing page at the advertiser (the site wraps it in its own tracking link). */
  url: string | null;
  /** The network's own (untagged) link for the coupon, kept for reference. */
  tracking_url?: string | null;
  starts_at: Date | null;
  ends_at: Date | null;
  exclusive?: boolean;
  /** ISO-3166 alpha-2 codes; empty: everywhere. */
  regions?: string[];
  raw: unknown;
}

/** Where a coupon walk starts, and whether it lists only what changed. */
export interface CouponWalk {
  after: string | null;
  updatedSince: Date | null;
}

/** One page of a list, with where the list goes on after it. */
export interface ListPage<T> {
  items: T[];
  /** The module's own position of the next page (an offset, a page number), or null after the last page. */
  next: string | null;
}

/** The raw fields a postback carries, before status mapping and amount parsing. */
export interface PostbackFields {
  transaction_id?: string;
  status?: string;
  sale_amount?: string;
  commission?: string;
  currency?: string;
  sub_id?: string;
  /** The member fallback field (see `NetworkTransaction.member_ref`). */
  member_ref?: string;
  advertiser_id?: string;
  merchant_ref?: string;
  event_time?: string;
}

export interface ConfigKey {
  name: string;
  description: string;
  required: boolean;
  /** Write-only: never returned by an API or printed by the CLI; redacted from logs. */
  secret: boolean;
  /** The value used when the setting is unset. */
  default?: string;
  /**
   * A URL the secret settings are sent to: they are bound to its origin, so a change of origin must
   * give them again (services/networks/settings.ts), or a changed base URL would carry the token
   * to whatever host it names.
   */
  binds_secrets?: boolean;
}

/** A module's settings (credentials, ids, base URL), as configured. */
export type ModuleSettings = Record<string, string | undefined>;

export interface ModuleRuntime {
  settings: ModuleSettings;
  /**
   * The exact values of this network's secret settings: kept out of every error message and
   * excerpt the module makes, wherever they travel in a request (header, path, any parameter).
   */
  secrets?: readonly string[];
  /** Makes a secret the module obtained at run time (an access token) one the process scrubs too. */
  addSecret?(value: string): void;
  /** Aborts a long sync or poll (job cancelled, daemon stopping). */
  signal?: AbortSignal;
  /**
   * The outbound guard a module fetches URLs that someone other than its authors chose through
   * (a custom network's feeds). Without it, a strict guard: nothing private, ports 80 and 443.
   */
  outbound?: OutboundGuard;
  /**
   * Told how many records the walk under way (an advertiser list, a transaction window) holds in
   * all, as soon as the network says: with the first page of a paged list, or the list itself when
   * it comes whole. A walk over several windows tells it once it reaches the last window,
   * counting the records of the windows before. Records the module drops as unreadable are
   * counted. Set by the sync and the poll (their jobs' `progress.total`); absent otherwise.
   */
  setTotal?(total: number): void;
  now(): Date;
  log(level: 'debug' | 'info' | 'warning' | 'error', message: string, context?: Record<string, unknown>): void;
}

export interface NetworkModule {
  id: string;
  name: string;
  /** The currency a network reports in when a record names none. */
  defaultCurrency: string;
  configKeys: ConfigKey[];
  isConfigured(settings: ModuleSettings): boolean;
  /** Joined programmes, a page at a time (pages as the network pages them). */
  listAdvertisers(rt: ModuleRuntime): AsyncIterable<NetworkAdvertiser[]>;
  /**
   * The same pages, each with the position of the page after it, starting at `after` (a `next`
   * from an earlier walk; null: the beginning), so an interrupted sync asks only for what it has
   * not stored. Modules that get the whole list in one request have none: a resumed sync walks
   * their list again and skips the pages it stored.
   */
  listAdvertisersFrom?(rt: ModuleRuntime, after: string | null): AsyncIterable<ListPage<NetworkAdvertiser>>;
  getAdvertiser(rt: ModuleRuntime, id: string): Promise<NetworkAdvertiser | null>;
  /** Transactions changed or created in [from, to), split into windows the network allows. */
  listTransactions(rt: ModuleRuntime, window: { from: Date; to: Date }): AsyncIterable<NetworkTransaction[]>;
  /** The widest window one request may ask for, and how far back the network keeps data. */
  limits: { maxWindowDays: number; maxLookbackDays: number | null };
  /**
   * Coupons and deals of the joined programmes, a page at a time, each page with the position
   * of the page after it (null after the last), starting at `from.after` (null: the beginning).
   * With `from.updatedSince`, only those changed since then (modules with `couponsSince`).
   */
  coupons?(rt: ModuleRuntime, from: CouponWalk): AsyncIterable<ListPage<NetworkCoupon>>;
  /** Whether `coupons` can list only the coupons changed since a date (an incremental refresh). */
  couponsSince?: boolean;
  /**
   * The tracking link that credits `sub_id` for a visit to `url` at `advertiser_id`.
   * `tracking_template` is the advertiser's stored `tracking_template` from sync: networks whose
   * links carry a per-programme hash (Admitad's `gotolink`, impact.com's `TrackingLink`) need it.
   * `member_ref` (the member's id beside a click id in `sub_id`) goes in the network's second
   * sub-id field where it has one (Awin clickref2, Admitad subid1, impact.com subId2).
   */
  trackingLink(
    settings: ModuleSettings,
    input: { advertiser_id: string; sub_id: string; url: string | null; tracking_template?: string | null; member_ref?: string | null },
  ): string;
  /** Reads the fields of one postback in the network's documented format (query and body). */
  parsePostback(query: Record<string, string | string[] | undefined>, body: unknown): PostbackFields;
  /** The network's status words → ours; unknown words are refused by the caller. */
  statusMap: Record<string, TransactionStatus>;
  /**
   * The postback query string, macros in place, that an administrator pastes into the network's
   * postback settings (the parameter names `parsePostback` reads); the endpoint adds its own
   * authentication parameters.
   */
  postbackTemplate?: string;
  /** How the network takes missing-cashback claims, when it has a channel publishers can use. */
  claims?: ClaimChannel;
  /**
   * The payment lines of the payments the network made since `since` (a payments statement:
   * Admitad), a page at a time; modules whose transactions carry their payment (`payment`) have none.
   */
  listPayments?(rt: ModuleRuntime, since: Date): AsyncIterable<NetworkPaymentLine[]>;
  /** A custom network (its data from feeds an administrator defined). */
  custom?: boolean;
  /**
   * Its transactions say when they were paid (`NetworkTransaction.payment`): the order poll's window
   * then also reaches back to approved orders not paid yet, so it sees the payment when it comes.
   */
  paymentsInTransactions?: boolean;
  /** The columns of the network's payment report (a custom network's `payments` mapping), for a CSV import. */
  paymentsMapping?: PaymentsMapping | null;
}
