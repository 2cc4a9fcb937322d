// The click endpoint, outside the REST root like the postback endpoint: `GET /go/{token}`, the
// link on the site's member pages. A good token is answered with a 302 to the network's tracking
// link (the click stored first); anything else with a small 404 page, never a redirect. No cache,
// no referrer sent on (the token is in the URL).
import type { Request, ResponseToolkit } from '@hapi/hapi';
import Joi from 'joi';
import type { Context } from '../context.js';
import { ServiceError } from '../errors.js';
import type { PlainRouteDef } from './plain-routes.js';
import { state } from './rest/request-state.js';

const NOT_FOUND_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>Link not valid</title></head>
<body><main><h1>This link is not valid or has expired</h1><p>Go back to the shop's page on our site and follow its link again.</p></main></body></html>
`;

function notFound(h: ResponseToolkit, requestId: string) {
  return h
    .response(NOT_FOUND_PAGE)
    .code(404)
    .type('text/html; charset=utf-8')
    .header('Cache-Control', 'no-store')
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Request-Id', requestId);
}

export function clickRoutes(ctx: Context): PlainRouteDef[] {
  return [
    {
      id: 'click.go',
      method: 'GET',
      path: '/go/{token}',
      auth: 'public',
      description: "A member's click to a shop: 302 to the network's tracking link carrying the click id, or a 404 page.",
      validate: {
        params: Joi.object({ token: Joi.string().max(4096).required() }),
        query: Joi.object().unknown(true),
        // A token too long or missing is a link that leads nowhere, like any other bad token.
        failAction: (request: Request, h: ResponseToolkit) => notFound(h, state(request).requestId).takeover(),
      },
      handler: async (request, h) => {
        const st = state(request);
        const ua = request.headers['user-agent'];
        try {
          const location = await ctx.clicks.go(String(request.params.token), { ip: st.ip, userAgent: typeof ua === 'string' ? ua : null });
          return h
            .response()
            .code(302)
            .header('Location', location)
            .header('Cache-Control', 'no-store')
            .header('Referrer-Policy', 'no-referrer')
            .header('X-Request-Id', st.requestId);
        } catch (err) {
          if (err instanceof ServiceError && err.code === 'svc_click_link_invalid') return notFound(h, st.requestId);
          throw err;
        }
      },
    },
  ];
}
