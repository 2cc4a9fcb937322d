// Exports over REST on both dialects: an export of each kind holds exactly the rows (ids and
// amounts) its list route shows under the same filters, as CSV and as JSON Lines; the CSV has a
// header and neutralises formula-looking cells; a bad filter is refused as the list route refuses
// it; the download needs an administrator, is an attachment with a safe name, and the file on disk
// is owner-only; DELETE removes row and file; the nightly prune removes them after the retention,
// and a file past its expiry is 410 until then.
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { JobRunner } from '../../src/jobs/runner.js';
import { describeEachDialect } from '../helpers/context.js';
import { adminClient, createActor, NS } from '../helpers/http.js';
import { addAdvertiser, shopnetDefinition } from '../helpers/networks.js';

type Json = Record<string, any>;

const clock = new ManualClock('2026-11-27T12:00:00Z');

describeEachDialect(
  'exports over REST',
  (use) => {
    const api = adminClient(use, async (ctx) => {
      expect(await ctx.ledger.verify()).toEqual([]);
    });
    const { get, post } = api;
    const del = (url: string) => api.server.inject({ method: 'DELETE', url: `${NS}${url}`, headers: { authorization: api.admin.authorization } });
    const members: number[] = [];

    beforeAll(async () => {
      const { ctx } = use();
      await ctx.networks.saveCustom('shopnet', shopnetDefinition(), 'test');
      await addAdvertiser(ctx, 'shopnet', 'shop-1');
      for (const login of ['ann', 'bob', 'cyd']) {
        members.push(
          (await ctx.users.create({ login, email: `${login}@example.com`, display_name: login === 'cyd' ? '=HYPERLINK("http://evil")' : login })).id,
        );
      }
      const [ann, bob, cyd] = members;
      // Ledger entries in two currencies, one with a formula-looking note.
      for (const [m, amount, currency, note] of [
        [ann, '25.00', 'USD', 'welcome'],
        [ann, '7.5', 'EUR', '=SUM(A1:A9)'],
        [bob, '40.00', 'USD', '+cmd|calc'],
        [cyd, '12.34', 'USD', '@import'],
      ] as const) {
        await ctx.ledger.adjust({ member_id: m, type: 'credit', amount, currency, note }, 'test');
      }
      await ctx.payouts.create({ member_id: ann, amount: '10.00', currency: 'USD', method: 'paypal', details: '-2+3' }, 'test');
      await ctx.payouts.create({ member_id: bob, amount: '15.00', currency: 'USD', method: 'bank' }, 'test');
      for (let i = 1; i <= 7; i++) {
        await ctx.orders.record(
          {
            network: 'shopnet',
            transaction_id: `T-${i}`,
            advertiser: 'shop-1',
            merchant_ref: i === 3 ? '=1+2' : `REF-${i}`,
            sub_id: String(members[i % 3]),
            sale_amount: `${100 + i}.00`,
            commission: `${10 + i}.50`,
            currency: i % 2 ? 'EUR' : 'USD',
            status: 'pending',
            event_at: new Date('2026-11-20T10:00:00Z'),
            source: 'poll',
          },
          'poll',
        );
      }
      for (let i = 0; i < 5; i++) {
        await ctx.db.execute(
          'INSERT INTO clicks (id, member_id, network, advertiser, coupon_id, url, cashback_rule, ip_prefix, ua_hash, created_at) VALUES (?, ?, ?, ?, NULL, ?, ?, ?, ?, ?)',
          [
            `c${String(i).padStart(18, '0')}`,
            members[i % 2],
            'shopnet',
            'shop-1',
            i === 1 ? 'https://shop.example/=cmd' : null,
            'percent_commission:50',
            '203.0.113.0',
            'abc',
            new Date(Date.UTC(2026, 10, 20 + i)),
          ],
        );
      }
      for (let i = 0; i < 3; i++) {
        await ctx.claims.create(
          {
            member_id: members[i],
            network: 'shopnet',
            advertiser: 'shop-1',
            order_ref: `ORD-${i}`,
            purchased_at: new Date('2026-11-20T09:00:00Z'),
            amount: `${50 + i}.00`,
            currency: 'EUR',
            note: 'nothing tracked',
          },
          'test',
        );
      }
    });

    const runJobs = () => new JobRunner({ ctx: use().ctx, jobs: use().ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 20 }).runPending();

    /** Requests an export, runs its job, answers the export and the downloaded file. */
    const exportOf = async (payload: Json) => {
      const res = await post('/exports', payload);
      expect(res.statusCode, res.payload).toBe(202);
      const queued = res.result as Json;
      expect(queued).toMatchObject({ kind: payload.kind, format: payload.format ?? 'csv', status: 'queued', job_id: expect.any(Number) });
      await runJobs();
      const done = (await get(`/exports/${queued.id}`)).result as Json;
      expect(done.status, done.error).toBe('done');
      const file = await get(`/exports/${queued.id}/file`);
      expect(file.statusCode).toBe(200);
      return { exp: done, file };
    };

    const jsonl = (text: string): Json[] =>
      text
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l));

    const cases: { kind: string; filters: Json; list: string; key: string; amount: string[] }[] = [
      { kind: 'orders', filters: { currency: 'EUR' }, list: '/orders?currency=EUR', key: 'id', amount: ['sale_amount', 'commission', 'cashback'] },
      { kind: 'ledger_entries', filters: { member_id: 0 }, list: '/ledger/entries?member_id=0', key: 'id', amount: ['amount', 'balance_after'] },
      { kind: 'payouts', filters: { status: 'pending' }, list: '/payouts?status=pending', key: 'id', amount: ['amount'] },
      { kind: 'balances', filters: { currency: 'USD' }, list: '/ledger/members?currency=USD', key: 'member_id', amount: ['available', 'pending'] },
      { kind: 'clicks', filters: { member_id: 0 }, list: '/clicks?member_id=0', key: 'id', amount: [] },
      { kind: 'claims', filters: { network: 'shopnet' }, list: '/claims?network=shopnet', key: 'id', amount: ['amount'] },
    ];

    for (const c of cases) {
      it(`exports ${c.kind} with the rows and amounts of ${c.list.split('?')[0]} under the same filters (CSV and JSON Lines)`, async () => {
        const filters = Object.fromEntries(Object.entries(c.filters).map(([k, v]) => [k, k === 'member_id' ? members[0] : v]));
        const listed = (await get(`${c.list.replace('member_id=0', `member_id=${members[0]}`)}&per_page=100`)).result as Json[];
        expect(listed.length).toBeGreaterThan(0);
        const byKey = (rows: Json[]) =>
          rows.map((r) => [String(r[c.key]), ...c.amount.map((a) => String(r[a])), String(r.currency ?? '')]).sort((a, b) => (a[0] < b[0] ? -1 : 1));

        const asJson = await exportOf({ kind: c.kind, format: 'jsonl', ...filters });
        expect(asJson.file.headers['content-type']).toMatch(/^application\/jsonl/);
        const lines = jsonl(asJson.file.payload);
        expect(lines).toHaveLength(listed.length);
        expect(byKey(lines)).toEqual(byKey(listed));
        // Each line is the row as the list route shows it.
        expect(lines.map((l) => JSON.stringify(l)).sort()).toEqual(listed.map((l) => JSON.stringify(l)).sort());
        expect(asJson.exp).toMatchObject({ rows: listed.length, bytes: Buffer.byteLength(asJson.file.payload) });
        // The filters as validated (a list filter becomes an array): what repeats the export.
        expect(Object.keys(asJson.exp.filters)).toEqual(Object.keys(filters));

        const asCsv = await exportOf({ kind: c.kind, ...filters });
        expect(asCsv.file.headers['content-type']).toMatch(/^text\/csv/);
        const records = parse(asCsv.file.payload, { columns: true }) as Json[];
        expect(records).toHaveLength(listed.length);
        expect(byKey(records)).toEqual(byKey(listed));
      });
    }

    it('writes a header row, CRLF lines and neutralises cells a spreadsheet would run as formulas', async () => {
      const { file } = await exportOf({ kind: 'ledger_entries', member_id: members[0], type: 'adjustment' });
      const text = file.payload;
      expect(text.split('\r\n')[0]).toBe(
        'id,member_id,type,currency,amount,balance_after,source_type,source_id,order_id,reverses_id,reversed_by,actor,note,created_at',
      );
      const rows = parse(text, { columns: true }) as Json[];
      expect(rows.map((r) => r.note).sort()).toEqual(["'=SUM(A1:A9)", 'welcome']);
      expect(rows.find((r) => r.currency === 'EUR')).toMatchObject({
        amount: '7.50',
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      });
      const balances = parse((await exportOf({ kind: 'balances', member_id: members[2], currency: 'USD' })).file.payload, { columns: true }) as Json[];
      expect(balances).toEqual([expect.objectContaining({ display_name: `'=HYPERLINK("http://evil")`, available: '12.34', currency: 'USD' })]);
      const payouts = parse((await exportOf({ kind: 'payouts', member_id: members[0] })).file.payload, { columns: true }) as Json[];
      // A negative-looking detail that is no number is neutralised; an amount stays a number.
      expect(payouts).toEqual([expect.objectContaining({ details: "'-2+3", amount: '10.00' })]);
      const entries = jsonl((await exportOf({ kind: 'ledger_entries', format: 'jsonl', member_id: members[1] })).file.payload);
      // JSON Lines keep the text as it is: no spreadsheet reads them.
      expect(entries.map((e) => e.note)).toContain('+cmd|calc');
    });

    it('exports every member’s ledger entries when no member is given, and repeats an export from its stored filters', async () => {
      const { exp, file } = await exportOf({ kind: 'ledger_entries', format: 'jsonl', currency: 'USD', after: '2026-01-01T00:00:00Z' });
      const lines = jsonl(file.payload);
      expect(new Set(lines.map((l) => l.member_id))).toEqual(new Set(members));
      expect(lines.every((l) => l.currency === 'USD')).toBe(true);
      expect(lines.map((l) => l.id)).toEqual([...lines.map((l) => l.id)].sort((a, b) => a - b));
      expect(exp.filters).toEqual({ currency: ['USD'], after: '2026-01-01T00:00:00.000Z' });
      const again = await exportOf({ kind: exp.kind, format: exp.format, ...exp.filters });
      expect(again.file.payload).toBe(file.payload);
    });

    it('refuses an unknown kind, format or filter, paging, and a bad filter value as the list route does', async () => {
      const bad = async (payload: Json) => {
        const res = await post('/exports', payload);
        expect(res.statusCode, res.payload).toBe(400);
        return (res.result as Json).code;
      };
      expect(await bad({ kind: 'secrets' })).toBe('rest_invalid_param');
      expect(await bad({ kind: 'orders', format: 'xlsx' })).toBe('rest_invalid_param');
      expect(await bad({ kind: 'orders', method: 'paypal' })).toBe('rest_invalid_param');
      expect(await bad({ kind: 'orders', page: 2 })).toBe('rest_invalid_param');
      expect(await bad({ kind: 'orders', orderby: 'id' })).toBe('rest_invalid_param');
      expect(await bad({ kind: 'payouts', status: 'lost' })).toBe('rest_invalid_param');
      const listRoute = await get('/orders?method=paypal');
      expect(listRoute.statusCode).toBe(400);
      expect((listRoute.result as Json).code).toBe('rest_invalid_param');
      // The service checks kind and format itself (the CLI reaches it without the route's schema).
      await expect(use().ctx.exports.create({ kind: 'secrets' as 'orders' }, 'test')).rejects.toMatchObject({ code: 'svc_unknown_export_kind', status: 400 });
      await expect(use().ctx.exports.create({ kind: 'orders', format: 'xlsx' as 'csv' }, 'test')).rejects.toMatchObject({
        code: 'svc_unknown_export_format',
        status: 400,
      });
      // Refused by the domain at once, not when the job runs.
      const res = await post('/exports', { kind: 'ledger_entries', member_id: 999999 });
      expect(res.statusCode).toBe(404);
      expect((res.result as Json).code).toBe('svc_member_not_found');
      expect(Number((await use().ctx.db.select<{ n: unknown }>("SELECT COUNT(*) AS n FROM exports WHERE params LIKE '%999999%'"))[0].n)).toBe(0);
    });

    it('serves the file to administrators only, as an attachment with a safe name, from an owner-only file', async () => {
      const { exp, file } = await exportOf({ kind: 'orders' });
      expect(file.headers['content-disposition']).toBe(`attachment; filename="${exp.file_name}"`);
      expect(exp.file_name).toMatch(/^cashtrack-orders-\d{8}-\d{4}-\d+\.csv$/);
      expect(file.headers['cache-control']).toContain('no-store');
      const dir = join(use().config.data_dir, 'exports');
      const onDisk = readdirSync(dir).filter((n) => n.startsWith(`export-${exp.id}-`));
      expect(onDisk).toEqual([`export-${exp.id}-orders.csv`]);
      expect(statSync(join(dir, onDisk[0])).mode & 0o777).toBe(0o600);
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      expect(readdirSync(dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);

      const member = await createActor(use().ctx, 'member');
      for (const url of [`/exports/${exp.id}/file`, `/exports/${exp.id}`, '/exports']) {
        const res = await api.server.inject({ url: `${NS}${url}`, headers: { authorization: member.authorization } });
        expect(res.statusCode).toBe(403);
        expect((await api.server.inject({ url: `${NS}${url}` })).statusCode).toBe(401);
      }
      const asMember = await api.server.inject({
        method: 'POST',
        url: `${NS}/exports`,
        payload: { kind: 'balances' },
        headers: { authorization: member.authorization },
      });
      expect(asMember.statusCode).toBe(403);
      // A file removed from the data directory by hand: 410, said so.
      const other = await exportOf({ kind: 'claims' });
      rmSync(join(dir, `export-${other.exp.id}-claims.csv`));
      const missing = await get(`/exports/${other.exp.id}/file`);
      expect(missing.statusCode).toBe(410);
      expect((missing.result as Json).code).toBe('svc_export_file_missing');
      const notFound = await get('/exports/999999/file');
      expect(notFound.statusCode).toBe(404);
      expect((notFound.result as Json).code).toBe('svc_export_not_found');
    });

    it('answers 409 before the file is written, lists exports newest first, and deletes one with its file', async () => {
      const queued = (await post('/exports', { kind: 'clicks', format: 'jsonl' })).result as Json;
      const early = await get(`/exports/${queued.id}/file`);
      expect(early.statusCode).toBe(409);
      expect((early.result as Json).code).toBe('svc_export_not_ready');
      await runJobs();
      const list = await get('/exports?kind=clicks&per_page=2');
      expect(list.statusCode).toBe(200);
      expect((list.result as Json[])[0]).toMatchObject({ id: queued.id, status: 'done', rows: 5 });
      expect(Number(list.headers['x-wp-total'])).toBeGreaterThanOrEqual(2);
      const path = join(use().config.data_dir, 'exports', `export-${queued.id}-clicks.jsonl`);
      expect(existsSync(path)).toBe(true);
      const res = await del(`/exports/${queued.id}`);
      expect(res.statusCode).toBe(200);
      expect(existsSync(path)).toBe(false);
      expect((await get(`/exports/${queued.id}`)).statusCode).toBe(404);
      expect(((await del(`/exports/${queued.id}`)).result as Json).code).toBe('svc_export_not_found');
    });

    it('keeps a file exports.retention_days, answers 410 once expired, and the nightly prune deletes row and file', async () => {
      const { ctx } = use();
      const { exp } = await exportOf({ kind: 'payouts' });
      const path = join(use().config.data_dir, 'exports', `export-${exp.id}-payouts.csv`);
      expect(Date.parse(exp.expires_at) - Date.parse(exp.finished_at)).toBe(3 * 86_400_000);
      clock.advance(3 * 86_400_000 - 1000);
      expect(await ctx.exports.prune()).toBe(0);
      expect((await get(`/exports/${exp.id}/file`)).statusCode).toBe(200);
      clock.advance(1000);
      const gone = await get(`/exports/${exp.id}/file`);
      expect(gone.statusCode).toBe(410);
      expect((gone.result as Json).code).toBe('svc_export_expired');
      const job = await ctx.jobs.enqueue('maintenance.prune', {}, 'test');
      await runJobs();
      const pruned = await ctx.jobs.get(job.id);
      expect(pruned.status).toBe('done');
      expect((pruned.result as Json).deleted.exports).toBeGreaterThanOrEqual(1);
      expect(existsSync(path)).toBe(false);
      expect((await get(`/exports/${exp.id}`)).statusCode).toBe(404);
    });
  },
  { 'exports.retention_days': 3 },
  { clock },
);
