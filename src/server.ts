// The daemon's hapi server, built on a context. Tests call createServer and use server.inject.
import Hapi from '@hapi/hapi';
import type { Context } from './context.js';
import { restHost } from './http/rest/host.js';
import { routeTable } from './http/routes/index.js';
import { registerPlainRoutes } from './http/plain-routes.js';
import { sessionRoutes } from './http/session-routes.js';
import { postbackRoutes } from './http/postback-routes.js';
import { mediaRoutes } from './http/media-routes.js';
import { registerSecurityHeaders } from './http/security-headers.js';
import { healthRoutes, recordRequestMetrics } from './http/health-routes.js';
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
    },
    load: { sampleInterval: 0 },
    debug: false,
  });
  server.state(SESSION_COOKIE, { encoding: 'none', strictHeader: true, ignoreErrors: true, isHttpOnly: true, isSameSite: 'Lax', path: '/' });
  await server.register({ plugin: restHost, options: { ctx, routes: routeTable } });
  // The routes outside the namespace, each table listed here so the compiler checks the wiring.
  registerPlainRoutes(server, [...sessionRoutes(ctx), ...postbackRoutes(ctx), ...healthRoutes(ctx), ...mediaRoutes(ctx)]);
  // The test postback calls this daemon at its own address once it listens.
  server.ext('onPostStart', () => ctx.selfUrl.setListening(server.info.uri));
  server.ext('onPostStop', () => ctx.selfUrl.setListening(null));
  recordRequestMetrics(server, ctx.metrics);
  // Last, so that it sees every response, the error JSON the REST host builds included.
  registerSecurityHeaders(server, ctx);
  return server;
}
