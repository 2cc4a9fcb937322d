// The postback endpoint, outside the REST root: `GET|POST /postback/{network}`. Its own
// authentication per network (never the admin credentials); the query string and body are handed
// over raw, as the signature covers the exact bytes. Errors get the REST error JSON.
import type { Request, ResponseToolkit } from '@hapi/hapi';
import Joi from 'joi';
import type { Context } from '../context.js';
import { ServiceError } from '../errors.js';
import { SIGNATURE_HEADER, TOKEN_HEADER, type PostbackRequest } from '../services/postbacks/index.js';
import type { PlainRouteDef } from './plain-routes.js';
import { state } from './rest/request-state.js';

const validate = {
  params: Joi.object({ network: Joi.string().max(200).required() }),
  // The query string is read raw by the service (the signature covers its exact bytes).
  failAction: (_r: Request, _h: ResponseToolkit, err?: Error) => {
    throw err;
  },
};

function header(request: Request, name: string): string | null {
  const v = request.headers[name];
  return typeof v === 'string' ? v : null;
}

function toRequest(request: Request, rawBody: Buffer | null, bodyTooLarge = false): PostbackRequest {
  const target = request.raw.req.url ?? '';
  const q = target.indexOf('?');
  const st = state(request);
  return {
    network: String(request.params.network ?? '').toLowerCase(),
    method: request.method === 'post' ? 'POST' : 'GET',
    rawQuery: q >= 0 ? target.slice(q + 1) : '',
    rawBody,
    contentType: header(request, 'content-type'),
    tokenHeader: header(request, TOKEN_HEADER),
    signatureHeader: header(request, SIGNATURE_HEADER),
    ip: st.ip,
    requestId: st.requestId,
    bodyTooLarge,
  };
}

export function postbackRoutes(ctx: Context): PlainRouteDef[] {
  async function run(request: Request, h: ResponseToolkit, input: PostbackRequest) {
    const requestId = input.requestId;
    try {
      if (request.method !== 'get' && request.method !== 'post')
        throw new ServiceError('rest_no_route', 'No route was found matching the URL and request method.', 404);
      const answer = await ctx.postbacks.receive(input);
      return h.response(answer).code(200).header('X-Request-Id', requestId).header('Cache-Control', 'no-store');
    } catch (err) {
      if (err instanceof ServiceError)
        throw new ServiceError(err.code, err.message, err.status, err.data, { ...err.headers, 'X-Request-Id': requestId, 'Cache-Control': 'no-store' });
      throw err;
    }
  }

  return [
    {
      id: 'postback.get',
      method: 'GET',
      path: '/postback/{network}',
      auth: 'public',
      description: "A network's postback, its parameters in the query string.",
      validate,
      handler: (request, h) => run(request, h, toRequest(request, null)),
    },
    {
      id: 'postback.post',
      method: 'POST',
      path: '/postback/{network}',
      auth: 'public',
      description: "A network's postback, its parameters in the query string or the body (read raw).",
      validate,
      payload: {
        parse: false,
        output: 'data',
        maxBytes: ctx.config.postbacks.max_body_bytes,
        // Too large a body is refused and recorded like any other bad postback.
        failAction: async (request, h, err) => {
          if ((err as { output?: { statusCode?: number } })?.output?.statusCode === 413)
            return (await run(request, h, toRequest(request, null, true))).takeover();
          throw err;
        },
      },
      handler: (request, h) => run(request, h, toRequest(request, Buffer.isBuffer(request.payload) ? request.payload : null)),
    },
  ];
}
