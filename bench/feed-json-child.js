// The cashtrack side of `npm run bench:feed`, in its own process so its peak RSS is its own (the
// feed server runs in the parent). Defines a custom network whose advertiser feed is the parent's
// JSON document, syncs it once, and reports the time, the process's peak resident memory and the
// longest event-loop stall (what a /healthz probe would have waited) over IPC.
import { monitorEventLoopDelay } from 'node:perf_hooks';

const options = JSON.parse(process.argv[2]);

const { loadConfig } = await import('../dist/src/config/index.js');
const { buildContext, ensureSchema } = await import('../dist/src/context.js');

const config = loadConfig({
  env: { CASHTRACK_ENV: 'production' },
  // The feed server listens on 127.0.0.1 (any port), which the outbound guard refuses unless it is allowed.
  overrides: {
    'database.url': options.dbUrl,
    data_dir: options.dataDir,
    secret: options.secret,
    'server.public_url': 'http://127.0.0.1',
    'log.stdout': false,
    'outbound.allow': ['127.0.0.1:*'],
  },
});
const ctx = buildContext(config, { logStream: null });
try {
  await ensureSchema(ctx, true);
  await ctx.networks.saveCustom(
    'bench',
    {
      name: 'Bench Net',
      currency: 'EUR',
      statuses: { ok: 'approved' },
      feeds: {
        advertisers: {
          url: options.feedUrl,
          format: 'json',
          items: 'data.programs',
          fields: {
            id: 'id',
            name: 'name',
            site_url: 'url',
            logo_url: 'logo',
            commission_type: 'pay.type',
            commission_min: 'pay.min',
            commission_max: 'pay.max',
            categories: 'cats',
            countries: 'geo',
            status: 'state',
          },
          active_values: ['joined'],
        },
      },
    },
    'bench',
  );
  await ctx.networks.enable('bench', 'bench');
  const stalls = monitorEventLoopDelay({ resolution: 10 });
  stalls.enable();
  const started = process.hrtime.bigint();
  const result = await ctx.advertisers.sync('bench');
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  stalls.disable();
  const [{ n }] = await ctx.db.select("SELECT COUNT(*) AS n FROM advertisers WHERE module = 'bench'");
  process.send({ type: 'done', seconds, result, stored: Number(n), maxRssMb: process.resourceUsage().maxRSS / 1024, maxStallMs: stalls.max / 1e6 });
} catch (err) {
  process.send({ type: 'error', message: String(err?.stack ?? err) });
} finally {
  await ctx.close().catch(() => {});
}
