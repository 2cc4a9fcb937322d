// The server side of `npm run bench:http`, run in a child process so autocannon's CPU does not
// share the server's event loop. `node bench/http-server.js bare` answers a constant object with
// plain hapi; `node bench/http-server.js cashtrack <json>` seeds a database and serves the daemon.
// It reports `{ type: 'ready', ... }` over IPC and stops on `{ type: 'stop' }` or a lost parent.
import Hapi from '@hapi/hapi';

const LOG_ROWS = 10_000;
const BATCH = 500;
const LEVELS = ['info', 'info', 'info', 'warning', 'error'];
const SOURCES = ['auth', 'users', 'http', 'jobs', 'db', 'networks', 'ledger'];

const [mode, rawOptions] = process.argv.slice(2);
let stopping = null;

function send(message) {
  if (process.connected) process.send(message);
}

async function startBare() {
  const server = Hapi.server({ port: 0, host: '127.0.0.1', load: { sampleInterval: 0 }, debug: false });
  const body = { ok: true, name: 'cashtrack' };
  server.route({ method: 'GET', path: '/', handler: () => body });
  await server.start();
  return { server, ready: { url: `${server.info.uri}/` }, close: async () => {} };
}

/** Stores `LOG_ROWS` entries through the log service, newest last, one minute apart. */
async function seedLogs(ctx) {
  const now = Date.now();
  for (let start = 0; start < LOG_ROWS; start += BATCH) {
    const n = Math.min(BATCH, LOG_ROWS - start);
    const entries = [];
    for (let k = 0; k < n; k++) {
      const i = start + k;
      entries.push({
        created_at: new Date(now - (LOG_ROWS - i) * 60_000),
        level: LEVELS[i % LEVELS.length],
        source: SOURCES[i % SOURCES.length],
        message: `Bench entry ${i}: synthetic log line for the HTTP benchmark`,
        context: JSON.stringify({ i, route: 'logs.list', user_id: 1 + (i % 50), note: 'x'.repeat(i % 40) }),
        request_id: `bench${i.toString(36)}`,
      });
    }
    await ctx.logger.appendMany(entries);
  }
}

async function startCashtrack(options) {
  const { loadConfig } = await import('../dist/src/config.js');
  const { buildContext, ensureSchema } = await import('../dist/src/context.js');
  const { createServer } = await import('../dist/src/server.js');
  const { NAMESPACE } = await import('../dist/src/http/rest/index-docs.js');

  const config = loadConfig({
    env: { CASHTRACK_ENV: 'production' },
    overrides: { 'database.url': options.dbUrl, data_dir: options.dataDir, secret: options.secret, 'log.stdout': false },
  });
  const ctx = buildContext(config, { logStream: null });
  let server = null;
  const close = async () => {
    await server?.stop({ timeout: 2_000 }).catch(() => {});
    await ctx.appPasswords.drain().catch(() => {});
    await ctx.close().catch(() => {});
  };
  try {
    await ensureSchema(ctx, true);
    let user = await ctx.users.findByLogin('bench');
    let seeded = false;
    if (!user) {
      user = await ctx.users.create({ login: 'bench', email: 'bench@localhost.invalid', role: 'administrator' }, 'bench');
      seeded = true;
    }
    const { password } = await ctx.appPasswords.create(user, `bench ${Date.now()}`, 'bench');
    await ctx.logger.flush();
    if (seeded) await seedLogs(ctx);
    const [{ n }] = await ctx.db.select('SELECT COUNT(*) AS n FROM logs');

    server = await createServer(ctx, { port: 0, host: '127.0.0.1' });
    await server.start();
    const path = `/${config.server.rest_root}/${NAMESPACE}/logs?per_page=10`;
    return {
      server,
      close,
      ready: {
        url: `${server.info.uri}${path}`,
        authorization: `Basic ${Buffer.from(`bench:${password}`).toString('base64')}`,
        logRows: Number(n),
        dialect: ctx.db.dialect,
      },
    };
  } catch (err) {
    await close();
    throw err;
  }
}

// On-demand CPU profile of the measured run only (not migrations or seeding).
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
  const started = mode === 'bare' ? await startBare() : mode === 'cashtrack' ? await startCashtrack(JSON.parse(rawOptions)) : null;
  if (!started) throw new Error(`usage: http-server.js bare | cashtrack <json>`);
  const stop = () =>
    (stopping ??= (async () => {
      await started.server.stop({ timeout: 2_000 }).catch(() => {});
      await started.close();
      if (process.connected) process.disconnect();
      // Explicitly: a pool's idle timers must not keep a stopped server alive.
      process.exit(0);
    })());
  process.on('message', (msg) => {
    if (msg?.type === 'stop') void stop();
    // CPU time of this process, so the parent can tell a CPU-bound server from an idle one.
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
