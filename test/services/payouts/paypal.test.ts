import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock.js';
import { OutboundGuard } from '../../../src/outbound/index.js';
import { SecretValues } from '../../../src/secret-values.js';
import { PAYPAL_TRANSACTION_STATUSES, PayPalPayouts, toItemResults, type PayPalItemRead, type PayPalPayoutItem } from '../../../src/services/payouts/paypal.js';
import { startPayPalFixture, type PayPalFixture } from '../../fixtures/paypal.js';
import { runCli, CLI_SECRET } from '../../helpers/cli.js';
import { describeEachDialect } from '../../helpers/context.js';
import { adminClient } from '../../helpers/http.js';

const guard = new OutboundGuard({ allow: ['127.0.0.1:*'], ports: [80, 443] });
const noWait = async () => {};

function item(n: number, receiver: string, value = '10.00'): PayPalPayoutItem {
  return { sender_item_id: `payout-${n}`, receiver, amount: { value, currency: 'EUR' }, note: 'Your cashback' };
}

describe('PayPal Payouts client against the local PayPal fixture', () => {
  let fx: PayPalFixture;
  let clock: ManualClock;
  let secrets: SecretValues;
  const client = (overrides: { secret?: string; pageSize?: number } = {}) =>
    new PayPalPayouts({
      guard,
      clock,
      secrets,
      credentials: { client_id: fx.clientId, client_secret: overrides.secret ?? fx.clientSecret, base_url: fx.url },
      retry: { attempts: 3, baseDelayMs: 1 },
      sleep: noWait,
      timeoutMs: 5_000,
      ...(overrides.pageSize ? { pageSize: overrides.pageSize } : {}),
    });

  beforeAll(async () => {
    fx = await startPayPalFixture();
  });
  afterAll(async () => {
    await fx.close();
  });
  afterEach(() => {
    fx.dropNextCreates = 0;
    fx.failNextCalls = 0;
    fx.settleAfterReads = 1;
    fx.htmlNextCalls = 0;
    fx.duplicateLink = true;
  });

  it('creates a batch and reads every item back: two denied with PayPal’s reason, the rest paid once each', async () => {
    clock = new ManualClock();
    secrets = new SecretValues();
    const pp = client();
    const items = [item(1, 'ann@example.com'), item(2, 'deny-bob@example.com'), item(3, 'cid@example.com'), item(4, 'deny-dan@example.com')];
    const created = await pp.createBatch('batch-create-1', items, { emailSubject: 'Your cashback is here' });
    expect(created).toMatchObject({ batch_status: 'PENDING', duplicate: false });
    const sent = fx.batches.get(created.payout_batch_id)!;
    expect(sent.sender_batch_header).toEqual({ sender_batch_id: 'batch-create-1', recipient_type: 'EMAIL', email_subject: 'Your cashback is here' });
    expect(sent.items.map((i) => i.item)).toEqual(items.map((i) => ({ recipient_type: 'EMAIL', ...i })));

    // First read: PayPal is still processing.
    const first = await pp.readBatch(created.payout_batch_id);
    expect(first.items.map((i) => i.transaction_status)).toEqual(['PENDING', 'PENDING', 'PENDING', 'PENDING']);
    expect(toItemResults(first.items).every((r) => r.outcome === 'pending')).toBe(true);

    const read = await pp.readBatch(created.payout_batch_id);
    expect(read.batch_status).toBe('SUCCESS');
    const results = toItemResults(read.items);
    expect(results.map((r) => [r.item_ref, r.outcome])).toEqual([
      ['payout-1', 'paid'],
      ['payout-2', 'failed'],
      ['payout-3', 'paid'],
      ['payout-4', 'failed'],
    ]);
    expect(results[0].reference).toBe(read.items[0].transaction_id);
    expect(results[0].reference).toMatch(/^[0-9A-F]{17}$/);
    expect(results[1]).toMatchObject({ reason: 'RECEIVER_ACCOUNT_LOCKED: Receiver account is locked or inactive', reference: read.items[1].payout_item_id });
    expect(fx.paid.get('ann@example.com')).toBe(1);
    expect(fx.paid.get('deny-bob@example.com')).toBeUndefined();
    // One token for the whole exchange, sent as Basic client_id:secret.
    expect(fx.tokensIssued).toBe(1);
  });

  it('retries a send whose connection dropped with the same sender_batch_id and PayPal-Request-Id, and pays nobody twice', async () => {
    clock = new ManualClock();
    secrets = new SecretValues();
    const pp = client();
    fx.dropNextCreates = 1;
    const before = fx.requests.length;
    const created = await pp.createBatch('batch-drop-1', [item(1, 'eve@example.com', '5.00'), item(2, 'fay@example.com', '7.50')]);
    const creates = fx.requests.slice(before).filter((r) => r.path === '/v1/payments/payouts');
    expect(creates).toHaveLength(2);
    expect(creates[0].requestId).toBeTruthy();
    expect(creates[1].requestId).toBe(creates[0].requestId);
    expect(fx.batches.has(created.payout_batch_id)).toBe(true);
    expect([...fx.batches.values()].filter((b) => b.sender_batch_header.sender_batch_id === 'batch-drop-1')).toHaveLength(1);
    expect(fx.paid.get('eve@example.com')).toBe(1);
    expect(fx.paid.get('fay@example.com')).toBe(1);

    // A resend later (a new process, a new request id) is PayPal's duplicate: the same batch, still paid once.
    const again = await client().createBatch('batch-drop-1', [item(1, 'eve@example.com', '5.00'), item(2, 'fay@example.com', '7.50')]);
    expect(again).toEqual({ payout_batch_id: created.payout_batch_id, batch_status: 'PENDING', duplicate: true });
    expect(fx.paid.get('eve@example.com')).toBe(1);
    expect(fx.paid.get('fay@example.com')).toBe(1);
  });

  it('treats PayPal’s duplicate sender_batch_id answer as already sent and finds the batch through its link', async () => {
    clock = new ManualClock();
    secrets = new SecretValues();
    const first = await client().createBatch('batch-dup-1', [item(1, 'gus@example.com')]);
    await client().readBatch(first.payout_batch_id);
    const dup = await client().createBatch('batch-dup-1', [item(1, 'gus@example.com')]);
    // Its status is read from the batch found (the second read: PayPal has finished it).
    expect(dup).toEqual({ payout_batch_id: first.payout_batch_id, batch_status: 'SUCCESS', duplicate: true });
    expect(fx.paid.get('gus@example.com')).toBe(1);
  });

  it('refuses to guess when PayPal names a duplicate sender_batch_id without linking the batch', async () => {
    clock = new ManualClock();
    secrets = new SecretValues();
    await client().createBatch('batch-dup-2', [item(1, 'gil@example.com')]);
    fx.duplicateLink = false;
    const err = await client()
      .createBatch('batch-dup-2', [item(1, 'gil@example.com')])
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'svc_paypal_duplicate_batch', status: 409, data: { sender_batch_id: 'batch-dup-2' } });
    expect(fx.paid.get('gil@example.com')).toBe(1);
  });

  it('answers svc_paypal_bad_response when PayPal (or a proxy before it) answers something that is not its JSON', async () => {
    clock = new ManualClock();
    secrets = new SecretValues();
    const pp = client();
    const { payout_batch_id } = await pp.createBatch('batch-html-1', [item(1, 'hap@example.com')]);
    fx.htmlNextCalls = 1;
    await expect(pp.readBatch(payout_batch_id)).rejects.toMatchObject({ code: 'svc_paypal_bad_response', status: 502 });
    expect((await pp.readBatch(payout_batch_id)).items).toHaveLength(1);
  });

  it('retries a 503 with the same request and gives up with svc_paypal_unavailable after the attempts', async () => {
    clock = new ManualClock();
    secrets = new SecretValues();
    fx.failNextCalls = 1;
    const ok = await client().createBatch('batch-503-1', [item(1, 'hal@example.com')]);
    expect(ok.duplicate).toBe(false);
    expect(fx.paid.get('hal@example.com')).toBe(1);
    fx.failNextCalls = 3;
    const err = await client()
      .createBatch('batch-503-2', [item(1, 'ida@example.com')])
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'svc_paypal_unavailable', status: 503, data: { attempts: 3, upstream_status: 503 } });
    expect(fx.paid.get('ida@example.com')).toBeUndefined();
  });

  it('keeps the token until shortly before it expires, then takes a new one', async () => {
    clock = new ManualClock();
    secrets = new SecretValues();
    const pp = client();
    const before = fx.tokensIssued;
    const { payout_batch_id } = await pp.createBatch('batch-token-1', [item(1, 'jo@example.com')]);
    await pp.readBatch(payout_batch_id);
    expect(fx.tokensIssued).toBe(before + 1);
    // Both clocks move past the token's life (32400 s): a new token before the call, no 401 seen.
    clock.advance(32_400_000 - 30_000);
    fx.advance(32_400_000 - 30_000);
    const requests = fx.requests.length;
    await pp.readBatch(payout_batch_id);
    expect(fx.tokensIssued).toBe(before + 2);
    expect(fx.requests.slice(requests).map((r) => r.path)).toEqual(['/v1/oauth2/token', `/v1/payments/payouts/${payout_batch_id}`]);
  });

  it('takes a new token once when PayPal answers 401 to a token it thinks expired', async () => {
    clock = new ManualClock();
    secrets = new SecretValues();
    const pp = client();
    const { payout_batch_id } = await pp.createBatch('batch-token-2', [item(1, 'kim@example.com')]);
    const before = fx.tokensIssued;
    fx.expireTokens();
    const read = await pp.readBatch(payout_batch_id);
    expect(read.items).toHaveLength(1);
    expect(fx.tokensIssued).toBe(before + 1);
  });

  it('answers svc_paypal_auth_failed for wrong credentials, without the secret in the message', async () => {
    clock = new ManualClock();
    secrets = new SecretValues();
    const err = await client({ secret: 'wrong-secret-value-123' })
      .createBatch('batch-auth-1', [item(1, 'lu@example.com')])
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'svc_paypal_auth_failed', status: 502, data: { upstream_status: 401 } });
    expect((err as Error).message).toContain('invalid_client');
    expect((err as Error).message).not.toContain('wrong-secret-value-123');
    expect(secrets.scrub('x wrong-secret-value-123 y')).toBe('x [redacted] y');
    expect(fx.paid.get('lu@example.com')).toBeUndefined();
  });

  it('maps PayPal’s validation errors to svc_paypal_rejected with PayPal’s name and details', async () => {
    clock = new ManualClock();
    secrets = new SecretValues();
    const err = await client()
      .createBatch('batch-bad-1', [item(1, 'not-an-email')])
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'svc_paypal_rejected', status: 422, data: { upstream_status: 400, paypal_error: 'VALIDATION_ERROR' } });
    expect((err as Error).message).toContain('items[0].receiver');
    const local = await client()
      .createBatch('batch-bad-2', [item(1, 'a@example.com'), item(1, 'b@example.com')])
      .catch((e: unknown) => e);
    expect(local).toMatchObject({ code: 'svc_paypal_rejected', status: 400 });
    const unknown = await client()
      .readBatch('NOSUCHBATCH')
      .catch((e: unknown) => e);
    expect(unknown).toMatchObject({ code: 'svc_paypal_batch_not_found', status: 404 });
  });

  it('follows PayPal’s paging to read every item of a large batch', async () => {
    clock = new ManualClock();
    secrets = new SecretValues();
    fx.settleAfterReads = 0;
    const items = Array.from({ length: 25 }, (_, n) => item(n + 1, n % 10 === 3 ? `deny-${n}@example.com` : `m${n}@example.com`, '1.00'));
    const pp = client({ pageSize: 10 });
    const { payout_batch_id } = await pp.createBatch('batch-pages-1', items);
    const before = fx.requests.length;
    const read = await pp.readBatch(payout_batch_id);
    expect(fx.requests.slice(before).filter((r) => r.path.startsWith('/v1/payments/payouts/'))).toHaveLength(3);
    expect(read.items.map((i) => i.sender_item_id)).toEqual(items.map((i) => i.sender_item_id));
    expect(toItemResults(read.items).filter((r) => r.outcome === 'failed')).toHaveLength(3);
  });
});

describe('toItemResults', () => {
  const read = (status: string, error?: { name: string; message: string }): PayPalItemRead => ({
    sender_item_id: `ref-${status}`,
    payout_item_id: `ITEM${status}`,
    transaction_id: status === 'SUCCESS' ? `TX${status}` : null,
    transaction_status: status,
    ...(error ? { error } : {}),
  });

  it('maps every PayPal item status to paid, failed or pending', () => {
    const expected: Record<string, 'paid' | 'failed' | 'pending'> = {
      SUCCESS: 'paid',
      FAILED: 'failed',
      RETURNED: 'failed',
      BLOCKED: 'failed',
      REFUNDED: 'failed',
      REVERSED: 'failed',
      DENIED: 'failed',
      PENDING: 'pending',
      UNCLAIMED: 'pending',
      ONHOLD: 'pending',
    };
    expect(Object.keys(expected).sort()).toEqual([...PAYPAL_TRANSACTION_STATUSES].sort());
    for (const [status, outcome] of Object.entries(expected)) {
      expect(toItemResults([read(status)])[0], status).toMatchObject({ item_ref: `ref-${status}`, outcome });
    }
    expect(toItemResults([read('SUCCESS')])[0]).toEqual({ item_ref: 'ref-SUCCESS', outcome: 'paid', reference: 'TXSUCCESS', reason: null });
    expect(toItemResults([read('DENIED', { name: 'RISK_DECLINE', message: 'Declined by risk' })])[0].reason).toBe('RISK_DECLINE: Declined by risk');
    expect(toItemResults([read('REVERSED')])[0].reason).toBe('PayPal reports the payment REVERSED.');
    expect(toItemResults([read('UNCLAIMED', { name: 'RECEIVER_UNREGISTERED', message: 'Receiver is unregistered' })])[0].reason).toBe(
      'UNCLAIMED: Receiver is unregistered',
    );
    // A status PayPal may add later is not final: read again rather than guess.
    expect(toItemResults([read('SOMETHING_NEW')])[0].outcome).toBe('pending');
  });
});

const SECRET = 'EFp-Very-Secret-PayPal-Client-0042';

describeEachDialect(
  'PayPal Payouts settings',
  (use) => {
    let fx: PayPalFixture;
    const http = adminClient(use);
    beforeAll(async () => {
      fx = await startPayPalFixture({ clientSecret: SECRET });
    });
    afterAll(async () => {
      await fx.close();
    });

    it('answers 503 svc_paypal_not_configured naming what to set while nothing is stored', async () => {
      const { ctx } = use();
      expect(await ctx.paypal.view()).toMatchObject({
        configured: false,
        missing: ['client_id', 'client_secret'],
        environment: 'sandbox',
        base_url: 'https://api-m.sandbox.paypal.com',
        client_secret_set: false,
      });
      const err = await ctx.paypal.client().catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'svc_paypal_not_configured', status: 503, data: { missing: ['client_id', 'client_secret'] } });
      expect((err as Error).message).toContain('cashtrack payouts paypal-settings');
    });

    it('stores the client secret sealed, never shows or logs it, and pays through the stored account', async () => {
      const { ctx } = use();
      const view = await ctx.paypal.configure({ client_id: fx.clientId, client_secret: SECRET, base_url: fx.url }, 'admin');
      expect(view).toMatchObject({ configured: true, missing: [], client_secret_set: true, base_url: fx.url, base_url_override: fx.url });
      expect(JSON.stringify(view)).not.toContain(SECRET);
      const stored = await ctx.db.select<{ name: string; value: string }>("SELECT name, value FROM settings WHERE name LIKE 'payouts_paypal%'");
      expect(stored.map((r) => r.name).sort()).toEqual(['payouts_paypal', 'payouts_paypal_client_secret']);
      expect(JSON.stringify(stored)).not.toContain(SECRET);
      const client = await ctx.paypal.client();
      expect(await ctx.paypal.client()).toBe(client);
      const created = await client.createBatch(`settings-batch-${Date.now()}`, [item(1, 'stored@example.com')]);
      expect(fx.batches.has(created.payout_batch_id)).toBe(true);
      ctx.logger.info('payouts', `echo ${SECRET}`);
      await ctx.logger.flush();
      const logs = await ctx.db.select<{ message: string; context: string | null }>("SELECT message, context FROM logs WHERE source = 'payouts'");
      expect(logs.some((l) => l.message.includes('[redacted]'))).toBe(true);
      expect(JSON.stringify(logs)).not.toContain(SECRET);
    });

    it('refuses unknown settings, bad values, and a move to another origin without the secret', async () => {
      const { ctx } = use();
      await ctx.paypal.configure({ client_id: fx.clientId, client_secret: SECRET, base_url: fx.url }, 'admin');
      await expect(ctx.paypal.configure({ colour: 'blue' }, 'admin')).rejects.toMatchObject({ code: 'svc_unknown_setting', status: 400 });
      await expect(ctx.paypal.configure({ environment: 'staging' }, 'admin')).rejects.toMatchObject({
        code: 'svc_invalid_setting',
        data: { field: 'environment' },
      });
      await expect(ctx.paypal.configure({ base_url: 'ftp://x' }, 'admin')).rejects.toMatchObject({ code: 'svc_invalid_setting', data: { field: 'base_url' } });
      await expect(ctx.paypal.configure({ client_secret: 'has space' }, 'admin')).rejects.toMatchObject({
        code: 'svc_invalid_setting',
        data: { field: 'client_secret' },
      });
      await expect(ctx.paypal.configure({ base_url: null, environment: 'live' }, 'admin')).rejects.toMatchObject({
        code: 'svc_secret_origin_changed',
        status: 400,
      });
      const live = await ctx.paypal.configure({ base_url: null, environment: 'live', client_secret: 'live-secret-value' }, 'admin');
      expect(live).toMatchObject({ environment: 'live', base_url: 'https://api-m.paypal.com', base_url_override: null, configured: true });
      const removed = await ctx.paypal.configure({ client_secret: null }, 'admin');
      expect(removed).toMatchObject({ configured: false, missing: ['client_secret'], client_secret_set: false });
    });

    it('GET and POST /payouts/paypal/settings show and store the account; the secret never comes back', async () => {
      const res = await http.post('/payouts/paypal/settings', { client_id: fx.clientId, client_secret: SECRET, base_url: fx.url, environment: 'sandbox' });
      expect(res.statusCode).toBe(200);
      expect(res.payload).not.toContain(SECRET);
      expect(JSON.parse(res.payload)).toMatchObject({ configured: true, client_secret_set: true });
      const got = await http.get('/payouts/paypal/settings');
      expect(got.statusCode).toBe(200);
      expect(JSON.parse(got.payload)).toMatchObject({ configured: true, client_id: fx.clientId, base_url: fx.url });
      expect(got.payload).not.toContain(SECRET);
      const bad = await http.post('/payouts/paypal/settings', { environment: 'staging' });
      expect(bad.statusCode).toBe(400);
      expect(JSON.parse(bad.payload)).toMatchObject({ code: 'svc_invalid_setting' });
      expect((await http.post('/payouts/paypal/settings', {})).statusCode).toBe(400);
    });

    it('cashtrack payouts paypal-settings stores the secret from the environment only and never prints it', async () => {
      const { db } = use();
      const onLine = await runCli(['payouts', 'paypal-settings', '--set', `client_secret=${SECRET}`], { db });
      expect(onLine.code).toBe(2);
      expect(onLine.stderr).toContain('--client-secret-stdin');
      const set = await runCli(
        ['payouts', 'paypal-settings', '--set', `client_id=${fx.clientId}`, '--set', `base_url=${fx.url}`, '--client-secret-env', 'PP_SECRET'],
        {
          db,
          env: { PP_SECRET: SECRET },
        },
      );
      expect(set.code, set.stderr).toBe(0);
      expect(set.stdout).toContain('ready');
      const shown = await runCli(['payouts', 'paypal-settings'], { db });
      expect(shown.code).toBe(0);
      expect(shown.stdout).toMatch(/client_secret\s+set/);
      expect(shown.stdout + shown.stderr + set.stdout + set.stderr).not.toContain(SECRET);
      const json = await runCli(['payouts', 'paypal-settings', '--json'], { db });
      expect(json.json()).toMatchObject({ configured: true, client_id: fx.clientId });
      const bad = await runCli(['payouts', 'paypal-settings', '--set', 'environment=staging'], { db });
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('svc_invalid_setting');
    });
  },
  { secret: CLI_SECRET, 'outbound.allow': ['127.0.0.1:*'] },
);
