// The daemon as `cashtrack serve` runs it, for end-to-end tests: a migrated context on a fresh
// database, the hapi server listening on 127.0.0.1 (port 0), and a job runner claiming jobs from
// the database. The administrator's REST calls go through server.inject; postbacks go over a real
// socket, as a network sends them; the CLI runs in-process against the same database (with the
// same secret, so the settings and postback secrets it stores are the daemon's).
import http from 'node:http';
import type { Server } from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { Job } from '../../src/services/jobs/rows.js';
import { JobRunner } from '../../src/jobs/runner.js';
import { createServer } from '../../src/server.js';
import { CLI_SECRET, runCli, type CliResult } from './cli.js';
import type { ContextOptions } from '../../src/context.js';
import { createTestContext, destroyTestContext, dialects, type TestContext, type TestDialect } from './context.js';
import { createActor, NS, type Actor } from './http.js';
import { waitFor } from './jobs.js';

export type Json = Record<string, any>;

export interface Reply {
  status: number;
  body: any;
  headers: Record<string, unknown>;
}

export interface Daemon extends TestContext {
  server: Server;
  runner: JobRunner;
  /** `http://127.0.0.1:<port>`. */
  url: string;
  admin: Actor;
  /** An administrator's request in the svc/v1 namespace. */
  api(method: 'GET' | 'POST' | 'DELETE', path: string, payload?: unknown): Promise<Reply>;
  /** `cashtrack ...` against the daemon's database. */
  cli(argv: string[], options?: { env?: Record<string, string>; stdin?: string }): Promise<CliResult>;
  /** Waits (polling GET /jobs/{id}) until the job is final; fails the test unless it is `done`. */
  finished(job: { id: number }, timeoutMs?: number): Promise<Job>;
  /** A request to the postback endpoint over a real socket (one connection per request). */
  postback(
    network: string,
    request: { method?: 'GET' | 'POST'; query?: string; body?: string; contentType?: string; headers?: Record<string, string> },
  ): Promise<Reply>;
}

/** Starts the daemon on a fresh database of `dialect`, with postbacks switched on globally. */
export async function startDaemon(dialect: TestDialect, overrides: Record<string, unknown> = {}, options: ContextOptions = {}): Promise<Daemon> {
  const t = await createTestContext(dialect, { secret: CLI_SECRET, 'postbacks.enabled': true, ...overrides }, options);
  const { ctx } = t;
  const server = await createServer(ctx, { port: 0, host: '127.0.0.1' });
  await server.start();
  // As `cashtrack serve`: the runner starts once the server listens. Enqueues in this process wake it.
  const runner = new JobRunner({ ctx, jobs: ctx.jobs, concurrency: 2, leaseMs: 60_000, pollIntervalMs: 100, progressIntervalMs: 50 });
  runner.start();
  const admin = await createActor(ctx, 'administrator', 'e2e-admin');
  const url = server.info.uri;

  const api: Daemon['api'] = async (method, path, payload) => {
    const res = await server.inject({ method, url: `${NS}${path}`, payload: payload as object | undefined, headers: { authorization: admin.authorization } });
    return { status: res.statusCode, body: res.result, headers: res.headers };
  };

  return {
    ...t,
    server,
    runner,
    url,
    admin,
    api,
    cli: (argv, options = {}) => runCli(argv, { db: t.db, ...options }),
    async finished(job, timeoutMs = 20_000) {
      const final = await waitFor(
        async () => {
          const res = await api('GET', `/jobs/${job.id}`);
          expect(res.status).toBe(200);
          return ['done', 'failed', 'cancelled'].includes(res.body.status) ? (res.body as Job) : null;
        },
        timeoutMs,
        `job ${job.id} to finish`,
      );
      expect(final, JSON.stringify(final)).toMatchObject({ status: 'done', error: null });
      return final;
    },
    postback: (network, request) => send(url, network, request),
  };
}

export async function stopDaemon(d: Daemon | undefined): Promise<void> {
  if (!d) return;
  await d.runner.stop();
  await d.server.stop({ timeout: 2_000 });
  await destroyTestContext(d);
}

/** `describe` once per dialect with a running daemon shared by that block's tests. */
export function describeDaemon(
  name: string,
  body: (use: () => Daemon, dialect: TestDialect) => void,
  overrides: Record<string, unknown> = {},
  options: ContextOptions = {},
): void {
  for (const dialect of dialects) {
    describe(`${name} [${dialect}]`, () => {
      let d: Daemon | undefined;
      beforeAll(async () => {
        d = await startDaemon(dialect, overrides, options);
      });
      afterAll(async () => {
        await stopDaemon(d);
      });
      body(() => {
        if (!d) throw new Error('daemon not started');
        return d;
      }, dialect);
    });
  }
}

function send(
  base: string,
  network: string,
  r: { method?: 'GET' | 'POST'; query?: string; body?: string; contentType?: string; headers?: Record<string, string> },
): Promise<Reply> {
  const target = new URL(`/postback/${network}${r.query ? `?${r.query}` : ''}`, base);
  const body = r.body === undefined ? null : Buffer.from(r.body, 'utf8');
  const headers: Record<string, string | number> = { ...r.headers };
  if (body) Object.assign(headers, { 'content-type': r.contentType ?? 'application/x-www-form-urlencoded', 'content-length': body.length });
  return new Promise((resolve, reject) => {
    const req = http.request(target, { method: r.method ?? 'GET', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // Not JSON: keep the text for the assertion message.
        }
        resolve({ status: res.statusCode ?? 0, body: parsed, headers: res.headers });
      });
      res.on('error', reject);
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`postback to ${target.pathname} timed out`)));
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

/** Fills a postback template's macros (`!!!name!!!`, `[[[name]]]`, `{name}`) as the network does, URL-encoding each value. */
export function fillMacros(template: string, values: Record<string, string>): string {
  return template.replace(/!!!(\w+)!!!|\[\[\[(\w+)\]\]\]|\{(\w+)\}/g, (whole, a?: string, b?: string, c?: string) => {
    const name = (a ?? b ?? c)!;
    return Object.hasOwn(values, name) ? encodeURIComponent(values[name]) : whole;
  });
}

/** Counts rows of `table` matching `where`. */
export async function count(d: TestContext, table: string, where = '1 = 1', params: unknown[] = []): Promise<number> {
  const [row] = await d.ctx.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`, params);
  return Number(row.n);
}
