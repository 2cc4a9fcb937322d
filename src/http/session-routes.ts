// Cookie login for the administrative screens: POST /login, POST /logout, GET /rest-nonce (the
// text nonce api-fetch's `nonceEndpoint` reads). Outside the namespace, like the host's wp-login.
// /login and /logout refuse requests another site's page made (cross-site request forgery): a
// browser says where a request comes from in Origin and Sec-Fetch-Site.
import type { Request } from '@hapi/hapi';
import Joi from 'joi';
import type { Context } from '../context.js';
import { ServiceError } from '../errors.js';
import type { PlainRouteDef } from './plain-routes.js';
import { isHttps, readCookie, SESSION_COOKIE, siteUrl, state } from './rest/request-state.js';

const loginSchema = Joi.object({
  login: Joi.string().trim().min(1).max(191).required(),
  password: Joi.string().min(1).max(1024).required(),
  remember: Joi.any(),
});

function sessionToken(request: Request): string | null {
  return readCookie(request.headers.cookie as string | undefined, SESSION_COOKIE);
}

/**
 * Allows what our own pages, a listed CORS origin or a non-browser client sends: an Origin that is
 * this site's or in `server.cors_origins`; without Origin, a Sec-Fetch-Site of `same-origin` or
 * `none` (typed by the user); neither header at all (curl, scripts). Anything else is 403.
 */
export function requireSameOrigin(request: Request, ctx: Context): void {
  const origin = request.headers.origin;
  const site = request.headers['sec-fetch-site'];
  let allowed: boolean;
  if (typeof origin === 'string') {
    const own = new URL(siteUrl(request, ctx)).origin;
    allowed = origin === own || ctx.config.server.cors_origins.includes(origin);
  } else {
    allowed = site === undefined || site === 'same-origin' || site === 'none';
  }
  if (allowed) return;
  ctx.logger.warning('auth', 'Cross-site request refused', {
    route: request.route.settings.id,
    origin: typeof origin === 'string' ? origin.slice(0, 200) : null,
    sec_fetch_site: typeof site === 'string' ? site.slice(0, 32) : null,
    ip: state(request).ip,
  });
  throw new ServiceError('svc_cross_site_request', 'This request came from another site. Sign in and out from the site itself.', 403);
}

/** The REST nonce of a /logout: `_wpnonce` in the query or the form body, or `X-WP-Nonce`. */
function logoutNonce(request: Request): string | null {
  const fromQuery = request.query._wpnonce;
  if (typeof fromQuery === 'string') return fromQuery;
  const payload = request.payload as Record<string, unknown> | null;
  if (payload && typeof payload === 'object' && typeof payload._wpnonce === 'string') return payload._wpnonce;
  const header = request.headers['x-wp-nonce'];
  return typeof header === 'string' ? header : null;
}

export function sessionRoutes(ctx: Context): PlainRouteDef[] {
  const cookieOptions = (request: Request, ttlSeconds: number) => ({
    isHttpOnly: true,
    isSameSite: 'Lax' as const,
    isSecure: isHttps(request, ctx),
    path: '/',
    ttl: ttlSeconds * 1000,
    encoding: 'none' as const,
    strictHeader: true,
  });
  const noCache = { 'Cache-Control': 'no-cache, must-revalidate, max-age=0, no-store, private' };

  return [
    {
      id: 'session.login',
      method: 'POST',
      path: '/login',
      auth: 'public',
      description: 'Signs in with a login and password: the session cookie, and the REST nonce in the body.',
      payload: { maxBytes: 16 * 1024, allow: ['application/json', 'application/x-www-form-urlencoded'] },
      validate: {
        payload: loginSchema,
        options: { abortEarly: false, errors: { wrap: { label: false } } },
        failAction: (_r, _h, err) => {
          throw err;
        },
      },
      async handler(request, h) {
        requireSameOrigin(request, ctx);
        const { login, password } = request.payload as { login: string; password: string };
        const st = state(request);
        const ua = typeof request.headers['user-agent'] === 'string' ? request.headers['user-agent'] : null;
        const { token, session, nonce } = await ctx.auth.login(login, password, st.ip, ua);
        const { id, login: userLogin, email, display_name, role } = session.user;
        const res = h.response({ user: { id, login: userLogin, email, display_name, role }, nonce, expires_at: session.expires_at.toISOString() });
        res.state(SESSION_COOKIE, token, cookieOptions(request, ctx.config.auth.session_ttl_hours * 3600));
        for (const [k, v] of Object.entries(noCache)) res.header(k, v);
        return res;
      },
    },
    {
      id: 'session.logout',
      method: 'POST',
      path: '/logout',
      auth: 'session',
      description: 'Ends the session of the cookie (with its REST nonce) and clears the cookie.',
      payload: { maxBytes: 16 * 1024, allow: ['application/json', 'application/x-www-form-urlencoded'], failAction: 'ignore' },
      validate: { payload: Joi.any(), query: Joi.object({}).unknown(true) },
      async handler(request, h) {
        requireSameOrigin(request, ctx);
        const revoked = await ctx.auth.logout(sessionToken(request), logoutNonce(request), state(request).ip);
        return h.response({ logged_out: revoked }).unstate(SESSION_COOKIE, { path: '/', isSecure: isHttps(request, ctx), isHttpOnly: true, isSameSite: 'Lax' });
      },
    },
    {
      id: 'session.nonce',
      method: 'GET',
      path: '/rest-nonce',
      auth: 'session',
      description: "A fresh REST nonce for the cookie's session, as plain text (api-fetch's nonceEndpoint).",
      validate: { query: Joi.object({}).unknown(true) },
      async handler(request, h) {
        const token = sessionToken(request);
        const session = token ? await ctx.sessions.resolve(token) : null;
        if (!session) throw new ServiceError('rest_not_logged_in', 'You are not currently logged in.', 401);
        return h.response(ctx.sessions.createNonce(session.user.id, session.uuid)).type('text/plain').header('Cache-Control', noCache['Cache-Control']);
      },
    },
  ];
}
