// The network HTTP client (built-in modules) through the outbound guard: a base URL pointing
// inside is refused at once, without retries or a request, and a runtime without the context's
// guard gets a strict one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetworkHttp, buildUrl } from '../../src/networks/http.js';
import type { ModuleRuntime } from '../../src/networks/types.js';
import { OutboundGuard } from '../../src/outbound/index.js';
import { FixtureServer, json } from '../fixtures/networks/common.js';
import { expectNoSecrets, failure, testRuntime } from '../fixtures/networks/runtime.js';

const SECRET = 'sk-live-guarded-0123456789';
let server: FixtureServer;

beforeAll(async () => {
  server = await FixtureServer.start(() => json(200, { ok: true }));
});
afterAll(() => server.close());

const client = () =>
  new NetworkHttp({
    network: 'test',
    name: 'Test',
    retry: { attempts: 3, baseDelayMs: 5, maxDelayMs: 10, maxRetryAfterMs: 3_000 },
    timeoutMs: 1_000,
    maxBodyBytes: 1024,
  });
const call = (base: string, rt: ModuleRuntime) =>
  client().json(rt, { url: buildUrl(base, '/v1/programs'), headers: { Authorization: `Bearer ${SECRET}` }, secrets: [SECRET] });

describe('the network HTTP client through the outbound guard', () => {
  it('refuses a base URL inside with svc_fetch_blocked, once, sending nothing', async () => {
    const rt = testRuntime({}, { outbound: new OutboundGuard({ allow: [], ports: [80, 443, Number(new URL(server.url).port)] }) });
    const before = server.count();
    const err = await failure(call(server.url, rt));
    expect(err).toMatchObject({ code: 'svc_fetch_blocked', status: 422, data: { reason: 'private_address' } });
    expect(server.count()).toBe(before);
    expect(rt.logs.filter((l) => l.level === 'warning')).toEqual([]);
    for (const base of ['http://169.254.169.254', 'http://[::ffff:a9fe:a9fe]', 'http://10.0.0.1:8080']) {
      expect(await failure(call(base, rt))).toMatchObject({ code: 'svc_fetch_blocked' });
    }
    expectNoSecrets([SECRET], err, rt.logs);
  });

  it('uses a strict guard when the runtime brings none', async () => {
    const rt: ModuleRuntime = { settings: {}, now: () => new Date(), log: () => {} };
    expect(await failure(call(server.url, rt))).toMatchObject({ code: 'svc_fetch_blocked', data: { reason: 'private_address' } });
  });

  it('reports a body over its cap as svc_network_bad_response, and calls through an allowed guard', async () => {
    const big = await FixtureServer.start(() => json(200, { items: 'x'.repeat(4096) }));
    try {
      expect(await failure(call(big.url, testRuntime({})))).toMatchObject({
        code: 'svc_network_bad_response',
        message: expect.stringContaining('more than 1024 bytes'),
      });
    } finally {
      await big.close();
    }
    await expect(call(server.url, testRuntime({}))).resolves.toMatchObject({ status: 200, data: { ok: true } });
  });
});
