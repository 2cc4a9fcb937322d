import { expect, it } from 'vitest';
import type { CashbackRule } from '../../../src/cashback-rule.js';
import { describeEachDialect } from '../../helpers/context.js';

describeEachDialect('cashback rules', (use) => {
  const pct = (value: string): CashbackRule => ({ type: 'percent_commission', value, currency: null });

  it('resolves the advertiser override, else the network default, else the configured default', async () => {
    const { cashback } = use().ctx;
    expect(await cashback.resolve('awin', '1001')).toMatchObject({
      type: 'percent_commission',
      value: '50',
      currency: null,
      source: 'default',
      advertiser: null,
    });
    await cashback.set('awin', null, 'percent_sale', '3', null, 'user:1');
    expect(await cashback.resolve('awin', '1001')).toMatchObject({ type: 'percent_sale', value: '3', source: 'network' });
    await cashback.set('awin', '1001', 'flat', '2', 'EUR', 'user:1');
    expect(await cashback.resolve('awin', '1001')).toMatchObject({ type: 'flat', value: '2.00', currency: 'EUR', source: 'advertiser', advertiser: '1001' });
    expect(await cashback.resolve('awin', '1002')).toMatchObject({ source: 'network' });
    expect(await cashback.resolve('cj', '1001')).toMatchObject({ source: 'default' });
    // Setting again replaces; removing falls back.
    await cashback.set('awin', '1001', 'percent_commission', '075.50', null, 'user:1');
    expect(await cashback.get('awin', '1001')).toMatchObject({ type: 'percent_commission', value: '75.5', currency: null });
    expect(await cashback.remove('awin', '1001', 'user:1')).toBe(true);
    expect(await cashback.remove('awin', '1001', 'user:1')).toBe(false);
    expect(await cashback.resolve('awin', '1001')).toMatchObject({ source: 'network' });
    expect((await cashback.list('awin')).map((r) => r.advertiser)).toEqual([null]);
  });

  it('rounds down to the minor unit and never gives more than the commission', () => {
    const { cashback } = use().ctx;
    const usd = (sale: number, commission: number) => ({ sale, commission, currency: 'USD' });
    expect(cashback.compute(pct('50'), usd(10_000, 1))).toBe(0);
    expect(cashback.compute(pct('50'), usd(10_000, 1235))).toBe(617);
    expect(cashback.compute(pct('12.5'), usd(10_000, 1001))).toBe(125);
    expect(cashback.compute(pct('100'), usd(10_000, 999))).toBe(999);
    expect(cashback.compute({ type: 'percent_sale', value: '10', currency: null }, usd(10_000, 500))).toBe(500);
    expect(cashback.compute({ type: 'percent_sale', value: '2.5', currency: null }, usd(9_999, 500))).toBe(249);
    expect(cashback.compute({ type: 'flat', value: '5.00', currency: 'USD' }, usd(10_000, 300))).toBe(300);
    expect(cashback.compute({ type: 'flat', value: '1.25', currency: 'USD' }, usd(10_000, 300))).toBe(125);
    expect(cashback.compute({ type: 'percent_commission', value: '33.333333', currency: null }, { sale: 0, commission: 100, currency: 'JPY' })).toBe(33);
  });

  it('refuses a flat rule in another currency than the order: no conversion', () => {
    const { cashback } = use().ctx;
    expect(() => cashback.compute({ type: 'flat', value: '2.00', currency: 'EUR' }, { sale: 100, commission: 100, currency: 'USD' })).toThrow(
      expect.objectContaining({ code: 'svc_currency_mismatch', status: 409 }),
    );
  });

  it('refuses bad rules with defined codes', async () => {
    const { cashback } = use().ctx;
    await expect(cashback.set('awin', null, 'bogus' as never, '5')).rejects.toMatchObject({ code: 'svc_invalid_cashback_rule', data: { field: 'type' } });
    await expect(cashback.set('awin', null, 'percent_commission', '100.5')).rejects.toMatchObject({ code: 'svc_invalid_rate' });
    await expect(cashback.set('awin', null, 'percent_commission', '-5')).rejects.toMatchObject({ code: 'svc_invalid_rate' });
    await expect(cashback.set('awin', null, 'percent_commission', '5', 'USD')).rejects.toMatchObject({
      code: 'svc_invalid_cashback_rule',
      data: { field: 'currency' },
    });
    await expect(cashback.set('awin', null, 'flat', '1.001')).rejects.toMatchObject({ code: 'svc_invalid_amount' });
    await expect(cashback.set('awin', null, 'flat', '1', 'XYZ')).rejects.toMatchObject({ code: 'svc_invalid_currency' });
    await expect(cashback.set('a win', null, 'flat', '1')).rejects.toMatchObject({ code: 'svc_invalid_cashback_rule', data: { field: 'network' } });
    await expect(cashback.set('awin', 'Café', 'flat', '1')).rejects.toMatchObject({ code: 'svc_invalid_cashback_rule', data: { field: 'advertiser' } });
  });
});
