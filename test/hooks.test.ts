import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadContextExtensions } from '../src/context.js';
import { HOOKS, HookBus } from '../src/hooks/index.js';
import { createTestContext, destroyTestContext, dialects } from './helpers/context.js';
import { tempDir } from './helpers/temp.js';

for (const dialect of dialects) {
  describe(`extensions on the hooks [${dialect}]`, () => {
    it('fires ledger.entry_posted after commit only, and user.created, to a configured extension', async () => {
      const dir = tempDir('cashtrack-ext-');
      const file = join(dir, 'ext.mjs');
      writeFileSync(
        file,
        `export const seen = [];
         export function register(hooks) {
           hooks.addAction('${HOOKS.ledgerEntryPosted}', 'test', (entry) => seen.push(['entry', entry.type, entry.amount]));
           hooks.addAction('${HOOKS.userCreated}', 'test', (user) => seen.push(['user', user.login]));
           hooks.addAction('${HOOKS.ledgerEntryPosted}', 'broken', () => { throw new Error('extension bug'); });
         }`,
      );
      const t = await createTestContext(dialect, { extensions: [file] });
      try {
        expect(await loadContextExtensions(t.ctx)).toEqual([file]);
        const { seen } = (await import(file)) as { seen: unknown[][] };
        const user = await t.ctx.users.create({ login: 'hooked', email: 'hooked@example.com' });
        await t.ctx.ledger.adjust({ member_id: user.id, type: 'credit', amount: '3.00', note: 'x' }, 'cli');
        await expect(t.ctx.ledger.adjust({ member_id: user.id, type: 'debit', amount: '9.00', note: 'refused' }, 'cli')).rejects.toMatchObject({
          code: 'svc_insufficient_funds',
        });
        expect(seen).toEqual([
          ['user', 'hooked'],
          ['entry', 'adjustment', '3.00'],
        ]);
        await t.ctx.logger.flush();
        const { items } = await t.ctx.logger.list({ source: 'hooks', page: 1, per_page: 10 });
        expect(items.map((e) => e.message)).toContain(`Hook callback failed: ${HOOKS.ledgerEntryPosted}`);
      } finally {
        await destroyTestContext(t);
      }
    });

    it('refuses an extension without register()', async () => {
      const dir = tempDir('cashtrack-ext-');
      const file = join(dir, 'bad.mjs');
      writeFileSync(file, 'export const nothing = 1;');
      const t = await createTestContext(dialect, { extensions: [file] });
      try {
        await expect(loadContextExtensions(t.ctx)).rejects.toThrow(/exports no register/);
      } finally {
        await destroyTestContext(t);
      }
    });
  });

  describe(`order hooks [${dialect}]`, () => {
    it('filters the cashback amount, announces recorded and status changes after commit, and caps the referral at the margin', async () => {
      const dir = tempDir('cashtrack-ext-');
      const file = join(dir, 'orders-ext.mjs');
      writeFileSync(
        file,
        `export const seen = [];
         export function register(hooks) {
           hooks.addFilter('${HOOKS.cashbackAmount}', 'test', (amount, { order }) => order.commission);
           hooks.addAction('${HOOKS.orderRecorded}', 'test', (e) => seen.push(['recorded', e.order_id, e.status]));
           hooks.addAction('${HOOKS.orderStatusChanged}', 'test', (e) => seen.push(['status', e.order_id, e.from, e.to]));
         }`,
      );
      const t = await createTestContext(dialect, { extensions: [file] });
      try {
        await loadContextExtensions(t.ctx);
        const { seen } = (await import(file)) as { seen: unknown[][] };
        const { ctx } = t;
        const referrer = (await ctx.users.create({ login: 'ref-cap', email: 'ref-cap@example.com' })).id;
        const member = (await ctx.users.create({ login: 'all-in', email: 'all-in@example.com' })).id;
        await ctx.referrals.add({ referrer_id: referrer, referee_id: member }, 'user:1');
        const order = await ctx.orders.record(
          { network: 'awin', transaction_id: 'H-1', source: 'postback', sale_amount: '100.00', commission: '10.00', member_id: member },
          'system',
        );
        expect(order.cashback).toBe('10.00'); // the filter gave the member the whole commission
        await ctx.orders.record(
          { network: 'awin', transaction_id: 'H-1', source: 'postback', sale_amount: '100.00', commission: '10.00', member_id: member, status: 'approved' },
          'system',
        );
        expect((await ctx.ledger.balanceOf(member, 'USD')).available).toBe('10.00');
        // Nothing is left of the commission, so the referrer's share is capped at zero.
        expect((await ctx.ledger.balanceOf(referrer, 'USD')).available).toBe('0.00');
        expect(seen).toEqual([
          ['recorded', order.id, 'pending'],
          ['status', order.id, 'pending', 'approved'],
        ]);
        expect(await ctx.ledger.verify()).toEqual([]);
      } finally {
        await destroyTestContext(t);
      }
    });
  });
}

describe('the hook bus', () => {
  it('passes a value through filters in priority order and skips a throwing one', () => {
    const hooks = new HookBus();
    hooks.addFilter<number>('x.amount', 'double', (v) => v * 2, 20);
    hooks.addFilter<number>('x.amount', 'plus', (v) => v + 1, 10);
    hooks.addFilter<number>(
      'x.amount',
      'broken',
      () => {
        throw new Error('bug');
      },
      30,
    );
    expect(hooks.applyFilters('x.amount', 5)).toBe(12);
    expect(hooks.applyFilters('x.none', 5)).toBe(5);
  });
});
