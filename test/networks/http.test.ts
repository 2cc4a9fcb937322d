import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NetworkHttp, buildUrl, parseJsonText, parseRetryAfter } from '../../src/networks/http.js';
import { NetworkError, bodyExcerpt, scrubSecrets } from '../../src/networks/network-error.js';
import { CallQuota } from '../../src/networks/rate-limit.js';
import { FixtureServer, json, type Reply } from '../fixtures/networks/common.js';
import { expectNoSecrets, failure, testRuntime } from '../fixtures/networks/runtime.js';

const SECRET = 'sk-live-0123456789abcdef';
let server: FixtureServer;
let reply: () => Reply;

beforeEach(async () => {
  reply = () => json(200, { ok: true });
  server = await FixtureServer.start(() => reply());
});
afterEach(() => server.close());

function client(overrides: Partial<ConstructorParameters<typeof NetworkHttp>[0]> = {}) {
  return new NetworkHttp({
    network: 'test',
    name: 'Test',
    retry: { attempts: 3, baseDelayMs: 5, maxDelayMs: 10, maxRetryAfterMs: 3_000 },
    timeoutMs: 1_000,
    ...overrides,
  });
}
const get = (http: NetworkHttp, rt = testRuntime({}), path = '/x') =>
  http.json(rt, { url: buildUrl(server.url, path), headers: { Authorization: `Bearer ${SECRET}` }, secrets: [SECRET] });

describe('the network HTTP client', () => {
  it('sends Accept: application/json and the caller headers, and parses the JSON', async () => {
    const res = await get(client());
    expect(res.data).toEqual({ ok: true });
    expect(server.requests[0].headers.accept).toBe('application/json');
    expect(server.requests[0].headers.authorization).toBe(`Bearer ${SECRET}`);
  });

  it('retries a 500 and succeeds, logging each retry as a warning', async () => {
    server.fault({ kind: 'status', status: 500, times: 2 });
    const rt = testRuntime({});
    await expect(get(client(), rt)).resolves.toMatchObject({ data: { ok: true } });
    expect(server.count()).toBe(3);
    expect(rt.logs.filter((l) => l.level === 'warning')).toHaveLength(2);
  });

  it('gives up after the configured attempts with svc_network_unavailable and the upstream status', async () => {
    server.fault({ kind: 'status', status: 503, times: Infinity });
    const err = await failure(get(client()));
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ code: 'svc_network_unavailable', status: 502, upstreamStatus: 503, attempts: 3 });
    expect(err.message).toContain('gave up after 3 attempts');
    expect(server.count()).toBe(3);
  });

  it('honours Retry-After in seconds on a 429', async () => {
    server.fault({ kind: 'status', status: 429, retryAfter: '1' });
    const started = Date.now();
    await get(client());
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(server.count()).toBe(2);
  });

  it('fails at once as rate limited when Retry-After is longer than it may wait, and passes the wait on', async () => {
    server.fault({ kind: 'status', status: 429, retryAfter: '3600' });
    const err = await failure(get(client()));
    expect(err).toMatchObject({ code: 'svc_network_rate_limited', status: 503, retryAfterMs: 3_600_000, headers: { 'Retry-After': '3600' } });
    expect(server.count()).toBe(1);
  });

  it('treats a 403 that says it is a throttle as a rate limit and retries it', async () => {
    server.fault({ kind: 'status', status: 403, body: 'The number of requests allowed per minute has been exceeded' });
    await expect(get(client())).resolves.toBeDefined();
    expect(server.count()).toBe(2);
  });

  it('answers 401 and a plain 403 with svc_network_unauthorized without retrying', async () => {
    server.fault({ kind: 'status', status: 401, body: JSON.stringify({ error: 'invalid_token', token: SECRET }) });
    expect(await failure(get(client()))).toMatchObject({ code: 'svc_network_unauthorized', upstreamStatus: 401 });
    server.fault({ kind: 'status', status: 403, body: '{"error":"forbidden"}' });
    expect(await failure(get(client()))).toMatchObject({ code: 'svc_network_unauthorized', upstreamStatus: 403 });
    expect(server.count()).toBe(2);
  });

  it('answers another 4xx with 502 svc_network_bad_request and the upstream status, without retrying', async () => {
    server.fault({ kind: 'status', status: 422, body: JSON.stringify({ error: 'bad date range', token: SECRET }) });
    const err = await failure(get(client()));
    expect(err).toMatchObject({ code: 'svc_network_bad_request', status: 502, upstreamStatus: 422 });
    expect(server.count()).toBe(1);
    expectNoSecrets([SECRET], err);
  });

  it('turns HTML, XML, truncated JSON and an empty body into svc_network_bad_response, without retrying', async () => {
    for (const kind of ['html', 'xml', 'truncated'] as const) {
      server.fault({ kind });
      const err = await failure(get(client()));
      expect(err).toMatchObject({ code: 'svc_network_bad_response', upstreamStatus: 200 });
    }
    reply = () => ({ status: 200, body: '' });
    expect(await failure(get(client()))).toMatchObject({ code: 'svc_network_bad_response' });
    expect(server.count()).toBe(4);
  });

  it('names HTML and truncated JSON in the message and keeps a short excerpt', async () => {
    server.fault({ kind: 'html' });
    const html = await failure(get(client()));
    expect(html.message).toContain('HTML instead of JSON');
    expect(String(html.excerpt)).toContain('Down for maintenance');
    reply = () => ({ status: 200, body: '{"results": [{"id": 1}, {"id"' });
    expect((await failure(get(client()))).message).toContain('invalid or truncated JSON');
  });

  it('refuses a redirect rather than following it with the credentials', async () => {
    reply = () => ({ status: 301, body: '', headers: { Location: 'https://elsewhere.test/x' } });
    const err = await failure(get(client()));
    expect(err).toMatchObject({ code: 'svc_network_bad_response', upstreamStatus: 301 });
    expect(err.message).toContain('elsewhere.test');
  });

  it('retries a dropped connection', async () => {
    server.fault({ kind: 'reset' });
    await expect(get(client())).resolves.toBeDefined();
    expect(server.count()).toBe(2);
  });

  it('times out a request that never answers, retries, then fails with svc_network_timeout', async () => {
    server.fault({ kind: 'hang', times: Infinity });
    const err = await failure(get(client({ timeoutMs: 100, retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 1 } })));
    expect(err).toMatchObject({ code: 'svc_network_timeout', status: 504, attempts: 2 });
  });

  it('stops at once with svc_network_aborted when the runtime signal aborts', async () => {
    server.fault({ kind: 'hang', times: Infinity });
    const controller = new AbortController();
    const rt = testRuntime({}, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    // A timeout far past the test's own: only the abort can end this request in time.
    expect(await failure(get(client({ timeoutMs: 3_600_000 }), rt))).toMatchObject({ code: 'svc_network_aborted' });
    expect(server.count()).toBe(1);
  });

  it('refuses a body larger than the cap', async () => {
    reply = () => json(200, { blob: 'x'.repeat(5_000) });
    expect(await failure(get(client({ maxBodyBytes: 1_000 })))).toMatchObject({ code: 'svc_network_bad_response' });
  });

  it('never puts the credential in an error or a log line, even when the network echoes it', async () => {
    server.fault({ kind: 'status', status: 500, body: `upstream saw Authorization: Bearer ${SECRET}`, times: 1 });
    server.fault({ kind: 'status', status: 401, body: JSON.stringify({ error: 'bad', access_token: SECRET, echo: `token ${SECRET}` }) });
    const rt = testRuntime({});
    const err = await failure(get(client(), rt));
    expect(err.code).toBe('svc_network_unauthorized');
    expectNoSecrets([SECRET], err, err.message, (err as unknown as NetworkError).data, rt.logs);
  });
});

describe('Retry-After, JSON and scrubbing helpers', () => {
  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('120')).toBe(120_000);
    expect(parseRetryAfter('Wed, 21 Oct 2026 07:28:10 GMT', Date.parse('2026-10-21T07:28:00Z'))).toBe(10_000);
    expect(parseRetryAfter('Wed, 21 Oct 2026 07:28:00 GMT', Date.parse('2026-10-21T08:00:00Z'))).toBe(0);
    expect(parseRetryAfter('soon')).toBeNull();
    expect(parseRetryAfter(null)).toBeNull();
  });

  it('keeps integers too long for a double exact, leaving strings and decimals alone', () => {
    expect(parseJsonText('{"id": 12345678901234567890, "s": "12345678901234567890", "a": 12.5, "f": 1.12345678901234567}')).toEqual({
      id: '12345678901234567890',
      s: '12345678901234567890',
      a: 12.5,
      // biome-ignore lint/correctness/noPrecisionLoss: the literal the parser is fed, rounded as JSON.parse rounds it.
      f: 1.12345678901234567,
    });
  });

  it('scrubs bearer and basic credentials, token members and known secret values', () => {
    const text = `Authorization: Bearer abc.def-123 Basic dXNlcjpwYXNz {"access_token":"t0k3n","refresh_token": "r3fr"} client_secret=s3cr3t&x=1 and ${SECRET} ${encodeURIComponent('a b+c/secret')}`;
    const out = scrubSecrets(text, [SECRET, 'a b+c/secret']);
    for (const leaked of ['abc.def-123', 'dXNlcjpwYXNz', 't0k3n', 'r3fr', 's3cr3t', SECRET, encodeURIComponent('a b+c/secret')])
      expect(out).not.toContain(leaked);
    expect(out).toContain('x=1');
    expect(bodyExcerpt('a'.repeat(500))!.length).toBeLessThanOrEqual(201);
  });
});

describe('the client-side call quota', () => {
  it('allows a burst of the limit, then no more than the limit in any window', async () => {
    const quota = new CallQuota({ limit: 2, perMs: 200 });
    const started = performance.now();
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      await quota.take(undefined, 'test');
      times.push(performance.now() - started);
    }
    expect(times[2]).toBeGreaterThanOrEqual(190);
    expect(times[4]).toBeGreaterThanOrEqual(390);
    for (let i = 2; i < times.length; i++) expect(times[i] - times[i - 2]).toBeGreaterThanOrEqual(190);
  });

  it('spends nothing more once the network says none are left, until its window resets', () => {
    let now = 100_000;
    const quota = new CallQuota({ limit: 10, perMs: 1_000 }, () => now);
    quota.observeRemaining(0, 300);
    expect(quota.available()).toBe(0);
    now += 301;
    expect(quota.available()).toBe(10);
    quota.observeRemaining(4);
    expect(quota.available()).toBe(4);
  });

  it('makes no call during a pause', () => {
    let now = 0;
    const quota = new CallQuota({ limit: 10, perMs: 1_000 }, () => now);
    quota.pause(500);
    expect(quota.available()).toBe(0);
    now += 500;
    expect(quota.available()).toBe(10);
  });

  it('wakes a waiting caller with svc_network_aborted', async () => {
    const quota = new CallQuota({ limit: 1, perMs: 60_000 });
    await quota.take(undefined, 'test');
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    expect(await failure(quota.take(controller.signal, 'test'))).toMatchObject({ code: 'svc_network_aborted' });
  });
});
