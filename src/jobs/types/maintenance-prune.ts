// `maintenance.prune`: deletes log entries past retention, expired sessions, expired
// Idempotency-Key records, finished jobs, received postbacks past retention and authentication
// throttle counters whose window is over, schedule runs past the jobs' retention (the latest run of
// each schedule stays: catch-up compares against it) and the webhook delivery log past
// webhooks.retention_days, clicks past clicks.retention_days, and export files (with their rows)
// past exports.retention_days. Enqueued daily by the `maintenance_prune` schedule (src/jobs/schedules.ts).
import Joi from 'joi';
import type { JobType } from '../registry.js';

const STEPS = [
  'logs',
  'sessions',
  'idempotency_keys',
  'jobs',
  'postbacks',
  'auth_throttle',
  'schedule_runs',
  'webhook_deliveries',
  'clicks',
  'exports',
] as const;
type Step = (typeof STEPS)[number];

/** Prunes what has outlived its retention; each step is one checkpoint. */
export const maintenancePrune: JobType<{ log_retention_days?: number }> = {
  type: 'maintenance.prune',
  description:
    'Delete log entries past their retention, expired sessions, expired Idempotency-Key records, old finished jobs, old postback records, expired authentication throttle counters, old schedule runs, old webhook deliveries, clicks past clicks.retention_days and export files past exports.retention_days.',
  params: Joi.object({
    log_retention_days: Joi.number().integer().min(1).max(3650).description('Keep this many days of log (default: log.retention_days).'),
  }),
  async run(ctx, job) {
    // Resumed after a crash: the counts of the steps already done are in the checkpoint.
    const deleted: Partial<Record<Step, number>> = { ...((job.checkpoint as { deleted?: Record<Step, number> } | null)?.deleted ?? {}) };
    job.setTotal(STEPS.length);
    const prune: Record<Step, () => Promise<number>> = {
      logs: () => ctx.logger.prune(job.params.log_retention_days),
      sessions: () => ctx.sessions.prune(),
      idempotency_keys: () => ctx.idempotency.prune(),
      jobs: () => ctx.jobs.prune(ctx.config.jobs.retention_days),
      postbacks: () => ctx.postbacks.prune(),
      auth_throttle: () => ctx.authThrottle.prune(),
      schedule_runs: () => ctx.schedules.prune(ctx.config.jobs.retention_days),
      webhook_deliveries: () => ctx.webhooks.prune(),
      clicks: () => ctx.clicks.prune(),
      exports: () => ctx.exports.prune(),
    };
    for (const step of STEPS) {
      if (deleted[step] !== undefined) continue;
      job.throwIfStopped();
      deleted[step] = await prune[step]();
      job.progress({ done: 1 });
      await job.saveCheckpoint({ deleted });
    }
    return { deleted };
  },
};
