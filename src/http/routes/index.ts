// Every route group of the svc/v1 namespace, listed explicitly so the compiler checks the wiring.
import type { RouteDef } from '../rest/types.js';
import { advertisersRoutes } from './advertisers.js';
import { clicksRoutes } from './clicks.js';
import { claimsRoutes } from './claims.js';
import { couponsRoutes } from './coupons.js';
import { exportsRoutes } from './exports.js';
import { aiRoutes } from './ai.js';
import { jobsRoutes } from './jobs.js';
import { ledgerRoutes } from './ledger.js';
import { logsRoutes } from './logs.js';
import { logosRoutes } from './logos.js';
import { membersRoutes } from './members.js';
import { networksRoutes } from './networks.js';
import { lookupRoutes } from './lookup.js';
import { ordersRoutes } from './orders.js';
import { overviewRoutes } from './overview.js';
import { pagesRoutes } from './pages.js';
import { payoutsRoutes } from './payouts.js';
import { referralsRoutes } from './referrals.js';
import { schedulesRoutes } from './schedules.js';
import { webhooksRoutes } from './webhooks.js';
import { usersRoutes } from './users.js';

export const routeTable: RouteDef[] = [
  ...ledgerRoutes,
  ...logsRoutes,
  ...lookupRoutes,
  ...payoutsRoutes,
  ...overviewRoutes,
  ...ordersRoutes,
  ...clicksRoutes,
  ...claimsRoutes,
  ...exportsRoutes,
  ...referralsRoutes,
  ...jobsRoutes,
  ...networksRoutes,
  ...advertisersRoutes,
  ...schedulesRoutes,
  ...pagesRoutes,
  ...logosRoutes,
  ...webhooksRoutes,
  ...couponsRoutes,
  ...aiRoutes,
  ...usersRoutes,
  ...membersRoutes,
];
