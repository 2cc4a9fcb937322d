// A fixture web site on 127.0.0.1: routes by path answer fixed bodies, HTML, redirects, oversize
// streams or nothing at all, and the site counts the requests it receives and how many it was
// serving at once (the per-host limit is checked against this).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export type Answer =
  | { body: Buffer | string; type?: string; status?: number; delayMs?: number }
  | { redirect: string; status?: number }
  | { stream: number; type?: string }
  | { hang: true }
  | ((req: IncomingMessage, res: ServerResponse) => void | Promise<void>);

export interface Site {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  host: string;
  routes: Map<string, Answer>;
  /** Requested paths, in order. */
  requests: string[];
  active: number;
  peak: number;
  close(): Promise<void>;
}

export async function site(routes: Record<string, Answer> = {}): Promise<Site> {
  const sockets = new Set<Socket>();
  const s: Site = { origin: '', host: '', routes: new Map(Object.entries(routes)), requests: [], active: 0, peak: 0, close: async () => {} };
  const server = createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    s.requests.push(path);
    s.active++;
    s.peak = Math.max(s.peak, s.active);
    res.on('close', () => s.active--);
    const answer = s.routes.get(path);
    if (!answer) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    if (typeof answer === 'function') return void (await answer(req, res));
    if ('hang' in answer) return;
    if ('redirect' in answer) {
      res.writeHead(answer.status ?? 302, { location: answer.redirect }).end();
      return;
    }
    if ('stream' in answer) {
      res.writeHead(200, { 'content-type': answer.type ?? 'image/png' });
      const block = Buffer.alloc(64 * 1024, 1);
      for (let sent = 0; sent < answer.stream && !res.destroyed; sent += block.length) {
        if (!res.write(block)) {
          await new Promise<void>((resolve) => {
            const done = () => {
              res.off('drain', done).off('close', done);
              resolve();
            };
            res.on('drain', done).on('close', done);
          });
        }
      }
      res.end();
      return;
    }
    if (answer.delayMs) await sleep(answer.delayMs);
    res.writeHead(answer.status ?? 200, { 'content-type': answer.type ?? 'application/octet-stream' }).end(answer.body);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  s.origin = `http://127.0.0.1:${port}`;
  s.host = `127.0.0.1:${port}`;
  s.close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  return s;
}

/** Inserts an advertiser row with the columns a logo fetch reads. */
export async function addAdvertiser(
  ctx: { db: { execute(sql: string, params?: unknown[]): Promise<unknown> } },
  module: string,
  advertiser: string,
  fields: { logo_url?: string | null; site_url?: string | null; domain?: string | null; status?: 'active' | 'inactive' } = {},
): Promise<void> {
  const now = new Date();
  await ctx.db.execute(
    "INSERT INTO advertisers (module, advertiser, name, logo_url, site_url, domain, categories, countries, status, last_seen_sync, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, '[]', '[]', ?, 1, ?, ?)",
    [module, advertiser, `Shop ${advertiser}`, fields.logo_url ?? null, fields.site_url ?? null, fields.domain ?? null, fields.status ?? 'active', now, now],
  );
}
