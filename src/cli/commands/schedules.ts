// `cashtrack schedules list|run`: the schedule schemas and service, in-process. `run` goes through
// the same claim as a firing in the daemon.
import type { Command } from 'commander';
import type { ScheduleRun } from '../../services/schedules/index.js';
import { scheduleSchemas } from '../../services/schedules/schemas.js';
import { printJson, printTable, validateInput, withContext, type Io } from '../io.js';
import { json, type Run } from '../options.js';

export function register(schedules: Command, run: Run): void {
  schedules.command('list').description('every schedule: expression, time zone, next due, last run and its job, enabled').addOption(json()).action(run(list));
  schedules
    .command('run <name>')
    .description('run a schedule now, whether or not it is enabled (a run whose previous job is still under way is skipped)')
    .option('--network <id>', 'per-network schedules: only this network')
    .addOption(json())
    .action(run(runNow));
}

const runText = (r: ScheduleRun | null) => {
  if (!r) return '';
  const job = r.job_id === null ? '' : ` job ${r.job_id}${r.job_status ? ` (${r.job_status})` : ''}`;
  return r.status === 'queued' ? `${r.slot}${job}` : `${r.slot} skipped: ${r.reason}`;
};

export async function list(io: Io, opts: { json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const schedules = await ctx.schedules.list();
    if (opts.json) return printJson(io, schedules);
    const rows: Record<string, unknown>[] = [];
    for (const s of schedules) {
      rows.push({
        name: s.name,
        cron: s.cron,
        timezone: s.timezone,
        enabled: !s.available ? `no (${s.job_type} unavailable)` : s.enabled ? 'yes' : 'no',
        next_due: s.next_due,
        last_run: runText(s.last_run),
      });
      for (const n of s.networks ?? []) {
        rows.push({
          name: `  ${n.network}`,
          cron: n.cron,
          timezone: n.timezone,
          enabled: n.enabled ? 'yes' : 'no',
          next_due: n.next_due,
          last_run: runText(n.last_run),
        });
      }
    }
    printTable(io, rows, ['name', 'cron', 'timezone', 'enabled', 'next_due', 'last_run']);
  });
}

export async function runNow(io: Io, name: string, opts: { network?: string; json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const params = await validateInput(scheduleSchemas.name, { name });
    const payload = await validateInput(scheduleSchemas.run, { network: opts.network });
    const runs = await ctx.schedules.run(params.name, payload, 'cli');
    if (opts.json) return printJson(io, runs);
    if (runs.length === 0) io.stdout.write(`${params.name}: no network to run for (none is enabled and configured)\n`);
    for (const r of runs) {
      const what = `${r.schedule}${r.network ? ` (${r.network})` : ''}`;
      io.stdout.write(
        r.status === 'queued' ? `${what}: job ${r.job_id} queued (a daemon runs it, or: cashtrack jobs run-pending)\n` : `${what}: skipped, ${r.reason}\n`,
      );
    }
  });
}
