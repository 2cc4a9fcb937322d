// Every route group of the svc/v1 namespace, listed explicitly so the compiler checks the wiring.
import type { RouteDef } from '../rest/types.js';
import { advertisersRoutes } from './advertisers.js';
import { jobsRoutes } from './jobs.js';
import { ledgerRoutes } from './ledger.js';
import { logsRoutes } from './logs.js';
import { networksRoutes } from './networks.js';
import { lookupRoutes } from './lookup.js';
import { ordersRoutes } from './orders.js';
import { overviewRoutes } from './overview.js';
import { payoutsRoutes } from './payouts.js';
import { referralsRoutes } from './referrals.js';

export const routeTable: RouteDef[] = [...ledgerRoutes, ...logsRoutes, ...lookupRoutes, ...payoutsRoutes, ...overviewRoutes, ...ordersRoutes, ...referralsRoutes, ...jobsRoutes, ...networksRoutes, ...advertisersRoutes];
