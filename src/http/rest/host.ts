// The REST host: serves the `svc/v1` namespace under the REST root with the host platform's
// conventions (auth before routing, validation before permission, the error JSON, paging headers,
// method override, `?rest_route=`, `_envelope`, `_fields`, index documents, OPTIONS, discovery).
import { Stream } from 'node:stream';
import type { Plugin, Request, ResponseObject, ResponseToolkit, Server } from '@hapi/hapi';
import Joi from 'joi';
import type { Context } from '../../context.js';
import { ServiceError } from '../../errors.js';
import { IdempotencyService, requestHash } from '../../services/idempotency/index.js';
import { can } from '../../services/auth/index.js';
import { hostCheck } from './allowed-hosts.js';
import { toRestError } from './errors.js';
import { parseFields, pickFields } from './fields.js';
import { foldBracketArrays } from './query-arrays.js';
import { NAMESPACE, namespaceIndex, rootIndex, routeData, routeKey } from './index-docs.js';
import { clientIp, readCookie, SESSION_COOKIE, siteUrl, state, type RestState } from './request-state.js';
import { PagedResult, RestResponse, type RestInput, type RouteDef } from './types.js';
import { PROBE_PATHS } from '../health-routes.js';

/** Query parameters the host consumes itself; never passed to route validation. */
const GLOBAL_PARAMS = ['_envelope', '_fields', '_method', '_wpnonce', '_locale', '_pretty', '_embed', 'rest_route', 'context'];
const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
const BODY_METHODS = new Set(['post', 'put', 'patch', 'delete']);

export interface RestHostOptions {
  ctx: Context;
  routes: RouteDef[];
}

let requestCounter = 0;
const processTag = Math.random().toString(36).slice(2, 6);

export const restHost: Plugin<RestHostOptions> = {
  name: 'cashtrack-rest-host',
  register(server: Server, { ctx, routes }: RestHostOptions) {
    const root = `/${ctx.config.server.rest_root}`;
    const nsPrefix = `${root}/${NAMESPACE}`;
    const trustProxy = ctx.config.server.trust_proxy;
    // Once per process: the value points at the proxy's configuration (or a client that reaches the
    // daemon past it), and a line per request would let anyone fill the log.
    let forwardedWarned = false;
    const unusableForwarded = (value: string) => {
      if (forwardedWarned) return;
      forwardedWarned = true;
      ctx.logger.warning('http', 'X-Forwarded-For ends in a value that is not an address: the socket address is used instead (logged once)', {
        value: value.slice(0, 64),
      });
    };
    const rootLower = root.toLowerCase();
    // Paths are matched case-insensitively by the router, so the root is too.
    const isRestPath = (path: string) => {
      const p = path.toLowerCase();
      return p === rootLower || p.startsWith(`${rootLower}/`);
    };
    const matchers = routes.map((def) => ({
      def,
      re: new RegExp(`^${(nsPrefix + def.path).replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{\w+\\?\}/g, '[^/]+')}/?$`, 'i'),
    }));
    const defsForPath = (path: string) => matchers.filter((m) => m.re.test(path)).map((m) => m.def);
    // The Allow header of each route path, computed once.
    const allowByPath = new Map<string, string>();
    for (const def of routes) allowByPath.set(def.path, [...new Set(routes.filter((d) => d.path === def.path).map((d) => d.method))].join(', '));
    const baseUrl = (request: Request) => `${siteUrl(request, ctx)}${root}/`;
    const hostAllowed = hostCheck(ctx.config);

    // Authentication runs here, before routing, so a bad credential or nonce is an error even on
    // an unknown route, as on the host platform. (Cookies are not parsed by hapi yet at this point.)
    async function authenticate(request: Request, st: RestState): Promise<void> {
      const header = request.headers.authorization;
      if (typeof header === 'string' && /^basic /i.test(header)) {
        st.principal = await ctx.auth.authenticateBasic(header, st.ip);
        st.noCache = true;
        return;
      }
      const token = readCookie(request.headers.cookie as string | undefined, SESSION_COOKIE);
      if (token) {
        const nonce = new URLSearchParams(st.search).get('_wpnonce') ?? (request.headers['x-wp-nonce'] as string | undefined) ?? null;
        st.principal = await ctx.auth.authenticateCookie(token, nonce, st.ip);
        if (st.principal) st.noCache = true;
      }
    }

    // biome-ignore lint/nursery/noMisusedPromises: hapi awaits an extension's promise (its types accept one).
    server.ext('onRequest', async (request, h) => {
      const st: RestState = {
        rest: false,
        requestId: `${processTag}${(++requestCounter).toString(36)}`,
        ip: clientIp(request, trustProxy, unusableForwarded),
        principal: null,
        search: '',
        envelope: false,
        fields: null,
        links: [],
        noCache: false,
      };
      request.app.cashtrack = st;
      // Every request, REST or not: a host we do not serve gets nothing but this refusal.
      if (hostAllowed && !PROBE_PATHS.has(request.path) && !hostAllowed(request.info.host))
        throw new ServiceError('svc_invalid_host', 'This site is not served at the host the request names.', 400);
      const routeParam = request.query.rest_route;
      if (typeof routeParam === 'string' && (request.path === '/' || request.path === '/index.php')) {
        const params = new URLSearchParams(request.url.search);
        params.delete('rest_route');
        const qs = params.toString();
        const route = `/${routeParam}`.replace(/\/{2,}/g, '/').replace(/(.)\/+$/, '$1');
        request.setUrl(`${root}${route === '/' ? '' : route}${qs ? `?${qs}` : ''}`);
      }
      if (!isRestPath(request.path)) return h.continue;
      st.rest = true;
      st.search = request.url.search;
      const q = request.query as Record<string, unknown>;
      st.envelope = '_envelope' in q;
      const rawFields = q._fields;
      if ('_jsonp' in q) throw new ServiceError('rest_callback_disabled', 'JSONP support is disabled on this site.', 400);
      const rawOverride = typeof q._method === 'string' ? q._method : request.headers['x-http-method-override'];
      const override = typeof rawOverride === 'string' && rawOverride ? rawOverride.toUpperCase() : null;
      if (override && request.method === 'post') {
        if (!METHODS.has(override)) throw new ServiceError('rest_invalid_method_override', `Unsupported method override ${override.slice(0, 16)}.`, 400);
        request.setMethod(override as Parameters<Request['setMethod']>[0]);
      }
      if (request.method === 'options') {
        const defs = defsForPath(request.path);
        const allow = [...new Set(defs.map((d) => d.method))];
        if (defs.length === 0) return h.response([]).takeover();
        const data = routeData(defs, baseUrl(request))[routeKey(defs[0])];
        return h.response(data).header('Allow', allow.join(', ')).takeover();
      }
      for (const p of GLOBAL_PARAMS) delete q[p];
      foldBracketArrays(q);
      await authenticate(request, st);
      st.fields = parseFields(rawFields);
      if (!st.principal && BODY_METHODS.has(request.method)) limitAnonymousBody(request, st);
      return h.continue;
    });

    /**
     * Every namespace route answers a request without credentials with 401, but validation comes
     * first (as on the host platform), so an anonymous body would be read, parsed and validated in
     * full: up to a second of CPU for 1 MiB of keys. Anonymous bodies get a small limit instead: a
     * declared length over it is refused before a byte is read, and a body without one (chunked)
     * is counted as hapi reads it and its read failed once past the limit.
     */
    function limitAnonymousBody(request: Request, st: RestState): void {
      const limit = ctx.config.server.anonymous_max_body_bytes;
      st.maxBodyBytes = limit;
      const tooLarge = () =>
        new ServiceError('rest_payload_too_large', 'The request body is larger than the server accepts without credentials.', 413, { max_bytes: limit });
      const declared = Number(request.headers['content-length']);
      if (declared > limit) throw tooLarge();
      let seen = 0;
      request.events.on('peek', (chunk: Buffer | string) => {
        if (seen > limit) return;
        seen += chunk.length;
        // An error on the request stream fails hapi's read of the payload with it (a 413 below).
        if (seen > limit) request.raw.req.emit('error', tooLarge());
      });
    }

    // The body parameters each route declares and its query does not: those may come in the query
    // string too (mergeQueryIntoBody).
    // (Keyed by id: hapi keeps a copy of the route's plugin settings, not the definition itself.)
    const bodyOnlyParams = new Map<string, string[]>();
    for (const def of routes) {
      if (def.method === 'GET' || !def.validate.payload) continue;
      const query = new Set(declaredKeys(def.validate.query));
      bodyOnlyParams.set(
        def.id,
        declaredKeys(def.validate.payload).filter((k) => !query.has(k)),
      );
    }

    server.ext('onPostAuth', (request, h) => {
      const def = request.route.settings.plugins?.cashtrack?.def;
      if (def && request.payload === null && request.method !== 'get') (request as { payload: unknown }).payload = {};
      if (def) mergeQueryIntoBody(request, bodyOnlyParams.get(def.id) ?? []);
      return h.continue;
    });

    /**
     * WordPress reads a parameter from the body or the query string alike, for every method, the
     * body winning when both carry it (`WP_REST_Request::get_parameter_order`). So a body parameter
     * a route declares may come in the query string: it is moved into the body before validation,
     * unless the body has it already (then the query's copy is dropped). Anything else in the query
     * string is still validated (and refused) as a query parameter. Runs before validation, once for
     * every route, so the handlers and services see one set of parameters.
     */
    function mergeQueryIntoBody(request: Request, names: string[]): void {
      const payload = request.payload;
      if (names.length === 0 || !payload || typeof payload !== 'object' || Array.isArray(payload)) return;
      const query = request.query as Record<string, unknown>;
      const body = payload as Record<string, unknown>;
      for (const name of names) {
        if (!Object.hasOwn(query, name)) continue;
        if (!Object.hasOwn(body, name)) body[name] = query[name];
        delete query[name];
      }
    }

    // Permission after validation: a 400 beats a 401/403, as on the host platform.
    server.ext('onPreHandler', (request, h) => {
      const cfg = request.route.settings.plugins?.cashtrack;
      const auth = cfg?.def?.auth ?? cfg?.auth;
      if ((auth === 'manage_options' && !can(state(request).principal, 'manage_options')) || (auth === 'signed_in' && !state(request).principal)) {
        const principal = state(request).principal;
        ctx.logger.warning('auth', 'Forbidden', { route: cfg?.def?.id, user_id: principal?.user.id ?? null, ip: state(request).ip }, state(request).requestId);
        throw new ServiceError('rest_forbidden', 'Sorry, you are not allowed to do that.', principal ? 403 : 401);
      }
      return h.continue;
    });

    server.ext('onPreResponse', (request, h) => {
      const st = request.app.cashtrack;
      if (!st) return h.continue;
      const response = request.response;
      const isError = 'isBoom' in response && response.isBoom;
      if (!st.rest && !isError) return h.continue;
      let out: ResponseObject;
      if (isError) {
        const err = toRestError(response, st.requestId, ctx.secrets);
        if (err.body.code === 'rest_payload_too_large')
          err.body.data.max_bytes = st.maxBodyBytes ?? request.route.settings.payload?.maxBytes ?? ctx.config.server.max_body_bytes;
        if (err.internal) {
          ctx.logger.error(
            'http',
            'Internal error',
            { route: request.route.settings.id ?? request.path, method: request.method, error: String((response as Error).stack ?? response) },
            st.requestId,
          );
        } else if (err.status === 503) {
          ctx.logger.error('http', err.body.message, { code: err.body.code, route: request.route.settings.id ?? request.path }, st.requestId);
        }
        if (err.body.code === 'rest_cookie_invalid_nonce') st.noCache = true;
        out = h.response(st.envelope ? envelope(err.body, err.status, err.headers) : err.body).code(st.envelope ? 200 : err.status);
        if (!st.envelope) for (const [k, v] of Object.entries(err.headers)) out.header(k, v);
      } else {
        out = response as ResponseObject;
        if (st.rest && st.fields && out.source && typeof out.source === 'object' && !(out.source instanceof Stream) && out.statusCode < 400) {
          (out as { source: unknown }).source = Array.isArray(out.source)
            ? out.source.map((i) => pickFields(i, st.fields!))
            : pickFields(out.source, st.fields);
        }
      }
      if (!st.rest) return out;
      decorate(out, request, st);
      // A streamed body (a member's data export) is sent as it is: it cannot be wrapped.
      if (st.envelope && !isError && !(out.source instanceof Stream)) {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(out.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
        return h.response(envelope(out.source, out.statusCode, headers)).code(200);
      }
      // Changed in place: continuing (rather than returning a takeover response such as OPTIONS')
      // lets the extensions after this one, the security headers, see it too.
      return out === response ? h.continue : out;
    });

    function decorate(out: ResponseObject, request: Request, st: RestState) {
      const links = [`<${baseUrl(request)}>; rel="https://api.w.org/"`, ...st.links];
      out.headers.link = links.length === 1 ? links[0] : links;
      out.header('X-Robots-Tag', 'noindex');
      out.header('Access-Control-Expose-Headers', 'X-WP-Total, X-WP-TotalPages, Link');
      out.header(
        'Access-Control-Allow-Headers',
        'Authorization, X-WP-Nonce, Content-Disposition, Content-MD5, Content-Type, Idempotency-Key, X-HTTP-Method-Override',
      );
      out.header('X-Request-Id', st.requestId);
      const origin = request.headers.origin;
      if (typeof origin === 'string' && ctx.config.server.cors_origins.includes(origin)) {
        out.header('Access-Control-Allow-Origin', origin);
        out.header('Access-Control-Allow-Methods', 'OPTIONS, GET, POST, PUT, PATCH, DELETE');
        out.header('Access-Control-Allow-Credentials', 'true');
        out.header('Vary', 'Origin', { append: true });
      }
      if (st.noCache) {
        out.header('Expires', 'Wed, 11 Jan 1984 05:00:00 GMT');
        out.header('Cache-Control', 'no-cache, must-revalidate, max-age=0, no-store, private');
      }
      if (st.principal?.via === 'cookie' && st.principal.session) {
        out.header('X-WP-Nonce', ctx.sessions.createNonce(st.principal.user.id, st.principal.session.uuid));
      }
      const cfg = request.route.settings.plugins?.cashtrack;
      if (cfg?.def) out.header('Allow', allowByPath.get(cfg.def.path)!);
    }

    // The index documents: public, as on the host platform.
    const indexRoute = (path: string, id: string, build: (request: Request) => unknown) =>
      server.route({
        method: 'GET',
        path,
        options: { id, plugins: { cashtrack: { auth: 'public' } }, validate: { query: Joi.object({}).unknown(true) } },
        handler: (request) => build(request),
      });
    indexRoute(root, 'index.root', (request) => rootIndex(routes, baseUrl(request), siteUrl(request, ctx)));
    indexRoute(nsPrefix, 'index.namespace', (request) => namespaceIndex(routes, baseUrl(request)));

    for (const def of routes) {
      const hasBody = def.method !== 'GET';
      server.route({
        method: def.method,
        path: nsPrefix + def.path,
        options: {
          id: def.id,
          description: def.description,
          plugins: { cashtrack: { def } },
          payload: hasBody
            ? { maxBytes: ctx.config.server.max_body_bytes, parse: true, allow: ['application/json', 'application/x-www-form-urlencoded'], failAction: 'error' }
            : undefined,
          validate: {
            query: def.validate.query ?? Joi.object({}),
            payload: hasBody ? (def.validate.payload ?? Joi.object({})) : undefined,
            params: def.validate.params,
            options: { abortEarly: false, convert: true, errors: { wrap: { label: false } } },
            failAction: (_request, _h, err) => {
              throw err;
            },
          },
        },
        handler: (request, h) => runHandler(def, request, h),
      });
    }

    async function runHandler(def: RouteDef, request: Request, h: ResponseToolkit) {
      const st = state(request);
      const input: RestInput = {
        query: request.query as Record<string, unknown>,
        payload: (request.payload ?? {}) as Record<string, unknown>,
        params: request.params,
        principal: st.principal,
        actor: st.principal ? `user:${st.principal.user.id}` : 'anonymous',
        requestId: st.requestId,
        ip: st.ip,
        headers: request.headers as Record<string, string>,
        idempotency: null,
      };
      const key = request.headers['idempotency-key'];
      if (!def.idempotent || key === undefined) return toResponse(def, await def.handler(input, ctx, request, h), request, h, st);

      // Idempotency-Key: claim it, or replay what the first request with it got. Keys are the
      // caller's own: another administrator's same key is another key.
      // The handler passes `idempotency.once(status)` to its service, which claims the key first
      // in its transaction (the protocol is IdempotencyService.run, shared with the CLI).
      const ran = await ctx.idempotency.run(
        {
          scope: def.id,
          owner: input.actor,
          key: IdempotencyService.checkKey(key),
          hash: requestHash({ params: request.params, payload: request.payload ?? {} }),
        },
        async (hold) => def.handler({ ...input, idempotency: hold }, ctx, request, h),
        (result) =>
          result instanceof RestResponse ? { status: result.status, body: result.body } : { status: result === undefined ? 204 : 200, body: result },
      );
      if (ran.replayed) {
        st.replayed = true;
        const res = h
          .response(ran.body as object)
          .code(ran.status)
          .header('Idempotent-Replayed', 'true');
        return locate(def, res, request);
      }
      return toResponse(def, ran.result, request, h, st);
    }

    function toResponse(def: RouteDef, result: unknown, request: Request, h: ResponseToolkit, st: RestState) {
      if (result instanceof PagedResult) return pagedResponse(result, request, h, st);
      if (result instanceof RestResponse) {
        const res = h.response(result.body === undefined ? undefined : (result.body as object)).code(result.status);
        for (const [k, v] of Object.entries(result.headers)) res.header(k, v);
        return locate(def, res, request);
      }
      if (result === undefined) return h.response().code(204);
      return h.response(result as object);
    }

    // A 201's Location is absolute, as WordPress's `rest_url()` makes it: the namespace URL of what
    // was made, so a client can follow it whatever the path or `?rest_route=` form it called.
    function locate(def: RouteDef, res: ResponseObject, request: Request): ResponseObject {
      if (res.statusCode !== 201 || !def.location) return res;
      return res.header('Location', `${baseUrl(request)}${NAMESPACE}${def.location(res.source)}`);
    }

    function pagedResponse(result: PagedResult, request: Request, h: ResponseToolkit, st: RestState) {
      const totalPages = Math.ceil(result.total / result.perPage);
      if (result.total > 0 && result.page > totalPages) {
        throw new ServiceError('rest_invalid_page_number', 'The page number requested is larger than the number of pages available.', 400, {
          total: result.total,
          total_pages: totalPages,
        });
      }
      const base = `${siteUrl(request, ctx)}${request.path}`;
      const link = (page: number) => {
        const params = new URLSearchParams(st.search);
        params.set('page', String(page));
        return `${base}?${params.toString()}`;
      };
      if (result.page > 1) st.links.push(`<${link(Math.min(result.page - 1, Math.max(totalPages, 1)))}>; rel="prev"`);
      if (totalPages > result.page) st.links.push(`<${link(result.page + 1)}>; rel="next"`);
      return h
        .response(result.items as object[])
        .header('X-WP-Total', String(result.total))
        .header('X-WP-TotalPages', String(totalPages));
    }
  },
};

/** The keys an object schema names (none for an absent schema). */
function declaredKeys(schema: Joi.ObjectSchema | undefined): string[] {
  const keys = schema?.describe().keys as Record<string, unknown> | undefined;
  return keys ? Object.keys(keys) : [];
}

function envelope(body: unknown, status: number, headers: Record<string, string>): Record<string, unknown> {
  return { body, status, headers };
}
