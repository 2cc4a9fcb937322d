import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/context.js';
import { insertCoupon } from '../helpers/coupons.js';
import { adminClient, createActor, NS } from '../helpers/http.js';
import { startOpenAiFixture, type OpenAiFixture } from '../fixtures/openai-server.js';

type Json = Record<string, any>;
const KEY = 'sk-http-route-secret-77';

describeEachDialect('AI routes', (use) => {
  const api = adminClient(use);
  let fixture: OpenAiFixture;
  beforeAll(async () => {
    fixture = await startOpenAiFixture();
  });
  afterAll(async () => {
    await fixture.close();
  });
  beforeEach(() => fixture.reset());

  it('answers 503 svc_ai_not_configured on every AI route until a provider is set', async () => {
    await use().ctx.ai.configure({ base_url: null, model: null, api_key: null }, 'test');
    const id = await insertCoupon(use().ctx);
    for (const [url, body] of [
      [`/ai/coupon/${id}`, {}],
      ['/ai/shop/1', {}],
      ['/ai/bulk', { kind: 'coupons' }],
    ] as const) {
      const res = await api.post(url, body);
      expect(res.statusCode).toBe(503);
      expect(res.result).toMatchObject({ code: 'svc_ai_not_configured', data: { status: 503, missing: ['base_url', 'api_key', 'model'] } });
    }
  });

  it('configures the provider with a write-only key', async () => {
    const res = await api.post('/ai/settings', { base_url: fixture.baseUrl, model: 'fixture-model', api_key: KEY, concurrency: 2 });
    expect(res.statusCode).toBe(200);
    expect(res.result).toMatchObject({ configured: true, api_key_set: true, concurrency: 2 });
    const shown = await api.get('/ai/settings');
    expect(shown.statusCode).toBe(200);
    expect(shown.payload).not.toContain(KEY);
    expect((shown.result as Json).tags.coupon).toContain('COUPON_TITLE');
    expect((await api.post('/ai/settings', {})).statusCode).toBe(400);
    expect((await api.post('/ai/settings', { temperature: 9 })).result).toMatchObject({ code: 'svc_invalid_setting' });
  });

  it('rewrites a coupon (and previews one with dry_run) over REST', async () => {
    await api.post('/ai/settings', { base_url: fixture.baseUrl, model: 'fixture-model', api_key: KEY });
    const id = await insertCoupon(use().ctx);
    const preview = await api.post(`/ai/coupon/${id}`, { dry_run: true });
    expect(preview.statusCode).toBe(200);
    expect(preview.result).toMatchObject({
      kind: 'coupon',
      id,
      dry_run: true,
      saved: false,
      generation: { model: 'fixture-model', tokens: { total_tokens: 200 } },
    });
    const res = await api.server.inject({ method: 'POST', url: `${NS}/ai/coupon/${id}`, headers: { authorization: api.admin.authorization } });
    expect(res.statusCode).toBe(200);
    expect(res.result).toMatchObject({ saved: true, coupon: { id, ai_fields: ['title', 'description'] } });
    const shown = await api.get(`/coupons/${id}`);
    expect(shown.result).toMatchObject({ id, ai: { model: 'fixture-model', outcome: 'saved', tokens: { total_tokens: 200 } } });
  });

  it("keeps a dry run's proposal with proposal_id: the same text, no second provider call, the same answer when repeated", async () => {
    await api.post('/ai/settings', { base_url: fixture.baseUrl, model: 'fixture-model', api_key: KEY });
    const id = await insertCoupon(use().ctx, { title: 'Rest title before' });
    const preview = await api.post(`/ai/coupon/${id}`, { dry_run: true });
    const { proposal_id: proposalId, proposal, expires_at: expiresAt } = preview.result as Json;
    expect(proposalId).toMatch(/^[0-9a-f]{32}$/);
    expect(Date.parse(expiresAt)).toBeGreaterThan(Date.now());
    const kept = await api.post(`/ai/coupon/${id}`, { proposal_id: proposalId });
    expect(kept.statusCode).toBe(200);
    expect(kept.result).toMatchObject({
      saved: true,
      proposal,
      proposal_id: proposalId,
      coupon: { id, title: proposal.title, ai_fields: ['title', 'description'] },
    });
    expect(fixture.requests).toHaveLength(1);
    const again = await api.post(`/ai/coupon/${id}`, { proposal_id: proposalId.toUpperCase() });
    expect(again.statusCode).toBe(200);
    expect(again.result).toEqual(kept.result);
    expect((await api.get(`/coupons/${id}`)).result).toMatchObject({ title: proposal.title, original: { title: 'Rest title before' } });
  });

  it('answers 404, 410 and 409 for unknown, expired, foreign and stale proposals, and 400 for bad input', async () => {
    await api.post('/ai/settings', { base_url: fixture.baseUrl, model: 'fixture-model', api_key: KEY });
    const id = await insertCoupon(use().ctx);
    const other = await insertCoupon(use().ctx);
    const unknown = await api.post(`/ai/coupon/${id}`, { proposal_id: 'a'.repeat(32) });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.result).toMatchObject({ code: 'svc_ai_proposal_not_found', data: { status: 404 } });
    const { proposal_id: proposalId } = (await api.post(`/ai/coupon/${id}`, { dry_run: true })).result as Json;
    const foreign = await api.post(`/ai/coupon/${other}`, { proposal_id: proposalId });
    expect(foreign.statusCode).toBe(409);
    expect(foreign.result).toMatchObject({ code: 'svc_ai_proposal_mismatch', data: { status: 409, kind: 'coupon', id } });
    expect((await api.post('/ai/shop/1', { proposal_id: proposalId })).result).toMatchObject({ code: 'svc_ai_proposal_mismatch' });
    await api.post(`/coupons/${id}`, { title: 'Edited by a colleague' });
    const stale = await api.post(`/ai/coupon/${id}`, { proposal_id: proposalId });
    expect(stale.statusCode).toBe(409);
    expect(stale.result).toMatchObject({ code: 'svc_ai_proposal_stale', data: { status: 409, proposal: proposalId } });
    expect((await api.get(`/coupons/${id}`)).result).toMatchObject({ title: 'Edited by a colleague', ai_fields: [] });
    await use().ctx.db.execute('UPDATE ai_proposals SET expires_at = ? WHERE id = ?', [new Date(Date.now() - 60_000), proposalId]);
    const expired = await api.post(`/ai/coupon/${id}`, { proposal_id: proposalId });
    expect(expired.statusCode).toBe(410);
    expect(expired.result).toMatchObject({ code: 'svc_ai_proposal_expired', data: { status: 410 } });
    for (const body of [{ proposal_id: 'not-an-id' }, { proposal_id: proposalId, dry_run: true }, { proposal_id: 12 }]) {
      const bad = await api.post(`/ai/coupon/${id}`, body);
      expect(bad.statusCode).toBe(400);
      expect(bad.result).toMatchObject({ code: 'rest_invalid_param' });
    }
    expect(fixture.requests).toHaveLength(1);
  });

  it('reverts a shop page the AI wrote (POST /pages/{id}/revert), and answers 409 when there is nothing to revert', async () => {
    await api.post('/ai/settings', { base_url: fixture.baseUrl, model: 'fixture-model', api_key: KEY });
    const now = new Date();
    const { insertId } = await use().ctx.db.execute(
      "INSERT INTO advertisers (module, advertiser, name, status, description, last_seen_sync, created_at, updated_at) VALUES ('awin', 'revert-1', 'Revert Shop', 'active', 'Hand description', 1, ?, ?)",
      [now, now],
    );
    const made = (await api.post('/advertisers/awin/revert-1/page', { status: 'draft' })).result as Json;
    expect(made.original).toBeNull();
    const nothing = await api.post(`/pages/${made.id}/revert`, {});
    expect(nothing.statusCode).toBe(409);
    expect(nothing.result).toMatchObject({ code: 'svc_nothing_to_revert', data: { status: 409 } });
    const generated = await api.post(`/ai/shop/${insertId}`, {});
    expect(generated.statusCode).toBe(200);
    const written = (await api.get(`/pages/${made.id}`)).result as Json;
    expect(written).toMatchObject({ body: (generated.result as Json).proposal.body, original: { body: made.body, description: 'Hand description' } });
    const reverted = await api.post(`/pages/${made.id}/revert`, {});
    expect(reverted.statusCode).toBe(200);
    expect(reverted.result).toMatchObject({ id: made.id, body: made.body, original: null });
    expect((await api.get('/advertisers/awin/revert-1')).result).toMatchObject({ description: 'Hand description' });
    expect((await api.post('/pages/99999999/revert', {})).result).toMatchObject({ code: 'svc_page_not_found', data: { status: 404 } });
  });

  it('maps refused answers to 502 with the reason, and unknown items to 404', async () => {
    await api.post('/ai/settings', { base_url: fixture.baseUrl, model: 'fixture-model', api_key: KEY });
    const id = await insertCoupon(use().ctx);
    fixture.script({ kind: 'wrong_shape' });
    const bad = await api.post(`/ai/coupon/${id}`, {});
    expect(bad.statusCode).toBe(502);
    expect(bad.result).toMatchObject({ code: 'svc_ai_bad_output', data: { status: 502, reason: 'wrong_shape' } });
    expect((await api.post('/ai/coupon/99999999', {})).result).toMatchObject({ code: 'svc_coupon_not_found', data: { status: 404 } });
    expect((await api.post('/ai/shop/99999999', {})).result).toMatchObject({ code: 'svc_advertiser_not_found', data: { status: 404 } });
    expect((await api.post('/ai/coupon/abc', {})).statusCode).toBe(400);
    expect((await api.post(`/ai/coupon/${id}`, { dry_run: 'perhaps' })).statusCode).toBe(400);
  });

  it('starts a bulk job (202), refuses the same run while it is queued (409) and refuses bad input (400)', async () => {
    await api.post('/ai/settings', { base_url: fixture.baseUrl, model: 'fixture-model', api_key: KEY });
    const started = await api.post('/ai/bulk', { kind: 'coupons', filter: { network: 'nowhere' } });
    expect(started.statusCode).toBe(202);
    expect(started.result).toMatchObject({ type: 'ai.bulk', status: 'queued', params: { kind: 'coupons', filter: { network: 'nowhere' }, overwrite: false } });
    const again = await api.post('/ai/bulk', { kind: 'coupons', filter: { network: 'nowhere' } });
    expect(again.statusCode).toBe(409);
    expect(again.result).toMatchObject({ code: 'svc_job_already_running' });
    expect((await api.post('/ai/bulk', { kind: 'pages' })).statusCode).toBe(400);
    expect((await api.post('/ai/bulk', { kind: 'shops', filter: { type: 'deal' } })).statusCode).toBe(400);
    await use().ctx.jobs.cancel((started.result as Json).id, 'test');
  });

  it('shows the AI block in the overview', async () => {
    await api.post('/ai/settings', { base_url: fixture.baseUrl, model: 'fixture-model', api_key: KEY });
    await api.post(`/ai/coupon/${await insertCoupon(use().ctx)}`, {});
    const res = await api.get('/overview');
    expect(res.statusCode).toBe(200);
    const ai = (res.result as Json).ai;
    expect(ai).toMatchObject({ configured: true, model: 'fixture-model', days: 30 });
    expect(ai.calls).toBeGreaterThan(0);
    expect(ai.by_outcome.saved).toBeGreaterThan(0);
    expect(ai.tokens.total_tokens).toBe(ai.calls * 200);
    expect(ai.by_model).toEqual([{ model: 'fixture-model', calls: ai.calls, total_tokens: ai.tokens.total_tokens }]);
  });

  it('refuses members (403) and anonymous callers (401)', async () => {
    const member = await createActor(use().ctx, 'member');
    const res = await api.server.inject({
      method: 'POST',
      url: `${NS}/ai/bulk`,
      payload: { kind: 'coupons' },
      headers: { authorization: member.authorization },
    });
    expect(res.statusCode).toBe(403);
    expect((await api.server.inject({ method: 'GET', url: `${NS}/ai/settings` })).statusCode).toBe(401);
  });
});

describeEachDialect('advertiser numbers', (use) => {
  const api = adminClient(use);
  it('are in every advertiser answer, and /lookup/advertisers finds an advertiser by its number', async () => {
    const now = new Date();
    const { insertId } = await use().ctx.db.execute(
      "INSERT INTO advertisers (module, advertiser, name, status, last_seen_sync, created_at, updated_at) VALUES ('awin', '77', 'Numbered Shop', 'active', 1, ?, ?)",
      [now, now],
    );
    const list = await api.get('/advertisers?search=Numbered');
    expect((list.result as Json[])[0]).toMatchObject({ id: insertId, module: 'awin', advertiser: '77' });
    const one = await api.get('/advertisers/awin/77');
    expect(one.result).toMatchObject({ id: insertId, ai: null });
    const found = await api.get(`/lookup/advertisers?search=${insertId}`);
    expect(found.result).toEqual([{ id: 'awin/77', label: 'Numbered Shop (awin)' }]);
  });
});
