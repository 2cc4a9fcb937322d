import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it, onTestFinished } from 'vitest';
import { HOOKS } from '../../../src/hooks/index.js';
import { JobRunner } from '../../../src/jobs/runner.js';
import { destinationKey, PayPalPayouts, paypalSenderBatchId } from '../../../src/services/payouts/index.js';
import { OutboundGuard } from '../../../src/outbound/index.js';
import { startPayPalFixture, type PayPalFixture } from '../../fixtures/paypal.js';
import { CLI_SECRET, runCli } from '../../helpers/cli.js';
import { describeEachDialect } from '../../helpers/context.js';
import { adminClient } from '../../helpers/http.js';
import { schemaErrors } from './sepa-schema.js';

type Json = Record<string, any>;
const REPORT = readFileSync(join(import.meta.dirname, '../../fixtures/iso20022/pain.002.001.10-one-rejected.xml'), 'utf8');
const DEBTOR_IBAN = 'DE02120300000000202051';

/** The sample pain.002 (one of three rejected, closed account) made to answer `batchId`'s file with these item refs. */
const reportFor = (batchId: number, refs: [string, string, string]) =>
  REPORT.replaceAll('CASHTRACK-BATCH-12', `CASHTRACK-BATCH-${batchId}`)
    .replace('<OrgnlNbOfTxs>4</OrgnlNbOfTxs>', '<OrgnlNbOfTxs>3</OrgnlNbOfTxs>')
    .replaceAll('B12-P7', refs[0])
    .replaceAll('B12-P8', refs[1])
    .replaceAll('B12-P9', refs[2]);

describeEachDialect(
  'payout batches through PayPal and SEPA',
  (use) => {
    let fx: PayPalFixture;
    const api = adminClient(use, async (ctx) => {
      expect(await ctx.ledger.verify()).toEqual([]);
      expect(await ctx.payouts.verify()).toEqual([]);
    });
    beforeAll(async () => {
      fx = await startPayPalFixture();
    });
    afterAll(async () => {
      await fx.close();
    });
    afterEach(() => {
      fx.dropNextCreates = 0;
      fx.settleAfterReads = 1;
    });

    let seq = 0;
    /** A member with 100.00 USD (or EUR) credited and a pending payout of `amount` to `details`. */
    const payout = async (amount: string, method: string, details: (n: number) => string, currency = 'USD') => {
      const { ctx } = use();
      const n = ++seq;
      const user = await ctx.users.create({ login: `chan${n}`, email: `chan${n}@example.com`, display_name: `Member ${n}` });
      await ctx.ledger.adjust({ member_id: user.id, type: 'credit', amount: '100.00', currency, note: 'earned' }, 'test');
      const { payout } = await ctx.payouts.create({ member_id: user.id, amount, method, details: details(n), currency }, 'test');
      return { user, payout };
    };
    const balance = async (memberId: number, currency = 'USD') => (await use().ctx.ledger.balanceOf(memberId, currency)).available;
    const returns = async (payoutIds: number[]) =>
      Number(
        (
          await use().ctx.db.select<{ n: unknown }>(
            `SELECT COUNT(*) AS n FROM ledger_entries WHERE type = 'payout_return' AND source_type = 'payout' AND source_id IN (${payoutIds.map(() => '?').join(', ')})`,
            payoutIds.map(String),
          )
        )[0].n,
      );
    const runJobs = () => {
      const { ctx } = use();
      return new JobRunner({ ctx, jobs: ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 20 }).runPending();
    };
    const configurePayPal = () => use().ctx.paypal.configure({ client_id: fx.clientId, client_secret: fx.clientSecret, base_url: fx.url }, 'test');
    const paidTwice = () => [...fx.paid].filter(([, n]) => n > 1);

    it('refuses to send a PayPal batch without PayPal settings: 503 svc_paypal_not_configured, nothing changes', async () => {
      const { ctx } = use();
      const a = await payout('10.00', 'paypal', (n) => `unset${n}@example.com`);
      const { batch } = await ctx.payoutBatches.create({ payout_ids: [a.payout.id] }, 'test');
      expect(batch).toMatchObject({ channel: 'paypal', status: 'open', file_name: null });
      const calls = fx.requests.length;
      await expect(ctx.payoutBatches.send(batch.id, 'test')).rejects.toMatchObject({ code: 'svc_paypal_not_configured', status: 503 });
      expect(await ctx.payoutBatches.get(batch.id)).toMatchObject({ batch: { status: 'open', provider_batch_id: null, provider_status: null } });
      expect(fx.requests.length).toBe(calls);
      expect((await ctx.jobs.list({ type: 'payouts.batch_status', page: 1, per_page: 10 })).items).toEqual([]);
      await ctx.payoutBatches.cancel(batch.id, 'test');
    });

    it('sends a batch of PayPal payouts once, follows it with payouts.batch_status, and returns the two denied amounts once', async () => {
      const { ctx } = use();
      await configurePayPal();
      const fired: string[] = [];
      ctx.hooks.addAction(HOOKS.payoutBatchSent, 'pp-test', (b: { id: number }) => fired.push(`sent:${b.id}`));
      ctx.hooks.addAction(HOOKS.payoutBatchFinished, 'pp-test', (b: { id: number }) => fired.push(`finished:${b.id}`));
      const ann = await payout('10.00', 'paypal', (n) => `ann${n}@example.com`);
      const bob = await payout('12.50', 'paypal', (n) => `deny-bob${n}@example.com`);
      const cid = await payout('17.25', 'paypal', (n) => `Cid${n}@Example.com`);
      const dan = await payout('20.00', 'paypal', (n) => `deny-dan${n}@example.com`);
      const odd = await payout('15.00', 'paypal', () => 'IBAN DE89 3704 0044 0532 0130 00');
      const ids = [ann, bob, cid, dan].map((p) => p.payout.id);
      const { batch, held } = await ctx.payoutBatches.create({ payout_ids: [...ids, odd.payout.id] }, 'test');
      // A destination that is no e-mail address is held out with the reason.
      expect(held).toEqual([expect.objectContaining({ payout_id: odd.payout.id, code: 'channel_check', reason: expect.stringContaining('PayPal e-mail') })]);
      expect(batch).toMatchObject({ item_count: 4, total: '59.75' });

      const { batch: sent } = await ctx.payoutBatches.send(batch.id, 'test');
      expect(sent).toMatchObject({ status: 'sent', provider_status: 'PENDING', pending_count: 4 });
      expect(sent.provider_batch_id).toEqual(expect.any(String));
      expect(fired).toEqual([`sent:${batch.id}`]);
      const there = fx.batches.get(sent.provider_batch_id!)!;
      expect(there.sender_batch_header.sender_batch_id).toBe(paypalSenderBatchId(batch.id));
      expect(there.items.map((i) => [i.item.sender_item_id, i.item.receiver, i.item.amount])).toEqual([
        [`${batch.id}-${ann.payout.id}`, `ann${seq - 4}@example.com`, { value: '10.00', currency: 'USD' }],
        [`${batch.id}-${bob.payout.id}`, `deny-bob${seq - 3}@example.com`, { value: '12.50', currency: 'USD' }],
        [`${batch.id}-${cid.payout.id}`, `Cid${seq - 2}@Example.com`, { value: '17.25', currency: 'USD' }],
        [`${batch.id}-${dan.payout.id}`, `deny-dan${seq - 1}@example.com`, { value: '20.00', currency: 'USD' }],
      ]);
      // PayPal holds it now: results by hand are refused, and nothing changes.
      // (Each is started only when awaited: a rejection nobody awaits yet is an unhandled one.)
      for (const byHand of [
        () => ctx.payoutBatches.markPaid(batch.id, {}, 'test'),
        () => ctx.payoutBatches.applyUpload(batch.id, { csv: 'payout_id,status\n1,paid\n' }, 'test'),
      ])
        await expect(byHand()).rejects.toMatchObject({ code: 'svc_payout_batch_with_provider', status: 409 });
      expect((await ctx.payoutBatches.get(batch.id)).batch).toMatchObject({ status: 'sent', pending_count: 4 });
      const queued = (await ctx.jobs.list({ type: 'payouts.batch_status', page: 1, per_page: 10 })).items;
      expect(queued.map((j) => [j.status, j.params])).toEqual([['queued', { batch_id: batch.id }]]);

      // First read: PayPal is still processing; nothing closes.
      await runJobs();
      expect(await ctx.payoutBatches.get(batch.id)).toMatchObject({ batch: { status: 'sent', provider_status: 'PENDING', pending_count: 4 } });
      // The schedule's run (every sent batch): PayPal has settled; then twice more, changing nothing.
      for (let i = 0; i < 3; i++) {
        await ctx.jobs.enqueue('payouts.batch_status', {}, 'schedule:payouts_batch_status');
        const [run] = await runJobs();
        expect(run).toBeDefined();
      }
      const detail = await ctx.payoutBatches.get(batch.id);
      expect(detail.batch).toMatchObject({ status: 'finished', provider_status: 'SUCCESS', paid_count: 2, failed_count: 2, pending_count: 0 });
      const byId = new Map(detail.items.map((i) => [i.payout_id, i]));
      expect(byId.get(ann.payout.id)).toMatchObject({ status: 'paid', reference: expect.stringMatching(/^[0-9A-F]{17}$/) });
      expect(byId.get(bob.payout.id)).toMatchObject({ status: 'cancelled', reason: 'RECEIVER_ACCOUNT_LOCKED: Receiver account is locked or inactive' });
      expect(byId.get(dan.payout.id)).toMatchObject({ status: 'cancelled' });
      expect(await returns(ids)).toBe(2);
      expect(await balance(bob.user.id)).toBe('100.00');
      expect(await balance(dan.user.id)).toBe('100.00');
      expect(await balance(ann.user.id)).toBe('90.00');
      expect(fired).toEqual([`sent:${batch.id}`, `finished:${batch.id}`]);
      expect(paidTwice()).toEqual([]);
      // Finished: following it again asks PayPal nothing.
      const calls = fx.requests.length;
      expect(await ctx.payoutBatches.followUp(batch.id, 'test')).toMatchObject({ done: true, results: [] });
      expect(fx.requests.length).toBe(calls);
    });

    it('pays nobody twice: a resend with the same Idempotency-Key, a send again, a send whose connection dropped, a send after a lost answer', async () => {
      const { ctx } = use();
      await configurePayPal();
      const make = async (tag: string) => {
        const ps = [await payout('13.00', 'paypal', (n) => `${tag}a${n}@example.com`), await payout('14.00', 'paypal', (n) => `${tag}b${n}@example.com`)];
        return (await ctx.payoutBatches.create({ payout_ids: ps.map((p) => p.payout.id) }, 'test')).batch;
      };
      const sendersOf = (batchId: number) => [...fx.batches.values()].filter((b) => b.sender_batch_header.sender_batch_id === paypalSenderBatchId(batchId));

      // The same Idempotency-Key twice, then a send without one: one PayPal batch.
      const one = await make('key');
      const first = await api.post(`/payouts/batches/${one.id}/send`, undefined, { 'idempotency-key': `send-${one.id}` });
      expect(first.statusCode, first.payload).toBe(200);
      const again = await api.post(`/payouts/batches/${one.id}/send`, undefined, { 'idempotency-key': `send-${one.id}` });
      expect(again.statusCode).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect((again.result as Json).batch.provider_batch_id).toBe((first.result as Json).batch.provider_batch_id);
      const plain = await api.post(`/payouts/batches/${one.id}/send`, undefined);
      expect(plain.statusCode).toBe(200);
      expect((plain.result as Json).batch).toMatchObject({ status: 'sent', provider_batch_id: (first.result as Json).batch.provider_batch_id });
      expect(sendersOf(one.id)).toHaveLength(1);

      // The connection drops after PayPal stored the batch: the retry gets PayPal's first answer.
      const two = await make('drop');
      fx.dropNextCreates = 1;
      const dropped = await ctx.payoutBatches.send(two.id, 'test');
      expect(dropped.batch).toMatchObject({ status: 'sent' });
      expect(sendersOf(two.id).map((b) => b.payout_batch_id)).toEqual([dropped.batch.provider_batch_id]);

      // PayPal took the batch but the answer was lost and nothing was stored (a crash): the next
      // send is told the sender_batch_id was used and follows PayPal's link to that batch.
      const three = await make('lost');
      const detail = await ctx.payoutBatches.get(three.id);
      const direct = new PayPalPayouts({
        guard: new OutboundGuard({ allow: ['127.0.0.1:*'], ports: [80, 443] }),
        clock: ctx.clock,
        credentials: { client_id: fx.clientId, client_secret: fx.clientSecret, base_url: fx.url },
      });
      const earlier = await direct.createBatch(
        paypalSenderBatchId(three.id),
        detail.items.map((i) => ({ sender_item_id: i.item_ref, receiver: i.details!, amount: { value: i.amount, currency: i.currency } })),
        { requestId: 'an-earlier-process' },
      );
      const resent = await api.post(`/payouts/batches/${three.id}/send`, undefined);
      expect(resent.statusCode, resent.payload).toBe(200);
      expect((resent.result as Json).batch).toMatchObject({ status: 'sent', provider_batch_id: earlier.payout_batch_id });
      expect(sendersOf(three.id)).toHaveLength(1);

      // A PayPal batch whose results were applied by hand is never handed to PayPal afterwards;
      // and it takes no pain.002.
      const four = await make('manual');
      const manual = await ctx.payoutBatches.get(four.id);
      await ctx.payoutBatches.applyResults(four.id, [{ item_ref: manual.items[0].item_ref, outcome: 'paid', reference: 'by hand' }], 'test');
      const calls = fx.requests.length;
      expect((await ctx.payoutBatches.send(four.id, 'test')).batch).toMatchObject({ status: 'sent', provider_batch_id: null });
      expect(fx.requests.length).toBe(calls);
      expect(sendersOf(four.id)).toEqual([]);
      await expect(ctx.payoutBatches.applyUpload(four.id, { pain002: REPORT }, 'test')).rejects.toMatchObject({
        code: 'svc_payout_report_mismatch',
        status: 409,
      });
      await ctx.payoutBatches.applyResults(four.id, [{ item_ref: manual.items[1].item_ref, outcome: 'failed', reason: 'by hand' }], 'test');

      expect(paidTwice()).toEqual([]);
      // Each batch is followed to the end; every payout closes once.
      fx.settleAfterReads = 0;
      for (const b of [one, two, three]) {
        const out = await ctx.payoutBatches.followUp(b.id, 'test');
        expect(out).toMatchObject({ done: true, batch: { status: 'finished', paid_count: 2 } });
      }
      expect(paidTwice()).toEqual([]);
    });

    it('sends nothing when a payout of the batch has lost its e-mail address since: 409 svc_paypal_item_invalid', async () => {
      const { ctx } = use();
      await configurePayPal();
      const a = await payout('10.00', 'paypal', (n) => `changed${n}@example.com`);
      const { batch } = await ctx.payoutBatches.create({ payout_ids: [a.payout.id] }, 'test');
      // Not something the API allows: the database changed under the batch.
      await ctx.db.execute('UPDATE payouts SET details = ? WHERE id = ?', ['no address', a.payout.id]);
      const calls = fx.requests.length;
      await expect(ctx.payoutBatches.send(batch.id, 'test')).rejects.toMatchObject({
        code: 'svc_paypal_item_invalid',
        status: 409,
        data: { payout_id: a.payout.id },
      });
      expect(fx.requests.length).toBe(calls);
      expect(await ctx.payoutBatches.get(batch.id)).toMatchObject({ batch: { status: 'open', provider_batch_id: null } });
      await ctx.payoutBatches.cancel(batch.id, 'test');
    });

    it('compares SEPA destinations by the IBAN, however written', () => {
      const key = 'DE89370400440532013000';
      expect(destinationKey('IBAN: DE89 3704 0044 0532 0130 00, BIC: COBADEFFXXX')).toBe(key);
      expect(destinationKey('{"iban": "de89 3704 0044 0532 0130 00", "name": "Ann"}')).toBe(key);
      expect(destinationKey('de89370400440532013000')).toBe(key);
      expect(destinationKey('Ann@Example.com')).toBe('ann@example.com');
    });

    it('makes a SEPA batch only with a debtor account, holds a bad IBAN out, writes a pain.001 the schema accepts, and applies a pain.002 once', async () => {
      const { ctx, db } = use();
      const good = [
        await payout('10.00', 'sepa', () => 'NL91 ABNA 0417 1643 00', 'EUR'),
        await payout('12.50', 'sepa', () => 'IBAN: FR14 2004 1010 0505 0001 3M02 606', 'EUR'),
        await payout('7.00', 'sepa', () => '{"iban": "AT611904300234573201", "name": "Zoë Müller"}', 'EUR'),
      ];
      const bad = await payout('9.00', 'sepa', () => 'DE89 3704 0044 0532 0130 01', 'EUR');
      const ids = [...good.map((p) => p.payout.id), bad.payout.id];
      const before = Number((await ctx.db.select<{ n: unknown }>('SELECT COUNT(*) AS n FROM payout_batches'))[0].n);
      await expect(ctx.payoutBatches.create({ payout_ids: ids }, 'test')).rejects.toMatchObject({ code: 'svc_sepa_not_configured', status: 409 });
      expect(Number((await ctx.db.select<{ n: unknown }>('SELECT COUNT(*) AS n FROM payout_batches'))[0].n)).toBe(before);
      expect((await ctx.payouts.get(good[0].payout.id)).batch_id).toBeNull();

      await ctx.sepaSettings.configure({ name: 'Cashtrack Ltd', iban: DEBTOR_IBAN }, 'test');
      const { batch, held } = await ctx.payoutBatches.create({ payout_ids: ids }, 'test');
      expect(held).toEqual([
        expect.objectContaining({ payout_id: bad.payout.id, code: 'channel_check', reason: 'The IBAN has wrong check digits (a typo?).' }),
      ]);
      expect(batch).toMatchObject({ channel: 'sepa', item_count: 3, total: '29.50', file_name: `cashtrack-batch-${batch.id}.xml` });
      const file = await ctx.payoutBatches.file(batch.id);
      expect(file.type).toContain('application/xml');
      expect(await schemaErrors(file.body, 'pain.001.001.09')).toEqual([]);
      expect(file.body).toContain('<IBAN>FR1420041010050500013M02606</IBAN>');
      expect(file.body).toContain('<Nm>Zoe Mueller</Nm>');

      const refs = good.map((p) => `${batch.id}-${p.payout.id}`) as [string, string, string];
      const report = reportFor(batch.id, refs);
      expect(await schemaErrors(report, 'pain.002.001.10')).toEqual([]);
      // A report on another batch's file is refused, nothing applied.
      const other = await api.post(`/payouts/batches/${batch.id}/results`, { pain002: reportFor(batch.id + 1000, refs) });
      expect(other.statusCode).toBe(409);
      expect(other.result).toMatchObject({ code: 'svc_payout_report_mismatch' });
      expect(await returns(ids)).toBe(0);
      // Not a report at all.
      const junk = await api.post(`/payouts/batches/${batch.id}/results`, { pain002: '<Document><x></Document>' });
      expect(junk.statusCode).toBe(400);
      expect(junk.result).toMatchObject({ code: 'svc_sepa_report_invalid' });

      const applied = await api.post(`/payouts/batches/${batch.id}/results`, { pain002: report });
      expect(applied.statusCode, applied.payload).toBe(200);
      expect((applied.result as Json).batch).toMatchObject({ status: 'finished', paid_count: 2, failed_count: 1, pending_count: 0 });
      expect((applied.result as Json).results.map((r: Json) => r.effect)).toEqual(['applied', 'applied', 'applied']);
      expect(await ctx.payouts.get(good[1].payout.id)).toMatchObject({ status: 'cancelled', reason: 'AC04 (closed account): Konto erloschen & aufgeloest' });
      expect(await balance(good[1].user.id, 'EUR')).toBe('100.00');
      expect(await balance(good[0].user.id, 'EUR')).toBe('90.00');
      expect(await returns(ids)).toBe(1);

      // The same report again, from the command line (read as XML): nothing changes.
      const dir = mkdtempSync(join(tmpdir(), 'ct-pain002-'));
      onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
      const path = join(dir, `report-${batch.id}.xml`);
      await writeFile(path, report);
      const cli = await runCli(['payouts', 'batch', 'results', String(batch.id), path], { db });
      expect(cli.code, cli.stderr).toBe(0);
      expect(cli.stdout).toContain('0 applied, 3 unchanged');
      expect(await returns(ids)).toBe(1);
      expect(await balance(good[1].user.id, 'EUR')).toBe('100.00');
    });
  },
  { secret: CLI_SECRET, 'outbound.allow': ['127.0.0.1:*'] },
);
