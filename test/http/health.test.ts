import { request as httpRequest } from 'node:http';
import type { Server } from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerMatches } from '../../src/http/health-routes.js';
import { startMetricsListener } from '../../src/server.js';
import { loadConfig } from '../../src/config/index.js';
import { createTestContext, describeEachDialect, destroyTestContext, dialects, type TestContext } from '../helpers/context.js';
import { adminClient, NS, testServer } from '../helpers/http.js';

const TOKEN = 'metrics-token-0123456789';

describeEachDialect('health probes', (use) => {
  let server: Server;
  beforeAll(async () => {
    server = await testServer(use().ctx);
  });
  afterAll(() => server.stop());

  it('answers /healthz without credentials', async () => {
    const res = await server.inject('/healthz');
    expect(res.statusCode).toBe(200);
    expect(res.result).toEqual({ status: 'ok' });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('answers /readyz 200 when the database answers and the schema is current', async () => {
    const res = await server.inject('/readyz');
    expect(res.statusCode).toBe(200);
    expect(res.result).toMatchObject({ status: 'ready', ready: true, checks: { database: 'ok', migrations: 'current', accepting: 'yes' } });
  });

  it('keeps /metrics unrouted while metrics are off', async () => {
    const res = await server.inject('/metrics');
    expect(res.statusCode).toBe(404);
  });
});

describe('readiness failures', () => {
  for (const dialect of dialects) {
    describe(`[${dialect}]`, () => {
      let t: TestContext;
      let server: Server;
      beforeAll(async () => {
        t = await createTestContext(dialect);
        server = await testServer(t.ctx);
      });
      afterAll(async () => {
        await server.stop();
        await destroyTestContext(t);
      });

      it('answers 503 naming the pending migrations when the schema is behind this release', async () => {
        const [latest] = await t.ctx.db.select<{ name: string }>('SELECT name FROM migrations ORDER BY name DESC LIMIT 1');
        await t.ctx.db.execute('DELETE FROM migrations WHERE name = ?', [latest.name]);
        try {
          const res = await server.inject('/readyz');
          expect(res.statusCode).toBe(503);
          expect(res.result).toMatchObject({ status: 'not_ready', ready: false, checks: { database: 'ok', migrations: 'pending' }, pending: [latest.name] });
        } finally {
          await t.ctx.db.execute('INSERT INTO migrations (name) VALUES (?)', [latest.name]);
        }
        expect((await server.inject('/readyz')).statusCode).toBe(200);
      });

      it('answers 503 at once when the daemon is stopping, before the database is asked', async () => {
        t.ctx.health.markStopping();
        const res = await server.inject('/readyz');
        expect(res.statusCode).toBe(503);
        expect(res.result).toMatchObject({ ready: false, checks: { accepting: 'stopping' } });
        // Liveness is not readiness: the process still answers.
        expect((await server.inject('/healthz')).statusCode).toBe(200);
      });
    });
  }

  it('answers 503 when the database cannot be reached', async () => {
    const t = await createTestContext('sqlite');
    const server = await testServer(t.ctx);
    try {
      await t.ctx.db.close();
      const res = await server.inject('/readyz');
      expect(res.statusCode).toBe(503);
      expect(res.result).toMatchObject({ ready: false, checks: { database: 'unreachable' } });
    } finally {
      await server.stop();
      await t.db.drop();
    }
  });
});

describe('probes and the Host check', () => {
  it('answers the probes at any Host while the namespace refuses hosts it does not serve', async () => {
    const t = await createTestContext('sqlite', { 'server.allowed_hosts': ['admin.example.com'] });
    const server = await testServer(t.ctx);
    try {
      const probe = await server.inject({ url: '/readyz', headers: { host: '10.0.0.7:8080' } });
      expect(probe.statusCode).toBe(200);
      const rest = await server.inject({ url: `${NS}/`, headers: { host: '10.0.0.7:8080' } });
      expect(rest.statusCode).toBe(400);
      expect((rest.result as { code: string }).code).toBe('svc_invalid_host');
    } finally {
      await server.stop();
      await destroyTestContext(t);
    }
  });
});

describeEachDialect(
  'metrics on the main port',
  (use) => {
    const client = adminClient(use);

    it('refuses /metrics without the bearer token, and with a wrong one', async () => {
      for (const authorization of [undefined, `Bearer ${TOKEN}x`, `Basic ${TOKEN}`, client.admin.authorization]) {
        const res = await client.server.inject({ url: '/metrics', headers: authorization ? { authorization } : {} });
        expect(res.statusCode).toBe(401);
        expect((res.result as { code: string }).code).toBe('svc_metrics_unauthorized');
      }
    });

    it('counts requests per route id and status, with latency, pool and event-loop figures', async () => {
      await client.get('/logs');
      await client.get('/logs');
      await client.server.inject(`${NS}/logs`);
      await client.server.inject('/no-such-page');
      const res = await client.server.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = res.payload;
      expect(text).toMatch(/cashtrack_http_requests_total\{route="logs\.list",method="GET",status="200"\} 2/);
      expect(text).toMatch(/cashtrack_http_requests_total\{route="logs\.list",method="GET",status="401"\} 1/);
      expect(text).toMatch(/cashtrack_http_requests_total\{route="\/\{p\*\}",method="GET",status="404"\} 1/);
      expect(text).toMatch(/cashtrack_http_request_duration_seconds_bucket\{le="0\.001",route="logs\.list"/);
      expect(text).toMatch(/cashtrack_db_pool_max \d+/);
      expect(text).toMatch(/cashtrack_db_pool_open \d+/);
      expect(text).toMatch(/cashtrack_nodejs_eventloop_lag_seconds /);
      expect(text).not.toContain(TOKEN);
    });

    it('counts job runs by type and outcome, and postbacks by network and outcome', async () => {
      const { ctx } = use();
      ctx.metrics.jobRun('advertisers.sync', 'done', 2);
      ctx.metrics.postback('awin', 'accepted');
      ctx.metrics.webhookDelivery('order.status_changed', 'delivered', 0.05);
      const text = (await ctx.metrics.render()).body;
      expect(text).toMatch(/cashtrack_job_runs_total\{type="advertisers\.sync",outcome="done"\} 1/);
      expect(text).toMatch(/cashtrack_postbacks_total\{network="awin",outcome="accepted"\} 1/);
      expect(text).toMatch(/cashtrack_webhook_deliveries_total\{event="order\.status_changed",outcome="delivered"\} 1/);
    });

    it('keeps the postback network label bounded whatever names anonymous senders invent', async () => {
      const { ctx } = use();
      for (let i = 0; i < 300; i++) ctx.metrics.postback(`made-up-${i}`, 'rejected');
      const text = (await ctx.metrics.render()).body;
      const names = new Set([...text.matchAll(/cashtrack_postbacks_total\{network="([^"]+)"/g)].map((m) => m[1]));
      expect(names.size).toBeLessThanOrEqual(201);
      expect(names.has('other')).toBe(true);
    });
  },
  { 'metrics.enabled': true, 'metrics.token': TOKEN },
);

describeEachDialect(
  'guessing the metrics token',
  (use) => {
    let server: Server;
    beforeAll(async () => {
      server = await testServer(use().ctx);
    });
    afterAll(() => server.stop());
    const scrape = (authorization: string, from: string) => server.inject({ url: '/metrics', headers: { authorization, 'x-forwarded-for': from } });

    it('throttles an address after repeated wrong bearer tokens, as other credentials are, even when it then sends the right one', async () => {
      for (let i = 0; i < 3; i++) {
        const res = await scrape(`Bearer guess-${i}-0123456789abcdef`, '198.51.100.77');
        expect(res.statusCode).toBe(401);
        expect((res.result as { code: string }).code).toBe('svc_metrics_unauthorized');
      }
      for (const authorization of ['Bearer guess-3-0123456789abcdef', `Bearer ${TOKEN}`]) {
        const res = await scrape(authorization, '198.51.100.77');
        expect(res.statusCode).toBe(429);
        expect(res.result).toMatchObject({ code: 'svc_too_many_attempts', data: { status: 429 } });
        expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      }
      // Another address is not held back, and the right token gives its count back.
      for (let i = 0; i < 5; i++) expect((await scrape(`Bearer ${TOKEN}`, '198.51.100.78')).statusCode).toBe(200);
    });
  },
  {
    'metrics.enabled': true,
    'metrics.token': TOKEN,
    'server.trust_proxy': true,
    'auth.throttle.max_failures_per_address': 3,
    'auth.throttle.window_seconds': 600,
  },
);

describe('metrics configuration', () => {
  const load = (overrides: Record<string, unknown>) => () =>
    loadConfig({ env: { CASHTRACK_ENV: 'test' }, overrides: { secret: 'x'.repeat(40), ...overrides } });

  it('refuses metrics on the main port without a token', () => {
    expect(load({ 'metrics.enabled': true })).toThrow('Invalid configuration metrics: needs metrics.token to be served on the main port');
  });

  it('accepts metrics on a port of their own without a token, and reads the port from the environment', () => {
    const config = loadConfig({
      env: { CASHTRACK_ENV: 'test', CASHTRACK_METRICS_ENABLED: 'true', CASHTRACK_METRICS_PORT: '9464' },
      overrides: { secret: 'x'.repeat(40) },
    });
    expect(config.metrics).toMatchObject({ enabled: true, port: 9464, token: null, host: '127.0.0.1' });
  });

  it('refuses a short token', () => {
    expect(load({ 'metrics.enabled': true, 'metrics.token': 'short' })).toThrow(/svc_invalid_config|metrics\.token/);
  });

  it('compares bearer tokens whole', () => {
    expect(bearerMatches(`Bearer ${TOKEN}`, TOKEN)).toBe(true);
    expect(bearerMatches(`bearer ${TOKEN}`, TOKEN)).toBe(true);
    expect(bearerMatches(`Bearer ${TOKEN.slice(0, -1)}`, TOKEN)).toBe(false);
    expect(bearerMatches(undefined, TOKEN)).toBe(false);
  });
});

function get(port: number, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; body: string; type: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers, method }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body, type: String(res.headers['content-type']) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('metrics on a listener of their own', () => {
  for (const token of [null, TOKEN]) {
    it(`serves only GET /metrics there ${token ? 'with' : 'without'} a token, and nothing on the main port`, async () => {
      const t = await createTestContext('sqlite', { 'metrics.enabled': true, 'metrics.port': 0, 'metrics.token': token });
      const server = await testServer(t.ctx);
      const listener = await startMetricsListener(t.ctx);
      try {
        const port = (listener.address() as { port: number }).port;
        const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
        const ok = await get(port, '/metrics', headers);
        expect(ok.status).toBe(200);
        expect(ok.type).toMatch(/^text\/plain; version=0\.0\.4/);
        expect(ok.body).toContain('cashtrack_process_cpu_seconds_total');
        if (token) {
          expect((await get(port, '/metrics')).status).toBe(401);
          // Wrong tokens count against the address there too (30 per window by default).
          let last = 0;
          for (let i = 0; i < 30 && last !== 429; i++) last = (await get(port, '/metrics', { authorization: `Bearer wrong-${i}` })).status;
          expect(last).toBe(429);
          expect((await get(port, '/metrics', headers)).status).toBe(429);
        }
        expect((await get(port, '/healthz', headers)).status).toBe(404);
        expect((await get(port, '/metrics', headers, 'POST')).status).toBe(405);
        expect((await server.inject({ url: '/metrics', headers })).statusCode).toBe(404);
      } finally {
        listener.close();
        await server.stop();
        await destroyTestContext(t);
      }
    });
  }
});
