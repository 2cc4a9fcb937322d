// `cashtrack jobs list|show|cancel|enqueue|types|run-pending`: the job schemas and service,
// in-process. `run-pending` is a runner that stops when the queue is empty (cron on hosts without
// the daemon).
import { Option, type Command } from 'commander';
import type { Context } from '../../context.js';
import type { RunOutcome } from '../../jobs/execution.js';
import type { Job } from '../../services/jobs/index.js';
import { JOB_ORDERBY, JOB_STATUSES, jobSchemas } from '../../services/jobs/schemas.js';
import { printFields, printJson, printTable, UsageError, validateInput, withContext, type Io } from '../io.js';
import { commaChoices, json, listCommand, positiveInt, type ListOptions, type ListPage, type Run, type SortOptions } from '../options.js';

export function register(jobs: Command, run: Run): void {
  listCommand(
    jobs
      .command('list')
      .description('jobs, newest first')
      .option('--status <list>', 'only these statuses, comma-separated', commaChoices('--status', JOB_STATUSES))
      .option('--status-exclude <list>', 'none of these statuses, comma-separated', commaChoices('--status-exclude', JOB_STATUSES))
      .option('--type <types>', 'only these job types, comma-separated')
      .option('--after <time>', 'created strictly after this ISO 8601 time')
      .option('--before <time>', 'created strictly before this ISO 8601 time')
      .addOption(new Option('--orderby <field>', 'sort by (default id; ties by id)').choices(Object.keys(JOB_ORDERBY)))
      .addOption(new Option('--order <dir>', 'sort direction (default desc)').choices(['asc', 'desc'])),
    {
      items: 'jobs',
      perPage: 20,
      row: (j: Job) => ({ ...j, progress: progressText(j) }),
      columns: ['id', 'type', 'status', 'progress', 'actor', 'created_at', 'finished_at'],
      count: (total) => `${total} job(s)`,
    },
    run,
    list,
  );
  jobs.command('show <id>').description('one job, with its progress, result or error').addOption(json()).action(run(show));
  jobs.command('cancel <id>').description('cancel a job: a queued one at once, a running one at its next checkpoint').addOption(json()).action(run(cancel));
  jobs
    .command('enqueue <type>')
    .description('queue a job of TYPE (see jobs types); a daemon or jobs run-pending runs it')
    .option('--params <json>', 'parameters, a JSON object')
    .option('--unique', 'refuse when a job of this type with these parameters is queued or running')
    .addOption(json())
    .action(run(enqueue));
  jobs.command('types').description('the job types this version knows, with their parameters').addOption(json()).action(run(types));
  jobs
    .command('run-pending')
    .description('run queued jobs (and jobs whose process died) in this process until none is left, then exit; exit 1 if one failed')
    .option('--concurrency <n>', 'jobs at once (default: jobs.concurrency, at least 1)', positiveInt)
    .addOption(json())
    .action(run(runPending));
}

const progressText = (j: Job) =>
  `${j.progress.done}${j.progress.total === null ? '' : `/${j.progress.total}`}${j.progress.failed ? ` (${j.progress.failed} failed)` : ''}`;

function printJob(io: Io, j: Job): void {
  const rows: [string, unknown][] = [
    ['id', j.id],
    ['type', j.type],
    ['status', j.status],
    ['params', JSON.stringify(j.params)],
    ['progress', `${progressText(j)} done`],
    ['result', j.result === null ? null : JSON.stringify(j.result)],
    ['error', j.error],
    ['attempts', j.attempts],
    ['created', `${j.created_at} by ${j.actor}`],
    ['started', j.started_at],
    ['finished', j.finished_at],
    ['updated', j.updated_at],
  ];
  printFields(io, rows, 10);
}

async function jobId(id: string): Promise<number> {
  return (await validateInput(jobSchemas.jobId, { id })).id;
}

export async function list(
  io: Io,
  opts: ListOptions & SortOptions & { status?: string; statusExclude?: string; type?: string; after?: string; before?: string },
): Promise<ListPage<Job>> {
  return withContext(io, async (ctx) => {
    const query = await validateInput(jobSchemas.list, {
      status: opts.status,
      status_exclude: opts.statusExclude,
      type: opts.type,
      after: opts.after,
      before: opts.before,
      orderby: opts.orderby,
      order: opts.order,
      page: opts.page,
      per_page: opts.perPage,
    });
    return { ...(await ctx.jobs.list(query)), page: query.page };
  });
}

export async function show(io: Io, id: string, opts: { json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const job = await ctx.jobs.get(await jobId(id));
    if (opts.json) return printJson(io, job);
    printJob(io, job);
  });
}

export async function cancel(io: Io, id: string, opts: { json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const job = await ctx.jobs.cancel(await jobId(id), 'cli');
    if (opts.json) return printJson(io, job);
    io.stdout.write(job.status === 'cancelled' ? `job ${job.id} cancelled\n` : `job ${job.id} is ${job.status}: its runner stops it at its next checkpoint\n`);
  });
}

export async function enqueue(io: Io, type: string, opts: { params?: string; unique?: boolean; json?: boolean }): Promise<void> {
  let params: unknown = {};
  if (opts.params !== undefined) {
    try {
      params = JSON.parse(opts.params);
    } catch {
      throw new UsageError('--params must be a JSON object, e.g. \'{"log_retention_days": 7}\'');
    }
    if (!params || typeof params !== 'object' || Array.isArray(params))
      throw new UsageError('--params must be a JSON object, e.g. \'{"log_retention_days": 7}\'');
  }
  await withContext(io, async (ctx) => {
    const input = await validateInput(jobSchemas.enqueue, { type, params, unique: opts.unique });
    const job = await ctx.jobs.enqueue(input.type, input.params, 'cli', { unique: input.unique });
    if (opts.json) return printJson(io, job);
    io.stdout.write(`job ${job.id} queued: ${job.type} ${JSON.stringify(job.params)} (a daemon runs it, or: cashtrack jobs run-pending)\n`);
  });
}

export async function types(io: Io, opts: { json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const list = ctx.jobs.registry.list().map((t) => ({ type: t.type, description: t.description, params: Object.keys(t.params.describe().keys ?? {}) }));
    if (opts.json) return printJson(io, list);
    printTable(
      io,
      list.map((t) => ({ ...t, params: t.params.join(', ') })),
      ['type', 'params', 'description'],
    );
  });
}

/** Runs queued jobs (and jobs whose process died) until none is left; exit 1 when one failed. */
export async function runPending(io: Io, opts: { concurrency?: number; json?: boolean }): Promise<void> {
  await withContext(io, async (ctx: Context) => {
    const { JobRunner } = await import('../../jobs/runner.js');
    const config = ctx.config.jobs;
    const runner = new JobRunner({
      ctx,
      jobs: ctx.jobs,
      concurrency: opts.concurrency ?? Math.max(1, config.concurrency),
      leaseMs: config.lease_seconds * 1000,
      pollIntervalMs: config.poll_interval_ms,
    });
    // Interrupted: running jobs are given back to the queue for the next run.
    const onSignal = () => void runner.stop();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    let outcomes: RunOutcome[];
    try {
      outcomes = await runner.runPending();
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    const jobs = await Promise.all(outcomes.map((o) => ctx.jobs.get(o.id)));
    if (opts.json) printJson(io, jobs);
    else if (jobs.length === 0) io.stdout.write('no jobs to run\n');
    else {
      for (const j of jobs) io.stdout.write(`job ${j.id} ${j.type}: ${j.status}${j.error ? ` (${j.error})` : ''}\n`);
      io.stdout.write(`${jobs.length} job(s) run\n`);
    }
    const failed = jobs.filter((j) => j.status === 'failed').length;
    if (failed) {
      if (!opts.json) io.stderr.write(`svc_job_failed: ${failed} job(s) failed\n`);
      throw Object.assign(new Error(`${failed} job(s) failed`), { silent: true });
    }
  });
}
