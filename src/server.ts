// The daemon's hapi server, built on a context (tests call createServer and use server.inject),
// and the metrics' own listener when they have a port of their own.
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import Hapi from '@hapi/hapi';
import type { Context } from './context.js';
import { ServiceError } from './errors.js';
import { restHost } from './http/rest/host.js';
import { NAMESPACE } from './http/rest/index-docs.js';
import { routeTable } from './http/routes/index.js';
import { registerPlainRoutes } from './http/plain-routes.js';
import { sessionRoutes } from './http/session-routes.js';
import { postbackRoutes } from './http/postback-routes.js';
import { clickRoutes } from './http/click-routes.js';
import { mediaRoutes } from './http/media-routes.js';
import { adminRoutes } from './http/admin-routes.js';
import { registerSecurityHeaders } from './http/security-headers.js';
import { bearerMatches, healthRoutes, NO_STORE, recordRequestMetrics } from './http/health-routes.js';
import { SESSION_COOKIE } from './http/rest/request-state.js';

export interface ServerOptions {
  port?: number;
  host?: string;
}

export async function createServer(ctx: Context, options: ServerOptions = {}): Promise<Hapi.Server> {
  const server = Hapi.server({
    port: options.port ?? ctx.config.server.port,
    host: options.host ?? ctx.config.server.host,
    router: { stripTrailingSlash: true, isCaseSensitive: false },
    state: { strictHeader: false, ignoreErrors: true },
    routes: {
      // A JSON body with a "__proto__" key is refused (400 rest_invalid_json), never merged.
      payload: { maxBytes: ctx.config.server.max_body_bytes, protoAction: 'error' },
      timeout: { server: false, socket: false },
      // A Range header is ignored (a JSON answer, an error in an `_envelope` too, is sent whole, 200):
      // a slice of JSON is no JSON. Only the media files, plain bytes, opt back in (media-routes.ts).
      response: { ranges: false },
    },
    load: { sampleInterval: 0 },
    debug: false,
  });
  server.state(SESSION_COOKIE, { encoding: 'none', strictHeader: true, ignoreErrors: true, isHttpOnly: true, isSameSite: 'Lax', path: '/' });
  await server.register({ plugin: restHost, options: { ctx, routes: routeTable } });
  // The routes outside the namespace, each table listed here so the compiler checks the wiring.
  registerPlainRoutes(server, [
    ...sessionRoutes(ctx),
    ...postbackRoutes(ctx),
    ...clickRoutes(ctx),
    ...healthRoutes(ctx),
    ...mediaRoutes(ctx),
    ...adminRoutes(ctx),
  ]);
  // The test postback calls this daemon at its own address once it listens.
  server.ext('onPostStart', () => ctx.selfUrl.setListening(server.info.uri));
  server.ext('onPostStop', () => ctx.selfUrl.setListening(null));
  recordRequestMetrics(server, ctx.metrics);
  // Last, so that it sees every response, the error JSON the REST host builds included.
  registerSecurityHeaders(server, ctx);
  return server;
}

/** The URL of the svc/v1 namespace as clients reach it: the public URL when one is set, else the server's own. */
export function namespaceUrl(ctx: Context, server: Hapi.Server): string {
  return `${ctx.selfUrl.get() ?? server.info.uri}/${ctx.config.server.rest_root}/${NAMESPACE}`;
}

/**
 * The metrics on a listener of their own (`metrics.port`): a plain HTTP server answering only
 * `GET /metrics`, usually bound to an address only the scraper reaches. The token is still checked
 * when one is configured.
 */
export async function startMetricsListener(ctx: Context): Promise<HttpServer> {
  const { token, host, port } = ctx.config.metrics;
  const listener = createHttpServer((req: IncomingMessage, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const answer = (status: number, body: string, type = 'text/plain; charset=utf-8', headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'Content-Type': type, 'Cache-Control': NO_STORE, 'X-Content-Type-Options': 'nosniff', ...headers });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (path !== '/metrics') return answer(404, 'not found\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return answer(405, 'method not allowed\n');
    // The token is throttled per address as on the main listener (this one has no proxy before it: the socket's address).
    const allowed =
      token === null
        ? Promise.resolve(true)
        : ctx.auth.checkBearer(() => bearerMatches(req.headers.authorization, token), req.socket.remoteAddress ?? null, 'metrics', 'svc_metrics_unauthorized');
    allowed
      .then(async (ok) => {
        if (!ok) return answer(401, 'unauthorized\n');
        const { contentType, body } = await ctx.metrics.render();
        answer(200, body, contentType);
      })
      .catch((err: unknown) => {
        if (err instanceof ServiceError && err.status === 429) return answer(429, 'too many attempts\n', undefined, err.headers);
        answer(500, 'metrics unavailable\n');
      });
  });
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(port!, host, () => {
      listener.off('error', reject);
      resolve();
    });
  });
  return listener;
}
