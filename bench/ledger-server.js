// The server side of `npm run bench:ledger`, run in a child process so autocannon's CPU does not
// share the daemon's event loop. `node bench/ledger-server.js <json>` migrates the database, creates
// an administrator with an application password and serves the daemon on a loopback port; the
// parent seeds the members and entries itself. It reports `{ type: 'ready', ... }` over IPC and
// stops on `{ type: 'stop' }`, SIGTERM or a lost parent.
const [rawOptions] = process.argv.slice(2);
let stopping = null;

function send(message) {
  if (process.connected) process.send(message);
}

async function startCashtrack(options) {
  const { loadConfig } = await import('../dist/src/config.js');
  const { buildContext, ensureSchema } = await import('../dist/src/context.js');
  const { createServer } = await import('../dist/src/server.js');
  const { NAMESPACE } = await import('../dist/src/http/rest/index-docs.js');

  const overrides = { 'database.url': options.dbUrl, data_dir: options.dataDir, secret: options.secret, 'log.stdout': false };
  if (options.poolMax) overrides['database.pool_max'] = options.poolMax;
  const config = loadConfig({ env: { CASHTRACK_ENV: 'production' }, overrides });
  const ctx = buildContext(config, { logStream: null });
  let server = null;
  const close = async () => {
    await server?.stop({ timeout: 2_000 }).catch(() => {});
    await ctx.appPasswords.drain().catch(() => {});
    await ctx.close().catch(() => {});
  };
  try {
    await ensureSchema(ctx, true);
    // A hyphen: no seeded member's login has one.
    const admin = await ctx.users.create({ login: 'bench-admin', email: 'bench-admin@localhost.invalid', role: 'administrator' }, 'bench');
    const { password } = await ctx.appPasswords.create(admin, `bench ${Date.now()}`, 'bench');
    await ctx.logger.flush();
    server = await createServer(ctx, { port: 0, host: '127.0.0.1' });
    await server.start();
    return {
      server,
      close,
      ready: {
        origin: server.info.uri,
        prefix: `/${config.server.rest_root}/${NAMESPACE}`,
        authorization: `Basic ${Buffer.from(`bench-admin:${password}`).toString('base64')}`,
        adminId: admin.id,
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

// On-demand CPU profile of the measured run only (not migrations, seeding or warm-up).
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
      // Explicitly: a pool's idle timers must not keep a stopped server alive.
      process.exit(0);
    })());
  process.on('message', (msg) => {
    if (msg?.type === 'stop') void stop();
    // CPU time of this process, so the parent can tell a CPU-bound server from one waiting on the database.
    if (msg?.type === 'cpu') send({ type: 'cpu', usage: process.cpuUsage(), at: Number(process.hrtime.bigint() / 1000n) });
    if (msg?.type === 'profile-start') void profileStart().then(() => send({ type: 'profile-started' }), (err) => send({ type: 'error', message: String(err) }));
    if (msg?.type === 'profile-stop') void profileStop(msg.file).then(() => send({ type: 'profile-stopped', file: msg.file }), (err) => send({ type: 'error', message: String(err) }));
  });
  process.on('disconnect', () => void stop());
  process.on('SIGTERM', () => void stop());
  send({ type: 'ready', ...started.ready });
}

main().catch((err) => {
  send({ type: 'error', message: err?.stack ?? String(err) });
  process.exitCode = 1;
  setTimeout(() => process.exit(1), 100).unref();
});
