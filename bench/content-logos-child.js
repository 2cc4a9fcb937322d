// The cashtrack side of the logo benchmark (bench/content-logos.js), in its own process so its peak
// RSS is its own (the fixture web runs in the parent): seeds one advertiser per logo URL, runs one
// `logos.bulk` job to the end through the job runner, and reports the time and peak memory over IPC.
import { childContext, options, runChild, timed } from './lib/child-context.js';

const { JobRunner } = await import('../dist/src/jobs/runner.js');

// The fixture hosts are on loopback: allowed as a test or an intranet host would be.
const ctx = childContext({ loopback: true });
await runChild(ctx, async () => {
  await ctx.networks.saveCustom(
    'benchnet',
    {
      name: 'Bench Net',
      currency: 'EUR',
      tracking_link: 'https://go.bench.test/c/{advertiser_id}?s={sub_id}',
      statuses: { pending: 'pending', approved: 'approved', rejected: 'declined' },
    },
    'bench',
  );
  const now = new Date();
  for (let i = 0; i < options.urls.length; i += 500) {
    const chunk = options.urls.slice(i, i + 500);
    await ctx.db.execute(
      `INSERT INTO advertisers (module, advertiser, name, logo_url, categories, countries, status, last_seen_sync, created_at, updated_at) VALUES ${chunk.map(() => "(?, ?, ?, ?, '[]', '[]', 'active', 1, ?, ?)").join(', ')}`,
      chunk.flatMap((url, j) => ['benchnet', String(i + j), `Shop ${i + j}`, url, now, now]),
    );
  }
  const { result: queued, seconds } = await timed(async () => {
    const job = await ctx.logoBulk.start({ network: 'benchnet', force: false }, 'bench');
    await new JobRunner({ ctx, jobs: ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 50 }).runPending();
    return job;
  });
  const job = await ctx.jobs.get(queued.id);
  if (job.status !== 'done') throw new Error(`job ${job.id} ${job.status}: ${job.error ?? ''}`);
  const [{ n }] = await ctx.db.select('SELECT COUNT(*) AS n FROM media');
  return { seconds, result: job.result, stored: Number(n), maxRssMb: process.resourceUsage().maxRSS / 1024 };
});
