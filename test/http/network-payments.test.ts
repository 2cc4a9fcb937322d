import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/context.js';
import { adminClient } from '../helpers/http.js';
import { shopnetDefinition } from '../helpers/networks.js';
import { runCli } from '../helpers/cli.js';

type Json = Record<string, any>;

const REPORT = [
  'Transaction;Payment;Paid;Currency;Date',
  'SN-1;PAY-7;2.10;EUR;2026-11-20',
  'SN-404;PAY-7;1.00;EUR;2026-11-20',
  'SN-2;PAY-7;abc;EUR;2026-11-20',
  ';PAY-7;1.00;EUR;2026-11-20',
  'SN-3;PAY-7;0.50;EUR;not a date',
].join('\n');

describeEachDialect('network payments over REST and the CLI', (use) => {
  const api = adminClient(use);
  beforeAll(async () => {
    const { ctx } = use();
    await ctx.networks.saveCustom(
      'shopnet',
      shopnetDefinition({
        payments: { delimiter: ';', fields: { transaction_id: 'Transaction', payment_id: 'Payment', amount: 'Paid', currency: 'Currency', paid_at: 'Date' } },
      }),
      'test',
    );
    for (const t of ['SN-1', 'SN-2', 'SN-3'])
      await ctx.orders.record(
        { network: 'shopnet', transaction_id: t, status: 'approved', source: 'postback', sale_amount: '42.00', commission: '2.10', currency: 'EUR' },
        'test',
      );
  });

  it("imports a custom network's CSV payment report by its mapping, answering each line with its line number", async () => {
    const res = await api.post('/networks/shopnet/payments/import', { csv: REPORT });
    expect(res.statusCode).toBe(200);
    const body = res.result as Json;
    expect(body).toMatchObject({ recorded: 1, unknown: 1, invalid: 3, already: 0, conflict: 0 });
    expect(body.results.map((r: Json) => [r.line, r.result, r.error?.code ?? null])).toEqual([
      [2, 'recorded', null],
      [3, 'unknown', null],
      [4, 'invalid', 'svc_invalid_amount'],
      [5, 'invalid', 'svc_invalid_payment'],
      [6, 'invalid', 'svc_invalid_payment'],
    ]);
    const again = (await api.post('/networks/shopnet/payments/import', { csv: REPORT })).result as Json;
    expect(again).toMatchObject({ recorded: 0, already: 2, invalid: 3 });
    const list = await api.get('/networks/shopnet/payments?unknown=1');
    expect(list.statusCode).toBe(200);
    expect(list.headers['x-wp-total']).toBe('1');
    expect((list.result as Json[])[0]).toMatchObject({
      transaction_id: 'SN-404',
      payment_id: 'PAY-7',
      amount: '1.00',
      currency: 'EUR',
      source: 'import',
      order_id: null,
    });
    const order = (await use().ctx.orders.list({ network: 'shopnet', page: 1, per_page: 10 } as never)).items.find((o) => o.transaction_id === 'SN-1')!;
    expect(order.network_payment).toEqual({ paid_at: '2026-11-20T00:00:00.000Z', payment_id: 'PAY-7', amount: '2.10' });
  });

  it('refuses a report without the mapped columns, a network without a mapping, and an unknown network', async () => {
    const bad = await api.post('/networks/shopnet/payments/import', { csv: 'a,b\n1,2\n' });
    expect(bad.statusCode).toBe(400);
    expect((bad.result as Json).code).toBe('svc_invalid_csv');
    const builtin = await api.post('/networks/awin/payments/import', { csv: REPORT });
    expect(builtin.statusCode).toBe(409);
    expect((builtin.result as Json).code).toBe('svc_no_payments_mapping');
    expect((await api.post('/networks/nope/payments/import', { csv: REPORT })).statusCode).toBe(404);
    expect((await api.post('/networks/shopnet/payments/import', {})).statusCode).toBe(400);
    const read = await api.post('/networks/awin/payments/read', undefined);
    expect(read.statusCode).toBe(409);
    expect((read.result as Json).code).toBe('svc_network_no_payments');
  });

  it('imports the same report with cashtrack networks import-payments', async () => {
    const { db } = use();
    const file = join(db.dataDir, 'report.csv');
    writeFileSync(file, REPORT.replace(/PAY-7/g, 'PAY-8'));
    const out = await runCli(['networks', 'import-payments', 'shopnet', file, '--json'], {
      db,
      env: { CASHTRACK_SECRET: 'test-secret-0123456789abcdef0123456789abcdef' },
    });
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    // SN-1 was paid under PAY-7: PAY-8 is a conflict; SN-404 is still unknown under PAY-8.
    expect(out.json<Json>()).toMatchObject({ recorded: 0, conflict: 1, unknown: 1, invalid: 3 });
    const text = await runCli(['networks', 'import-payments', 'shopnet', file], {
      db,
      env: { CASHTRACK_SECRET: 'test-secret-0123456789abcdef0123456789abcdef' },
    });
    expect(text.stdout).toMatch(/line 4: invalid SN-2 PAY-8 \(svc_invalid_amount/);
    expect(text.stdout).toMatch(/0 recorded, 2 already on file, 0 unknown, 0 conflict\(s\), 3 invalid; 0 cashback released\n$/);
  });
});
