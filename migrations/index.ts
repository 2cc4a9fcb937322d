// Every migration, in order. One change per file; a new one is appended here.
import type { Migration } from '../src/db/migration.js';
import { createUsers } from './20261122000001-create-users.js';
import { createAppPasswords } from './20261122000002-create-app-passwords.js';
import { createSessions } from './20261122000003-create-sessions.js';
import { createLogs } from './20261122000004-create-logs.js';
import { createSettings } from './20261122000005-create-settings.js';
import { createCounters } from './20261122000006-create-counters.js';
import { createBalances } from './20261122000007-create-balances.js';
import { createLedgerEntries } from './20261122000008-create-ledger-entries.js';
import { createIdempotencyKeys } from './20261122000009-create-idempotency-keys.js';
import { createOrders } from './20261122000010-create-orders.js';
import { createCashbackRules } from './20261122000011-create-cashback-rules.js';
import { createPayouts } from './20261122000012-create-payouts.js';
import { createReferrals } from './20261122000013-create-referrals.js';
import { addPayoutsClosedBy } from './20261123000001-add-payouts-closed-by.js';
import { addOrdersCashbackRule } from './20261123000010-add-orders-cashback-rule.js';
import { addOrdersTransactionIdIndex } from './20261123000011-add-orders-transaction-id-index.js';
import { createNetworks } from './20261124000010-create-networks.js';
import { createPostbacks } from './20261124000011-create-postbacks.js';
import { createJobs } from './20261124000001-create-jobs.js';
import { indexPayoutEntries } from './20261124000020-index-payout-entries.js';
import { createAdvertisers } from './20261124000030-create-advertisers.js';
import { createAuthThrottle } from './20261125000200-create-auth-throttle.js';
import { scopeIdempotencyKeys } from './20261125000201-scope-idempotency-keys.js';
import { addPostbacksRepeats } from './20261125000300-add-postbacks-repeats.js';
import { createPostbackRejections } from './20261125000301-create-postback-rejections.js';
import { addOrdersReview } from './20261125000400-add-orders-review.js';
import { createScheduleRuns } from './20261126000400-create-schedule-runs.js';
import { createPages } from './20261126000100-create-pages.js';
import { createMedia } from './20261126000200-create-media.js';
import { createWebhooks } from './20261126000500-create-webhooks.js';
import { createWebhookDeliveries } from './20261126000501-create-webhook-deliveries.js';
import { createCoupons } from './20261126000300-create-coupons.js';
import { createCouponRefreshes } from './20261126000301-create-coupon-refreshes.js';
import { createAiCalls } from './20261126000700-create-ai-calls.js';
import { createAiTokenBudget } from './20261127001700-create-ai-token-budget.js';
import { createClicks } from './20261127100000-create-clicks.js';
import { addOrdersClickId } from './20261127100001-add-orders-click-id.js';
import { indexListSorts } from './20261127002000-index-list-sorts.js';
import { createAiProposals } from './20261127002100-create-ai-proposals.js';
import { addPagesAiOriginal } from './20261127002200-add-pages-ai-original.js';
import { createClaims } from './20261127110000-create-claims.js';
import { addMediaPrivate } from './20261127110001-add-media-private.js';
import { createNetworkPayments } from './20261127140000-create-network-payments.js';
import { createNetworkWatchdog } from './20261127145000-create-network-watchdog.js';
import { createPayoutBatches } from './20261127141001-create-payout-batches.js';
import { createPayoutBatchItems } from './20261127141002-create-payout-batch-items.js';
import { createPayoutBatchHolds } from './20261127141003-create-payout-batch-holds.js';
import { addPayoutsBatchId } from './20261127141004-add-payouts-batch-id.js';
import { addUsersErasedAt } from './20261127143000-add-users-erased-at.js';
import { createExports } from './20261127142000-create-exports.js';

export const migrations: Migration[] = [
  createUsers,
  createAppPasswords,
  createSessions,
  createLogs,
  createSettings,
  createCounters,
  createBalances,
  createLedgerEntries,
  createIdempotencyKeys,
  createOrders,
  createCashbackRules,
  createPayouts,
  createReferrals,
  addPayoutsClosedBy,
  addOrdersCashbackRule,
  addOrdersTransactionIdIndex,
  createJobs,
  createNetworks,
  createPostbacks,
  indexPayoutEntries,
  createAdvertisers,
  createAuthThrottle,
  scopeIdempotencyKeys,
  addPostbacksRepeats,
  createPostbackRejections,
  addOrdersReview,
  createPages,
  createMedia,
  createCoupons,
  createCouponRefreshes,
  createScheduleRuns,
  createWebhooks,
  createWebhookDeliveries,
  createAiCalls,
  createAiTokenBudget,
  indexListSorts,
  createAiProposals,
  addPagesAiOriginal,
  createClicks,
  addOrdersClickId,
  createClaims,
  addMediaPrivate,
  createNetworkPayments,
  createNetworkWatchdog,
  createPayoutBatches,
  createPayoutBatchItems,
  createPayoutBatchHolds,
  addPayoutsBatchId,
  addUsersErasedAt,
  createExports,
];
