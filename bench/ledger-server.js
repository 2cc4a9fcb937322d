// The server side of `npm run bench:ledger`, run in a child process so autocannon's CPU does not
// share the daemon's event loop. `node bench/ledger-server.js <json>` migrates the database, creates
// an administrator with an application password and serves the daemon on a loopback port; the
// parent seeds the members and entries itself. It reports `{ type: 'ready', ... }` over IPC and
// stops on `{ type: 'stop' }`, SIGTERM or a lost parent.
import { benchAdmin, serveOverIpc, startDaemon } from './lib/daemon.js';

const [rawOptions] = process.argv.slice(2);

async function startCashtrack(options) {
  const { server, config, ctx, close, cpuUsage, namespace, admin } = await startDaemon(options, {
    setup: async (ctx) => {
      // A hyphen: no seeded member's login has one.
      const admin = await benchAdmin(ctx, 'bench-admin');
      await ctx.logger.flush();
      return { admin };
    },
  });
  return {
    close,
    cpuUsage,
    ready: {
      origin: server.info.uri,
      prefix: `/${config.server.rest_root}/${namespace}`,
      authorization: admin.authorization,
      adminId: admin.user.id,
      dialect: ctx.db.dialect,
      poolMax: config.database.pool_max,
      currency: config.currency,
      workers: options.workers ?? 1,
    },
  };
}

serveOverIpc(() => startCashtrack(JSON.parse(rawOptions ?? 'null') ?? {}));
