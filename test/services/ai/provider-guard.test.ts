// The AI provider's requests go through the outbound guard: a base URL at a loopback service is
// refused before anything is sent (with the key), a redirect is not followed, an endless answer is
// cut at the size cap, and a failed answer's body is never quoted back.
import Joi from 'joi';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OutboundGuard } from '../../../src/outbound/index.js';
import { AiProvider, ProviderCallError, type ProviderSettings } from '../../../src/services/ai/provider.js';
import { fakeDns, serve, type Fixture } from '../../outbound/fixtures.js';

const KEY = 'sk-guarded-provider-key-0123456789';
const shape = Joi.object({ description: Joi.string().required(), body: Joi.string().required() });
const jsonSchema = { type: 'object', properties: { description: { type: 'string' }, body: { type: 'string' } }, required: ['description', 'body'] };

const settings = (base_url: string, over: Partial<ProviderSettings> = {}): ProviderSettings => ({
  base_url,
  api_key: KEY,
  model: 'fixture-model',
  temperature: 0.2,
  timeout_ms: 5_000,
  max_attempts: 3,
  retry_base_ms: 5,
  retry_max_ms: 20,
  retry_after_max_seconds: 1,
  ...over,
});

async function failure(provider: AiProvider): Promise<ProviderCallError> {
  const err = await provider.complete({ messages: [{ role: 'user', content: 'for the shop Acme.' }], name: 'shop', jsonSchema, validate: shape }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderCallError);
  return err as ProviderCallError;
}

/** What the caller sees of an error: its message and data. */
const shown = (err: ProviderCallError) => `${err.error.message} ${JSON.stringify(err.error.data)}`;

/** A service that must never be reached: it counts connections and answers what an internal page would. */
let internal: Fixture;
let internal6: Fixture | null;
beforeAll(async () => {
  internal = await serve((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"internal":"admin page"}'));
  internal6 = await serve((_req, res) => res.writeHead(200).end('inside'), '::1').catch(() => null);
});
afterAll(async () => {
  await internal.close();
  await internal6?.close();
});

describe('the AI provider with an empty allow list', () => {
  const { lookup } = fakeDns({ 'llm.internal.test': ['127.0.0.1'] });

  it.each([
    ['127.0.0.1', () => `${internal.base}/internal?x=`],
    ['a name resolving to loopback', () => `http://llm.internal.test:${internal.port}/v1`],
  ])('sends nothing (and no key) to a base_url at %s, and does not retry the refusal', async (_name, base) => {
    const guard = new OutboundGuard({ allow: [], ports: [80, 443, internal.port], lookup });
    const before = internal.connections;
    const err = await failure(new AiProvider(settings(base()), guard));
    expect(err.error).toMatchObject({ code: 'svc_fetch_blocked', status: 422, data: { reason: 'private_address' } });
    expect(err.error.message).toContain('CASHTRACK_OUTBOUND_ALLOW');
    expect(err.trace.attempts).toBe(1);
    expect(internal.connections).toBe(before);
    expect(internal.requests).toHaveLength(0);
  });

  it('sends nothing to a base_url at [::1]', async (t) => {
    if (!internal6) return t.skip();
    const guard = new OutboundGuard({ allow: [], ports: [80, 443, internal6.port] });
    const err = await failure(new AiProvider(settings(`${internal6.base}/v1`), guard));
    expect(err.error).toMatchObject({ code: 'svc_fetch_blocked', data: { reason: 'private_address' } });
    expect(internal6.connections).toBe(0);
  });

  it('sends nothing to a loopback service on a port the allow list does not open', async () => {
    const guard = new OutboundGuard({ allow: ['127.0.0.1'], ports: [80, 443] });
    const err = await failure(new AiProvider(settings(`${internal.base}/v1`), guard));
    expect(err.error).toMatchObject({ code: 'svc_fetch_blocked' });
    expect(internal.requests).toHaveLength(0);
  });
});

describe('an allowed AI provider that misbehaves', () => {
  let provider: Fixture;
  let answer: (res: import('node:http').ServerResponse) => void;
  let sent = 0;
  const guard = new OutboundGuard({ allow: ['127.0.0.1:*'], ports: [80, 443], maxBytes: 1024 * 1024 });
  beforeAll(async () => {
    provider = await serve((_req, res) => answer(res));
  });
  afterAll(async () => {
    await provider.close();
  });
  beforeEach(() => {
    sent = 0;
    provider.requests.length = 0;
  });

  it('does not follow a 302 (to a metadata-like GET on loopback), and says so', async () => {
    const before = internal.connections;
    answer = (res) => res.writeHead(302, { location: `${internal.base}/latest/meta-data/` }).end();
    const err = await failure(new AiProvider(settings(`${provider.base}/v1`), guard));
    expect(err.error).toMatchObject({ code: 'svc_ai_provider_error', data: { reason: 'redirected', provider_status: 302 } });
    expect(provider.requests).toHaveLength(1);
    expect(internal.connections).toBe(before);
  });

  it('cuts an endless answer at the size cap, closing the connection, without growing memory', async () => {
    // A 400 MB answer, written as fast as the client takes it, without a Content-Length.
    const chunk = Buffer.alloc(1024 * 1024, 'a');
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const pump = () => {
        while (sent < 400 && !res.destroyed) {
          sent++;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('close', () => undefined);
      pump();
    };
    global.gc?.();
    const rss = process.memoryUsage().rss;
    const err = await failure(new AiProvider(settings(`${provider.base}/v1`), guard));
    expect(err.error).toMatchObject({ code: 'svc_ai_provider_error', data: { reason: 'too_large' } });
    expect(err.trace.attempts).toBe(1);
    // The socket was closed near the cap: the server got nowhere near 400 MB out.
    expect(sent).toBeLessThan(64);
    expect(process.memoryUsage().rss - rss).toBeLessThan(150 * 1024 * 1024);
  });

  it.each([
    [500, 'server_error'],
    [404, 'refused'],
  ] as const)("never quotes a failed answer's body (%i), only its status and error code", async (status, reason) => {
    answer = (res) =>
      res
        .writeHead(status, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: `internal admin page; your key is ${KEY}`, type: 'invalid_request_error', code: 'model_not_found' } }));
    const err = await failure(new AiProvider(settings(`${provider.base}/v1`, { max_attempts: 1 }), guard));
    expect(err.error).toMatchObject({ code: 'svc_ai_provider_error', data: { reason, provider_status: status } });
    expect(err.error.message).toContain('model_not_found');
    expect(shown(err)).not.toContain('internal admin page');
    expect(shown(err)).not.toContain(KEY);
  });

  it("never quotes an answer that is not JSON (a parser's message quotes the text)", async () => {
    answer = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('ADMINPANEL-42 internal page: not JSON');
    const err = await failure(new AiProvider(settings(`${provider.base}/v1`), guard));
    expect(err.error).toMatchObject({ code: 'svc_ai_provider_error', data: { reason: 'bad_response' } });
    expect(shown(err)).not.toContain('ADMINPANEL');
  });
});
