// The guard's streamed answer (OutboundGuard.stream), for documents too large to hold: the same
// refusals up to the headers; then the size cap while reading, a time budget that counts only the
// server's time (never a slow reader's), the caller's abort, and a reader that stops early
// closing the connection. The server is never read far ahead of the reader.
import type http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundGuard } from '../../src/outbound/index.js';
import { serve, type Fixture } from './fixtures.js';

const MB = 1024 * 1024;

/** What a streaming handler wrote before its client went away. */
interface Sent {
  bytes: number;
  total: number;
  closedEarly: boolean;
  done: Promise<void>;
}

/** Writes `total` bytes in 64 KiB chunks, honouring backpressure, and records how far it got. */
function writeBody(res: http.ServerResponse, total: number, headers: http.OutgoingHttpHeaders = {}): Sent {
  const sent: Sent = { bytes: 0, total, closedEarly: false, done: Promise.resolve() };
  res.writeHead(200, { 'content-type': 'text/plain', ...headers });
  const chunk = Buffer.alloc(64 * 1024, 'x');
  const closed = new Promise<void>((resolve) => res.once('close', () => resolve()));
  sent.done = (async () => {
    while (sent.bytes < total) {
      if (res.destroyed) {
        sent.closedEarly = true;
        return;
      }
      sent.bytes += chunk.length;
      if (!res.write(chunk)) await Promise.race([new Promise<void>((resolve) => res.once('drain', () => resolve())), closed]);
    }
    res.end();
  })();
  return sent;
}

describe('a streamed fetch', () => {
  let server: Fixture;
  let last: Sent | null = null;
  const guard = new OutboundGuard({ allow: ['127.0.0.1:*'], ports: [80, 443], maxBytes: 64 * MB });

  beforeAll(async () => {
    server = await serve((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const size = Number(url.searchParams.get('mb') ?? 1) * MB;
      switch (url.pathname) {
        case '/body':
          return void (last = writeBody(res, size));
        case '/declared':
          return void res.writeHead(200, { 'content-length': String(10 * MB) }).end();
        case '/moved':
          return void res.writeHead(302, { location: '/body?mb=1' }).end();
        case '/meta':
          return void res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
        case '/teapot':
          return void res.writeHead(418, { 'content-type': 'text/plain' }).end('short and stout');
        case '/trickle': {
          res.writeHead(200, { 'content-type': 'text/plain' });
          const timer = setInterval(() => res.write('.'), 20);
          return void res.on('close', () => clearInterval(timer));
        }
      }
      res.writeHead(404).end();
    });
  });

  afterAll(async () => {
    await server.close();
  });

  async function readAll(body: NodeJS.ReadableStream, pauseMs = 0): Promise<number> {
    let size = 0;
    for await (const chunk of body) {
      size += (chunk as Buffer).length;
      if (pauseMs) await sleep(pauseMs);
    }
    return size;
  }

  it('answers the status, headers and final URL, then the whole body as it is read', async () => {
    const res = await guard.stream(`${server.base}/moved`);
    expect(res).toMatchObject({
      status: 200,
      url: `${server.base}/body?mb=1`,
      redirects: [`${server.base}/body?mb=1`],
      headers: { 'content-type': 'text/plain' },
    });
    expect(await readAll(res.body)).toBe(MB);
    const teapot = await guard.stream(`${server.base}/teapot`);
    expect(teapot.status).toBe(418);
    expect(Buffer.concat(await teapot.body.toArray()).toString()).toBe('short and stout');
  });

  it('refuses what fetch refuses before a byte of the body is read (a redirect inside)', async () => {
    await expect(guard.stream(`${server.base}/meta`)).rejects.toMatchObject({ code: 'svc_fetch_blocked', data: { reason: 'private_address' } });
  });

  it('reads the server no further ahead of the reader than the socket buffers hold', async () => {
    const res = await guard.stream(`${server.base}/body?mb=48`);
    const iterator = res.body[Symbol.asyncIterator]();
    await iterator.next();
    await sleep(300);
    // A buffering client would have taken most of the 48 MB by now.
    expect(last!.bytes).toBeLessThan(16 * MB);
    res.body.destroy();
    await last!.done;
    expect(last!.closedEarly).toBe(true);
  });

  it('destroys the body with too_large once the cap is passed, closing the connection', async () => {
    const res = await guard.stream(`${server.base}/body?mb=16`, { maxBytes: 256 * 1024 });
    await expect(readAll(res.body)).rejects.toMatchObject({ code: 'svc_fetch_blocked', status: 422, data: { reason: 'too_large', max_bytes: 256 * 1024 } });
    await last!.done;
    expect(last!.closedEarly).toBe(true);
    expect(last!.bytes).toBeLessThan(last!.total);
    const declared = await guard.stream(`${server.base}/declared`, { maxBytes: MB });
    await expect(readAll(declared.body)).rejects.toMatchObject({ data: { reason: 'too_large' } });
  });

  it('spends none of its time budget while the reader is busy, and all of it on a server that trickles', async () => {
    // 2 MB read in 64 KiB steps with 25 ms of "work" after each: about 800 ms, well past the 300 ms
    // budget, none of it the server's.
    const res = await guard.stream(`${server.base}/body?mb=2`, { timeoutMs: 300 });
    expect(await readAll(res.body, 25)).toBe(2 * MB);
    const trickle = await guard.stream(`${server.base}/trickle`, { timeoutMs: 300 });
    const started = Date.now();
    await expect(readAll(trickle.body)).rejects.toMatchObject({ code: 'svc_fetch_blocked', data: { reason: 'timeout' } });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("destroys the body with the caller's reason when the caller aborts mid-read", async () => {
    const controller = new AbortController();
    const reason = new Error('job cancelled');
    const res = await guard.stream(`${server.base}/trickle`, { signal: controller.signal, timeoutMs: 60_000 });
    setTimeout(() => controller.abort(reason), 100);
    await expect(readAll(res.body)).rejects.toBe(reason);
  });
});
