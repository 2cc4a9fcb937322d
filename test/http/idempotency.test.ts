// Idempotency-Key as docs/api.md states it, at its edges: how long a key is kept, which
// requests use one up, and what a retry gets. The clock is held still so "48 hours" is exact.
import { beforeEach, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { describeEachDialect } from '../helpers/context.js';
import { adminClient } from '../helpers/http.js';

type Json = Record<string, any>;
const START = new Date('2026-11-24T08:00:00Z');
const clock = new ManualClock(START);
const HOUR = 3_600_000;

describeEachDialect(
  'Idempotency-Key over REST',
  (use) => {
    const api = adminClient(use, async (ctx) => {
      expect(await ctx.ledger.verify()).toEqual([]);
    });
    let n = 0;
    beforeEach(() => {
      clock.set(START);
    });
    const member = async () => (await use().ctx.users.create({ login: `idem${++n}`, email: `idem${n}@example.com` })).id;
    const credit = (member_id: number, amount: string, key: string) =>
      api.post('/ledger/adjustments', { member_id, type: 'credit', amount, note: 'goodwill' }, { 'idempotency-key': key });
    const available = async (id: number) => (await use().ctx.ledger.balanceOf(id, 'USD')).available;

    it('replays a key until its 48 hours are over, then takes it as a new request', async () => {
      const id = await member();
      const key = `ttl-${id}`;
      expect((await credit(id, '1.00', key)).statusCode).toBe(201);
      clock.advance(48 * HOUR - 1000);
      const late = await credit(id, '1.00', key);
      expect(late.headers['idempotent-replayed']).toBe('true');
      expect((await credit(id, '2.00', key)).statusCode).toBe(422);
      clock.advance(1000);
      const fresh = await credit(id, '2.00', key);
      expect(fresh.statusCode).toBe(201);
      expect(fresh.headers['idempotent-replayed']).toBeUndefined();
      expect(await available(id)).toBe('3.00');
    });

    it('does not use up a key on a request refused by validation before it ran', async () => {
      const id = await member();
      const key = `invalid-first-${id}`;
      const refused = await api.post('/ledger/adjustments', { member_id: id, type: 'credit', amount: 5, note: 'goodwill' }, { 'idempotency-key': key });
      expect(refused.statusCode).toBe(400);
      expect(refused.result).toMatchObject({ code: 'rest_invalid_param' });
      const ran = await credit(id, '5.00', key);
      expect(ran.statusCode).toBe(201);
      expect(ran.headers['idempotent-replayed']).toBeUndefined();
      expect(await available(id)).toBe('5.00');
    });

    it('replays the first answer to a retry whose body lists the same fields in another order', async () => {
      const id = await member();
      const key = `order-${id}`;
      const first = await api.post('/ledger/adjustments', { member_id: id, type: 'credit', amount: '4.00', note: 'n' }, { 'idempotency-key': key });
      const again = await api.post('/ledger/adjustments', { note: 'n', amount: '4.00', type: 'credit', member_id: id }, { 'idempotency-key': key });
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.result).toEqual(JSON.parse(first.payload) as Json);
      expect(await available(id)).toBe('4.00');
    });

    it('keeps one key apart on two routes: each runs once', async () => {
      const id = await member();
      const key = `two-routes-${id}`;
      await credit(id, '30.00', key);
      const payout = await api.post('/payouts', { member_id: id, amount: '10.00', method: 'paypal' }, { 'idempotency-key': key });
      expect(payout.statusCode).toBe(201);
      expect(payout.headers['idempotent-replayed']).toBeUndefined();
      expect(await available(id)).toBe('20.00');
    });

    it('prunes keys past their 48 hours and keeps younger ones', async () => {
      const id = await member();
      const rows = async () =>
        Number((await use().ctx.db.select<{ n: unknown }>('SELECT COUNT(*) AS n FROM idempotency_keys WHERE idem_key LIKE ?', [`prune-${id}-%`]))[0].n);
      await credit(id, '1.00', `prune-${id}-old`);
      clock.advance(HOUR);
      await credit(id, '1.00', `prune-${id}-young`);
      clock.set(new Date(START.getTime() + 48 * HOUR + 1000));
      await use().ctx.idempotency.prune();
      expect(await rows()).toBe(1);
    });
  },
  {},
  { clock },
);
