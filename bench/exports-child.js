// The cashtrack side of `npm run bench:exports`, in its own process so its peak RSS is its own (the
// parent seeds the database): migrates, tells the parent, waits while it seeds the ledger, then
// makes one export of every ledger entry (POST /exports' service call) and runs its exports.run job
// as the daemon's runner would; reports the time (and the CPU time it took, which a loaded machine
// does not inflate as much), the file's rows and bytes and the peak RSS.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { childContext, options, runChild, timed } from './lib/child-context.js';

const { JobRunner } = await import('../dist/src/jobs/runner.js');
const ctx = childContext();
const nextMessage = () => new Promise((resolve) => process.once('message', resolve));
await runChild(ctx, async () => {
  process.send({ type: 'migrated', dbUrl: options.dbUrl, currency: ctx.config.currency });
  await nextMessage();
  const rssBeforeMb = process.resourceUsage().maxRSS / 1024;
  const runner = new JobRunner({ ctx, jobs: ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 20 });
  const cpuBefore = process.cpuUsage();
  const { result: exp, seconds } = await timed(async () => {
    const queued = await ctx.exports.create({ kind: 'ledger_entries', format: options.format }, 'bench');
    await runner.runPending();
    return ctx.exports.get(queued.id);
  });
  const cpu = process.cpuUsage(cpuBefore);
  if (exp.status !== 'done') throw new Error(`export ${exp.id} ended ${exp.status}: ${exp.error}`);
  const file = join(ctx.exports.dir, `export-${exp.id}-ledger_entries.${exp.format}`);
  return {
    seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    rows: exp.rows,
    bytes: statSync(file).size,
    mode: statSync(file).mode & 0o777,
    rssBeforeMb,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
  };
});
