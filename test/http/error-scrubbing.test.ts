// Error answers go through the same scrubbing as the log: a provider whose answer echoes the key
// it was sent (here in a model's refusal, which is quoted back as svc_ai_bad_output's reason) does
// not get the key into the API answer or the CLI's error line.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildContext, type Context } from '../../src/context.js';
import { ServiceError } from '../../src/errors.js';
import { toRestError } from '../../src/http/rest/errors.js';
import { SecretValues } from '../../src/secret-values.js';
import { CLI_SECRET, runCli } from '../helpers/cli.js';
import { insertCoupon } from '../helpers/coupons.js';
import { createTestDatabase, describeEachDialect, dialects, testConfig, type TestDatabase } from '../helpers/context.js';
import { adminClient } from '../helpers/http.js';
import { startOpenAiFixture, type OpenAiFixture } from '../fixtures/openai-server.js';

const KEY = 'sk-echoed-key-5f0c9e2a71';

let fixture: OpenAiFixture;
beforeAll(async () => {
  fixture = await startOpenAiFixture();
});
afterAll(async () => {
  await fixture.close();
});
beforeEach(() => fixture.reset());

describe('the error translation point', () => {
  it('scrubs the message and data of any error with the secrets the process knows', () => {
    const secrets = new SecretValues();
    secrets.add(KEY);
    const service = toRestError(new ServiceError('svc_x', `upstream said ${KEY}`, 502, { excerpt: { deep: [`Bearer ${KEY}`] } }), 'r1', secrets);
    expect(service.body).toEqual({ code: 'svc_x', message: 'upstream said [redacted]', data: { excerpt: { deep: ['Bearer [redacted]'] }, status: 502 } });
    const internal = toRestError(new Error(`boom ${encodeURIComponent(KEY)}`), 'r2', secrets);
    expect(JSON.stringify(internal)).not.toContain(KEY);
  });
});

describeEachDialect('an AI error that echoes the key', (use) => {
  const api = adminClient(use);

  it('answers over REST with the key scrubbed', async () => {
    await api.post('/ai/settings', { base_url: fixture.baseUrl, model: 'fixture-model', api_key: KEY });
    const id = await insertCoupon(use().ctx);
    fixture.script({ kind: 'refusal', text: `I will not use the key ${KEY} for this.` });
    const res = await api.post(`/ai/coupon/${id}`, {});
    expect(res.statusCode).toBe(502);
    expect(res.result).toMatchObject({ code: 'svc_ai_bad_output', data: { reason: 'refusal' } });
    expect(res.payload).not.toContain(KEY);
    expect(res.payload).toContain('I will not use the key [redacted] for this.');
  });
});

for (const dialect of dialects) {
  describe(`an AI error that echoes the key, in the CLI [${dialect}]`, () => {
    let db: TestDatabase;
    let ctx: Context;
    beforeAll(async () => {
      db = await createTestDatabase(dialect);
      expect((await runCli(['db', 'migrate'], { db })).code).toBe(0);
      ctx = buildContext(testConfig(db, { secret: CLI_SECRET }), { logStream: null });
    });
    afterAll(async () => {
      await ctx?.close();
      await db?.drop();
    });

    it('prints the error line with the key scrubbed, plain and --json', async () => {
      await ctx.ai.configure({ base_url: fixture.baseUrl, model: 'fixture-model', api_key: KEY }, 'test');
      const id = String(await insertCoupon(ctx));
      for (const json of [false, true]) {
        fixture.script({ kind: 'refusal', text: `I will not use the key ${KEY} for this.` });
        const res = await runCli(['ai', 'coupon', id, ...(json ? ['--json'] : [])], { db });
        expect(res.code).toBe(1);
        expect(res.stderr).toContain('svc_ai_bad_output');
        expect(res.stderr).toContain('[redacted]');
        expect(res.stderr).not.toContain(KEY);
      }
    });
  });
}
