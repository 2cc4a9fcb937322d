// An update of a custom network keeps what it does not send: the case was a POST with
// only a new name that wiped the postback mapping while postbacks stayed on, so every later
// postback was refused (and networks do not retry a refusal).
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Server } from '@hapi/hapi';
import { describeEachDialect } from '../helpers/context.js';
import { createActor, NS, testServer, type Actor } from '../helpers/http.js';
import { getPostback, query, shopnetDefinition } from '../helpers/networks.js';

type Json = Record<string, any>;

const feeds = {
  advertisers: { url: 'https://feeds.example.test/advertisers.json', format: 'json', items: 'data', fields: { id: 'pid', name: 'title' } },
  transactions: { url: 'https://feeds.example.test/t.csv?from={from}', format: 'csv', fields: { transaction_id: 'id', commission: 'comm' } },
};

describeEachDialect(
  'updates of custom networks',
  (use) => {
    let server: Server;
    let admin: Actor;
    let n = 0;
    beforeAll(async () => {
      server = await testServer(use().ctx);
      admin = await createActor(use().ctx, 'administrator');
    });
    afterAll(() => server.stop());

    const post = (url: string, payload: unknown) =>
      server.inject({ method: 'POST', url: `${NS}${url}`, payload: payload as object, headers: { authorization: admin.authorization } });
    const storedDefinition = async (id: string) =>
      JSON.parse(String((await use().ctx.db.select<Json>('SELECT definition FROM networks WHERE id = ?', [id]))[0].definition));

    /** A custom network with feeds, its postbacks switched on; returns the postback token. */
    async function liveNetwork(id: string): Promise<string> {
      const { ctx } = use();
      expect((await post(`/networks/${id}`, shopnetDefinition({ feeds, cashback: { type: 'percent_sale', value: '3' } }))).statusCode).toBe(201);
      const token = (await ctx.networks.rotatePostbackSecret(id, 'test')).secret;
      await ctx.networks.setPostbacks(id, true, 'test');
      return token;
    }

    it('keeps the postback mapping, feeds, tracking link and cashback rule when only the name is sent, and postbacks are still accepted', async () => {
      const token = await liveNetwork('keepnet');
      const before = await storedDefinition('keepnet');
      const res = await post('/networks/keepnet', { name: 'Keep Net Renamed' });
      expect(res.statusCode).toBe(200);
      const full = shopnetDefinition();
      expect(res.result).toMatchObject({
        name: 'Keep Net Renamed',
        currency: 'EUR',
        cashback_rule: { type: 'percent_sale', value: '3', source: 'network' },
        postbacks: { enabled: true },
        definition: { name: 'Keep Net Renamed', tracking_link: full.tracking_link, statuses: full.statuses, postback: full.postback, feeds },
      });
      expect(await storedDefinition('keepnet')).toEqual({ ...before, name: 'Keep Net Renamed' });
      const sent = await getPostback(server, 'keepnet', query({ token, txn: `KEEP-${++n}`, status: 'pending', amount: '10.00', payout: '1.00' }));
      expect(sent.status).toBe(200);
      expect(sent.body).toMatchObject({ ok: true, status: 'pending', duplicate: false });
    });

    it('merges feeds one by one: sending one feed keeps the other, null removes one', async () => {
      await post('/networks/feednet', shopnetDefinition({ feeds }));
      const moved = { ...feeds.transactions, url: 'https://feeds.example.test/v2/t.csv' };
      const res = await post('/networks/feednet', { feeds: { transactions: moved } });
      expect(res.statusCode).toBe(200);
      expect((res.result as Json).definition.feeds).toEqual({ advertisers: feeds.advertisers, transactions: moved });
      const dropped = await post('/networks/feednet', { feeds: { advertisers: null } });
      expect((dropped.result as Json).definition.feeds).toEqual({ advertisers: null, transactions: moved });
      const none = await post('/networks/feednet', { feeds: null, tracking_link: null });
      expect((none.result as Json).definition).toMatchObject({ feeds: null, tracking_link: null, postback: shopnetDefinition().postback });
    });

    it('replaces the postback mapping whole when one is sent', async () => {
      await post('/networks/mapnet', shopnetDefinition());
      const res = await post('/networks/mapnet', { postback: { params: { transaction_id: 'tid', commission: 'c' } } });
      expect(res.statusCode).toBe(200);
      expect((res.result as Json).definition.postback).toEqual({ params: { transaction_id: 'tid', commission: 'c' } });
    });

    it('refuses to remove the mapping of switched-on postbacks (409 svc_postback_no_mapping) and changes nothing', async () => {
      const token = await liveNetwork('guardnet');
      const before = await storedDefinition('guardnet');
      const res = await post('/networks/guardnet', { name: 'Renamed Too', postback: null });
      expect(res.statusCode).toBe(409);
      expect(res.result).toMatchObject({ code: 'svc_postback_no_mapping', data: { status: 409, network: 'guardnet' } });
      expect(await storedDefinition('guardnet')).toEqual(before);
      expect((await use().ctx.networks.get('guardnet')).name).toBe('Shop Net');
      const sent = await getPostback(server, 'guardnet', query({ token, txn: `GUARD-${++n}`, status: 'pending', amount: '10.00', payout: '1.00' }));
      expect(sent.status).toBe(200);
      // Switched off first, the mapping may go; switching on again is then refused.
      await use().ctx.networks.setPostbacks('guardnet', false, 'test');
      expect((await post('/networks/guardnet', { postback: null })).statusCode).toBe(200);
      await expect(use().ctx.networks.setPostbacks('guardnet', true, 'test')).rejects.toMatchObject({ code: 'svc_postback_no_mapping', status: 409 });
    });

    it('still checks the merged definition as a whole (400 svc_invalid_network) and writes nothing', async () => {
      await post('/networks/checknet', shopnetDefinition());
      const before = await storedDefinition('checknet');
      // The stored tracking link has {url}; a mapping that reuses `subid` for two fields is refused across fields.
      const res = await post('/networks/checknet', { postback: { params: { transaction_id: 'x', commission: 'X' } } });
      expect(res.statusCode).toBe(400);
      expect(res.result).toMatchObject({
        code: 'svc_invalid_network',
        data: { params: { 'postback[params][commission]': expect.stringMatching(/already mapped/) } },
      });
      expect(await storedDefinition('checknet')).toEqual(before);
    });

    it('asks a new network for its required fields (400 rest_missing_callback_param) and creates nothing', async () => {
      const res = await post('/networks/newnet', { name: 'Only A Name' });
      expect(res.statusCode).toBe(400);
      expect(res.result).toMatchObject({ code: 'rest_missing_callback_param', data: { status: 400, params: ['currency', 'statuses'] } });
      expect((await use().ctx.db.select('SELECT id FROM networks WHERE id = ?', ['newnet'])).length).toBe(0);
    });
  },
  { 'postbacks.enabled': true },
);
