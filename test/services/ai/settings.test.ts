import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { describeEachDialect } from '../../helpers/context.js';
import { insertCoupon } from '../../helpers/coupons.js';
import { startOpenAiFixture, type OpenAiFixture } from '../../fixtures/openai-server.js';

const KEY = 'sk-live-Very-Secret-Key-0042';

describeEachDialect('AI provider settings', (use) => {
  let fixture: OpenAiFixture;
  beforeAll(async () => {
    fixture = await startOpenAiFixture();
  });
  afterAll(async () => {
    await fixture.close();
  });

  it('answers 503 svc_ai_not_configured naming what to set while no provider is configured', async () => {
    const { ctx } = use();
    await ctx.ai.configure({ base_url: null, model: null, api_key: null }, 'test');
    const view = await ctx.ai.settings();
    expect(view).toMatchObject({ configured: false, missing: ['base_url', 'api_key', 'model'], api_key_set: false });
    const err = await ctx.ai.rewriteCoupon(await insertCoupon(ctx), {}, 'admin').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'svc_ai_not_configured', status: 503, data: { missing: ['base_url', 'api_key', 'model'] } });
    expect((err as Error).message).toContain('CASHTRACK_AI_BASE_URL');
    expect((err as Error).message).toContain('cashtrack ai configure');
  });

  it('stores the key sealed, never shows it, and scrubs it from the log', async () => {
    const { ctx } = use();
    const view = await ctx.ai.configure({ base_url: fixture.baseUrl, model: 'fixture-model', api_key: KEY, temperature: '0.3', language: 'Deutsch' }, 'admin');
    expect(view).toMatchObject({ configured: true, missing: [], api_key_set: true, temperature: 0.3, language: 'Deutsch', model: 'fixture-model' });
    expect(JSON.stringify(view)).not.toContain(KEY);
    const stored = await ctx.db.select<{ name: string; value: string }>("SELECT name, value FROM settings WHERE name LIKE 'ai%'");
    expect(stored.map((r) => r.name).sort()).toEqual(['ai_api_key', 'ai_settings']);
    expect(JSON.stringify(stored)).not.toContain(KEY);
    // The key went to the provider, and a log line that quotes it is scrubbed.
    await ctx.ai.rewriteCoupon(await insertCoupon(ctx), { dry_run: true }, 'admin');
    expect(fixture.requests.at(-1)!.authorization).toBe(`Bearer ${KEY}`);
    expect(fixture.requests.at(-1)!.body.messages[0].content).toContain('Deutsch');
    ctx.logger.info('ai', `echo ${KEY}`);
    await ctx.logger.flush();
    const logs = await ctx.db.select<{ message: string }>("SELECT message FROM logs WHERE source = 'ai'");
    expect(logs.some((l) => l.message.includes('[redacted]'))).toBe(true);
    expect(JSON.stringify(logs)).not.toContain(KEY);
  });

  it('gives a setting back to the configuration with null, and removes the stored key', async () => {
    const { ctx } = use();
    await ctx.ai.configure({ base_url: fixture.baseUrl, model: 'fixture-model', language: 'Deutsch', api_key: KEY }, 'admin');
    const view = await ctx.ai.configure({ language: null, api_key: null }, 'admin');
    expect(view).toMatchObject({ language: 'English', api_key_set: false, configured: false, missing: ['api_key'] });
    expect(view.stored).not.toContain('language');
  });

  it('refuses unknown settings, bad values and prompts with unknown tags', async () => {
    const { ctx } = use();
    await expect(ctx.ai.configure({ colour: 'blue' }, 'admin')).rejects.toMatchObject({ code: 'svc_unknown_setting', status: 400 });
    await expect(ctx.ai.configure({ temperature: '3' }, 'admin')).rejects.toMatchObject({ code: 'svc_invalid_setting', data: { field: 'temperature' } });
    await expect(ctx.ai.configure({ base_url: 'ftp://x' }, 'admin')).rejects.toMatchObject({ code: 'svc_invalid_setting', data: { field: 'base_url' } });
    await expect(ctx.ai.configure({ api_key: 'has space' }, 'admin')).rejects.toMatchObject({ code: 'svc_invalid_setting', data: { field: 'api_key' } });
    await expect(ctx.ai.configure({ 'prompts.coupon.user': 'Rewrite %COUPON_TITLE% for %NOPE%' }, 'admin')).rejects.toMatchObject({
      code: 'svc_invalid_setting',
      data: { field: 'prompts.coupon.user' },
    });
    const ok = await ctx.ai.configure({ 'prompts.coupon.user': 'Rewrite %COUPON_TITLE% of %NAME%.' }, 'admin');
    expect(ok.prompts.coupon.user).toBe('Rewrite %COUPON_TITLE% of %NAME%.');
  });

  it('still shows the settings when the stored key no longer opens, and says so when calling', async () => {
    const { ctx } = use();
    await ctx.ai.configure({ base_url: fixture.baseUrl, model: 'fixture-model', api_key: KEY }, 'admin');
    await ctx.settings.set('ai_api_key', 'e1:sealed-with-another-secret');
    expect(await ctx.ai.settings()).toMatchObject({ configured: true, api_key_set: true });
    expect((await ctx.overview.get()).ai).toMatchObject({ configured: true });
    await expect(ctx.ai.rewriteCoupon(await insertCoupon(ctx), {}, 'admin')).rejects.toMatchObject({ code: 'svc_secret_unreadable', status: 500 });
    await ctx.ai.configure({ api_key: KEY }, 'admin');
  });

  it('reads a damaged stored row as nothing stored', async () => {
    const { ctx } = use();
    await ctx.settings.set('ai_settings', '{not json');
    expect((await ctx.ai.settings()).stored).not.toContain('language');
  });
});

describeEachDialect(
  'AI provider from the environment',
  (use) => {
    it('is configured by CASHTRACK_AI_* alone', async () => {
      expect(await use().ctx.ai.settings()).toMatchObject({
        configured: true,
        base_url: 'http://127.0.0.1:9/v1',
        model: 'env-model',
        api_key_set: true,
        stored: [],
      });
    });

    it('has an overview block with nothing in it before the first call', async () => {
      expect(await use().ctx.ai.overview(7)).toMatchObject({
        configured: true,
        model: 'env-model',
        days: 7,
        calls: 0,
        by_outcome: { saved: 0, dry_run: 0, failed: 0 },
        tokens: { total_tokens: 0 },
        by_model: [],
        last_call_at: null,
      });
    });
  },
  { 'ai.base_url': 'http://127.0.0.1:9/v1', 'ai.model': 'env-model', 'ai.api_key': 'sk-from-the-environment' },
);

it('reads CASHTRACK_AI_BASE_URL, CASHTRACK_AI_API_KEY and CASHTRACK_AI_MODEL', () => {
  const config = loadConfig({
    env: { CASHTRACK_ENV: 'test', CASHTRACK_AI_BASE_URL: 'https://api.example.test/v1', CASHTRACK_AI_API_KEY: 'sk-env', CASHTRACK_AI_MODEL: 'gpt-test' },
    persistSecret: false,
  });
  expect(config.ai).toMatchObject({ base_url: 'https://api.example.test/v1', api_key: 'sk-env', model: 'gpt-test' });
  expect(() => loadConfig({ env: { CASHTRACK_ENV: 'test', CASHTRACK_AI_BASE_URL: 'not a url' }, persistSecret: false })).toThrow(/CASHTRACK_AI_BASE_URL/);
});
