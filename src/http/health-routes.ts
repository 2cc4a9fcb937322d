// Outside the REST root, for load balancers, orchestrators and Prometheus: `GET /healthz` (the
// process answers), `GET /readyz` (database, migrations, not stopping) and, when metrics are on and
// have no listener of their own, `GET /metrics` behind a bearer token. None of them needs a user;
// the probes answer whatever Host a balancer sends (it often dials the address itself).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Server } from '@hapi/hapi';
import Joi from 'joi';
import type { Context } from '../context.js';
import { ServiceError } from '../errors.js';
import type { Metrics } from '../metrics.js';
import type { PlainRouteDef } from './plain-routes.js';
import { state } from './rest/request-state.js';

/** Paths answered without the Host check (see src/http/rest/host.ts). */
export const PROBE_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);

export const NO_STORE = 'no-store';
/** The probes and the metrics take no parameters; anything else is a 400, not ignored. */
const noQuery = { query: Joi.object({}) };

/** True when `header` is `Bearer <token>` for the configured token (constant time). */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  if (!m) return false;
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(m[1]), digest(token));
}

function metricsRefused(): ServiceError {
  return new ServiceError('svc_metrics_unauthorized', 'The metrics need the configured bearer token.', 401);
}

/** The probes, and the metrics when they are on and have no listener of their own. */
export function healthRoutes(ctx: Context): PlainRouteDef[] {
  const probes: PlainRouteDef[] = [
    {
      id: 'healthz',
      method: 'GET',
      path: '/healthz',
      auth: 'public',
      description: 'The process answers.',
      validate: noQuery,
      handler: (_request, h) => h.response({ status: 'ok' }).header('Cache-Control', NO_STORE),
    },
    {
      id: 'readyz',
      method: 'GET',
      path: '/readyz',
      auth: 'public',
      description: 'The database answers, the schema is current and the daemon is not stopping.',
      validate: noQuery,
      async handler(_request, h) {
        const r = await ctx.health.readiness();
        return h
          .response({ status: r.ready ? 'ready' : 'not_ready', ...r })
          .code(r.ready ? 200 : 503)
          .header('Cache-Control', NO_STORE);
      },
    },
  ];
  const { metrics } = ctx;
  if (!metrics.enabled || ctx.config.metrics.port !== null) return probes;
  const token = ctx.config.metrics.token!;
  return [
    ...probes,
    {
      id: 'metrics',
      method: 'GET',
      path: '/metrics',
      auth: 'public',
      description: 'Prometheus metrics (bearer token).',
      validate: noQuery,
      async handler(request, h) {
        const ip = state(request).ip;
        if (
          !(await ctx.auth.checkBearer(
            () => bearerMatches(request.headers.authorization as string | undefined, token),
            ip,
            'metrics',
            'svc_metrics_unauthorized',
          ))
        )
          throw metricsRefused();
        const { contentType, body } = await metrics.render();
        return h.response(body).type(contentType).header('Cache-Control', NO_STORE);
      },
    },
  ];
}

/** When metrics are on: every response of the server counted by route, method and status, with its duration. */
export function recordRequestMetrics(server: Server, metrics: Metrics): void {
  if (!metrics.enabled) return;
  server.events.on('response', (request) => {
    const response = request.response as { statusCode?: number } | null;
    const status = response?.statusCode ?? 500;
    // The route's id, or its path template (bounded either way, unlike request.path).
    const route = request.route.settings.id ?? request.route.path;
    metrics.request(route, request.method, status, (Date.now() - request.info.received) / 1000);
  });
}
