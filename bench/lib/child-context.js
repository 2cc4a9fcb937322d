// The cashtrack side of the one-process-per-run benchmarks (sync, feed, coupons, content pages and
// logos): the options the parent passed (bench/lib/fresh-db.js), a production context built from
// dist/ on its database, migrated, and the IPC answer: `done` with what the work returned, or
// `error`; the context is closed either way.
//
// `options.root` (a checkout's directory) runs another checkout's dist/ against the same benchmark:
// a before/after comparison of two commits on one fixture (bench/poll.js --before DIR).

/** The parent's options: `{ dbUrl, dataDir, secret, root?, ...payload }`. */
export const options = JSON.parse(process.argv[2]);

const dist = options.root ? new URL(`file://${options.root.replace(/\/?$/, '/')}dist/`) : new URL('../../dist/', import.meta.url);
const { loadConfig } = await import(new URL('src/config/index.js', dist).href);
const { buildContext, ensureSchema } = await import(new URL('src/context.js', dist).href);

/**
 * A context on the parent's database with `overrides` (config keys). `loopback`: the fixture
 * servers listen on 127.0.0.1 (any port), which the outbound guard refuses unless it is allowed.
 */
export function childContext({ loopback = false, overrides = {} } = {}) {
  const config = loadConfig({
    env: { CASHTRACK_ENV: 'production' },
    overrides: {
      'database.url': options.dbUrl,
      data_dir: options.dataDir,
      secret: options.secret,
      'server.public_url': 'http://127.0.0.1',
      'log.stdout': false,
      ...(loopback ? { 'outbound.allow': ['127.0.0.1:*'] } : {}),
      ...overrides,
    },
  });
  return buildContext(config, { logStream: null });
}

/** Migrates `ctx`, runs `work()` and sends `{ type: 'done', ...its result }` (or `error`); closes `ctx`. */
export async function runChild(ctx, work) {
  try {
    await ensureSchema(ctx, true);
    process.send({ type: 'done', ...(await work()) });
  } catch (err) {
    process.send({ type: 'error', message: String(err?.stack ?? err) });
  } finally {
    await ctx.close().catch(() => {});
  }
}

/** `fn()`'s result and how long it took, in seconds. */
export async function timed(fn) {
  const started = process.hrtime.bigint();
  const result = await fn();
  return { result, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}
