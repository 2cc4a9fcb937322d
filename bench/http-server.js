// The server side of `npm run bench:http`, run in a child process so autocannon's CPU does not
// share the server's event loop. `node bench/http-server.js bare` answers a constant object with
// plain hapi; `node bench/http-server.js cashtrack <json>` seeds a database and serves the daemon.
// It reports `{ type: 'ready', ... }` over IPC and stops on `{ type: 'stop' }` or a lost parent.
import Hapi from '@hapi/hapi';
import { benchAdmin, serveOverIpc, startDaemon } from './lib/daemon.js';

const LOG_ROWS = 10_000;
const BATCH = 500;
const LEVELS = ['info', 'info', 'info', 'warning', 'error'];
const SOURCES = ['auth', 'users', 'http', 'jobs', 'db', 'networks', 'ledger'];

const [mode, rawOptions] = process.argv.slice(2);

async function startBare() {
  const server = Hapi.server({ port: 0, host: '127.0.0.1', load: { sampleInterval: 0 }, debug: false });
  const body = { ok: true, name: 'cashtrack' };
  server.route({ method: 'GET', path: '/', handler: () => body });
  await server.start();
  return { ready: { url: `${server.info.uri}/` }, close: () => server.stop({ timeout: 2_000 }).catch(() => {}) };
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
  const { server, config, ctx, close, namespace, authorization, logRows } = await startDaemon(options, {
    setup: async (ctx) => {
      const existing = await ctx.users.findByLogin('bench');
      const { authorization } = await benchAdmin(ctx, 'bench', existing);
      await ctx.logger.flush();
      if (!existing) await seedLogs(ctx);
      const [{ n }] = await ctx.db.select('SELECT COUNT(*) AS n FROM logs');
      return { authorization, logRows: Number(n) };
    },
  });
  const path = `/${config.server.rest_root}/${namespace}/logs?per_page=10`;
  return { close, ready: { url: `${server.info.uri}${path}`, authorization, logRows, dialect: ctx.db.dialect } };
}

serveOverIpc(async () => {
  const started = mode === 'bare' ? await startBare() : mode === 'cashtrack' ? await startCashtrack(JSON.parse(rawOptions)) : null;
  if (!started) throw new Error(`usage: http-server.js bare | cashtrack <json>`);
  return started;
});
