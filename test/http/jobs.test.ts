import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import type { Server } from '@hapi/hapi';
import { describeEachDialect } from '../helpers/context.js';
import { createActor, NS, testServer, type Actor } from '../helpers/http.js';

type Json = Record<string, any>;

describeEachDialect('jobs over REST', (use) => {
  let server: Server;
  let admin: Actor;
  let member: Actor;

  beforeAll(async () => {
    server = await testServer(use().ctx);
    admin = await createActor(use().ctx, 'administrator');
    member = await createActor(use().ctx, 'member');
  });
  afterAll(async () => {
    await server.stop();
  });
  beforeEach(async () => {
    await use().ctx.db.execute('DELETE FROM jobs');
  });

  const request = (method: string, url: string, who: Actor | null = admin) =>
    server.inject({ method, url: `${NS}${url}`, payload: method === 'GET' ? undefined : {}, headers: who ? { authorization: who.authorization } : {} });
  const enqueue = (params: Json = {}) => use().ctx.jobs.enqueue('maintenance.prune', params, `user:${admin.id}`);

  it('shows a job with its params, status, progress, result, error and timestamps', async () => {
    const job = await enqueue({ log_retention_days: 7 });
    const res = await request('GET', `/jobs/${job.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.result).toEqual({
      id: job.id,
      type: 'maintenance.prune',
      params: { log_retention_days: 7 },
      status: 'queued',
      progress: { total: null, done: 0, failed: 0 },
      result: null,
      error: null,
      attempts: 0,
      actor: `user:${admin.id}`,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      started_at: null,
      finished_at: null,
      updated_at: expect.any(String),
    });
  });

  it('lists jobs newest first, filtered by status and type, with paging headers', async () => {
    const ids = [];
    for (let i = 1; i <= 3; i++) ids.push((await enqueue({ log_retention_days: i })).id);
    await use().ctx.jobs.cancel(ids[0], 'test');
    const all = await request('GET', '/jobs?per_page=2');
    expect(all.statusCode).toBe(200);
    expect((all.result as Json[]).map((j) => j.id)).toEqual([ids[2], ids[1]]);
    expect(all.headers['x-wp-total']).toBe('3');
    expect(all.headers['x-wp-totalpages']).toBe('2');
    expect(String(all.headers.link)).toContain('rel="next"');
    const cancelled = await request('GET', '/jobs?status=cancelled&type=maintenance.prune');
    expect((cancelled.result as Json[]).map((j) => j.id)).toEqual([ids[0]]);
    expect((await request('GET', '/jobs?type=advertisers.sync')).result as Json[]).toEqual([]);
    const bad = await request('GET', '/jobs?status=sleeping');
    expect(bad.statusCode).toBe(400);
    expect(bad.result).toMatchObject({ code: 'rest_invalid_param', data: { params: { status: expect.any(String) } } });
  });

  it('answers 404 svc_job_not_found for an unknown job, and 400 for an id that is not one', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await request(method, '/jobs/424242');
      expect(res.statusCode).toBe(404);
      expect(res.result).toMatchObject({ code: 'svc_job_not_found', data: { status: 404 } });
    }
    expect((await request('GET', '/jobs/abc')).statusCode).toBe(400);
  });

  it('cancels a queued job at once (200 with the job)', async () => {
    const job = await enqueue();
    const res = await request('DELETE', `/jobs/${job.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.result).toMatchObject({ id: job.id, status: 'cancelled', finished_at: expect.any(String) });
  });

  it('asks a running job to stop (cancelling), again harmlessly, and refuses a finished job (409 svc_job_finished)', async () => {
    const { ctx } = use();
    const job = await enqueue();
    const claimed = (await ctx.jobs.claim('test-runner', ['maintenance.prune'], 60_000))!;
    const first = await request('DELETE', `/jobs/${job.id}`);
    expect(first.statusCode).toBe(200);
    expect(first.result).toMatchObject({ id: job.id, status: 'cancelling', finished_at: null });
    expect(((await request('DELETE', `/jobs/${job.id}`)).result as Json).status).toBe('cancelling');
    await ctx.jobs.markCancelled(claimed.lease, claimed.progress);
    const late = await request('DELETE', `/jobs/${job.id}`);
    expect(late.statusCode).toBe(409);
    expect(late.result).toMatchObject({ code: 'svc_job_finished', data: { status: 409, job_status: 'cancelled' } });
  });

  it('cancels through the method override as well', async () => {
    const job = await enqueue();
    const res = await server.inject({
      method: 'POST',
      url: `${NS}/jobs/${job.id}`,
      payload: {},
      headers: { authorization: admin.authorization, 'x-http-method-override': 'DELETE' },
    });
    expect(res.statusCode).toBe(200);
    expect((res.result as Json).status).toBe('cancelled');
  });

  it('shows a failed job with its message only', async () => {
    const { ctx } = use();
    const job = await enqueue();
    const claimed = (await ctx.jobs.claim('test-runner', ['maintenance.prune'], 60_000))!;
    await ctx.jobs.fail(claimed.lease, 'The network answered 503.', { total: 4, done: 1, failed: 1 });
    const res = await request('GET', `/jobs/${job.id}`);
    expect(res.result).toMatchObject({ status: 'failed', error: 'The network answered 503.', progress: { total: 4, done: 1, failed: 1 }, attempts: 1 });
    expect(Object.keys(res.result as Json)).not.toContain('checkpoint');
    expect(Object.keys(res.result as Json)).not.toContain('lease_owner');
  });

  it('refuses anonymous callers (401) and members (403)', async () => {
    const job = await enqueue();
    for (const [method, url] of [
      ['GET', '/jobs'],
      ['GET', `/jobs/${job.id}`],
      ['DELETE', `/jobs/${job.id}`],
    ]) {
      const anonymous = await request(method, url, null);
      expect(anonymous.statusCode, `${method} ${url}`).toBe(401);
      expect(anonymous.result).toMatchObject({ code: 'rest_forbidden' });
      expect((await request(method, url, member)).statusCode, `${method} ${url}`).toBe(403);
    }
    expect((await use().ctx.jobs.get(job.id)).status).toBe('queued');
  });
});
