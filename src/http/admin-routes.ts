// The admin screens at /admin/: a single-page app built into dist/admin (`npm run build`, which
// `npm ci` runs), served by the daemon itself. The app is a client of the documented API and
// nothing else, so these routes only hand out files: the shell (index.html, never cached, with the
// REST root written into a meta tag) for every screen's URL, and the hashed assets (cached for a
// year, as their names change with their content). A strict Content-Security-Policy: scripts and
// everything else from this origin only; inline styles allowed, as the WordPress components set
// them at run time.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ResponseToolkit } from '@hapi/hapi';
import Joi from 'joi';
import type { Context } from '../context.js';
import { ServiceError } from '../errors.js';
import type { PlainRouteDef } from './plain-routes.js';

const here = fileURLToPath(import.meta.url);
/** dist/admin of the project, from src/http (tests) or dist/src/http (the built daemon). */
export const ADMIN_DIR = resolve(dirname(here), here.includes('/dist/') ? '../../admin' : '../../dist/admin');

export const ADMIN_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const IMMUTABLE = 'public, max-age=31536000, immutable';
const NO_CACHE = 'no-cache, must-revalidate, max-age=0';
/** Vite's output names: `assets/<name>-<hash>.<ext>`. */
const ASSET = /^assets\/[A-Za-z0-9_.-]+\.(js|css|woff2?|svg|png)$/;
const TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  woff: 'font/woff',
  woff2: 'font/woff2',
  svg: 'image/svg+xml',
  png: 'image/png',
};

export function adminRoutes(ctx: Context, dir = ADMIN_DIR): PlainRouteDef[] {
  const restRoot = `/${ctx.config.server.rest_root}/`;
  let shell: string | null = null;
  const readShell = (): string => {
    if (shell !== null) return shell;
    const file = join(dir, 'index.html');
    if (!existsSync(file)) {
      throw new ServiceError('svc_admin_not_built', 'The admin screens are not built: run `npm run build` (npm ci does it) and start the daemon again.', 503);
    }
    shell = readFileSync(file, 'utf8').replace('content="/wp-json/"', `content="${restRoot.replace(/"/g, '')}"`);
    return shell;
  };
  // Assets are immutable for a build: read once, kept (a few MB).
  const assets = new Map<string, Buffer>();
  const readAsset = (path: string): Buffer | null => {
    const cached = assets.get(path);
    if (cached) return cached;
    const file = join(dir, path);
    if (!existsSync(file)) return null;
    const bytes = readFileSync(file);
    assets.set(path, bytes);
    return bytes;
  };
  const page = (h: ResponseToolkit) =>
    h.response(readShell()).type('text/html; charset=utf-8').header('Cache-Control', NO_CACHE).header('Content-Security-Policy', ADMIN_CSP);

  return [
    {
      id: 'admin.root',
      method: 'GET',
      path: '/admin',
      auth: 'public',
      // hapi strips the trailing slash, so /admin/ arrives here too: the shell, not a redirect.
      description: "The admin screens' shell.",
      validate: { query: Joi.object({}).unknown(true) },
      handler: (_request, h) => page(h),
    },
    {
      id: 'admin.files',
      method: 'GET',
      path: '/admin/{path*}',
      auth: 'public',
      description: "The admin screens' files: the hashed assets, and the app's shell for every other path.",
      validate: { params: Joi.object({ path: Joi.string().allow('').max(512) }), query: Joi.object({}).unknown(true) },
      handler(request, h) {
        const path = (request.params.path as string | undefined) ?? '';
        const asset = ASSET.exec(path);
        if (asset) {
          const bytes = readAsset(path);
          if (!bytes) throw new ServiceError('rest_no_route', 'No route was found matching the URL and request method.', 404);
          return h.response(bytes).type(TYPES[asset[1]]).header('Cache-Control', IMMUTABLE).header('Content-Security-Policy', ADMIN_CSP);
        }
        // A screen's URL (/admin/orders?status=pending): the shell, which reads the URL itself.
        if (path.startsWith('assets/')) throw new ServiceError('rest_no_route', 'No route was found matching the URL and request method.', 404);
        return page(h);
      },
    },
  ];
}
