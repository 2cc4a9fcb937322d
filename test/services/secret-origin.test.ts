// A secret is bound to the origin it was given for: pointing a built-in network's `base_url` or the
// AI `base_url` at another host must give the secret again in the same request (or remove it);
// otherwise the change is refused and the old secret never reaches the new host.
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import type { Context } from '../../src/context.js';
import { describeEachDialect } from '../helpers/context.js';
import { adminClient } from '../helpers/http.js';
import { insertCoupon } from '../helpers/coupons.js';
import { startAwinFixture, type AwinFixture } from '../fixtures/networks/awin.js';
import { startOpenAiFixture, type OpenAiFixture } from '../fixtures/openai-server.js';
import { serve, type Fixture } from '../outbound/fixtures.js';

const AI_KEY = 'sk-bound-to-its-origin-4242';

let awin: AwinFixture;
let openai: OpenAiFixture;
/** The other host: it must never see a secret given for the first. */
let elsewhere: Fixture;
beforeAll(async () => {
  awin = await startAwinFixture({ programmes: 3 });
  openai = await startOpenAiFixture();
  elsewhere = await serve((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('[]'), 'localhost');
});
afterAll(async () => {
  await awin.close();
  await openai.close();
  await elsewhere.close();
});
beforeEach(() => {
  elsewhere.requests.length = 0;
  openai.reset();
});

/** Lists Awin's advertisers with the stored settings: the request a sync makes first. */
async function listAwin(ctx: Context): Promise<void> {
  const { module, runtime } = await ctx.networks.runtime('awin');
  for await (const _page of module.listAdvertisers(runtime)) break;
}

describeEachDialect(
  'secrets bound to their origin',
  (use) => {
    const api = adminClient(use);

    it("refuses to point a built-in network's base_url at another origin without its token, and sends the token nowhere else", async () => {
      const { ctx } = use();
      await ctx.networks.configure('awin', { ...(awin.settings as Record<string, string>) }, 'test');
      const moved = ctx.networks.configure('awin', { base_url: elsewhere.base }, 'test');
      await expect(moved).rejects.toMatchObject({
        code: 'svc_secret_origin_changed',
        status: 400,
        data: { field: 'base_url', secrets: ['api_token'], from: new URL(awin.url).origin, to: elsewhere.base },
      });
      await expect(moved).rejects.toThrow(/give it again in the same request/);
      // Removing the base URL (back to the real Awin) is a change of origin too.
      await expect(ctx.networks.configure('awin', { base_url: null }, 'test')).rejects.toMatchObject({ code: 'svc_secret_origin_changed' });
      await listAwin(ctx);
      expect(elsewhere.requests).toHaveLength(0);
      expect(awin.requests.at(-1)?.headers.authorization).toBe(`Bearer ${awin.token}`);
    });

    it('moves a network to another origin when the token is given again, and keeps it on a path change', async () => {
      const { ctx } = use();
      await ctx.networks.configure('awin', { ...(awin.settings as Record<string, string>) }, 'test');
      // The same origin, another path: the token stays.
      await ctx.networks.configure('awin', { base_url: `${awin.url}/` }, 'test');
      await ctx.networks.configure('awin', { base_url: elsewhere.base, api_token: 'token-for-elsewhere' }, 'test');
      await listAwin(ctx);
      expect(elsewhere.requests.map((r) => r.headers.authorization)).toEqual(['Bearer token-for-elsewhere']);
      // Removing the token with the move is allowed too: nothing is left to follow.
      await ctx.networks.configure('awin', { base_url: awin.url, api_token: null }, 'test');
      expect((await ctx.networks.get('awin')).configured).toBe(false);
    });

    it('refuses a move that leaves a token from the configuration to follow, even when the stored one is removed', async () => {
      const { ctx } = use();
      await expect(ctx.networks.configure('impact', { base_url: elsewhere.base }, 'test')).rejects.toMatchObject({
        code: 'svc_secret_origin_changed',
        data: { secrets: ['auth_token'] },
      });
      await expect(ctx.networks.configure('impact', { base_url: elsewhere.base, auth_token: null }, 'test')).rejects.toMatchObject({
        code: 'svc_secret_origin_changed',
      });
      await expect(ctx.networks.configure('impact', { base_url: elsewhere.base, auth_token: 'given-again-token' }, 'test')).resolves.toBeTruthy();
    });

    it('refuses to point the AI base_url at another origin without the key (POST /ai/settings), and sends the key nowhere else', async () => {
      const first = await api.post('/ai/settings', { base_url: openai.baseUrl, model: 'fixture-model', api_key: AI_KEY });
      expect(first.statusCode).toBe(200);
      const moved = await api.post('/ai/settings', { base_url: `${elsewhere.base}/v1` });
      expect(moved.statusCode).toBe(400);
      expect(moved.result).toMatchObject({ code: 'svc_secret_origin_changed', data: { status: 400, field: 'base_url', secrets: ['api_key'] } });
      expect(((await api.get('/ai/settings')).result as { base_url: string }).base_url).toBe(openai.baseUrl);
      await api.post(`/ai/coupon/${await insertCoupon(use().ctx)}`, { dry_run: true });
      expect(elsewhere.requests).toHaveLength(0);
      expect(openai.requests.map((r) => r.authorization)).toEqual([`Bearer ${AI_KEY}`]);
      // Unsetting the stored base URL falls back to the configured one: another origin too.
      expect((await api.post('/ai/settings', { base_url: null })).result).toMatchObject({ code: 'svc_secret_origin_changed' });
      // With the key given again, the move is made.
      expect((await api.post('/ai/settings', { base_url: `${elsewhere.base}/v1`, api_key: 'sk-another-key-for-elsewhere' })).statusCode).toBe(200);
    });

    it('refuses a custom network definition whose feed would send a stored secret to another origin, until the secret is removed', async () => {
      const { ctx } = use();
      const home = 'http://127.0.0.1:9';
      const definition = (base: string) => ({
        name: 'Bound Net',
        currency: 'EUR',
        settings: [{ name: 'api_key', secret: true, required: true }],
        statuses: { ok: 'approved' },
        feeds: { advertisers: { url: `${base}/programs.json?k={settings.api_key}`, format: 'json', fields: { id: 'id', name: 'name' } } },
      });
      await ctx.networks.saveCustom('boundnet', definition(home), 'test');
      await ctx.networks.configure('boundnet', { api_key: 'bound-feed-key-77' }, 'test');
      // The same origin with another path is no move.
      await ctx.networks.saveCustom('boundnet', definition(`${home}/v2`), 'test');
      const moved = ctx.networks.saveCustom('boundnet', definition(elsewhere.base), 'test');
      await expect(moved).rejects.toMatchObject({
        code: 'svc_secret_origin_changed',
        status: 400,
        data: { field: 'feeds', secrets: ['api_key'], from: home, to: elsewhere.base },
      });
      await expect(moved).rejects.toThrow(/remove it first/);
      expect((await ctx.networks.get('boundnet')).definition?.feeds?.advertisers?.url).toContain(home);
      // Removed, the definition moves; given again, the secret is bound to the new origin.
      await ctx.networks.configure('boundnet', { api_key: null }, 'test');
      await ctx.networks.saveCustom('boundnet', definition(elsewhere.base), 'test');
      await ctx.networks.configure('boundnet', { api_key: 'key-for-elsewhere-88' }, 'test');
      await expect(ctx.networks.saveCustom('boundnet', definition(home), 'test')).rejects.toMatchObject({ code: 'svc_secret_origin_changed' });
      expect(elsewhere.requests).toHaveLength(0);
    });

    it("refuses a custom network's setting that moves a feed carrying a secret to another host, unless the secret is given again", async () => {
      const { ctx } = use();
      await ctx.networks.saveCustom(
        'hostnet',
        {
          name: 'Host Net',
          currency: 'EUR',
          settings: [
            { name: 'host', required: true },
            { name: 'api_key', secret: true, required: true },
          ],
          statuses: { ok: 'approved' },
          feeds: {
            advertisers: {
              url: 'https://{settings.host}/programs.json',
              format: 'json',
              headers: { 'X-Key': '{settings.api_key}' },
              fields: { id: 'id', name: 'name' },
            },
          },
        },
        'test',
      );
      await ctx.networks.configure('hostnet', { host: 'feeds.network.example', api_key: 'host-bound-key-55' }, 'test');
      await expect(api.post('/networks/hostnet/settings', { settings: { host: 'collector.attacker.example' } })).resolves.toMatchObject({
        statusCode: 400,
      });
      await expect(ctx.networks.configure('hostnet', { host: 'collector.attacker.example' }, 'test')).rejects.toMatchObject({
        code: 'svc_secret_origin_changed',
        data: { field: 'host', secrets: ['api_key'], from: 'https://feeds.network.example', to: 'https://collector.attacker.example' },
      });
      await ctx.networks.configure('hostnet', { host: 'eu.network.example', api_key: 'eu-key-66' }, 'test');
      await ctx.networks.configure('hostnet', { host: null, api_key: null }, 'test');
    });

    it('refuses a move of the AI base_url that leaves the configured key to follow', async () => {
      const { ctx } = use();
      // Back to the configured base URL and key (whatever an earlier test stored).
      await ctx.ai.configure({ base_url: null, api_key: 'sk-temporary-key-000' }, 'test');
      await ctx.ai.configure({ api_key: null }, 'test');
      await expect(ctx.ai.configure({ base_url: `${elsewhere.base}/v1`, api_key: null }, 'test')).rejects.toMatchObject({
        code: 'svc_secret_origin_changed',
      });
    });
  },
  {
    'networks.impact.auth_token': 'configured-impact-token',
    'networks.impact.account_sid': 'IR123',
    'ai.api_key': 'sk-configured-key-1234',
    'ai.base_url': 'https://api.openai.example/v1',
  },
);
