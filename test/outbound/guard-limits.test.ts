// The bypass suite, second part: redirects (to inside, to other schemes and ports, loops, too
// many), the size cap and the timeouts enforced while reading, and the log of refusals. A request
// that gets through fails the suite.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServiceError } from '../../src/errors.js';
import { OutboundGuard } from '../../src/outbound/index.js';
import { fakeDns, refused, serve, type Fixture } from './fixtures.js';

describe('the bypass suite: redirects', () => {
  let hops: Fixture;
  let other: Fixture;
  const dns = fakeDns({ 'inside.test': ['10.0.0.9'], 'other.test': ['127.0.0.1'] });
  let guard: OutboundGuard;

  beforeAll(async () => {
    other = await serve((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(req.headers)));
    hops = await serve((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const to = (location: string, status = 302) => res.writeHead(status, { location }).end('internal banner: db01.corp');
      const n = Number(url.searchParams.get('n') ?? 0);
      switch (url.pathname) {
        case '/meta':
          return void to('http://169.254.169.254/latest/meta-data/iam/');
        case '/mapped':
          return void to(`http://[::ffff:127.0.0.1]:${hops.port}/ok`);
        case '/inside':
          return void to('http://inside.test/admin');
        case '/ftp':
          return void to('ftp://example.com/');
        case '/file':
          return void to('file:///etc/passwd');
        case '/port':
          return void to('http://example.com:6379/');
        case '/broken':
          return void to('http://[/');
        case '/a':
          return void to('/b');
        case '/b':
          return void to('/a');
        case '/chain':
          return void to(`/chain?n=${n + 1}`);
        case '/to-other':
          return void to(`http://other.test:${other.port}/echo`);
        case '/to-self':
          return void to('/echo-here', 307);
        case '/see-other':
          return void to('/echo-here', 303);
        case '/echo-here':
          return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: req.method, headers: req.headers }));
        case '/ok':
          return void res.writeHead(200).end('ok');
      }
      res.writeHead(404).end();
    });
    guard = new OutboundGuard({ allow: ['127.0.0.1:*', 'other.test:*'], ports: [80, 443], lookup: dns.lookup });
  });

  afterAll(async () => {
    await hops.close();
    await other.close();
  });

  // `followed`: the redirects followed before the refusal (the target of /inside is a name: the
  // redirect is followed, and its connection refused once the name resolves).
  it.each([
    ['/meta', 'private_address', 0],
    ['/mapped', 'private_address', 0],
    ['/inside', 'private_address', 1],
    ['/ftp', 'scheme', 0],
    ['/file', 'scheme', 0],
    ['/port', 'port', 0],
    ['/broken', 'invalid_url', 0],
  ] as const)('refuses the redirect of %s (%s) without leaking the answer', async (path, reason, followed) => {
    const err = await refused(guard, `${hops.base}${path}`, reason);
    expect(JSON.stringify({ message: err.message, data: err.data })).not.toMatch(/banner|db01|meta-data|passwd|admin|169\.254|inside|6379|ftp|file/);
    expect(err.data.redirects).toBe(followed);
  });

  it('refuses a redirect loop as soon as it comes back', async () => {
    const before = hops.requests.length;
    const err = await refused(guard, `${hops.base}/a`, 'too_many_redirects', { maxRedirects: 10 });
    expect(err.message).toMatch(/loop/);
    expect(hops.requests.length - before).toBe(2);
  });

  it('follows at most three redirects, and refuses a fourth', async () => {
    const three = await guard.fetch(`${hops.base}/chain?n=0`, { maxRedirects: 3 }).catch((e: ServiceError) => e);
    // /chain never ends: the fourth redirect is refused.
    expect(three).toMatchObject({ code: 'svc_fetch_blocked', data: { reason: 'too_many_redirects', redirects: 3 } });
    const res = await guard.fetch(`${hops.base}/to-self`);
    expect(res.redirects).toEqual([`${hops.base}/echo-here`]);
  });

  it('returns a redirect as it is when told not to follow', async () => {
    const res = await guard.fetch(`${hops.base}/meta`, { maxRedirects: 0 });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('http://169.254.169.254/latest/meta-data/iam/');
    expect(res.redirects).toEqual([]);
  });

  it("keeps the caller's headers within the origin and drops them on a hop to another origin", async () => {
    const headers = { Authorization: 'Bearer feed-secret', 'X-Api-Key': 'k-secret' };
    const same = JSON.parse((await guard.fetch(`${hops.base}/to-self`, { headers })).body.toString());
    expect(same.headers).toMatchObject({ authorization: 'Bearer feed-secret', 'x-api-key': 'k-secret' });
    const cross = await guard.fetch(`${hops.base}/to-other`, { headers });
    expect(cross.url).toBe(`http://other.test:${other.port}/echo`);
    const seen = JSON.parse(cross.body.toString());
    expect(seen.authorization).toBeUndefined();
    expect(seen['x-api-key']).toBeUndefined();
    expect(seen['user-agent']).toBe('cashtrack');
  });

  it('turns a POST redirected with 303 into a GET without a body, and keeps it on 307', async () => {
    const seeOther = JSON.parse((await guard.fetch(`${hops.base}/see-other`, { method: 'POST', body: 'x=1' })).body.toString());
    expect(seeOther.method).toBe('GET');
    const temporary = JSON.parse((await guard.fetch(`${hops.base}/to-self`, { method: 'POST', body: 'x=1' })).body.toString());
    expect(temporary.method).toBe('POST');
    expect(hops.requests.at(-1)?.body).toBe('x=1');
  });
});

describe('the bypass suite: size and time', () => {
  const guard = new OutboundGuard({ allow: ['127.0.0.1:*'], ports: [80, 443], maxBytes: 64 * 1024 });
  let slow: Fixture;
  /** What the streaming endpoint managed to send before its socket closed. */
  const stream = { sent: 0, total: 0, closedEarly: false, done: Promise.resolve() };

  beforeAll(async () => {
    slow = await serve((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/declared') return void res.writeHead(200, { 'content-length': String(10 * 1024 * 1024) }).end();
      if (url.pathname === '/stream') {
        // 16 MB in 16 KB chunks, honouring backpressure, with no Content-Length.
        stream.sent = 0;
        stream.total = 16 * 1024 * 1024;
        stream.closedEarly = false;
        let finish!: () => void;
        stream.done = new Promise<void>((resolve) => (finish = resolve));
        res.writeHead(200, { 'content-type': 'image/png' });
        const chunk = Buffer.alloc(16 * 1024, 0x41);
        const pump = () => {
          while (stream.sent < stream.total) {
            if (res.destroyed) return;
            stream.sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('close', () => {
          stream.closedEarly = stream.sent < stream.total || !res.writableFinished;
          finish();
        });
        return pump();
      }
      if (url.pathname === '/silent') return; // never answers
      if (url.pathname === '/trickle') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const timer = setInterval(() => res.write('.'), 20);
        res.on('close', () => clearInterval(timer));
        return;
      }
      res.writeHead(404).end();
    });
  });

  afterAll(async () => {
    await slow.close();
  });

  it('refuses a body whose declared length is over the cap without reading it', async () => {
    await refused(guard, `${slow.base}/declared`, 'too_large');
  });

  it('stops reading a streamed body once it passes the cap, closing the socket before the server sent it all', async () => {
    const err = await refused(guard, `${slow.base}/stream`, 'too_large');
    expect(err.data.max_bytes).toBe(64 * 1024);
    await stream.done;
    expect(stream.closedEarly).toBe(true);
    expect(stream.sent).toBeLessThan(stream.total);
  });

  it("with overflow 'truncate', answers the status and the first maxBytes, closing the socket before the server sent it all", async () => {
    const res = await guard.fetch(`${slow.base}/stream`, { overflow: 'truncate' });
    expect(res.status).toBe(200);
    expect(res.truncated).toBe(true);
    expect(res.body.length).toBe(64 * 1024);
    await stream.done;
    expect(stream.closedEarly).toBe(true);
    expect(stream.sent).toBeLessThan(stream.total);
    // A declared length over the cap is read up to it too, not refused.
    const declared = await guard.fetch(`${slow.base}/stream`, { overflow: 'truncate', maxBytes: 1000 });
    expect([declared.truncated, declared.body.length]).toEqual([true, 1000]);
    // A body within the cap is whole and not marked.
    expect((await guard.fetch(`${slow.base}/stream`, { overflow: 'truncate', maxBytes: 32 * 1024 * 1024 })).truncated).toBeUndefined();
  });

  it('takes a larger cap from the request', async () => {
    const res = await guard.fetch(`${slow.base}/stream`, { maxBytes: 32 * 1024 * 1024 });
    expect(res.body.length).toBe(16 * 1024 * 1024);
  });

  it('gives up on a server that never sends response headers', async () => {
    await refused(guard, `${slow.base}/silent`, 'timeout', { connectTimeoutMs: 150 });
  });

  it('gives up on a body that does not finish within the whole timeout', async () => {
    const err = await refused(guard, `${slow.base}/trickle`, 'timeout', { connectTimeoutMs: 2_000, timeoutMs: 300 });
    expect(err.message).toMatch(/300 ms/);
  });

  it('answers connection_failed when nothing listens on the port', async () => {
    const gone = await serve((_req, res) => res.end());
    await gone.close();
    const err = await refused(guard, `${gone.base}/`, 'connection_failed');
    expect(err.data.error).toBe('ECONNREFUSED');
  });

  it("rejects with the caller's reason when the caller aborts", async () => {
    const controller = new AbortController();
    const reason = new Error('job cancelled');
    setTimeout(() => controller.abort(reason), 50);
    await expect(guard.fetch(`${slow.base}/silent`, { signal: controller.signal })).rejects.toBe(reason);
    const already = AbortSignal.abort(reason);
    await expect(guard.fetch(`${slow.base}/silent`, { signal: already })).rejects.toBe(reason);
  });
});

describe('the log of refusals', () => {
  it('logs each refusal as a warning of the outbound source, naming the host but not the path', async () => {
    const lines: { level: string; source: string; message: string; context?: Record<string, unknown> }[] = [];
    const guard = new OutboundGuard({
      allow: [],
      ports: [80, 443],
      logger: { write: (level, source, message, context) => void lines.push({ level, source, message, context }) },
    });
    await refused(guard, 'http://10.1.1.1/feed?token=s3cret', 'private_address');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'warning', source: 'outbound', context: { reason: 'private_address', host: '10.1.1.1' } });
    expect(JSON.stringify(lines)).not.toContain('s3cret');
  });

  it('logs a timeout, a body over the cap or a failed connection at debug only (the caller reports it)', async () => {
    const lines: { level: string; context?: Record<string, unknown> }[] = [];
    const guard = new OutboundGuard({
      allow: ['127.0.0.1:*'],
      ports: [80, 443],
      logger: { write: (level, _source, _message, context) => void lines.push({ level, context }) },
    });
    const gone = await serve((_req, res) => res.end());
    await gone.close();
    await refused(guard, `${gone.base}/`, 'connection_failed');
    expect(lines).toEqual([{ level: 'debug', context: expect.objectContaining({ reason: 'connection_failed' }) }]);
  });
});
