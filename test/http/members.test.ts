import { beforeAll, expect, it } from 'vitest';
import type { Context } from '../../src/context.js';
import { HOOKS } from '../../src/hooks/index.js';
import { describeEachDialect } from '../helpers/context.js';
import { adminClient, basic, createActor, NS } from '../helpers/http.js';
import { image } from '../helpers/images.js';
import { addAdvertiser, shopnetDefinition } from '../helpers/networks.js';

type Json = Record<string, any>;

/** Every text value of every table of the database (tables from the dialect's own catalog). */
async function everyText(ctx: Context): Promise<{ table: string; column: string; value: string }[]> {
  const tables =
    ctx.db.dialect === 'sqlite'
      ? await ctx.db.select<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      : await ctx.db.select<{ name: string }>('SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE()');
  expect(tables.length).toBeGreaterThan(30);
  const out: { table: string; column: string; value: string }[] = [];
  for (const { name } of tables) {
    for (const row of await ctx.db.select<Record<string, unknown>>(`SELECT * FROM ${name}`)) {
      for (const [column, value] of Object.entries(row)) {
        if (typeof value === 'string') out.push({ table: name, column, value });
        else if (Buffer.isBuffer(value)) out.push({ table: name, column, value: value.toString('latin1') });
      }
    }
  }
  return out;
}

const hits = (texts: { table: string; column: string; value: string }[], needles: string[]) =>
  texts.filter((t) => needles.some((n) => t.value.toLowerCase().includes(n.toLowerCase()))).map((t) => `${t.table}.${t.column}: ${t.value.slice(0, 200)}`);

async function totals(ctx: Context): Promise<Json[]> {
  return ctx.db.select<Json>(
    'SELECT currency, SUM(available) AS available, SUM(pending) AS pending, SUM(lifetime_earned) AS earned, SUM(lifetime_paid) AS paid FROM balances GROUP BY currency ORDER BY currency',
  );
}

describeEachDialect("a member's data over REST", (use) => {
  const api = adminClient(use, async (ctx) => {
    await ctx.claims.idle();
    expect(await ctx.ledger.verify()).toEqual([]);
    expect(await ctx.payouts.verify()).toEqual([]);
  });
  const { get, post } = api;
  let seq = 0;
  const erasedEvents: Json[] = [];
  beforeAll(async () => {
    const { ctx } = use();
    await ctx.networks.saveCustom('shopnet', shopnetDefinition(), 'test');
    await addAdvertiser(ctx, 'shopnet', 'shop-1');
    await ctx.webhooks.create({ url: 'http://127.0.0.1:9/hook', events: ['*'] }, 'test');
    ctx.hooks.addAction(HOOKS.memberErased, 'test', (erasure: Json, extra: Json) => void erasedEvents.push({ ...erasure, ...extra }));
  });

  const plain = (login: string) => use().ctx.users.create({ login, email: `${login}@example.com`, display_name: `Plain ${login}` });
  /** An approved order of `memberId` (cashback 50% of the commission, in EUR). */
  const approvedOrder = (memberId: number, commission: string, extra: Json = {}) =>
    use().ctx.orders.record(
      {
        network: 'shopnet',
        transaction_id: `T-${++seq}`,
        advertiser: 'shop-1',
        merchant_ref: `REF-${seq}`,
        member_id: memberId,
        sale_amount: '200.00',
        commission,
        currency: 'EUR',
        status: 'approved',
        event_at: new Date('2026-11-20T10:00:00Z'),
        source: 'poll',
        ...extra,
      },
      'poll',
    );

  it('exports everything held about a member and then erases them: no trace of their e-mail, login or name anywhere, every amount kept', async () => {
    const { ctx } = use();
    const email = 'Zelda.Quist@victim-mail.example';
    const login = 'zelda.quist';
    const name = 'Zelda Quistorff';
    const zelda = await ctx.users.create({ login, email, display_name: name, password: 'correct horse battery' });
    const referrer = await plain(`referrer${++seq}`);
    const referee = await plain(`referee${++seq}`);
    await ctx.referrals.add({ referrer_id: referrer.id, referee_id: zelda.id }, 'test');
    await ctx.referrals.add({ referrer_id: zelda.id, referee_id: referee.id }, 'test');
    // Sessions, an application password used once (its last address), a failed sign-in.
    await ctx.sessions.create(zelda, '198.51.100.7', 'ZeldaBrowser/1.0');
    const app = await ctx.appPasswords.create(zelda, 'Zelda phone app');
    const asMember = await api.server.inject({ url: `${NS}/members/${zelda.id}/data`, headers: { authorization: basic(login, app.password) } });
    expect(asMember.statusCode).toBe(403);
    expect((asMember.result as Json).code).toBe('rest_forbidden');
    // Money: an approved order, a referee's order, a payout paid with account details, by Idempotency-Key.
    await approvedOrder(zelda.id, '40.00', { note: `Order of ${name}`, raw: { customer_email: email, sub: login } });
    await approvedOrder(referee.id, '20.00');
    const balance = (await ctx.ledger.balanceOf(zelda.id, 'EUR')).available;
    expect(balance).not.toBe('0.00');
    const payout = await post(
      '/payouts',
      { member_id: zelda.id, amount: balance, currency: 'EUR', method: 'paypal', details: `PayPal ${email}`, note: `for ${name}` },
      { 'idempotency-key': `zelda-payout-${seq}` },
    );
    expect(payout.statusCode).toBe(201);
    const payoutId = (payout.result as Json).payout.id;
    expect((await post(`/payouts/${payoutId}/complete`, { reference: 'PP-1' })).statusCode).toBe(200);
    // A click with its reduced address, and a claim with a note and a receipt image.
    const link = await ctx.advertisers.trackingLink('shopnet', 'shop-1', { member: String(zelda.id) });
    await ctx.clicks.go(link.go_token!, { ip: '198.51.100.7', userAgent: 'ZeldaBrowser/1.0' });
    const claim = await post('/claims', {
      member_id: zelda.id,
      network: 'shopnet',
      advertiser: 'shop-1',
      order_ref: `ORD-${++seq}`,
      purchased_at: '2026-11-20T09:55:00Z',
      amount: '80.00',
      currency: 'EUR',
      note: `${name} (${email}) says the shoes did not track`,
      receipt: (await image('png')).toString('base64'),
    });
    expect(claim.statusCode).toBe(201);
    // A log line about her that names her.
    ctx.logger.info('support', `Ticket from ${name}`, { user_id: zelda.id, email });
    await ctx.logger.flush();

    // The export: one JSON document, with every part.
    const exported = await get(`/members/${zelda.id}/data`);
    expect(exported.statusCode).toBe(200);
    expect(exported.headers['content-type']).toContain('application/json');
    expect(exported.headers['content-disposition']).toBe(`attachment; filename="member-${zelda.id}-data.json"`);
    const doc = JSON.parse(exported.payload) as Json;
    expect(doc.format).toBe('cashtrack.member-data.v1');
    expect(doc.member).toMatchObject({ id: zelda.id, login, email, display_name: name, has_password: true, erased_at: null });
    expect(doc.member).not.toHaveProperty('password_hash');
    expect(doc.balances).toEqual([expect.objectContaining({ currency: 'EUR', available: '0.00' })]);
    expect(doc.ledger_entries.map((e: Json) => e.type)).toEqual(['cashback', 'referral', 'payout']);
    expect(doc.orders).toHaveLength(1);
    expect(doc.orders[0]).toMatchObject({ member: { id: zelda.id }, note: `Order of ${name}`, raw: { customer_email: email, sub: login } });
    expect(doc.payouts).toEqual([expect.objectContaining({ id: payoutId, details: `PayPal ${email}`, status: 'paid' })]);
    expect(doc.referrals.map((r: Json) => [r.referrer.id, r.referee.id])).toEqual([
      [referrer.id, zelda.id],
      [zelda.id, referee.id],
    ]);
    expect(doc.clicks).toEqual([expect.objectContaining({ member: expect.objectContaining({ id: zelda.id }), ip_prefix: expect.any(String) })]);
    expect(doc.claims).toHaveLength(1);
    expect(doc.claims[0].receipt).toMatchObject({ type: 'image/png', width: 64, height: 48, bytes: expect.any(Number) });
    expect(doc.claims[0].receipt).not.toHaveProperty('data');
    expect(doc.sessions).toEqual([expect.objectContaining({ ip: '198.51.100.7', user_agent: 'ZeldaBrowser/1.0' })]);
    expect(JSON.stringify(doc.sessions)).not.toMatch(/token/);
    expect(doc.application_passwords).toEqual([expect.objectContaining({ name: 'Zelda phone app', last_ip: expect.any(String) })]);
    expect(JSON.stringify(doc.application_passwords)).not.toMatch(/hash/);

    const needles = [email, login, name, 'victim-mail', 'Quistorff'];
    expect(hits(await everyText(ctx), needles).length).toBeGreaterThan(8);
    const before = await totals(ctx);

    const erased = await post(`/members/${zelda.id}/erase`, {});
    expect(erased.statusCode).toBe(200);
    const result = erased.result as Json;
    expect(result).toMatchObject({
      member: { id: zelda.id, login: `erased-${zelda.id}`, email: `erased-${zelda.id}@invalid`, display_name: `erased-${zelda.id}`, status: 'disabled' },
      written_off: [],
      payouts_cancelled: [],
    });
    expect(erasedEvents.filter((e) => e.member_id === zelda.id)).toHaveLength(1);

    // Nothing of her left in any text column of any table; every amount where it was.
    expect(hits(await everyText(ctx), needles)).toEqual([]);
    expect(await totals(ctx)).toEqual(before);
    expect(await ctx.ledger.verify()).toEqual([]);
    const [counts] = await ctx.db.select<Json>(
      'SELECT (SELECT COUNT(*) FROM sessions WHERE user_id = ?) AS sessions, (SELECT COUNT(*) FROM app_passwords WHERE user_id = ?) AS apps, (SELECT COUNT(*) FROM clicks WHERE member_id = ? AND ip_prefix IS NULL AND ua_hash IS NULL) AS clicks, (SELECT COUNT(*) FROM ledger_entries WHERE member_id = ?) AS entries',
      [zelda.id, zelda.id, zelda.id, zelda.id],
    );
    expect(counts).toMatchObject({ sessions: expect.anything(), apps: expect.anything() });
    expect([Number(counts.sessions), Number(counts.apps), Number(counts.clicks), Number(counts.entries)]).toEqual([0, 0, 1, 3]);
    const [paid] = await ctx.db.select<Json>('SELECT details, status, amount FROM payouts WHERE id = ?', [payoutId]);
    expect(paid.details).toBeNull();
    expect(paid.status).toBe('paid');
    const [media] = await ctx.db.select<Json>('SELECT COUNT(*) AS n FROM media WHERE private = ?', [true]);
    expect(Number(media.n)).toBe(0);

    // Nobody signs in as her any more, with the old password or the old application password.
    expect((await api.server.inject({ url: `${NS}/members/${zelda.id}/data`, headers: { authorization: basic(login, app.password) } })).statusCode).toBe(401);
    await expect(ctx.users.setStatus(zelda.id, 'active')).rejects.toMatchObject({ code: 'svc_member_erased', status: 409 });

    // Idempotent: the same answer, nothing written.
    const entries = await ctx.db.select<Json>('SELECT COUNT(*) AS n FROM ledger_entries');
    const deliveries = await ctx.db.select<Json>('SELECT COUNT(*) AS n FROM webhook_deliveries');
    const again = await post(`/members/${zelda.id}/erase`, {});
    expect(again.statusCode).toBe(200);
    expect(again.result).toEqual(result);
    expect(await ctx.db.select<Json>('SELECT COUNT(*) AS n FROM ledger_entries')).toEqual(entries);
    expect(await ctx.db.select<Json>('SELECT COUNT(*) AS n FROM webhook_deliveries')).toEqual(deliveries);
    expect(erasedEvents.filter((e) => e.member_id === zelda.id)).toHaveLength(1);
    const [event] = await ctx.db.select<Json>("SELECT payload FROM webhook_deliveries WHERE event = 'member.erased'");
    expect(JSON.parse(event.payload).data).toMatchObject({ member_id: zelda.id, forced: false, actor: `user:${api.admin.id}` });

    // The export after the erasure shows what is kept, anonymised.
    const after = JSON.parse((await get(`/members/${zelda.id}/data`)).payload) as Json;
    expect(after.member).toMatchObject({ login: `erased-${zelda.id}`, erased_at: result.erased_at, has_password: false });
    expect(after.sessions).toEqual([]);
    expect(after.application_passwords).toEqual([]);
    expect(after.ledger_entries).toHaveLength(3);
  });

  it('refuses while a payout is pending or the balance is positive, and with force and a note cancels the payout and writes the balance off', async () => {
    const { ctx } = use();
    const member = await plain(`owed${++seq}`);
    await approvedOrder(member.id, '100.00');
    const payout = await post('/payouts', { member_id: member.id, amount: '20.00', currency: 'EUR', method: 'iban', details: 'DE89 3704 0044 0532 0130 00' });
    const payoutId = (payout.result as Json).payout.id;

    const inFlight = await post(`/members/${member.id}/erase`, {});
    expect(inFlight.statusCode).toBe(409);
    expect(inFlight.result).toMatchObject({ code: 'svc_member_payout_in_flight', data: { payout_ids: [payoutId] } });
    expect((await post(`/payouts/${payoutId}/complete`, {})).statusCode).toBe(200);
    const hasBalance = await post(`/members/${member.id}/erase`, {});
    expect(hasBalance.statusCode).toBe(409);
    expect((hasBalance.result as Json).code).toBe('svc_member_has_balance');
    const noNote = await post(`/members/${member.id}/erase`, { force: true });
    expect(noNote.statusCode).toBe(400);
    expect((noNote.result as Json).code).toBe('svc_note_required');
    expect((await ctx.users.get(member.id))!.login).toBe(member.login);

    const second = await post('/payouts', { member_id: member.id, amount: '10.00', currency: 'EUR', method: 'iban', details: 'DE89 3704 0044 0532 0130 00' });
    const secondId = (second.result as Json).payout.id;
    const forced = await post(`/members/${member.id}/erase`, { force: true, note: 'Request #41 by e-mail' });
    expect(forced.statusCode).toBe(200);
    const result = forced.result as Json;
    expect(result.payouts_cancelled).toEqual([secondId]);
    expect(result.written_off).toEqual([
      expect.objectContaining({
        type: 'adjustment',
        amount: '-30.00',
        currency: 'EUR',
        source: { type: 'erasure', id: String(member.id) },
        note: 'Written off at erasure: Request #41 by e-mail',
      }),
    ]);
    expect((await ctx.ledger.balanceOf(member.id, 'EUR')).available).toBe('0.00');
    const [cancelled] = await ctx.db.select<Json>('SELECT status, details, reason, return_entry_id FROM payouts WHERE id = ?', [secondId]);
    expect(cancelled).toMatchObject({ status: 'cancelled', details: null, reason: 'Cancelled at erasure: Request #41 by e-mail' });
    expect(cancelled.return_entry_id).not.toBeNull();
    expect(await ctx.ledger.verify()).toEqual([]);
    // A second forced erase answers the same.
    const again = await post(`/members/${member.id}/erase`, { force: true, note: 'again' });
    expect(again.result).toEqual(result);
    expect(erasedEvents.filter((e) => e.member_id === member.id)).toEqual([expect.objectContaining({ forced: true, payouts_cancelled: [secondId] })]);
  });

  it('answers 404 for an unknown member, 409 for an administrator and 400 for bad input', async () => {
    for (const res of [await get('/members/987654/data'), await post('/members/987654/erase', {})]) {
      expect(res.statusCode).toBe(404);
      expect((res.result as Json).code).toBe('svc_member_not_found');
    }
    const admin = await createActor(use().ctx, 'administrator');
    const refused = await post(`/members/${admin.id}/erase`, {});
    expect(refused.statusCode).toBe(409);
    expect((refused.result as Json).code).toBe('svc_member_is_administrator');
    const bad = await post(`/members/${admin.id}/erase`, { force: 'sometimes' });
    expect(bad.statusCode).toBe(400);
    expect((bad.result as Json).code).toBe('rest_invalid_param');
    const unauthenticated = await api.server.inject({ url: `${NS}/members/${admin.id}/data` });
    expect(unauthenticated.statusCode).toBe(401);
  });

  it('streams an export of more entries than one page holds, every entry once and in order', async () => {
    const { ctx } = use();
    const member = await plain(`busy${++seq}`);
    await ctx.ledger.ensureBalances([{ memberId: member.id, currency: 'USD' }]);
    await ctx.db.transaction(async (t) => {
      for (let i = 0; i < 1234; i++)
        await ctx.ledger.post({ memberId: member.id, currency: 'USD', type: 'adjustment', amount: 1, sourceType: 'adjustment', note: 'n', actor: 'test' }, t);
    });
    const res = await get(`/members/${member.id}/data`);
    expect(res.statusCode).toBe(200);
    const doc = JSON.parse(res.payload) as Json;
    const ids = doc.ledger_entries.map((e: Json) => e.id);
    expect(ids).toHaveLength(1234);
    expect(new Set(ids).size).toBe(1234);
    expect([...ids].sort((a: number, b: number) => a - b)).toEqual(ids);
    expect(doc.balances).toEqual([expect.objectContaining({ currency: 'USD', available: '12.34' })]);
  });
});
