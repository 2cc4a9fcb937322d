// The cashtrack side of the pages part of `npm run bench:content`, in its own process so its peak
// RSS is its own: seeds N active advertisers (not timed), then queues a `pages.bulk` job and runs
// it with a job runner, as the daemon would, and reports the time, the process's peak resident
// memory and what was stored over IPC.
import { childContext, options, runChild, timed } from './lib/child-context.js';

const { JobRunner } = await import('../dist/src/jobs/runner.js');

const ctx = childContext({ overrides: { 'pages.link_template': 'https://shop.example/shops/%SLUG%' } });

/** Advertisers as a sync leaves them: names (a tenth of them shared, so slugs collide), domains, commissions, logos. */
async function seed(count) {
  const now = new Date();
  for (let start = 0; start < count; start += 500) {
    const rows = [];
    for (let i = start; i < Math.min(count, start + 500); i++) {
      const name = i % 10 === 0 ? `Shared Name ${i % 100}` : i % 37 === 0 ? `商店 ${i}` : `Bench Shop ${i}`;
      rows.push([
        'admitad',
        String(100000 + i),
        name,
        `shop${i}.example`,
        `https://www.shop${i}.example/`,
        `https://cdn.example/logo/${i}.png`,
        'percent',
        '2',
        String(4 + (i % 10)),
        'active',
        1,
        now,
        now,
      ]);
    }
    await ctx.db.execute(
      `INSERT INTO advertisers (module, advertiser, name, domain, site_url, logo_url, commission_type, commission_min, commission_max, status, last_seen_sync, created_at, updated_at) VALUES ${rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
      rows.flat(),
    );
  }
}

await runChild(ctx, async () => {
  await seed(options.advertisers);
  const { result: queued, seconds } = await timed(async () => {
    const job = await ctx.pages.startBulk({ status: 'publish' }, 'bench');
    await new JobRunner({ ctx, jobs: ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 20 }).runPending();
    return job;
  });
  const job = await ctx.jobs.get(queued.id);
  const [{ n }] = await ctx.db.select('SELECT COUNT(*) AS n FROM pages');
  const [{ m }] = await ctx.db.select('SELECT COUNT(DISTINCT slug) AS m FROM pages');
  return {
    seconds,
    status: job.status,
    error: job.error,
    result: job.result,
    stored: Number(n),
    distinctSlugs: Number(m),
    maxRssMb: process.resourceUsage().maxRSS / 1024,
  };
});
