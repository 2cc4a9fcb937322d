// Security headers on every response the daemon sends: the REST namespace and its index, the
// login, logout and nonce endpoints, postbacks, and every 404 or error, whoever wrote it. One
// extension, registered after the REST host's, so it also sees the error responses the host builds.
import type { ResponseObject, Server } from '@hapi/hapi';
import type { Context } from '../context.js';
import { isHttps } from './rest/request-state.js';

/** Sent on every response. None of our responses is meant to be framed, sniffed or referred from. */
const ALWAYS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  // frame-ancestors for current browsers, X-Frame-Options for the rest: no page may frame ours.
  'Content-Security-Policy': "frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  // Admin URLs carry ids and filters; no other site needs to see them.
  'Referrer-Policy': 'no-referrer',
};

/** Only when the site is served over https: over plain http a browser ignores it anyway, and a test host must stay reachable. */
const HSTS = 'max-age=31536000; includeSubDomains';

export function registerSecurityHeaders(server: Server, ctx: Context): void {
  server.ext('onPreResponse', (request, h) => {
    const response = request.response;
    const headers: Record<string, string> = { ...ALWAYS };
    if (isHttps(request, ctx)) headers['Strict-Transport-Security'] = HSTS;
    if ('isBoom' in response && response.isBoom) Object.assign(response.output.headers, headers);
    else {
      const own = (response as ResponseObject).headers;
      // A route that set a stricter policy of its own (media files) keeps it.
      if (own['content-security-policy']) delete headers['Content-Security-Policy'];
      for (const [k, v] of Object.entries(headers)) (response as ResponseObject).header(k, v);
    }
    return h.continue;
  });
}
