// A custom network's feeds through the outbound guard: a feed at an address inside is refused
// before anything is sent (svc_fetch_blocked), an allowed intranet host may take a secret over
// http, and the guard's timeout, size cap and connection failures keep the network error codes.
import type { LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CustomDefinition } from '../../src/networks/custom-definition.js';
import { customModule } from '../../src/networks/custom.js';
import type { ModuleRuntime, ModuleSettings } from '../../src/networks/types.js';
import { OutboundGuard } from '../../src/outbound/index.js';
import { fakeDns, serve, type Fixture } from '../outbound/fixtures.js';

const PROGRAMS = [
  { id: 1, name: 'Tea Shop' },
  { id: 2, name: 'Coffee Shop' },
];
const SECRET = 'secret-key-77';

let feeds: Fixture;
let release: () => void = () => {};
const held = new Promise<void>((resolve) => (release = resolve));
let releaseJson: () => void = () => {};
const heldJson = new Promise<void>((resolve) => (releaseJson = resolve));
/** JSON records of about 200 bytes, as a feed's text (comma-separated, no brackets). */
const jsonShops = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => JSON.stringify({ id: from + i, name: `Shop ${from + i}`, pad: 'x'.repeat(160) })).join(',');

beforeAll(async () => {
  feeds = await serve((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname.startsWith('/big'))
      return void res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(Array.from({ length: 5000 }, (_, i) => ({ id: i, name: `Shop ${i}` }))));
    if (url.pathname.startsWith('/hang')) return;
    if (url.pathname === '/held.csv') {
      // 600 rows, then nothing until the test lets the rest go.
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.write(`id,name\n${Array.from({ length: 600 }, (_, i) => `${i},Shop ${i}`).join('\n')}\n`);
      return void held.then(() => res.end('600,Last Shop\n'));
    }
    if (url.pathname === '/trickle.csv') {
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.write('id,name\n');
      let i = 0;
      const timer = setInterval(() => res.write(`${i},Shop ${i++}\n`), 10);
      return void res.on('close', () => clearInterval(timer));
    }
    if (url.pathname === '/held.json') {
      // 600 records, then nothing until the test lets the rest go.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(`{"data":{"programs":[${jsonShops(0, 600)}`);
      return void heldJson.then(() => res.end(',{"id":600,"name":"Last Shop"}]}}'));
    }
    if (url.pathname === '/trickle.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[');
      let i = 0;
      const timer = setInterval(() => res.write(`${i ? ',' : ''}${jsonShops(i++, 1)}`), 10);
      return void res.on('close', () => clearInterval(timer));
    }
    if (url.pathname === '/many.json') {
      // Written in parts (no Content-Length): the size cap can only hold while reading.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data":{"programs":[');
      for (let i = 0; i < 2_000; i += 100) res.write(`${i ? ',' : ''}${jsonShops(i, 100)}`);
      return void res.end(']}}');
    }
    if (url.pathname === '/many.csv') {
      res.writeHead(200, { 'content-type': 'text/csv' });
      return void res.end(`id,name\n${Array.from({ length: 2_000 }, (_, i) => `${i},Shop ${i} ${'x'.repeat(200)}`).join('\n')}\n`);
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(PROGRAMS));
  });
});

afterAll(async () => {
  await feeds.close();
});

/** A stored definition (checkDefinition is not asked: some of these it would refuse up front). */
function stored(url: string, headers?: Record<string, string>, format: 'json' | 'csv' = 'json'): CustomDefinition {
  return {
    name: 'Guarded Net',
    currency: 'EUR',
    settings: [{ name: 'api_key', secret: true, required: true }],
    statuses: { ok: 'approved' },
    feeds: { advertisers: { url, format, headers, fields: { id: 'id', name: 'name' } } },
  };
}

function runtime(outbound: OutboundGuard | undefined, settings: ModuleSettings = { api_key: SECRET }, signal?: AbortSignal): ModuleRuntime {
  return { settings, outbound, signal, now: () => new Date('2024-03-05T00:00:00Z'), log: () => {} };
}

async function all<T>(it: AsyncIterable<T[]>): Promise<T[]> {
  const out: T[] = [];
  for await (const page of it) out.push(...page);
  return out;
}

const leaks = (err: Error) => JSON.stringify({ ...err, message: err.message }).includes(SECRET);

describe('a custom feed through the outbound guard', () => {
  it('is refused with svc_fetch_blocked when it points inside, before anything is sent', async () => {
    const strict = new OutboundGuard({ allow: [], ports: [80, 443, feeds.port] });
    const before = feeds.connections;
    for (const url of [`${feeds.base}/a.json?k={settings.api_key}`, 'https://169.254.169.254/latest/{settings.api_key}', 'https://[::ffff:a00:1]/feed.json']) {
      const err = await all(customModule('guarded', stored(url)).listAdvertisers(runtime(strict))).catch((e) => e);
      expect(err).toMatchObject({ code: 'svc_fetch_blocked', status: 422, data: { reason: 'private_address', network: 'guarded' } });
      expect(leaks(err)).toBe(false);
    }
    expect(feeds.connections).toBe(before);
  });

  it('uses a strict guard when the runtime brings none', async () => {
    const err = await all(customModule('guarded', stored(`${feeds.base}/a.json`)).listAdvertisers(runtime(undefined))).catch((e) => e);
    expect(err).toMatchObject({ code: 'svc_fetch_blocked', data: { reason: 'private_address' } });
  });

  it('sends a secret over plain http to a host on the allow list, and to no other', async () => {
    const { lookup } = fakeDns({ 'feeds.intranet.test': ['127.0.0.1'], 'feeds.elsewhere.test': ['127.0.0.1'] });
    const guard = new OutboundGuard({ allow: [`feeds.intranet.test:${feeds.port}`], ports: [80, 443], lookup: lookup as LookupFunction });
    const url = `http://feeds.intranet.test:${feeds.port}/a.json`;
    const list = await all(customModule('guarded', stored(url, { 'X-Key': '{settings.api_key}' })).listAdvertisers(runtime(guard)));
    expect(list.map((a) => a.name)).toEqual(['Tea Shop', 'Coffee Shop']);
    expect(feeds.requests.at(-1)?.headers['x-key']).toBe(SECRET);
    const before = feeds.connections;
    const err = await all(
      customModule('guarded', stored(`http://feeds.elsewhere.test:${feeds.port}/a.json`, { 'X-Key': '{settings.api_key}' })).listAdvertisers(runtime(guard)),
    ).catch((e) => e);
    expect(err).toMatchObject({ code: 'svc_network_insecure_feed', status: 409 });
    expect(feeds.connections).toBe(before);
  });

  it('keeps the network codes for a timeout, a feed over its size cap and a host that cannot be reached', async () => {
    const guard = new OutboundGuard({ allow: ['127.0.0.1:*'], ports: [80, 443] });
    const hang = await all(customModule('guarded', stored(`${feeds.base}/hang/{settings.api_key}`), { timeoutMs: 150 }).listAdvertisers(runtime(guard))).catch(
      (e) => e,
    );
    expect(hang).toMatchObject({ code: 'svc_network_timeout', status: 504 });
    expect(leaks(hang)).toBe(false);
    const big = await all(customModule('guarded', stored(`${feeds.base}/big`), { maxBytes: 4096 }).listAdvertisers(runtime(guard))).catch((e) => e);
    expect(big).toMatchObject({ code: 'svc_network_bad_response', message: expect.stringContaining('larger than 4096 bytes') });
    const gone = await serve((_req, res) => res.end());
    await gone.close();
    const down = await all(customModule('guarded', stored(`${gone.base}/a.json?k={settings.api_key}`)).listAdvertisers(runtime(guard))).catch((e) => e);
    expect(down).toMatchObject({ code: 'svc_network_unavailable' });
    expect(leaks(down)).toBe(false);
  });

  it('reads a CSV feed as it streams in: the first page comes before the server has sent the rest', async () => {
    const guard = new OutboundGuard({ allow: ['127.0.0.1:*'], ports: [80, 443] });
    const pages = customModule('guarded', stored(`${feeds.base}/held.csv`, undefined, 'csv'))
      .listAdvertisers(runtime(guard))
      [Symbol.asyncIterator]();
    const first = await pages.next();
    expect(first.value).toHaveLength(500);
    release();
    const rest: { name: string }[] = [];
    for (let page = await pages.next(); !page.done; page = await pages.next()) rest.push(...page.value);
    expect(rest.map((a) => a.name)).toEqual([...Array.from({ length: 100 }, (_, i) => `Shop ${500 + i}`), 'Last Shop']);
  });

  it('reads a JSON feed as it streams in: the first page comes before the server has sent the rest', async () => {
    const guard = new OutboundGuard({ allow: ['127.0.0.1:*'], ports: [80, 443] });
    const def = stored(`${feeds.base}/held.json`);
    def.feeds!.advertisers!.items = 'data.programs';
    const pages = customModule('guarded', def).listAdvertisers(runtime(guard))[Symbol.asyncIterator]();
    const first = await pages.next();
    expect(first.value).toHaveLength(500);
    releaseJson();
    const rest: { name: string }[] = [];
    for (let page = await pages.next(); !page.done; page = await pages.next()) rest.push(...page.value);
    expect(rest.map((a) => a.name)).toEqual([...Array.from({ length: 100 }, (_, i) => `Shop ${500 + i}`), 'Last Shop']);
  });

  it("counts only the server's time against a JSON feed's timeout, and stops it at its size cap while reading", async () => {
    const guard = new OutboundGuard({ allow: ['127.0.0.1:*'], ports: [80, 443] });
    const def = stored(`${feeds.base}/many.json`);
    def.feeds!.advertisers!.items = 'data.programs';
    let seen = 0;
    // Four pages, 150 ms of work after each: 600 ms in all, past the 300 ms the server is given.
    for await (const page of customModule('guarded', def, { timeoutMs: 300 }).listAdvertisers(runtime(guard))) {
      seen += page.length;
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    expect(seen).toBe(2_000);
    // The 200 MB cap's error, at a cap this feed passes part-way through.
    const big = await all(customModule('guarded', def, { maxBytes: 64 * 1024 }).listAdvertisers(runtime(guard))).catch((e) => e);
    expect(big).toMatchObject({ code: 'svc_network_bad_response', message: expect.stringContaining('larger than 65536 bytes') });
  });

  it("counts only the server's time against a CSV feed's timeout, not the time spent on each page", async () => {
    const guard = new OutboundGuard({ allow: ['127.0.0.1:*'], ports: [80, 443] });
    let seen = 0;
    // Four pages, 150 ms of work after each: 600 ms in all, past the 300 ms the server is given.
    for await (const page of customModule('guarded', stored(`${feeds.base}/many.csv`, undefined, 'csv'), { timeoutMs: 300 }).listAdvertisers(runtime(guard))) {
      seen += page.length;
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    expect(seen).toBe(2_000);
    // The size cap holds for a streamed feed too.
    const big = await all(
      customModule('guarded', stored(`${feeds.base}/many.csv`, undefined, 'csv'), { maxBytes: 64 * 1024 }).listAdvertisers(runtime(guard)),
    ).catch((e) => e);
    expect(big).toMatchObject({ code: 'svc_network_bad_response', message: expect.stringContaining('larger than 65536 bytes') });
  });

  it('stops when its job is cancelled', async () => {
    const guard = new OutboundGuard({ allow: ['127.0.0.1:*'], ports: [80, 443] });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('cancelled')), 50);
    const err = await all(customModule('guarded', stored(`${feeds.base}/hang`)).listAdvertisers(runtime(guard, { api_key: SECRET }, controller.signal))).catch(
      (e) => e,
    );
    expect(err).toMatchObject({ code: 'svc_network_aborted' });
    // Also part-way through a CSV feed that is streaming in.
    const midway = new AbortController();
    setTimeout(() => midway.abort(new Error('cancelled')), 100);
    const streamed = await all(
      customModule('guarded', stored(`${feeds.base}/trickle.csv`, undefined, 'csv'), { timeoutMs: 60_000 }).listAdvertisers(
        runtime(guard, { api_key: SECRET }, midway.signal),
      ),
    ).catch((e) => e);
    expect(streamed).toMatchObject({ code: 'svc_network_aborted' });
    // And part-way through a JSON feed that is streaming in.
    const json = new AbortController();
    setTimeout(() => json.abort(new Error('cancelled')), 100);
    const started = performance.now();
    const jsonStreamed = await all(
      customModule('guarded', stored(`${feeds.base}/trickle.json`), { timeoutMs: 60_000 }).listAdvertisers(runtime(guard, { api_key: SECRET }, json.signal)),
    ).catch((e) => e);
    expect(jsonStreamed).toMatchObject({ code: 'svc_network_aborted' });
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('refuses a header that would inject another one, sending nothing', async () => {
    const guard = new OutboundGuard({ allow: ['127.0.0.1:*'], ports: [80, 443] });
    const before = feeds.connections;
    const err = await all(
      customModule('guarded', stored(`${feeds.base}/a.json`, { 'X-Key': '{settings.api_key}\r\nX-Injected: 1' })).listAdvertisers(runtime(guard)),
    ).catch((e) => e);
    expect(err).toMatchObject({ code: 'ERR_INVALID_CHAR' });
    expect(feeds.connections).toBe(before);
  });
});
