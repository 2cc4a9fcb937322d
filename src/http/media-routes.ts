// Media files, outside the REST root and public: `GET /media/{sha256}.{ext}`. The bytes were
// re-encoded by the image pipeline and never change (the name is their hash), so they are cached
// as immutable. Served with the exact stored type, `nosniff`, and a policy that lets the bytes run
// nothing even if opened as a document; CORP `cross-origin` so the shop site (another origin)
// can show them. Anything else under /media is 404 svc_media_not_found.
import Joi from 'joi';
import type { Context } from '../context.js';
import { ServiceError } from '../errors.js';
import type { PlainRouteDef } from './plain-routes.js';

/** Headers of a media response; the security-header extension keeps this stricter policy. */
export const MEDIA_CSP = "default-src 'none'; frame-ancestors 'none'; sandbox";

const notFound = () => new ServiceError('svc_media_not_found', 'Media not found.', 404);

export function mediaRoutes(ctx: Context): PlainRouteDef[] {
  return [
    {
      id: 'media.get',
      method: 'GET',
      path: '/media/{sha256}.{ext}',
      auth: 'public',
      description: 'A media file, by the hash of its bytes (cached as immutable).',
      // Plain bytes: a Range request gets its slice (206), as from any static file server.
      ranges: true,
      validate: {
        params: Joi.object({
          sha256: Joi.string()
            .pattern(/^[0-9a-f]{64}$/)
            .required(),
          ext: Joi.string().valid('png', 'jpg', 'webp').required(),
        }),
        // A name that cannot be a media file is simply not one.
        failAction: () => {
          throw notFound();
        },
      },
      async handler(request, h) {
        const file = await ctx.media.file(String(request.params.sha256), String(request.params.ext));
        return h
          .response(file.data)
          .type(file.type)
          .etag(file.sha256)
          .header('Cache-Control', 'public, max-age=31536000, immutable')
          .header('Content-Security-Policy', MEDIA_CSP)
          .header('Cross-Origin-Resource-Policy', 'cross-origin');
      },
    },
  ];
}
