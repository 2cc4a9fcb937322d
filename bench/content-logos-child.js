// The cashtrack side of the logo benchmark (bench/content-logos.js), in its own process so its peak
// RSS is its own (the fixture web runs in the parent): seeds one advertiser per logo URL, runs one
// `logos.bulk` job to the end through the job runner, and reports the time and peak memory over IPC.
const options = JSON.parse(process.argv[2]);

const { loadConfig } = await import('../dist/src/config/index.js');
const { buildContext, ensureSchema } = await import('../dist/src/context.js');
const { JobRunner } = await import('../dist/src/jobs/runner.js');

const config = loadConfig({
  env: { CASHTRACK_ENV: 'production' },
  overrides: {
    'database.url': options.dbUrl,
    data_dir: options.dataDir,
    secret: options.secret,
    'server.public_url': 'http://127.0.0.1',
    'log.stdout': false,
    // The fixture hosts are on loopback: allowed as a test or an intranet host would be.
    'outbound.allow': ['127.0.0.1:*'],
  },
});
const ctx = buildContext(config, { logStream: null });
try {
  await ensureSchema(ctx, true);
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
  const started = process.hrtime.bigint();
  const queued = await ctx.logoBulk.start({ network: 'benchnet', force: false }, 'bench');
  await new JobRunner({ ctx, jobs: ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 50 }).runPending();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const job = await ctx.jobs.get(queued.id);
  if (job.status !== 'done') throw new Error(`job ${job.id} ${job.status}: ${job.error ?? ''}`);
  const [{ n }] = await ctx.db.select('SELECT COUNT(*) AS n FROM media');
  process.send({ type: 'done', seconds, result: job.result, stored: Number(n), maxRssMb: process.resourceUsage().maxRSS / 1024 });
} catch (err) {
  process.send({ type: 'error', message: String(err?.stack ?? err) });
} finally {
  await ctx.close().catch(() => {});
}
