import { expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock.js';
import { redact } from '../../../src/services/logs/index.js';
import { createTestContext, describeEachDialect, destroyTestContext } from '../../helpers/context.js';
import type { Context } from '../../../src/context.js';

const clock = new ManualClock('2026-11-01T00:00:00Z');

describeEachDialect(
  'the plugin log',
  (use, dialect) => {
    /** A log of its own for a test that counts every entry, holding three entries a second apart. */
    const withThreeEntries = async (fn: (ctx: Context) => Promise<void>) => {
      const t = await createTestContext(dialect, {}, { clock });
      try {
        const { logger } = t.ctx;
        clock.set('2026-11-01T00:00:00Z');
        logger.info('orders', 'Order recorded', { order_id: 7 });
        clock.advance(1000);
        logger.warning('payouts', 'Payout refused', { code: 'svc_insufficient_funds' });
        clock.advance(1000);
        logger.error('networks', 'Sync failed');
        await logger.flush();
        await fn(t.ctx);
      } finally {
        await destroyTestContext(t);
      }
    };

    it('stores leveled entries with source, message and context, newest first', () =>
      withThreeEntries(async ({ logger }) => {
        const { items, total } = await logger.list({ page: 1, per_page: 10 });
        expect(total).toBe(3);
        expect(items.map((e) => e.level)).toEqual(['error', 'warning', 'info']);
        expect(items[2]).toMatchObject({ source: 'orders', message: 'Order recorded', context: { order_id: 7 }, time: '2026-11-01T00:00:00.000Z' });
      }));

    it('drops debug entries unless debug is configured', async () => {
      const { logger } = use().ctx;
      logger.debug('orders', 'noise');
      await logger.flush();
      expect((await logger.list({ level: 'debug', page: 1, per_page: 10 })).total).toBe(0);
    });

    it('filters by level, source, search and time window', () =>
      withThreeEntries(async ({ logger }) => {
        expect((await logger.list({ level: 'warning', page: 1, per_page: 10 })).items.map((e) => e.source)).toEqual(['payouts']);
        expect((await logger.list({ source: 'orders', page: 1, per_page: 10 })).total).toBe(1);
        expect((await logger.list({ search: 'refused', page: 1, per_page: 10 })).total).toBe(1);
        expect((await logger.list({ search: '%', page: 1, per_page: 10 })).total).toBe(0);
        expect(
          (await logger.list({ after: new Date('2026-11-01T00:00:00.500Z'), before: new Date('2026-11-01T00:00:01.500Z'), page: 1, per_page: 10 })).items.map(
            (e) => e.source,
          ),
        ).toEqual(['payouts']);
      }));

    it('redacts secrets from context before storing or printing', async () => {
      const { logger } = use().ctx;
      logger.info('auth', 'with secrets', { password: 'hunter2', nested: { api_key: 'k', token: 't', fine: 1 }, authorization: 'Basic xyz' });
      await logger.flush();
      const [entry] = (await logger.list({ search: 'with secrets', page: 1, per_page: 1 })).items;
      expect(entry.context).toEqual({ password: '[redacted]', nested: { api_key: '[redacted]', token: '[redacted]', fine: 1 }, authorization: '[redacted]' });
    });

    it('prunes entries older than the retention', () =>
      withThreeEntries(async ({ logger }) => {
        clock.advance(31 * 86_400_000);
        logger.info('later', 'recent');
        await logger.flush();
        const deleted = await logger.prune(30);
        expect(deleted).toBe(3);
        const after = await logger.list({ page: 1, per_page: 10 });
        expect(after.items.map((e) => e.message)).toEqual(['recent']);
        expect(after.total).toBe(1); // the running total moved with the prune
      }));
  },
  {},
  { clock },
);

describeEachDialect(
  'the log at level debug',
  (use) => {
    it('keeps debug entries', async () => {
      const { ctx } = use();
      ctx.logger.debug('x', 'kept');
      await ctx.logger.flush();
      expect((await ctx.logger.list({ level: 'debug', page: 1, per_page: 10 })).total).toBe(1);
    });
  },
  { 'log.level': 'debug' },
);

it('redact leaves ordinary values alone and bounds depth', () => {
  expect(redact({ a: 1, b: 'x', list: [{ secret: 's' }] })).toEqual({ a: 1, b: 'x', list: [{ secret: '[redacted]' }] });
});

it('redact keeps a __proto__ key of a client’s object as data instead of making it the copy’s prototype', () => {
  const copy = redact(JSON.parse('{"__proto__": {"is_admin": true, "token": "t0"}, "note": "x"}')) as Record<string, unknown>;
  expect(copy.is_admin).toBeUndefined();
  expect(JSON.parse(JSON.stringify(copy))).toEqual(JSON.parse('{"__proto__": {"is_admin": true, "token": "[redacted]"}, "note": "x"}'));
  expect(({} as Record<string, unknown>).is_admin).toBeUndefined();
});

describeEachDialect('log filters for readers that follow', (use) => {
  const add = (level: 'debug' | 'info' | 'warning' | 'error', source: string, message: string) => ({
    created_at: new Date(),
    level,
    source,
    message,
    context: null,
    request_id: null,
  });

  it('min_level keeps that level and those above it', async () => {
    const { ctx } = use();
    await ctx.logger.appendMany([add('debug', 'minlvl', 'd'), add('info', 'minlvl', 'i'), add('warning', 'minlvl', 'w'), add('error', 'minlvl', 'e')]);
    const at = async (min_level: 'debug' | 'info' | 'warning' | 'error') =>
      (await ctx.logger.list({ source: 'minlvl', min_level, page: 1, per_page: 10 })).items.map((e) => e.message);
    expect(await at('debug')).toEqual(['e', 'w', 'i', 'd']);
    expect(await at('info')).toEqual(['e', 'w', 'i']);
    expect(await at('warning')).toEqual(['e', 'w']);
    expect(await at('error')).toEqual(['e']);
  });

  it('after_id with order asc reads what came after an id, oldest first', async () => {
    const { ctx } = use();
    await ctx.logger.appendMany(Array.from({ length: 5 }, (_, i) => add('info', 'afterid', `m${i}`)));
    const all = (await ctx.logger.list({ source: 'afterid', page: 1, per_page: 10 })).items;
    const second = all[3].id; // newest first: index 3 is m1
    const after = await ctx.logger.list({ source: 'afterid', after_id: second, order: 'asc', page: 1, per_page: 2 });
    expect(after.items.map((e) => e.message)).toEqual(['m2', 'm3']);
    expect(after.total).toBe(3);
  });

  it('lists the sources present, once each, alphabetically', async () => {
    const { ctx } = use();
    await ctx.logger.appendMany([add('info', 'zeta', 'z'), add('info', 'alpha', 'a'), add('info', 'zeta', 'z2')]);
    const sources = await ctx.logger.sources();
    expect(sources).toEqual([...new Set(sources)].sort());
    expect(sources).toEqual(expect.arrayContaining(['alpha', 'zeta']));
  });
});
