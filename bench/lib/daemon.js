// The child side of the benchmarks: a cashtrack context and server built from dist/ on a given
// database (migrated), and the IPC loop every server script runs: `{ type: 'ready', ... }` once
// started; `cpu`, `profile-start`, `profile-stop` on request; stop on `{ type: 'stop' }`, SIGTERM
// or a lost parent.

/**
 * Builds the context on `options.dbUrl` (`dataDir`, `secret`, optional `poolMax`), migrates it, runs
 * `setup(ctx, config)` and creates the server (listening on a loopback port, `port` or any, or only
 * initialized for `server.inject` when `listen` is false). Resolves with `{ ctx, config, server, close,
 * namespace, ...whatever setup returned }`; closes everything again when any step fails.
 */
export async function startDaemon(options, { overrides = {}, setup = async () => ({}), listen = true, port = 0 } = {}) {
  const { loadConfig } = await import('../../dist/src/config/index.js');
  const { buildContext, ensureSchema } = await import('../../dist/src/context.js');
  const { createServer } = await import('../../dist/src/server.js');
  const { NAMESPACE } = await import('../../dist/src/http/rest/index-docs.js');

  // Production needs a public URL; a loopback host without a port also admits the ephemeral port.
  const all = {
    'database.url': options.dbUrl,
    data_dir: options.dataDir,
    secret: options.secret,
    'server.public_url': 'http://127.0.0.1',
    'log.stdout': false,
    ...overrides,
  };
  if (options.poolMax) all['database.pool_max'] = options.poolMax;
  const config = loadConfig({ env: { CASHTRACK_ENV: 'production' }, overrides: all });
  const ctx = buildContext(config, { logStream: null });
  let server = null;
  const close = async () => {
    await server?.stop({ timeout: 2_000 }).catch(() => {});
    await ctx.appPasswords?.drain?.().catch(() => {});
    await ctx.close().catch(() => {});
  };
  try {
    await ensureSchema(ctx, true);
    const extra = await setup(ctx, config);
    if (options.workers > 1) {
      // The daemon as an operator runs it, `cashtrack serve --workers N`, on the same configuration.
      await ctx.logger.flush();
      const cluster = await serveWorkers(all, options.workers, port);
      const stopCluster = close;
      return { ctx, config, server: cluster.server, cpuUsage: cluster.cpuUsage, close: () => cluster.stop().then(stopCluster), namespace: NAMESPACE, ...extra };
    }
    server = await createServer(ctx, { port, host: '127.0.0.1' });
    if (listen) await server.start();
    else await server.initialize();
    return { ctx, config, server, close, namespace: NAMESPACE, ...extra };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * `cashtrack serve --workers N` on loopback with `settings` (dotted configuration keys) as its
 * CASHTRACK_* variables; resolves once every worker listens, with a server-like `{ info: { uri } }`,
 * the CPU time of the supervisor and its workers (as process.cpuUsage() gives it), and `stop`.
 */
async function serveWorkers(settings, workers, port) {
  const { spawn } = await import('node:child_process');
  const { readFileSync } = await import('node:fs');
  const { ENV_KEYS } = await import('../../dist/src/config/index.js');
  const { cliEnv, root } = await import('./child.js');
  const byKey = Object.fromEntries(Object.entries(ENV_KEYS).map(([name, key]) => [key, name]));
  const env = { CASHTRACK_ENV: 'production' };
  for (const [key, value] of Object.entries(settings)) {
    if (!byKey[key]) throw new Error(`no CASHTRACK_* variable sets ${key}`);
    env[byKey[key]] = String(value);
  }
  const child = spawn(process.execPath, [`${root}/bin/cashtrack`, 'serve', '--host', '127.0.0.1', '--port', String(port), '--workers', String(workers)], {
    env: cliEnv(env),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const uri = await new Promise((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (s) => {
      stderr += s;
      const m = /cashtrack: \d+ workers listening on (http:\/\/[\d.:]+) /.exec(stderr);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code, signal) => reject(new Error(`cashtrack serve --workers ${workers} exited (${signal ?? code}): ${stderr.slice(-2000)}`)));
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  // utime + stime of the supervisor and its workers, in clock ticks (100 a second on Linux).
  const cpuUsage = () => {
    const ticks = [child.pid, ...readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)].map((pid) => {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return Number(fields[11]) + Number(fields[12]);
    });
    return { user: ticks.reduce((a, b) => a + b, 0) * 10_000, system: 0 };
  };
  return {
    server: { info: { uri } },
    cpuUsage,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** An administrator `login` (unless `existing` is given) and a fresh application password for it. */
export async function benchAdmin(ctx, login, existing = null) {
  const user = existing ?? (await ctx.users.create({ login, email: `${login}@localhost.invalid`, role: 'administrator' }, 'bench'));
  const { password } = await ctx.appPasswords.create(user, `bench ${Date.now()}`, 'bench');
  return { user, password, authorization: `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}` };
}

export function send(message) {
  if (process.connected) process.send(message);
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

/**
 * Starts with `start()` (resolving with `{ close, ready }`), reports `ready` over IPC and answers the
 * parent until stopped. A failure to start is reported as `{ type: 'error' }` and exits 1.
 */
export function serveOverIpc(start) {
  let stopping = null;
  const main = async () => {
    const started = await start();
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
      if (msg?.type === 'cpu') send({ type: 'cpu', usage: started.cpuUsage?.() ?? process.cpuUsage(), at: Number(process.hrtime.bigint() / 1000n) });
      if (msg?.type === 'profile-start')
        void profileStart().then(
          () => send({ type: 'profile-started' }),
          (err) => send({ type: 'error', message: String(err) }),
        );
      if (msg?.type === 'profile-stop')
        void profileStop(msg.file).then(
          () => send({ type: 'profile-stopped', file: msg.file }),
          (err) => send({ type: 'error', message: String(err) }),
        );
    });
    process.on('disconnect', () => void stop());
    process.on('SIGTERM', () => void stop());
    send({ type: 'ready', ...started.ready });
  };
  main().catch((err) => {
    send({ type: 'error', message: err?.stack ?? String(err) });
    process.exitCode = 1;
    setTimeout(() => process.exit(1), 100).unref();
  });
}
