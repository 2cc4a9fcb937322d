// The server side of `npm run bench:postbacks`, run in a child process so autocannon's CPU does not
// share the daemon's event loop. `node bench/postbacks-server.js <json>` migrates the database,
// switches postbacks on (config `postbacks.enabled`), defines the custom network `benchnet` with an
// HMAC postback secret and its postback switch on, and serves the daemon on a loopback port; the
// parent seeds the members itself. It reports `{ type: 'ready', ... }` (with the new secret) over
// IPC and stops on `{ type: 'stop' }`, SIGTERM or a lost parent. Profiles on demand like
// bench/ledger-server.js.
const [rawOptions] = process.argv.slice(2);
let stopping = null;

export const BENCH_NETWORK = 'benchnet';

function send(message) {
  if (process.connected) process.send(message);
}

async function startCashtrack(options) {
  const { loadConfig } = await import('../dist/src/config.js');
  const { buildContext, ensureSchema } = await import('../dist/src/context.js');
  const { createServer } = await import('../dist/src/server.js');

  const overrides = { 'database.url': options.dbUrl, data_dir: options.dataDir, secret: options.secret, 'log.stdout': false, 'postbacks.enabled': true };
  if (options.poolMax) overrides['database.pool_max'] = options.poolMax;
  const config = loadConfig({ env: { CASHTRACK_ENV: 'production' }, overrides });
  const ctx = buildContext(config, { logStream: null });
  let server = null;
  const close = async () => {
    await server?.stop({ timeout: 2_000 }).catch(() => {});
    await ctx.appPasswords?.drain?.().catch(() => {});
    await ctx.close().catch(() => {});
  };
  try {
    await ensureSchema(ctx, true);
    const definition = {
      name: 'Bench Net',
      currency: config.currency,
      cashback: { type: 'percent_commission', value: '50' },
      tracking_link: 'https://go.benchnet.invalid/c/{advertiser_id}?subid={sub_id}&url={url}',
      statuses: { pending: 'pending', approved: 'approved', declined: 'declined' },
      postback: { params: { transaction_id: 'txn', status: 'status', sale_amount: 'amount', commission: 'payout', currency: 'cur', sub_id: 'subid' } },
    };
    await ctx.networks.saveCustom(BENCH_NETWORK, definition, 'bench');
    const { secret } = await ctx.networks.rotatePostbackSecret(BENCH_NETWORK, 'bench', { mode: 'hmac' });
    await ctx.networks.setPostbacks(BENCH_NETWORK, true, 'bench');
    await ctx.logger.flush();
    server = await createServer(ctx, { port: 0, host: '127.0.0.1' });
    await server.start();
    return {
      server,
      close,
      ready: {
        origin: server.info.uri,
        network: BENCH_NETWORK,
        postbackSecret: secret,
        dialect: ctx.db.dialect,
        poolMax: config.database.pool_max,
        currency: config.currency,
      },
    };
  } catch (err) {
    await close();
    throw err;
  }
}

let inspector = null;
async function profileStart() {
  const { Session } = await import('node:inspector/promises');
  inspector = new Session();
  inspector.connect();
  await inspector.post('Profiler.enable');
  await inspector.post('Profiler.setSamplingInterval', { interval: 200 });
  await inspector.post('Profiler.start');
}

async function profileStop(file) {
  const { writeFile } = await import('node:fs/promises');
  const { profile } = await inspector.post('Profiler.stop');
  inspector.disconnect();
  inspector = null;
  await writeFile(file, JSON.stringify(profile));
}

async function main() {
  const started = await startCashtrack(JSON.parse(rawOptions ?? 'null') ?? {});
  const stop = () =>
    (stopping ??= (async () => {
      await started.close();
      if (process.connected) process.disconnect();
      process.exit(0);
    })());
  process.on('message', (msg) => {
    if (msg?.type === 'stop') void stop();
    if (msg?.type === 'cpu') send({ type: 'cpu', usage: process.cpuUsage(), at: Number(process.hrtime.bigint() / 1000n) });
    if (msg?.type === 'profile-start') void profileStart().then(() => send({ type: 'profile-started' }), (err) => send({ type: 'error', message: String(err) }));
    if (msg?.type === 'profile-stop') void profileStop(msg.file).then(() => send({ type: 'profile-stopped', file: msg.file }), (err) => send({ type: 'error', message: String(err) }));
  });
  process.on('disconnect', () => void stop());
  process.on('SIGTERM', () => void stop());
  send({ type: 'ready', ...started.ready });
}

if (process.send) {
  main().catch((err) => {
    send({ type: 'error', message: err?.stack ?? String(err) });
    process.exitCode = 1;
    setTimeout(() => process.exit(1), 100).unref();
  });
}
