// The order service's types: what callers pass in and get back, its dependencies, and what one
// change to one order carries until its transaction commits.
import type { ClickLookup } from '../clicks/index.js';
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import type { AdvertiserService } from '../advertisers/index.js';
import type { CashbackRuleService } from '../cashback/index.js';
import type { JobService } from '../jobs/index.js';
import type { LedgerService } from '../ledger/index.js';
import type { LogService } from '../logs/index.js';
import type { NetworkService } from '../networks/index.js';
import type { Order, OrderRow } from './store.js';
import type { ReferralService } from '../referrals/index.js';
import type { UserService } from '../users/index.js';
import type { WebhookEvents } from '../webhooks/index.js';
import type { OrderStatus } from './states.js';

/** An administrator's change to one order. */
export interface UpdateInput {
  status?: OrderStatus;
  sale_amount?: string;
  commission?: string;
  currency?: string;
  note?: string;
}

/** What recording a report did, without the order (see `recordOutcomes`). */
export interface OrderOutcome {
  id: number;
  status: OrderStatus;
  duplicate: boolean;
  changes: string[];
  ignored: string[];
  /** The report left the order held for review (new, or held by this correction). */
  held?: boolean;
}

/** What a change did: the order, plus `duplicate` (nothing changed), `changes` and `ignored` parts of the report. */
export interface OrderChange extends Order {
  duplicate: boolean;
  /** `created`, `amounts`, `status`, `member`, `note`, `review` (held, released or declined). */
  changes: string[];
  /** Parts of a network report not applied: `amounts` (order not pending, or a decline), `status` (back to pending), `member`. */
  ignored: string[];
}

export interface OrderServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  ledger: LedgerService;
  cashback: CashbackRuleService;
  referrals: ReferralService;
  /** The outbox: order events go to webhooks in the order's transaction, to hooks after commit. */
  events: WebhookEvents;
  /** The networks: a manual order's network must exist; polling reads their transactions. */
  networks: NetworkService;
  /** A manual order's advertiser must be on file. */
  advertisers: Pick<AdvertiserService, 'requireAdvertiser'>;
  /** Members of reports and assignments are users: read through their owner. */
  users: Pick<UserService, 'existingIds' | 'idByLogin' | 'requireMemberId'>;
  /** Clicks named by reports' sub ids (their member and rule), and by an assignment. */
  clicks: Pick<ClickLookup, 'byIds'>;
  /** `cashback.rate_policy`: the rule of an order that came through a click (see `choosePolicyRule`). */
  ratePolicy?: 'order' | 'click' | 'best';
  /** Poll jobs are queued here (`startPoll`). */
  jobs: Pick<JobService, 'enqueue'>;
  /** The site currency (default of an order's currency). */
  currency: string;
  /** `referrals.share_percent`: the referrer's share of the referee's cashback. */
  referralShare: string;
  /** `orders.review_above`: the site's review ceiling (null or "none": none). */
  reviewAbove?: string | null;
  /** `networks` from the configuration (their `review_above`). */
  configuredNetworks?: Record<string, Record<string, string>>;
}

/** A log line (and, for some, a hook) to emit once the transaction has committed. */
export type LogEvent = { level: 'info' | 'warning' | 'debug'; message: string; context: Record<string, unknown>; hook?: string };
/** What one change did to one order: its row after, what changed and what was ignored, its events. */
export type Applied = { row: OrderRow; changes: string[]; ignored: string[]; events: LogEvent[] };
