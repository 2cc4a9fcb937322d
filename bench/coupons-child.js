// The cashtrack side of `npm run bench:coupons`, in its own process so its peak RSS is its own
// (the fixture network runs in the parent). Refreshes every coupon of the Admitad fixture, tells
// the parent (which then changes 1% of them), and refreshes again; reports both times, the peak
// resident memory after the first refresh and the counts over IPC.
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
const nextMessage = () => new Promise((resolve) => process.once('message', resolve));
const timed = async (fn) => {
  const started = process.hrtime.bigint();
  const result = await fn();
  return { result, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
};
try {
  await ensureSchema(ctx, true);
  await ctx.networks.configure('admitad', options.settings, 'bench');
  await ctx.networks.enable('admitad', 'bench');
  const first = await timed(() => ctx.coupons.refresh('admitad'));
  const maxRssMb = process.resourceUsage().maxRSS / 1024;
  process.send({ type: 'first' });
  await nextMessage();
  const second = await timed(() => ctx.coupons.refresh('admitad'));
  const [{ n }] = await ctx.db.select("SELECT COUNT(*) AS n FROM coupons WHERE network = 'admitad' AND status <> 'removed'");
  process.send({ type: 'done', first, second, maxRssMb, stored: Number(n) });
} catch (err) {
  process.send({ type: 'error', message: String(err?.stack ?? err) });
} finally {
  await ctx.close().catch(() => {});
}
