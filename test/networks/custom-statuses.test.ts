// A custom network's status words when its transactions feed is polled: a word the definition does
// not map (the network added "chargeback") must not become a pending order, as it is refused on a
// postback; the record is left out and logged as an error until the word is mapped.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { checkDefinition } from '../../src/networks/custom-definition.js';
import { customModule } from '../../src/networks/custom.js';
import type { ModuleRuntime, NetworkTransaction } from '../../src/networks/types.js';
import { OutboundGuard } from '../../src/outbound/index.js';

const CSV = [
  'tid,state,payout,created',
  'T-1,open,1.00,2024-03-01 10:00:00',
  'T-2,CONFIRMED,2.00,2024-03-01 11:00:00',
  'T-3,chargeback,3.00,2024-03-01 12:00:00',
  'T-4,,4.00,2024-03-01 13:00:00',
  // Outside the window: left out without a word, whatever its status.
  'T-5,mystery,5.00,2023-01-01 00:00:00',
].join('\n');

let server: http.Server;
let base = '';
beforeAll(async () => {
  server = http.createServer((_req, res) => void res.writeHead(200, { 'content-type': 'text/csv' }).end(CSV));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

it('leaves out a polled transaction whose status word the mapping lacks and logs it as an error, instead of recording it pending', async () => {
  const module = customModule(
    'shopnet',
    checkDefinition({
      name: 'Shop Net',
      currency: 'EUR',
      statuses: { open: 'pending', confirmed: 'approved', cancelled: 'declined' },
      feeds: {
        transactions: {
          url: `${base}/tx.csv?from={from}&to={to}`,
          format: 'csv',
          fields: { transaction_id: 'tid', status: 'state', commission: 'payout', event_at: 'created' },
        },
      },
    }),
  );
  const logs: { level: string; message: string; context?: Record<string, unknown> }[] = [];
  const rt: ModuleRuntime = {
    settings: {},
    outbound: new OutboundGuard({ allow: ['127.0.0.1:*'], ports: [80, 443] }),
    now: () => new Date('2024-03-05T00:00:00Z'),
    log: (level, message, context) => void logs.push({ level, message, context }),
  };
  const seen: NetworkTransaction[] = [];
  for await (const page of module.listTransactions(rt, { from: new Date('2024-02-01T00:00:00Z'), to: new Date('2024-03-05T00:00:00Z') })) seen.push(...page);
  expect(seen.map((t) => [t.transaction_id, t.status])).toEqual([
    ['T-1', 'pending'],
    ['T-2', 'approved'],
    // No status at all is pending, as for a postback.
    ['T-4', 'pending'],
  ]);
  expect(logs).toEqual([
    {
      level: 'error',
      message: 'shopnet: transaction T-3 has the unknown status "chargeback"; skipped',
      context: { network: 'shopnet', transaction_id: 'T-3', status: 'chargeback' },
    },
  ]);
});
