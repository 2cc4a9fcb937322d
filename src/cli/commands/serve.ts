// `cashtrack serve`: the daemon. The context, hapi and the job runner load when it starts, not when
// its help is shown. With `--workers N` (N > 1) this process is the supervisor (src/supervisor.ts)
// and each of its cluster workers runs the daemon below.
import cluster from 'node:cluster';
import type { Command } from 'commander';
import type { Config } from '../../config/index.js';
import type { Context } from '../../context.js';
import type { JobRunner } from '../../jobs/runner.js';
import type { Scheduler } from '../../jobs/scheduler.js';
import type { createServer, startMetricsListener } from '../../server.js';
import { ServiceError } from '../../errors.js';
import { workerCount } from '../../config/workers.js';
import { Supervisor, WORKER_READY } from '../../supervisor.js';
import { loadCliConfig, testHold, type Io } from '../io.js';
import { port, workers, type Run } from '../options.js';

export function register(serve: Command, run: Run): void {
  serve
    .option('--port <n>', 'port to listen on (overrides CASHTRACK_PORT)', port)
    .option('--host <addr>', 'address to listen on (overrides CASHTRACK_HOST)')
    .option('--workers <n>', 'daemon processes on the port: a number, or auto for one per CPU (overrides CASHTRACK_WORKERS)', workers)
    .option('--migrate', 'run pending migrations on MariaDB/MySQL before starting')
    .action(run(start));
}

/** The first administrator's credentials, shown once in the first-run banner. */
export interface FirstAdministrator {
  login: string;
  password: string;
}

/**
 * First start with no administrator: create `admin` with a one-time application password. Called
 * before the daemon listens, so no request is ever answered by a daemon without an administrator;
 * the banner (firstRunBanner) is printed once it listens, when its URL is known.
 */
export async function ensureAdministrator(ctx: Context, io: Io): Promise<FirstAdministrator | null> {
  if (await ctx.users.hasAdministrator()) return null;
  let admin = await ctx.users.findByLogin('admin');
  if (admin && (admin.role !== 'administrator' || admin.status !== 'active')) {
    // Never hand out a password for an account that cannot use it, nor promote one silently.
    io.stderr.write(
      `cashtrack: no active administrator, and the login "admin" is taken by a ${admin.status} ${admin.role}.\n` +
        '  create one with: cashtrack users create LOGIN --email EMAIL --role administrator, then cashtrack app-passwords create LOGIN --name NAME\n',
    );
    return null;
  }
  if (!admin) {
    try {
      admin = await ctx.users.create({ login: 'admin', email: 'admin@localhost.invalid', display_name: 'Administrator', role: 'administrator' }, 'first-run');
    } catch (err) {
      // Another daemon starting at the same moment created it.
      if ((err as { code?: string }).code !== 'svc_user_exists') throw err;
      return null;
    }
  }
  const { password } = await ctx.appPasswords.create(admin, `first-run ${ctx.clock.now().toISOString()}`, 'first-run');
  return { login: admin.login, password };
}

/**
 * The first-run banner: framed, so it stands out between the JSON log lines around it, with the
 * application password (REST API) and how to give the administrator a login password (POST
 * /login, the /admin/ screens).
 */
export function firstRunBanner(admin: FirstAdministrator, namespaceUrl: string): string {
  const lines = [
    'cashtrack: no administrator existed, so one was created. Keep this password now: it is not shown again.',
    '',
    `  login:           ${admin.login}`,
    `  app password:    ${admin.password}`,
    `  REST API:        ${namespaceUrl}`,
    `  try:             curl -u '${admin.login}:${admin.password}' ${namespaceUrl}/logs`,
    '',
    'The app password is for the REST API (HTTP Basic). To log in at /admin/ (POST /login), give',
    `${admin.login} a login password (read from standard input, never from the command line):`,
    `  cashtrack users set-password ${admin.login}`,
  ];
  const width = Math.max(...lines.map((l) => l.length));
  const rule = `+${'-'.repeat(width + 2)}+`;
  return ['', rule, ...lines.map((l) => `| ${l.padEnd(width)} |`), rule, ''].join('\n');
}

export async function start(io: Io, opts: { port?: number; host?: string; migrate?: boolean; workers?: number | 'auto' }): Promise<void> {
  const overrides: Record<string, unknown> = {};
  if (opts.port !== undefined) overrides['server.port'] = opts.port;
  if (opts.host !== undefined) overrides['server.host'] = opts.host;
  if (opts.workers !== undefined) overrides['server.workers'] = opts.workers;
  const config = await loadCliConfig(io, overrides);
  // One worker is the daemon itself, with no supervisor in between.
  const count = workerCount(config.server.workers);
  if (cluster.isPrimary && count > 1) {
    const supervisor = new Supervisor({ workers: count, log: config.log.stdout ? io.stdout : null, stderr: io.stderr });
    return supervisor.run();
  }
  if (!cluster.isWorker) return serveDaemon(io, config, opts);
  try {
    await serveDaemon(io, config, opts);
  } finally {
    // The channel to the supervisor would keep the process alive once the daemon stopped (or failed to start).
    if (cluster.worker?.isConnected()) cluster.worker.disconnect();
  }
}

async function serveDaemon(io: Io, config: Config, opts: { migrate?: boolean }): Promise<void> {
  const { buildContext, ensureSchema, loadContextExtensions } = await import('../../context.js');
  const { createServer, namespaceUrl: namespaceUrlOf, startMetricsListener } = await import('../../server.js');
  const { JobRunner } = await import('../../jobs/runner.js');
  const { Scheduler } = await import('../../jobs/scheduler.js');
  const ctx = buildContext(config, { logStream: config.log.stdout ? io.stdout : null, holdInTransaction: testHold(io, config) });
  // Configuration a service reads on first use, checked before anything runs (the commands check it when they use it).
  void ctx.payouts.minimum;
  let server: Awaited<ReturnType<typeof createServer>> | null = null;
  let scheduler: Scheduler | null = null;
  let runner: JobRunner | null = null;
  let metricsListener: Awaited<ReturnType<typeof startMetricsListener>> | null = null;
  try {
    const applied = await ensureSchema(ctx, opts.migrate ? true : undefined);
    if (applied.length) ctx.logger.info('db', 'Migrations applied', { migrations: applied });
    await loadContextExtensions(ctx);
    // Before listening: the first request that succeeds already finds the administrator.
    const firstAdmin = await ensureAdministrator(ctx, io);
    server = await createServer(ctx);
    try {
      await server.start();
    } catch (err) {
      // Another daemon (or program) has the port: an operator error to name, not a fault to trace.
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      const address = `${config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host}:${config.server.port}`;
      throw new ServiceError(
        'svc_port_in_use',
        `Address ${address} is already in use: stop what listens there, or choose another port (--port or CASHTRACK_PORT).`,
        500,
        { address: config.server.host, port: config.server.port },
      );
    }
    const namespaceUrl = namespaceUrlOf(ctx, server);
    if (config.metrics.enabled && config.metrics.port !== null) metricsListener = await startMetricsListener(ctx);
    // Jobs start once the server is up (a job may call the daemon's own URL) and stop before the
    // context closes. `jobs.concurrency` 0 makes this a daemon that serves requests only.
    runner = new JobRunner({
      ctx,
      jobs: ctx.jobs,
      concurrency: config.jobs.concurrency,
      leaseMs: config.jobs.lease_seconds * 1000,
      pollIntervalMs: config.jobs.poll_interval_ms,
    });
    runner.start();
    // Schedules fire once the runner is there to run what they queue; missed runs are caught up first.
    scheduler = new Scheduler({ schedules: ctx.schedules, logger: ctx.logger });
    await scheduler.start();
    // Webhooks: a pass now sends what was queued while no daemon was sending (or before a crash).
    if (config.webhooks.send) ctx.webhookSender.start();
    ctx.logger.info('daemon', 'Listening', {
      url: server.info.uri,
      namespace: namespaceUrl,
      database: ctx.db.dialect,
      job_runner: runner.owner,
      job_concurrency: config.jobs.concurrency,
      webhook_sender: config.webhooks.send,
      ...(metricsListener ? { metrics: metricsListener.address() } : {}),
    });
    // After the last start-up log line, so it is not lost among them.
    if (firstAdmin) io.stdout.write(`${firstRunBanner(firstAdmin, namespaceUrl)}\n`);
    io.stderr.write(`cashtrack: listening on ${server.info.uri} (REST API ${namespaceUrl})\n`);
    if (cluster.isWorker) process.send!({ type: WORKER_READY, url: server.info.uri });
  } catch (err) {
    await scheduler?.stop().catch(() => {});
    await runner?.stop().catch(() => {});
    metricsListener?.close();
    await server?.stop().catch(() => {});
    await ctx.close().catch(() => {});
    throw err;
  }
  await new Promise<void>((resolve) => {
    const stop = async (signal: string) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      // A worker gets a terminal's Ctrl-C and then its supervisor's SIGTERM: the second must not
      // cut its drain short (the supervisor kills it if it takes too long).
      if (cluster.isWorker) for (const s of ['SIGINT', 'SIGTERM'] as const) process.on(s, () => {});
      ctx.logger.info('daemon', 'Stopping', { signal });
      // /readyz answers 503 from here on, so a balancer stops sending while requests drain.
      ctx.health.markStopping();
      metricsListener?.close();
      if (cluster.isWorker) await refuseNewConnections(server!.listener);
      await scheduler!.stop();
      // Running jobs are told to stop and given back to the queue while requests drain.
      await Promise.all([runner!.stop(), server!.stop({ timeout: 10_000 }), ctx.webhookSender.stop()]);
      await ctx.appPasswords.drain();
      await ctx.close();
      resolve();
    };
    const onInt = () => void stop('SIGINT');
    const onTerm = () => void stop('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
    // SIGHUP is the supervisor's (a rolling reload), also when a closing terminal sends it to all.
    if (cluster.isWorker) process.on('SIGHUP', () => {});
  });
}

/** How long a stopping worker lets the connections already handed to it send their requests. */
const HANDED_OVER_GRACE_MS = 500;

/**
 * A stopping worker first declines the connections the supervisor hands it: a worker whose server
 * is at its `maxConnections` answers the primary's handoff "not accepted", and node:cluster's
 * round-robin primary gives that connection to another worker. Node tests the limit only when it is
 * truthy, so "none at all" is -1, not 0 (0 means no limit). Closing the listener at once would end a connection handed
 * over a moment before its request arrived (the client sees ECONNRESET); after the grace, a
 * connection still without a request is one the client left idle.
 */
async function refuseNewConnections(listener: { maxConnections: number }): Promise<void> {
  listener.maxConnections = -1;
  await new Promise((resolve) => setTimeout(resolve, HANDED_OVER_GRACE_MS));
}
