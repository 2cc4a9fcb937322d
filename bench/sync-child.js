// The cashtrack side of `npm run bench:sync`, in its own process so its peak RSS is its own (the
// fixture network runs in the parent). Syncs every advertiser of the Admitad fixture once and
// reports the time and the process's peak resident memory over IPC.
const options = JSON.parse(process.argv[2]);

const { loadConfig } = await import('../dist/src/config/index.js');
const { buildContext, ensureSchema } = await import('../dist/src/context.js');

const config = loadConfig({
  env: { CASHTRACK_ENV: 'production' },
  // The fixture network listens on 127.0.0.1, which the outbound guard refuses unless it is allowed.
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
  await ctx.networks.configure('admitad', options.settings, 'bench');
  const started = process.hrtime.bigint();
  const result = await ctx.advertisers.sync('admitad');
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const [{ n }] = await ctx.db.select("SELECT COUNT(*) AS n FROM advertisers WHERE module = 'admitad' AND status = 'active'");
  process.send({ type: 'done', seconds, result, stored: Number(n), maxRssMb: process.resourceUsage().maxRSS / 1024 });
} catch (err) {
  process.send({ type: 'error', message: String(err?.stack ?? err) });
} finally {
  await ctx.close().catch(() => {});
}
