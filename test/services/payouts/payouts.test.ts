import { describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/clock.js';
import { PayoutService } from '../../../src/services/payouts/index.js';
import { describeEachDialect } from '../../helpers/context.js';

describe('payout configuration', () => {
  it('refuses a minimum the site currency cannot express, naming the key', () => {
    const build = (minimum: string, currency: string) =>
      new PayoutService({ db: null as never, clock: systemClock, logger: null as never, ledger: null as never, events: null as never, currency, minimum });
    // Read on first use (the daemon reads it as it starts: test/cli/serve.test.ts).
    expect(() => build('10.005', 'USD').minimum).toThrow(expect.objectContaining({ code: 'svc_invalid_config', data: { key: 'payouts.minimum' } }));
    expect(() => build('10.50', 'JPY').minimum).toThrow(expect.objectContaining({ code: 'svc_invalid_config' }));
    expect(build('1000', 'JPY').minimum).toEqual({ amount: '1000', currency: 'JPY' });
    expect(build('0', 'USD').minimum).toEqual({ amount: '0.00', currency: 'USD' });
  });
});

describeEachDialect(
  'the payout service',
  (use) => {
    let seq = 0;
    const member = async (amount: string) => {
      const { ctx } = use();
      const user = await ctx.users.create({ login: `svc-payee${++seq}`, email: `svc-payee${seq}@example.com` });
      await ctx.ledger.adjust({ member_id: user.id, type: 'credit', amount, note: 'earned' }, 'test');
      return user.id;
    };

    it('applies the configured minimum of the site currency', async () => {
      const { payouts } = use().ctx;
      const id = await member('30.00');
      await expect(payouts.create({ member_id: id, amount: '24.99', method: 'paypal' }, 'cli')).rejects.toMatchObject({
        code: 'svc_payout_below_minimum',
        status: 409,
        data: { minimum: '25.00' },
      });
      await expect(payouts.create({ member_id: id, amount: '25.00', method: 'paypal' }, 'cli')).resolves.toMatchObject({ balance: { available: '5.00' } });
    });

    it('requires a method to create and a reason to cancel, whatever the front door', async () => {
      const { payouts } = use().ctx;
      const id = await member('30.00');
      await expect(payouts.create({ member_id: id, amount: '25.00', method: '  ' }, 'cli')).rejects.toMatchObject({ code: 'svc_method_required', status: 400 });
      const { payout } = await payouts.create({ member_id: id, amount: '25.00', method: 'bank_transfer', details: '  ' }, 'cli');
      expect(payout).toMatchObject({ details: null, note: null, actor: 'cli' });
      await expect(payouts.cancel(payout.id, { reason: ' ' }, 'cli')).rejects.toMatchObject({ code: 'svc_reason_required', status: 400 });
      expect((await payouts.get(payout.id)).status).toBe('pending');
      expect(await use().ctx.ledger.verify()).toEqual([]);
    });

    it('finds a payout whose amount no longer matches its debit', async () => {
      const { ctx } = use();
      const id = await member('30.00');
      const { payout } = await ctx.payouts.create({ member_id: id, amount: '25.00', method: 'paypal' }, 'cli');
      expect(await ctx.payouts.verify()).toEqual([]);
      await ctx.db.execute('UPDATE payouts SET amount = amount + 1 WHERE id = ?', [payout.id]);
      expect(await ctx.payouts.verify()).toEqual([expect.objectContaining({ kind: 'payout_mismatch', member_id: id })]);
      await ctx.db.execute('UPDATE payouts SET amount = amount - 1 WHERE id = ?', [payout.id]);
      expect(await ctx.payouts.verify()).toEqual([]);
    });
  },
  { 'payouts.minimum': '25.00' },
);
