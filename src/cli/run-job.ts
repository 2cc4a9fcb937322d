// The jobs the command groups start and wait for (`advertisers sync`, `orders poll`, the bulk
// runs...), run in the command's own process.
import type { Context } from '../context.js';
import type { Job } from '../services/jobs/index.js';
import type { JobProgressLine } from './progress.js';

/**
 * Runs a job just enqueued in this process until it finishes (`orders poll`, `advertisers sync`):
 * a runner limited to the job's type that stops when none of that type is left. Returns the job
 * as it ended; a failed or cancelled job is an error (exit 1). With `line`, the job's progress is
 * drawn on it while it runs and erased before this returns or throws.
 */
export async function runInProcess(ctx: Context, queued: Job, line: JobProgressLine | null = null): Promise<Job> {
  const { JobRunner } = await import('../jobs/runner.js');
  const { JobRegistry } = await import('../jobs/registry.js');
  const config = ctx.config.jobs;
  const runner = new JobRunner({
    ctx,
    jobs: ctx.jobs,
    registry: new JobRegistry([ctx.jobs.registry.require(queued.type)]),
    concurrency: 1,
    leaseMs: config.lease_seconds * 1000,
    pollIntervalMs: config.poll_interval_ms,
  });
  const onSignal = () => void runner.stop();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const unsubscribe = line
    ? ctx.jobs.onProgress((update) => {
        if (update.id === queued.id) line.update(update);
      })
    : null;
  line?.start(queued);
  try {
    await runner.runPending();
  } finally {
    unsubscribe?.();
    line?.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  const job = await ctx.jobs.get(queued.id);
  if (job.status !== 'done') {
    const { ServiceError } = await import('../errors.js');
    throw new ServiceError('svc_job_failed', `job ${job.id} ${job.type} ${job.status}${job.error ? `: ${job.error}` : ''}`, 500, { job_id: job.id });
  }
  return job;
}
