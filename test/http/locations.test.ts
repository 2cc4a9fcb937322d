// Every 201 of the namespace names where its resource can be read: each route that can answer 201
// is made to, and its `Location` is followed (GET, 200, the same resource). The list of those
// routes is explicit and checked against the route table both ways.
import type { ServerInjectResponse } from '@hapi/hapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeTable } from '../../src/http/routes/index.js';
import { describeEachDialect } from '../helpers/context.js';
import { adminClient, NS } from '../helpers/http.js';
import { image } from '../helpers/images.js';
import { shopnetDefinition } from '../helpers/networks.js';
import { addShop } from '../helpers/pages.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { addAdvertiser, site, type Site } from '../helpers/web.js';

type Json = Record<string, any>;

/** The routes that can answer 201. */
const CREATING_ROUTES = [
  'ledger.adjust',
  'ledger.reverse',
  'payouts.create',
  'payouts.batches.create',
  'orders.create',
  'referrals.create',
  'networks.save',
  'advertisers.page',
  'advertisers.logo',
  'webhooks.create',
  'users.create',
  'users.app-passwords.create',
  'claims.create',
] as const;
type CreatingRoute = (typeof CREATING_ROUTES)[number];

describe('the route table', () => {
  it('declares a Location for exactly the routes that answer 201', () => {
    const declaring = routeTable.filter((def) => def.location).map((def) => def.id);
    expect(declaring.sort()).toEqual([...CREATING_ROUTES].sort());
  });
});

describeEachDialect('Location of every 201', (use) => {
  const api = adminClient(use);
  let web: Site;
  let receiver: Receiver;
  beforeAll(async () => {
    web = await site({ '/logo.png': { body: await image('png', 64, 64), type: 'image/png' } });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await web.close();
    await receiver.close();
  });

  let n = 0;
  const member = async () => (await use().ctx.users.create({ login: `loc${++n}`, email: `loc${n}@example.com`, role: 'member' })).id;
  const credit = async (memberId: number, amount: string) =>
    ((await api.post('/ledger/adjustments', { member_id: memberId, type: 'credit', amount, note: 'goodwill' })).result as Json).entry;

  /** Makes each route answer 201; `expect` is what the resource behind its Location must hold. */
  const MAKERS: Record<CreatingRoute, () => Promise<{ res: ServerInjectResponse; expect: (made: Json) => Json }>> = {
    'ledger.adjust': async () => ({
      res: await api.post('/ledger/adjustments', { member_id: await member(), type: 'credit', amount: '50.00', note: 'goodwill' }),
      expect: (made) => ({ id: made.entry.id, amount: '50.00' }),
    }),
    'ledger.reverse': async () => ({
      res: await api.post(`/ledger/entries/${(await credit(await member(), '1.00')).id}/reverse`, { note: 'oops' }),
      expect: (made) => ({ id: made.reversal.id, type: 'reversal' }),
    }),
    'payouts.create': async () => {
      const bob = await member();
      await credit(bob, '30.00');
      return {
        res: await api.post('/payouts', { member_id: bob, amount: '20.00', method: 'paypal', details: 'bob@paypal.example' }),
        expect: (made) => ({ id: made.payout.id, status: 'pending' }),
      };
    },
    'payouts.batches.create': async () => {
      const ann = await member();
      await credit(ann, '30.00');
      await api.post('/payouts', { member_id: ann, amount: '20.00', method: 'loc-wire', details: 'ann@bank.example' });
      return {
        res: await api.post('/payouts/batches', { method: 'loc-wire' }),
        expect: (made) => ({ batch: { id: made.batch.id, status: 'open', item_count: 1 } }),
      };
    },
    'orders.create': async () => ({
      res: await api.post('/orders', {
        network: 'awin',
        transaction_id: `LOC-${++n}`,
        member_id: await member(),
        sale_amount: '80.00',
        commission: '8.00',
        note: 'claim',
      }),
      expect: (made) => ({ id: made.id, transaction_id: made.transaction_id }),
    }),
    'referrals.create': async () => ({
      res: await api.post('/referrals', { referrer_id: await member(), referee_id: await member() }),
      expect: (made) => ({ id: made.id, referee: { id: made.referee.id }, active: true }),
    }),
    'networks.save': async () => ({ res: await api.post('/networks/locnet', shopnetDefinition()), expect: () => ({ id: 'locnet' }) }),
    'claims.create': async () => {
      await addShop(use().ctx, 'awin', 'loc-claim');
      return {
        res: await api.post('/claims', {
          member_id: await member(),
          network: 'awin',
          advertiser: 'loc-claim',
          order_ref: `LOC-CLAIM-${++n}`,
          purchased_at: '2026-01-10T12:00:00Z',
          amount: '40.00',
          currency: 'GBP',
        }),
        expect: (made) => ({ id: made.id, order_ref: made.order_ref }),
      };
    },
    'advertisers.page': async () => {
      await addShop(use().ctx, 'awin', 'loc-page');
      return { res: await api.post('/advertisers/awin/loc-page/page', {}), expect: (made) => ({ id: made.id }) };
    },
    'advertisers.logo': async () => {
      await addAdvertiser(use().ctx, 'awin', 'loc-logo', { logo_url: `${web.origin}/logo.png` });
      return {
        res: await api.post('/advertisers/awin/loc-logo/logo', {}),
        expect: (made) => ({ module: 'awin', advertiser: 'loc-logo', logo: made.logo }),
      };
    },
    'webhooks.create': async () => ({
      res: await api.post('/webhooks', { url: receiver.url, events: ['payout.created'] }),
      expect: (made) => ({ id: made.id }),
    }),
    'users.create': async () => ({
      res: await api.post('/users', { login: `locu${++n}`, email: `locu${n}@example.com` }),
      expect: (made) => ({ id: made.id, login: made.login }),
    }),
    'users.app-passwords.create': async () => ({
      res: await api.post(`/users/${await member()}/application-passwords`, { name: 'Location check' }),
      expect: (made) => ({ uuid: made.uuid, name: 'Location check', created: made.created }),
    }),
  };

  /** Follows a 201's Location: an absolute URL in the namespace that answers GET with 200. */
  async function follow(res: ServerInjectResponse, routeId: string): Promise<Json> {
    expect(res.statusCode, res.payload).toBe(201);
    const location = res.headers.location;
    expect(typeof location).toBe('string');
    const url = new URL(location as string);
    expect(url.origin).toMatch(/^http:\/\/[^/]+$/);
    expect(url.pathname.startsWith(`${NS}/`)).toBe(true);
    const read = await api.server.inject({ url: url.pathname + url.search, headers: { authorization: api.admin.authorization } });
    expect(read.statusCode, `${routeId}: GET ${url.pathname}: ${read.payload}`).toBe(200);
    return read.result as Json;
  }

  it('has a maker for every route that answers 201', () => {
    expect(Object.keys(MAKERS).sort()).toEqual([...CREATING_ROUTES].sort());
  });

  it.each(CREATING_ROUTES)('answers %s with a Location that reads back what it made', async (routeId) => {
    const { res, expect: shape } = await MAKERS[routeId]();
    expect(await follow(res, routeId)).toMatchObject(shape(res.result as Json));
  });

  it('carries the Location on an Idempotency-Key replay of a 201 too', async () => {
    const body = { member_id: await member(), type: 'credit', amount: '3.00', note: 'replayed' };
    const first = await api.post('/ledger/adjustments', body, { 'idempotency-key': 'location-replay-1' });
    const replay = await api.post('/ledger/adjustments', body, { 'idempotency-key': 'location-replay-1' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers.location).toBe(first.headers.location);
    expect(await follow(replay, 'ledger.adjust')).toMatchObject({ id: (first.result as Json).entry.id });
  });
});
