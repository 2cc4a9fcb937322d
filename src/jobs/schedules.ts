// Declarative schedules: which job each configurable schedule (`schedules.<name>` in config) runs,
// and for which networks. When they run is configuration (cron expression, time zone, switches);
// src/services/schedules/ claims each run for its slot in the database and enqueues the job;
// node-cron fires them in the daemon only (src/jobs/scheduler.ts). A schedule enqueues a
// persisted job rather than doing the work itself, so the work shows in GET /jobs, survives a
// restart and runs on whichever daemon (or `cashtrack jobs run-pending`) claims it.
import { getBuiltInModule } from '../networks/index.js';
import type { Network } from '../services/networks/index.js';
import type { ScheduleDefinition } from '../services/schedules/index.js';

/** A custom network has what a job needs only when its definition has that feed. */
const hasFeed = (kind: 'advertisers' | 'transactions') => (n: Network) => n.kind === 'builtin' || !!n.definition?.feeds?.[kind];

/** Every schedule, in the order `schedules list` shows them. */
export const scheduleDefinitions: ScheduleDefinition[] = [
  { name: 'advertisers_sync', job: 'advertisers.sync', description: 'Sync the advertisers of each network.', perNetwork: hasFeed('advertisers') },
  {
    name: 'orders_poll',
    job: 'orders.poll',
    description: 'Poll the transactions of each network with a transactions API.',
    perNetwork: hasFeed('transactions'),
  },
  // The job comes with the coupons feature: until this build registers it, the schedule is listed as unavailable.
  { name: 'coupons_refresh', job: 'coupons.refresh', description: 'Refresh the coupons of every network.' },
  { name: 'claims_poll', job: 'claims.poll', description: "Read the networks' answers to filed claims, and expire claims past their deadline." },
  { name: 'claims_export', job: 'claims.export', description: 'Write the claims file of each network that takes claims as a batch file (Awin).' },
  {
    name: 'networks_watchdog',
    job: 'networks.watchdog',
    description: "Check each enabled network's intake, syncs, polls and logins against what is normal for it, and alarm once when one falls silent.",
  },
  {
    name: 'payouts_batch_status',
    job: 'payouts.batch_status',
    description: 'Read sent PayPal payout batches back and apply the results of items PayPal has settled since.',
  },
  {
    name: 'maintenance_prune',
    job: 'maintenance.prune',
    description: 'Delete logs, postback records, finished jobs, schedule runs and idempotency keys past retention.',
  },
  {
    name: 'networks_payments',
    job: 'networks.payments',
    description: 'Read the payments statement of each network that has one (Admitad) and mark the orders it covers paid.',
    perNetwork: (n) => n.kind === 'builtin' && !!getBuiltInModule(n.id)?.listPayments,
  },
];
