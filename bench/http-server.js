// The server side of `npm run bench:http`, run in a child process so autocannon's CPU does not
// share the server's event loop. `node bench/http-server.js bare` answers a constant object with
// plain hapi; `node bench/http-server.js cashtrack <json>` seeds a database and serves the daemon
// (`workers` in the json: `cashtrack serve --workers N`);
// `node bench/http-server.js ceiling <json>` serves the fair ceiling: plain hapi running exactly
// the statements the logs route runs, on the same driver and database, and nothing else.
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

/** The daemon on a seeded database (seeded once: the namespace and the ceiling share the file). */
function daemonOnLogs(options, startOptions = {}) {
  return startDaemon(options, {
    ...startOptions,
    setup: async (ctx) => {
      const existing = await ctx.users.findByLogin('bench');
      const { authorization } = await benchAdmin(ctx, 'bench', existing);
      await ctx.logger.flush();
      if (!existing) await seedLogs(ctx);
      const [{ n }] = await ctx.db.select('SELECT COUNT(*) AS n FROM logs');
      return { authorization, logRows: Number(n) };
    },
  });
}

const routePath = (config, namespace) => `/${config.server.rest_root}/${namespace}/logs?per_page=10`;

/** The daemon, or with `options.workers` > 1 `cashtrack serve --workers N` on the same database. */
async function startCashtrack(options) {
  const { server, config, ctx, close, cpuUsage, namespace, authorization, logRows } = await daemonOnLogs(options);
  return { close, cpuUsage, ready: { url: `${server.info.uri}${routePath(config, namespace)}`, authorization, logRows, dialect: ctx.db.dialect } };
}

/**
 * The statements the logs route runs, read off the route itself: one request through the real
 * daemon (not listening), every SELECT between the route's pre-handler and post-handler steps
 * recorded with its parameters. So the ceiling follows the route when its SQL changes, and the
 * authentication's own statements (before the handler) stay out of it.
 */
async function captureRouteSql(daemon) {
  const { server, ctx, config, namespace, authorization } = daemon;
  const statements = [];
  let capturing = false;
  const select = ctx.db.select.bind(ctx.db);
  ctx.db.select = (sql, params = [], t) => {
    if (capturing) statements.push({ sql, params: [...params] });
    return select(sql, params, t);
  };
  server.ext('onPreHandler', (_request, h) => {
    capturing = true;
    return h.continue;
  });
  server.ext('onPostHandler', (_request, h) => {
    capturing = false;
    return h.continue;
  });
  const res = await server.inject({ method: 'GET', url: routePath(config, namespace), headers: { authorization } });
  ctx.db.select = select;
  if (res.statusCode !== 200) throw new Error(`capturing the route's SQL: it answered ${res.statusCode}: ${res.payload.slice(0, 300)}`);
  if (statements.length === 0) throw new Error("capturing the route's SQL: the route ran no SELECT");
  return statements;
}

async function startCeiling(options) {
  const daemon = await daemonOnLogs(options, { listen: false });
  try {
    const statements = await captureRouteSql(daemon);
    const { ctx } = daemon;
    const server = Hapi.server({ port: 0, host: '127.0.0.1', load: { sampleInterval: 0 }, debug: false });
    // The statements run one after another as the route runs them; the last one's rows are the answer.
    server.route({
      method: 'GET',
      path: '/',
      handler: async () => {
        let rows = [];
        for (const s of statements) rows = await ctx.db.select(s.sql, s.params);
        return rows;
      },
    });
    await server.start();
    return {
      ready: { url: `${server.info.uri}/`, statements: statements.map((s) => s.sql) },
      close: async () => {
        await server.stop({ timeout: 2_000 }).catch(() => {});
        await daemon.close();
      },
    };
  } catch (err) {
    await daemon.close();
    throw err;
  }
}

serveOverIpc(async () => {
  const starts = { bare: startBare, cashtrack: () => startCashtrack(JSON.parse(rawOptions)), ceiling: () => startCeiling(JSON.parse(rawOptions)) };
  if (!Object.hasOwn(starts, mode)) throw new Error('usage: http-server.js bare | cashtrack <json> | ceiling <json>');
  const started = await starts[mode]();
  return started;
});
