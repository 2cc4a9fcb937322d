import { describe, expect, it } from 'vitest';
import { validateInput } from '../../src/cli/io.js';
import { orderSchemas } from '../../src/http/routes/orders.js';
import { payoutSchemas } from '../../src/http/routes/payouts.js';

describe('validateInput', () => {
  it("returns the route schema's converted value, with the schema's type", async () => {
    const query = await validateInput(orderSchemas.list, { member_id: '7', unmatched: '0', after: '2026-03-01T00:00:00Z', page: undefined });
    // Typed: these compile only because the result is OrderFilters.
    const page: number = query.page;
    const after: Date | undefined = query.after;
    expect({ page, per_page: query.per_page, member_id: query.member_id, unmatched: query.unmatched, after }).toEqual({ page: 1, per_page: 10, member_id: 7, unmatched: false, after: new Date('2026-03-01T00:00:00Z') });
  });

  it('refuses as the REST route does, with the rest_* code and the field named', async () => {
    await expect(validateInput(payoutSchemas.create, { member_id: 1, amount: '5.00', method: 'paypal', currency: 'eur' })).rejects.toMatchObject({ code: 'rest_invalid_param', status: 400, message: expect.stringContaining('currency') });
    await expect(validateInput(payoutSchemas.cancel, {})).rejects.toMatchObject({ code: 'rest_missing_callback_param', status: 400 });
  });

  it('refuses at compile time an input key the schema does not have', async () => {
    // @ts-expect-error a misspelt key (memberid) would be dropped silently at run time
    await expect(validateInput(payoutSchemas.payoutId, { id: 3, memberid: 1 })).rejects.toMatchObject({ code: 'rest_invalid_param' });
  });
});
