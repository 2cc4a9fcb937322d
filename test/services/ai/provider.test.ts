import { getEventListeners } from 'node:events';
import Joi from 'joi';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AiProvider, ProviderCallError, retryAfterMs, sleep, type OutputFormat, type ProviderSettings } from '../../../src/services/ai/provider.js';
import { startOpenAiFixture, type OpenAiFixture } from '../../fixtures/openai-server.js';
import { OutboundGuard } from '../../../src/outbound/index.js';

// The fixture listens on 127.0.0.1, which this guard allows (on any port).
const guard = new OutboundGuard({ allow: ['127.0.0.1:*'], ports: [80, 443] });

const shape = Joi.object<{ description: string; body: string }, true>({
  description: Joi.string().min(1).max(500).required(),
  body: Joi.string().min(1).required(),
});
const jsonSchema = {
  type: 'object',
  properties: { description: { type: 'string' }, body: { type: 'string' } },
  required: ['description', 'body'],
  additionalProperties: false,
};

describe('the AI provider against an OpenAI-compatible server', () => {
  let fixture: OpenAiFixture;
  let formats: Map<string, OutputFormat>;
  const settings = (over: Partial<ProviderSettings> = {}): ProviderSettings => ({
    base_url: fixture.baseUrl,
    api_key: 'sk-test-provider-key',
    model: 'fixture-model',
    temperature: 0.2,
    timeout_ms: 2_000,
    max_attempts: 3,
    retry_base_ms: 5,
    retry_max_ms: 20,
    retry_after_max_seconds: 1,
    ...over,
  });
  const ask = (provider: AiProvider, signal?: AbortSignal) =>
    provider.complete({
      messages: [
        { role: 'system', content: 'Write.' },
        { role: 'user', content: 'for the shop Acme.' },
      ],
      name: 'shop',
      jsonSchema,
      validate: shape,
      signal,
    });
  const failure = async (promise: Promise<unknown>): Promise<ProviderCallError> => {
    const err = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ProviderCallError);
    return err as ProviderCallError;
  };

  beforeAll(async () => {
    fixture = await startOpenAiFixture();
  });
  afterAll(async () => {
    await fixture.close();
  });
  beforeEach(() => {
    fixture.reset();
    formats = new Map();
  });

  it('asks for strict json_schema output with the key and model, and returns the validated value with usage', async () => {
    const answer = await ask(new AiProvider(settings(), guard, formats));
    expect(answer.value.description).toContain('Acme');
    expect(answer).toMatchObject({
      model: 'fixture-model',
      format: 'json_schema',
      attempts: 1,
      usage: { prompt_tokens: 120, completion_tokens: 80, total_tokens: 200 },
    });
    const [request] = fixture.requests;
    expect(request.authorization).toBe('Bearer sk-test-provider-key');
    expect(request.body).toMatchObject({
      model: 'fixture-model',
      temperature: 0.2,
      response_format: { type: 'json_schema', json_schema: { name: 'shop', strict: true, schema: jsonSchema } },
    });
  });

  it('retries a 429 after its Retry-After and a 500 with backoff, then succeeds', async () => {
    fixture.script({ kind: 'status', status: 429, retryAfter: '0' }, { kind: 'status', status: 500 });
    const answer = await ask(new AiProvider(settings(), guard, formats));
    expect(answer.attempts).toBe(3);
    expect(fixture.requests).toHaveLength(3);
  });

  it('gives up after max_attempts with svc_ai_provider_error naming the reason', async () => {
    fixture.script({ kind: 'status', status: 503 }, { kind: 'status', status: 503 }, { kind: 'status', status: 503 });
    const err = await failure(ask(new AiProvider(settings(), guard, formats)));
    expect(err.error).toMatchObject({ code: 'svc_ai_provider_error', status: 502, data: { reason: 'server_error', provider_status: 503, attempts: 3 } });
  });

  it('caps a long Retry-After instead of sleeping for it', async () => {
    fixture.script({ kind: 'status', status: 429, retryAfter: '3600' });
    // Uncapped, this would sleep an hour and the test would time out.
    const answer = await ask(new AiProvider(settings({ retry_after_max_seconds: 0 }), guard, formats));
    expect(answer.attempts).toBe(2);
  });

  it('does not retry a refused key (401) and says what to set', async () => {
    fixture.script({ kind: 'status', status: 401, message: 'Incorrect API key' });
    const err = await failure(ask(new AiProvider(settings(), guard, formats)));
    expect(err.error).toMatchObject({ code: 'svc_ai_provider_error', data: { reason: 'unauthorized', provider_status: 401, attempts: 1 } });
    expect(fixture.requests).toHaveLength(1);
  });

  it('does not retry another 4xx', async () => {
    fixture.script({ kind: 'status', status: 404, message: 'The model does not exist' });
    const err = await failure(ask(new AiProvider(settings(), guard, formats)));
    expect(err.error.data).toMatchObject({ reason: 'refused', provider_status: 404 });
  });

  it('times out a provider that never answers, retries, and reports the timeout', async () => {
    fixture.script({ kind: 'hang' }, { kind: 'hang' });
    const err = await failure(ask(new AiProvider(settings({ timeout_ms: 150, max_attempts: 2 }), guard, formats)));
    expect(err.error.data).toMatchObject({ reason: 'timeout', attempts: 2 });
  });

  it('reports a provider that cannot be reached as a connection error', async () => {
    const err = await failure(ask(new AiProvider(settings({ base_url: 'http://127.0.0.1:1/v1', max_attempts: 2 }), guard, formats)));
    expect(err.error.data).toMatchObject({ reason: 'connection', attempts: 2 });
  });

  it('reports an answer that is not JSON at all as bad_response', async () => {
    fixture.script({ kind: 'not_json_body' });
    const err = await failure(ask(new AiProvider(settings(), guard, formats)));
    expect(err.error.data).toMatchObject({ reason: 'bad_response' });
  });

  it.each([
    ['empty_choice', 'empty'],
    ['empty_content', 'empty'],
    ['malformed_json', 'malformed_json'],
    ['wrong_shape', 'wrong_shape'],
    ['refusal', 'refusal'],
    ['truncated', 'truncated'],
  ] as const)('refuses an answer of kind %s with svc_ai_bad_output reason %s, keeping its usage', async (kind, reason) => {
    fixture.script({ kind });
    const err = await failure(ask(new AiProvider(settings(), guard, formats)));
    expect(err.error).toMatchObject({ code: 'svc_ai_bad_output', status: 502, data: { reason } });
    expect(err.trace.usage.total_tokens).toBe(200);
    expect(fixture.requests).toHaveLength(1);
  });

  it('falls back to json_object when the provider refuses json_schema, and remembers it for that provider', async () => {
    fixture.rejectJsonSchema = true;
    const provider = new AiProvider(settings(), guard, formats);
    const first = await ask(provider);
    expect(first).toMatchObject({ format: 'json_object', attempts: 1 });
    expect(fixture.requests.map((r) => r.format)).toEqual(['json_schema', 'json_object']);
    expect(fixture.requests[1].body.messages[0].content).toContain('JSON Schema');
    const again = await ask(new AiProvider(settings(), guard, formats));
    expect(again.format).toBe('json_object');
    expect(fixture.requests.map((r) => r.format)).toEqual(['json_schema', 'json_object', 'json_object']);
  });

  it('stops at once when its signal aborts during a backoff, without waiting out the Retry-After', async () => {
    fixture.script({ kind: 'status', status: 429, retryAfter: '30' });
    const controller = new AbortController();
    const provider = new AiProvider(settings({ retry_after_max_seconds: 30 }), guard, formats);
    const pending = ask(provider, controller.signal);
    while (fixture.requests.length === 0) await sleep(5);
    await sleep(50);
    controller.abort(new Error('cancelled by the test'));
    await expect(pending).rejects.toThrow('cancelled by the test');
    expect(fixture.requests).toHaveLength(1);
  });

  it('aborts a request in flight when its signal aborts', async () => {
    fixture.script({ kind: 'hang' });
    const controller = new AbortController();
    const pending = ask(new AiProvider(settings({ timeout_ms: 60_000 }), guard, formats), controller.signal);
    while (fixture.inFlight === 0) await sleep(5);
    controller.abort(new Error('stop now'));
    await expect(pending).rejects.toThrow('stop now');
    while (fixture.abandoned === 0) await sleep(5);
    expect(fixture.abandoned).toBe(1);
  });

  it("leaves no listener on the caller's signal once its calls are done, answered or failed", async () => {
    const controller = new AbortController();
    const provider = new AiProvider(settings({ max_attempts: 2 }), guard, formats);
    for (let i = 0; i < 5; i++) await ask(provider, controller.signal);
    fixture.script({ kind: 'status', status: 500 }, { kind: 'status', status: 500 });
    await failure(ask(provider, controller.signal));
    // A bulk job's signal lives for the whole run: one listener left per call would pile up.
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('reads JSON wrapped in a Markdown fence', async () => {
    fixture.script({ kind: 'fenced' });
    const answer = await ask(new AiProvider(settings(), guard, formats));
    expect(answer.value.description).toContain('Acme');
  });

  it('retries 408 and 409 like a server error', async () => {
    fixture.script({ kind: 'status', status: 408 }, { kind: 'status', status: 409 });
    expect((await ask(new AiProvider(settings(), guard, formats))).attempts).toBe(3);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs('1.5')).toBe(1500);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(retryAfterMs('soon')).toBeNull();
    expect(retryAfterMs(null)).toBeNull();
  });
});
