// Every job type, listed explicitly so the compiler checks the wiring. A new type is appended here.
import type { JobType } from '../registry.js';
import { advertisersSync } from './advertisers-sync.js';
import { logosBulk } from './logos-bulk.js';
import { couponsRefresh } from './coupons-refresh.js';
import { aiBulk } from './ai-bulk.js';
import { maintenancePrune } from './maintenance-prune.js';
import { ordersPoll } from './orders-poll.js';
import { pagesBulk } from './pages-bulk.js';
import { claimsExport } from './claims-export.js';
import { claimsPoll } from './claims-poll.js';
import { networksWatchdog } from './networks-watchdog.js';
import { networksPayments } from './networks-payments.js';
import { exportsRun } from './exports-run.js';
import { payoutsBatchStatus } from './payouts-batch-status.js';

export const jobTypes: JobType[] = [
  maintenancePrune,
  advertisersSync,
  ordersPoll,
  pagesBulk,
  logosBulk,
  couponsRefresh,
  aiBulk,
  claimsPoll,
  claimsExport,
  networksWatchdog,
  networksPayments,
  exportsRun,
  payoutsBatchStatus,
];
