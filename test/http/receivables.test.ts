import { expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { describeEachDialect } from '../helpers/context.js';
import { runCli } from '../helpers/cli.js';
import { adminClient } from '../helpers/http.js';
import { seedOrder, seedPayment, type SeedOrder } from '../helpers/network-payments.js';

type Json = Record<string, any>;

const DAY = 86_400_000;
// Now, to the second: the CLI reads the system clock a moment later, and no figure it is asked
// for moves within minutes (the exact bucket edges are checked over REST, on this clock).
const NOW = new Date(Math.floor(Date.now() / 1000) * 1000);
const clock = new ManualClock(NOW);
/** `days` whole days before now, plus `ms` milliseconds later. */
const ago = (days: number, ms = 0) => new Date(NOW.getTime() - days * DAY + ms);
/** A decimal string as integer hundredths, exactly. */
const cents = (s: string) => BigInt(s.replace('.', ''));

describeEachDialect(
  'network receivables',
  (use) => {
    const { get, post } = adminClient(use);
    let seeded: Promise<void> | undefined;

    /** Paid, unpaid (in each bucket, on each edge), mismatched and unknown lines in two currencies and two networks. */
    async function seed(): Promise<void> {
      const { ctx } = use();
      const order = (o: Omit<SeedOrder, 'network'> & { network?: string }) => seedOrder(ctx, { network: 'awin', ...o });
      const approved = (currency: string, commission: number, at: Date, extra: Partial<SeedOrder> = {}) =>
        order({ status: 'approved', currency, commission, statusChangedAt: at, ...extra });

      // awin, EUR, unpaid: 0-30 holds ages 0 and 30 (one millisecond short of 31 days) and a held
      // order; 31-60 holds exactly 31 days and 60; 61-90 holds 61 and 90 days; over 90 exactly 91 days and 200.
      await approved('EUR', 10_000, ago(0, -6 * 3600_000));
      await approved('EUR', 20_000, ago(31, 1));
      await approved('EUR', 1_000, ago(5), { review: 'held' });
      await approved('EUR', 30_000, ago(31));
      await approved('EUR', 4_000, ago(60, -3600_000));
      await approved('EUR', 5_000, ago(61, -3600_000));
      await approved('EUR', 6_000, ago(91, 1));
      await approved('EUR', 7_000, ago(91));
      await approved('EUR', 8_000, ago(200));
      // awin, EUR, paid: one as owed, one 50.00 short; not approved: a pending order, a declined one paid 15.00 anyway.
      const exact = await approved('EUR', 50_000, ago(120));
      await seedPayment(ctx, {
        network: 'awin',
        paymentId: 'P-1',
        transactionId: exact.transactionId,
        orderId: exact.id,
        amount: 50_000,
        currency: 'EUR',
        paidAt: ago(20),
      });
      const short = await approved('EUR', 50_000, ago(110));
      await seedPayment(ctx, {
        network: 'awin',
        paymentId: 'P-1',
        transactionId: short.transactionId,
        orderId: short.id,
        amount: 45_000,
        currency: 'EUR',
        paidAt: ago(20),
      });
      await order({ status: 'pending', currency: 'EUR', commission: 9_900, statusChangedAt: ago(100) });
      const declined = await order({ status: 'declined', currency: 'EUR', commission: 0, statusChangedAt: ago(15) });
      await seedPayment(ctx, {
        network: 'awin',
        paymentId: 'P-2',
        transactionId: declined.transactionId,
        orderId: declined.id,
        amount: 1_500,
        currency: 'EUR',
        paidAt: ago(10),
      });

      // awin, USD, unpaid: 10 and 100 days; paid: in two lines adding up, in EUR, and without an amount.
      await approved('USD', 2_500, ago(10));
      await approved('USD', 3_500, ago(100));
      const split = await approved('USD', 6_000, ago(95));
      await seedPayment(ctx, {
        network: 'awin',
        paymentId: 'P-1',
        transactionId: split.transactionId,
        orderId: split.id,
        amount: 2_000,
        currency: 'USD',
        paidAt: ago(20),
      });
      await seedPayment(ctx, {
        network: 'awin',
        paymentId: 'P-2',
        transactionId: split.transactionId,
        orderId: split.id,
        amount: 4_000,
        currency: null,
        paidAt: ago(10),
      });
      const inEur = await approved('USD', 7_000, ago(95));
      await seedPayment(ctx, {
        network: 'awin',
        paymentId: 'P-2',
        transactionId: inEur.transactionId,
        orderId: inEur.id,
        amount: 6_400,
        currency: 'EUR',
        paidAt: ago(10),
      });
      const unsaid = await approved('USD', 8_000, ago(95));
      await seedPayment(ctx, {
        network: 'awin',
        paymentId: 'P-2',
        transactionId: unsaid.transactionId,
        orderId: unsaid.id,
        amount: null,
        currency: null,
        paidAt: ago(10),
      });

      // Payment lines for transactions we do not know: kept and listed.
      await seedPayment(ctx, { network: 'awin', paymentId: 'P-2', transactionId: 'GHOST-1', orderId: null, amount: 1_234, currency: 'EUR', paidAt: ago(10) });
      await seedPayment(ctx, { network: 'awin', paymentId: 'P-3', transactionId: 'GHOST-2', orderId: null, amount: null, currency: null, paidAt: ago(2) });
      await seedPayment(ctx, { network: 'admitad', paymentId: 'A-1', transactionId: 'GHOST-3', orderId: null, amount: 990, currency: 'USD', paidAt: ago(3) });

      // admitad, USD, 30 days of terms: 20 days within them, 45 past them.
      await ctx.networks.configure('admitad', { payment_terms_days: '30' }, 'test');
      await approved('USD', 500, ago(20), { network: 'admitad' });
      await approved('USD', 1_000, ago(45), { network: 'admitad' });

      // What members are owed: EUR 100.00 and one member 5.00 overdrawn; USD 12.00 pending.
      const ann = (await ctx.users.create({ login: 'rcv-ann', email: 'rcv-ann@example.com' })).id;
      const bob = (await ctx.users.create({ login: 'rcv-bob', email: 'rcv-bob@example.com' })).id;
      await ctx.ledger.adjust({ member_id: ann, type: 'credit', amount: '100.00', currency: 'EUR', note: 'seed' }, 'test');
      await ctx.ledger.adjust({ member_id: bob, type: 'debit', amount: '5.00', currency: 'EUR', note: 'seed', allow_negative: true }, 'test');
      await ctx.db.transaction((t) => ctx.ledger.addPending(ann, 'USD', 1_200, t));
    }
    const ready = () => (seeded ??= seed());

    it('puts every unpaid approved order in one age bucket, beside the liabilities, and the buckets add up', async () => {
      await ready();
      const res = await get('/networks/awin/receivables');
      expect(res.statusCode).toBe(200);
      const r = res.result as Json;
      expect(r.network).toBe('awin');
      expect(r.generated_at).toBe(NOW.toISOString());
      expect(r.payment_terms_days).toBe(90);
      expect(r.currencies).toEqual([
        {
          currency: 'EUR',
          approved: { count: 11, commission: '1910.00' },
          paid: { count: 2, commission: '1000.00' },
          unpaid: { count: 9, commission: '910.00' },
          buckets: [
            { bucket: '0-30', count: 3, commission: '310.00' },
            { bucket: '31-60', count: 2, commission: '340.00' },
            { bucket: '61-90', count: 2, commission: '110.00' },
            { bucket: 'over_90', count: 2, commission: '150.00' },
          ],
          overdue: { count: 2, commission: '150.00' },
          liabilities: { currency: 'EUR', available: '95.00', pending: '0.00', overdrawn: '-5.00', members_overdrawn: 1, owed: '100.00' },
        },
        {
          currency: 'USD',
          approved: { count: 5, commission: '270.00' },
          paid: { count: 3, commission: '210.00' },
          unpaid: { count: 2, commission: '60.00' },
          buckets: [
            { bucket: '0-30', count: 1, commission: '25.00' },
            { bucket: '31-60', count: 0, commission: '0.00' },
            { bucket: '61-90', count: 0, commission: '0.00' },
            { bucket: 'over_90', count: 1, commission: '35.00' },
          ],
          overdue: { count: 1, commission: '35.00' },
          liabilities: { currency: 'USD', available: '0.00', pending: '12.00', overdrawn: '0.00', members_overdrawn: 0, owed: '12.00' },
        },
      ]);
      for (const c of r.currencies) {
        const buckets = c.buckets.reduce((s: bigint, b: Json) => s + cents(b.commission), 0n);
        expect(buckets).toBe(cents(c.unpaid.commission));
        expect(c.buckets.reduce((n: number, b: Json) => n + b.count, 0)).toBe(c.unpaid.count);
        expect(cents(c.paid.commission) + cents(c.unpaid.commission)).toBe(cents(c.approved.commission));
        expect(c.paid.count + c.unpaid.count).toBe(c.approved.count);
      }
    });

    it('lists the mismatched, unknown and overdue variances with their full counts', async () => {
      await ready();
      const r = (await get('/networks/awin/receivables')).result as Json;
      expect(r.variances.limit).toBe(20);
      // Newest order first: the USD order paid in EUR, the declined order paid anyway, the EUR order paid short.
      expect(r.variances.mismatched.count).toBe(3);
      expect(r.variances.mismatched.items.map((m: Json) => [m.currency, m.commission, m.paid_currency, m.paid, m.difference, m.status, m.lines])).toEqual([
        ['USD', '70.00', 'EUR', '64.00', null, 'approved', 1],
        ['EUR', '0.00', 'EUR', '15.00', '15.00', 'declined', 1],
        ['EUR', '500.00', 'EUR', '450.00', '-50.00', 'approved', 1],
      ]);
      expect(r.variances.mismatched.items[2]).toMatchObject({ last_paid_at: ago(20).toISOString() });
      expect(r.variances.unknown).toEqual({
        count: 2,
        items: [
          {
            id: expect.any(Number),
            payment_id: 'P-3',
            transaction_id: 'GHOST-2',
            amount: null,
            amount_minor: null,
            currency: null,
            paid_at: ago(2).toISOString(),
            source: 'import',
          },
          {
            id: expect.any(Number),
            payment_id: 'P-2',
            transaction_id: 'GHOST-1',
            amount: '12.34',
            amount_minor: 1234,
            currency: 'EUR',
            paid_at: ago(10).toISOString(),
            source: 'import',
          },
        ],
      });
      // Longest unpaid first; exactly 91 days is past 90 days of terms, a millisecond less is not.
      expect(r.variances.overdue.count).toBe(3);
      expect(r.variances.overdue.items.map((o: Json) => [o.currency, o.commission, o.age_days, o.approved_at])).toEqual([
        ['EUR', '80.00', 200, ago(200).toISOString()],
        ['USD', '35.00', 100, ago(100).toISOString()],
        ['EUR', '70.00', 91, ago(91).toISOString()],
      ]);
    });

    it('caps each variance list at limit and keeps the full counts', async () => {
      await ready();
      const r = (await get('/networks/awin/receivables?limit=1')).result as Json;
      expect(r.variances.limit).toBe(1);
      expect([r.variances.mismatched, r.variances.unknown, r.variances.overdue].map((v: Json) => [v.count, v.items.length])).toEqual([
        [3, 1],
        [2, 1],
        [3, 1],
      ]);
      expect(r.variances.overdue.items[0].age_days).toBe(200);
    });

    it("applies a network's own payment terms", async () => {
      await ready();
      const r = (await get('/networks/admitad/receivables')).result as Json;
      expect(r.payment_terms_days).toBe(30);
      expect(r.currencies).toEqual([
        expect.objectContaining({
          currency: 'USD',
          unpaid: { count: 2, commission: '15.00' },
          overdue: { count: 1, commission: '10.00' },
          buckets: [
            { bucket: '0-30', count: 1, commission: '5.00' },
            { bucket: '31-60', count: 1, commission: '10.00' },
            { bucket: '61-90', count: 0, commission: '0.00' },
            { bucket: 'over_90', count: 0, commission: '0.00' },
          ],
        }),
      ]);
      expect(r.variances.overdue.items).toEqual([expect.objectContaining({ commission: '10.00', age_days: 45 })]);
      expect(r.variances.unknown.count).toBe(1);
      expect(r.variances.mismatched).toEqual({ count: 0, items: [] });
    });

    it('shows the same figures in the overview, per network and summed per currency beside the liabilities', async () => {
      await ready();
      const o = (await get('/overview')).result as Json;
      const routes = await Promise.all(['admitad', 'awin'].map(async (id) => (await get(`/networks/${id}/receivables`)).result as Json));
      const fromRoutes = routes.flatMap((r) =>
        r.currencies
          .filter((c: Json) => c.unpaid.count > 0)
          .map(({ liabilities: _, ...c }: Json) => ({ network: r.network, payment_terms_days: r.payment_terms_days, ...c })),
      );
      expect(o.receivables.by_network).toEqual(fromRoutes);
      expect(o.receivables.by_network.map((n: Json) => `${n.network}/${n.currency}`)).toEqual(['admitad/USD', 'awin/EUR', 'awin/USD']);
      expect(o.receivables.by_currency).toEqual([
        {
          currency: 'EUR',
          unpaid: { count: 9, commission: '910.00' },
          buckets: routes[1].currencies[0].buckets,
          overdue: { count: 2, commission: '150.00' },
          liabilities: routes[1].currencies[0].liabilities,
        },
        {
          currency: 'USD',
          unpaid: { count: 4, commission: '75.00' },
          buckets: [
            { bucket: '0-30', count: 2, commission: '30.00' },
            { bucket: '31-60', count: 1, commission: '10.00' },
            { bucket: '61-90', count: 0, commission: '0.00' },
            { bucket: 'over_90', count: 1, commission: '35.00' },
          ],
          overdue: { count: 2, commission: '45.00' },
          liabilities: routes[1].currencies[1].liabilities,
        },
      ]);
      expect(o.receivables.variances).toEqual(
        routes.map((r) => ({
          network: r.network,
          mismatched: r.variances.mismatched.count,
          unknown: r.variances.unknown.count,
          overdue: r.variances.overdue.count,
        })),
      );
      expect(o.receivables.variances).toEqual([
        { network: 'admitad', mismatched: 0, unknown: 1, overdue: 1 },
        { network: 'awin', mismatched: 3, unknown: 2, overdue: 3 },
      ]);
      expect(o.liabilities).toEqual([routes[1].currencies[0].liabilities, routes[1].currencies[1].liabilities]);
    });

    it('answers a network with nothing owed with empty figures', async () => {
      await ready();
      const r = (await get('/networks/impact/receivables')).result as Json;
      expect(r).toMatchObject({ network: 'impact', payment_terms_days: 90, currencies: [] });
      expect(r.variances).toEqual({ limit: 20, mismatched: { count: 0, items: [] }, unknown: { count: 0, items: [] }, overdue: { count: 0, items: [] } });
    });

    it('refuses an unknown network, a limit out of range and payment terms that are not days', async () => {
      const missing = await get('/networks/nosuchnet/receivables');
      expect(missing.statusCode).toBe(404);
      expect((missing.result as Json).code).toBe('svc_network_not_found');
      for (const limit of ['0', '101', 'x']) {
        const bad = await get(`/networks/awin/receivables?limit=${limit}`);
        expect(bad.statusCode).toBe(400);
        expect((bad.result as Json).code).toBe('rest_invalid_param');
      }
      for (const value of ['0', '3651', 'ninety', '1.5']) {
        const bad = await post('/networks/awin/settings', { settings: { payment_terms_days: value } });
        expect(bad.statusCode).toBe(400);
        expect(bad.result as Json).toMatchObject({ code: 'svc_invalid_setting', data: { field: 'payment_terms_days' } });
      }
      expect((await get('/networks/awin')).result).toMatchObject({
        config_keys: expect.arrayContaining([expect.objectContaining({ name: 'payment_terms_days' })]),
      });
    });

    it('prints the receivables on the command line, as JSON and as tables', async () => {
      await ready();
      const { db } = use();
      const json = await runCli(['networks', 'receivables', 'awin', '--json', '--limit', '2'], { db });
      expect(json.code).toBe(0);
      const r = json.json<Json>();
      expect(r.currencies.map((c: Json) => [c.currency, c.unpaid, c.paid])).toEqual([
        ['EUR', { count: 9, commission: '910.00' }, { count: 2, commission: '1000.00' }],
        ['USD', { count: 2, commission: '60.00' }, { count: 3, commission: '210.00' }],
      ]);
      expect([r.variances.mismatched.count, r.variances.mismatched.items.length, r.variances.unknown.count]).toEqual([3, 2, 2]);
      const text = await runCli(['networks', 'receivables', 'awin'], { db });
      expect(text.code).toBe(0);
      expect(text.stdout).toContain('payment terms: 90 days');
      expect(text.stdout).toMatch(/EUR\s+9\s+910\.00\s+/);
      expect(text.stdout).toMatch(/mismatched payments: 3/);
      expect(text.stdout).toMatch(/GHOST-1/);
      const missing = await runCli(['networks', 'receivables', 'nosuchnet'], { db });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('svc_network_not_found');
    });
  },
  {},
  { clock },
);
