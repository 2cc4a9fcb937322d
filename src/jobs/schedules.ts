// Declarative schedules: `{ name, schedule, run(ctx) }`, validated at boot; node-cron is wired only
// in the daemon (src/cli/commands/serve.ts). A schedule enqueues a persisted job rather than doing
// the work itself, so the work shows in GET /jobs, survives a restart and runs on whichever daemon
// (or `cashtrack jobs run-pending`) claims it. Enqueues are `unique`: while one run is queued or
// running, the same schedule firing in another daemon adds none.
import type { Context } from '../context.js';
import { isServiceError } from '../errors.js';

export interface Schedule {
  name: string;
  /** Cron expression (node-cron syntax, UTC). */
  schedule: string;
  run(ctx: Context): Promise<Record<string, unknown>>;
}

/** Enqueues `type` unless one with the same params is queued or running already. */
async function enqueueOnce(ctx: Context, type: string, params: Record<string, unknown>, actor: string): Promise<Record<string, unknown>> {
  try {
    const job = await ctx.jobs.enqueue(type, params, actor, { unique: true });
    return { job_id: job.id };
  } catch (err) {
    if (isServiceError(err) && err.code === 'svc_job_already_running') return { job_id: (err.data.job as { id: number }).id, already_queued: true };
    throw err;
  }
}

export const schedules: Schedule[] = [
  {
    name: 'maintenance.prune',
    schedule: '17 3 * * *',
    run: (ctx) => enqueueOnce(ctx, 'maintenance.prune', {}, 'schedule:maintenance.prune'),
  },
];
