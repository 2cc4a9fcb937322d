// The list conventions the admin screens (DataViews) rely on, walked over every list that has
// them: orderby/order both ways with the id tiebreak (paging never repeats or skips a row), "is any
// of" status filters in the comma, repeated and bracket forms, status_exclude, after/before
// (strictly), the counts per status matching the list's X-WP-Total, and bad values named.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Context } from '../../src/context.js';
import { describeEachDialect } from '../helpers/context.js';
import { insertCoupon } from '../helpers/coupons.js';
import { adminClient } from '../helpers/http.js';
import { addShop } from '../helpers/pages.js';

type Json = Record<string, any>;

/** Three instants, each given to several rows, so every date sort has ties for the id to break. */
const T = ['2026-11-01T08:00:00.000Z', '2026-11-02T08:00:00.000Z', '2026-11-03T08:00:00.000Z'];

interface ListSpec {
  name: string;
  path: string;
  /** Query the list always needs (e.g. member_id=...). */
  base?: () => string;
  /** Makes the rows: `n` of them, row i with status `statuses[i % k]` and date T[i % 3]. */
  seed: (ctx: Context, n: number) => Promise<void>;
  /** The enumerated filter with "is any of" and its `_exclude` (none: the list has no status). */
  statusParam?: string;
  statuses: readonly string[];
  /** orderby values, and the response field each sorts by when it is not its own name. */
  sortable: string[];
  field?: Record<string, string>;
  /** The response field holding the date `after`/`before` compare (none: the list is not dated). */
  dateField?: string;
  /** The path of its counts per status, when it has one. */
  counts?: string;
}

const N = 9;

describeEachDialect('list conventions over REST', (use) => {
  const api = adminClient(use);
  const { get } = api;
  let seq = 0;
  let entryMember = 0;
  let hookId = 0;

  /** Sets a column of the rows of `table` (in id order) from `values(i)`. */
  const rewrite = async (ctx: Context, table: string, column: string, values: (i: number) => unknown, where = '') => {
    const rows = await ctx.db.select<{ id: unknown }>(`SELECT id FROM ${table} ${where} ORDER BY id`);
    for (const [i, r] of rows.entries()) await ctx.db.execute(`UPDATE ${table} SET ${column} = ? WHERE id = ?`, [values(i), Number(r.id)]);
  };
  const byId = (x: number | string, y: number | string) => (x < y ? -1 : x > y ? 1 : 0);
  const member = async (ctx: Context, credit?: string) => {
    const user = await ctx.users.create({ login: `lister${++seq}`, email: `lister${seq}@example.com` });
    if (credit) await ctx.ledger.adjust({ member_id: user.id, type: 'credit', amount: credit, currency: 'USD', note: 'earned' }, 'test');
    return user.id;
  };

  const specs: ListSpec[] = [
    {
      name: 'orders',
      path: '/orders',
      statusParam: 'status',
      statuses: ['pending', 'approved', 'declined'],
      sortable: ['id', 'created_at', 'event_at', 'status_changed_at', 'status', 'commission', 'cashback'],
      dateField: 'created_at',
      counts: '/orders/counts',
      async seed(ctx, n) {
        for (let i = 0; i < n; i++) {
          const res = await api.post('/orders', {
            network: 'awin',
            transaction_id: `LIST-${i}`,
            sale_amount: `${100 + (i % 4) * 10}.00`,
            commission: `${10 + (i % 4)}.00`,
            event_at: T[(i + 1) % 3],
            note: 'seeded',
          });
          expect(res.statusCode).toBe(201);
        }
        await rewrite(ctx, 'orders', 'status', (i) => this.statuses[i % 3]);
        await rewrite(ctx, 'orders', 'created_at', (i) => new Date(T[i % 3]));
        await rewrite(ctx, 'orders', 'status_changed_at', (i) => new Date(T[(i + 2) % 3]));
      },
    },
    {
      name: 'payouts',
      path: '/payouts',
      statusParam: 'status',
      statuses: ['pending', 'paid', 'cancelled'],
      sortable: ['id', 'created_at', 'amount', 'status'],
      dateField: 'created_at',
      counts: '/payouts/counts',
      async seed(ctx, n) {
        const id = await member(ctx, '1000.00');
        for (let i = 0; i < n; i++)
          expect((await api.post('/payouts', { member_id: id, amount: `${10 + (i % 4)}.00`, method: 'paypal' })).statusCode).toBe(201);
        await rewrite(ctx, 'payouts', 'status', (i) => this.statuses[i % 3]);
        await rewrite(ctx, 'payouts', 'created_at', (i) => new Date(T[i % 3]));
      },
    },
    {
      name: 'jobs',
      path: '/jobs',
      statusParam: 'status',
      statuses: ['queued', 'running', 'cancelling', 'cancelled', 'done', 'failed'],
      sortable: ['id', 'created_at', 'started_at', 'finished_at', 'updated_at', 'status', 'type'],
      dateField: 'created_at',
      counts: '/jobs/counts',
      async seed(ctx, n) {
        for (let i = 0; i < n; i++) await ctx.jobs.enqueue('maintenance.prune', { log_retention_days: 30 + i }, 'test');
        await rewrite(ctx, 'jobs', 'type', (i) => ['maintenance.prune', 'orders.poll', 'advertisers.sync'][i % 3]);
        await rewrite(ctx, 'jobs', 'status', (i) => this.statuses[i % 6]);
        await rewrite(ctx, 'jobs', 'created_at', (i) => new Date(T[i % 3]));
        await rewrite(ctx, 'jobs', 'started_at', (i) => (i % 4 === 0 ? null : new Date(T[(i + 1) % 3])));
        await rewrite(ctx, 'jobs', 'finished_at', (i) => (i % 3 === 0 ? null : new Date(T[(i + 2) % 3])));
      },
    },
    {
      name: 'ledger entries',
      path: '/ledger/entries',
      base: () => `member_id=${entryMember}`,
      statusParam: 'type',
      statuses: ['cashback', 'referral', 'adjustment'],
      sortable: ['id', 'created_at', 'amount', 'type'],
      dateField: 'created_at',
      async seed(ctx, n) {
        entryMember = await member(ctx);
        for (let i = 0; i < n; i++)
          await ctx.ledger.adjust({ member_id: entryMember, type: 'credit', amount: `${5 + (i % 4)}.00`, currency: 'USD', note: 'seeded' }, 'test');
        const where = `WHERE member_id = ${entryMember}`;
        await rewrite(ctx, 'ledger_entries', 'type', (i) => this.statuses[i % 3], where);
        await rewrite(ctx, 'ledger_entries', 'created_at', (i) => new Date(T[i % 3]), where);
      },
    },
    {
      name: 'postbacks of a network',
      path: '/networks/awin/postbacks',
      statusParam: 'outcome',
      statuses: ['accepted', 'duplicate', 'rejected', 'error'],
      sortable: ['id', 'received_at', 'last_seen_at', 'outcome'],
      dateField: 'received_at',
      counts: '/networks/awin/postbacks/counts',
      async seed(ctx, n) {
        for (let i = 0; i < n; i++)
          await ctx.db.execute("INSERT INTO postbacks (received_at, last_seen_at, network, method, outcome, test) VALUES (?, ?, 'awin', 'GET', ?, ?)", [
            new Date(T[i % 3]),
            new Date(T[(i + 1) % 3]),
            this.statuses[i % 4],
            false,
          ]);
        // Another network's postbacks are not this list's.
        await ctx.db.execute("INSERT INTO postbacks (received_at, network, method, outcome, test) VALUES (?, 'cj', 'GET', 'accepted', ?)", [
          new Date(T[1]),
          false,
        ]);
      },
    },
    {
      name: 'webhook deliveries',
      path: '/webhooks/0/deliveries',
      statusParam: 'status',
      statuses: ['pending', 'failed', 'delivered', 'dead'],
      sortable: ['id', 'created_at', 'delivered_at', 'next_attempt_at', 'attempts', 'status', 'event'],
      dateField: 'created_at',
      counts: '/webhooks/0/deliveries/counts',
      async seed(ctx, n) {
        const res = await api.post('/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['*'], enabled: false });
        expect(res.statusCode, res.payload).toBe(201);
        hookId = (res.result as Json).id;
        this.path = `/webhooks/${hookId}/deliveries`;
        this.counts = `/webhooks/${hookId}/deliveries/counts`;
        for (let i = 0; i < n; i++)
          await ctx.db.execute(
            'INSERT INTO webhook_deliveries (id, webhook_id, event, payload, status, attempts, next_attempt_at, created_at, updated_at, delivered_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
            [
              `msg_01JD${String(i).padStart(22, '0')}`,
              hookId,
              ['ping', 'order.status_changed', 'payout.created'][i % 3],
              '{}',
              this.statuses[i % 4],
              i % 4,
              i % 2 ? null : new Date(T[(i + 2) % 3]),
              new Date(T[i % 3]),
              new Date(T[i % 3]),
              i % 3 === 0 ? null : new Date(T[(i + 1) % 3]),
            ],
          );
      },
    },
    {
      name: 'webhook subscriptions',
      path: '/webhooks',
      statuses: [],
      sortable: ['id', 'created_at', 'updated_at', 'failure_count', 'url'],
      async seed(ctx, n) {
        for (let i = 0; i < n; i++) {
          const res = await api.post('/webhooks', { url: `http://127.0.0.1:9/hook-${'abc'[i % 3]}`, events: ['*'], enabled: false });
          expect(res.statusCode, res.payload).toBe(201);
        }
        await rewrite(ctx, 'webhooks', 'created_at', (i) => new Date(T[i % 3]));
        await rewrite(ctx, 'webhooks', 'updated_at', (i) => new Date(T[(i + 1) % 3]));
        await rewrite(ctx, 'webhooks', 'failure_count', (i) => i % 4);
      },
    },
    {
      name: 'logs',
      path: '/logs',
      base: () => 'source=listtest',
      statusParam: 'level',
      // Debug entries are not stored at the default log level: the seed writes the other three.
      statuses: ['info', 'warning', 'error', 'debug'],
      sortable: ['id', 'time'],
      dateField: 'time',
      counts: '/logs/counts',
      async seed(ctx, n) {
        for (let i = 0; i < n; i++) ctx.logger[(['info', 'warning', 'error'] as const)[i % 3]]('listtest', `seeded ${i}`);
        await ctx.logger.flush();
        await rewrite(ctx, 'logs', 'created_at', (i) => new Date(T[(i + Math.floor(i / 3)) % 3]), "WHERE source = 'listtest'");
      },
    },
    {
      name: 'pages',
      path: '/pages',
      statusParam: 'status',
      statuses: ['draft', 'publish'],
      sortable: ['id', 'date', 'created_at', 'updated', 'updated_at', 'published_at', 'title', 'status'],
      field: { date: 'created_at', updated: 'updated_at' },
      dateField: 'created_at',
      counts: '/pages/counts',
      async seed(ctx, n) {
        for (let i = 0; i < n; i++) {
          const shop = await addShop(ctx, 'pagesnet', `p${i}`);
          await ctx.db.execute(
            "INSERT INTO pages (advertiser_id, module, advertiser, title, slug, body, excerpt, status, author, created_at, updated_at, published_at) VALUES (?, 'pagesnet', ?, ?, ?, '', '', ?, 'test', ?, ?, ?)",
            [
              shop,
              `p${i}`,
              `page ${'abc'[i % 3]}`,
              `page-${i}`,
              this.statuses[i % 2],
              new Date(T[i % 3]),
              new Date(T[(i + 1) % 3]),
              i % 2 ? new Date(T[(i + 2) % 3]) : null,
            ],
          );
        }
      },
    },
    {
      name: 'coupons',
      path: '/coupons',
      statusParam: 'status',
      statuses: ['active', 'scheduled', 'expired', 'removed'],
      sortable: ['id', 'title', 'starts_at', 'ends_at', 'created_at', 'updated_at'],
      dateField: 'created_at',
      counts: '/coupons/counts',
      async seed(ctx, n) {
        const day = 86_400_000;
        const now = ctx.clock.now().getTime();
        for (let i = 0; i < n; i++) {
          const kind = this.statuses[i % 4];
          await insertCoupon(ctx, {
            title: `coupon ${'abc'[i % 3]}`,
            status: kind === 'removed' ? 'removed' : 'active',
            starts_at: kind === 'scheduled' ? new Date(now + (10 + i) * day) : i % 3 ? null : new Date(now - (20 + i) * day),
            ends_at: kind === 'expired' ? new Date(now - (5 + (i % 2)) * day) : i % 2 ? new Date(now + 60 * day) : null,
            created_at: new Date(T[i % 3]),
            updated_at: new Date(T[(i + 1) % 3]),
          });
        }
      },
    },
    {
      name: 'advertisers',
      path: '/advertisers',
      base: () => 'network=listshop',
      statusParam: 'status',
      statuses: ['active', 'inactive'],
      sortable: ['id', 'name', 'updated', 'updated_at', 'created_at', 'status'],
      field: { updated: 'updated_at' },
      counts: '/advertisers/counts',
      async seed(ctx, n) {
        for (let i = 0; i < n; i++) await addShop(ctx, 'listshop', `s${i}`, { name: `shop ${'abc'[i % 3]}`, status: this.statuses[i % 2] as 'active' });
        await rewrite(ctx, 'advertisers', 'created_at', (i) => new Date(T[i % 3]), "WHERE module = 'listshop'");
        await rewrite(ctx, 'advertisers', 'updated_at', (i) => new Date(T[(i + 1) % 3]), "WHERE module = 'listshop'");
      },
    },
  ];

  for (const spec of specs) {
    describe(spec.name, () => {
      beforeAll(() => spec.seed(use().ctx, N));
      const q = (extra: string) => `${spec.path}?${[spec.base?.(), extra].filter(Boolean).join('&')}`;
      /** Every row of the list for `extra`, page by page (2 a page, so paging is crossed). */
      const all = async (extra: string, perPage = 2): Promise<{ rows: Json[]; total: number }> => {
        const rows: Json[] = [];
        let total = 0;
        for (let page = 1; ; page++) {
          const res = await get(q(`${extra}${extra ? '&' : ''}per_page=${perPage}&page=${page}`));
          expect(res.statusCode, `${q(extra)}: ${res.payload}`).toBe(200);
          total = Number(res.headers['x-wp-total']);
          rows.push(...(res.result as Json[]));
          if (page >= Number(res.headers['x-wp-totalpages'])) break;
        }
        return { rows, total };
      };
      const ids = (rows: Json[]) => rows.map((r) => r.id as number | string);
      const statusOf = (r: Json) => r[spec.statusParam ?? ''] as string;

      for (const orderby of spec.sortable) {
        it(`sorts by ${orderby} both ways, ties by id in the same direction, across pages`, async () => {
          const field = spec.field?.[orderby] ?? orderby;
          const key = (r: Json): number | string | null => {
            const v = r[field];
            if (v === null || v === undefined) return null;
            return typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v;
          };
          const cmp = (a: Json, b: Json) => {
            const [x, y] = [key(a), key(b)];
            if (x !== y) {
              if (x === null) return -1;
              if (y === null) return 1;
              return x < y ? -1 : 1;
            }
            return byId(a.id, b.id);
          };
          const { rows: asc, total } = await all(`orderby=${orderby}&order=asc`);
          expect(asc).toHaveLength(total);
          expect(new Set(ids(asc)).size).toBe(total);
          expect(ids(asc)).toEqual(ids([...asc].sort(cmp)));
          const { rows: desc } = await all(`orderby=${orderby}&order=desc`);
          expect(ids(desc)).toEqual(ids([...asc].sort((a, b) => cmp(b, a))));
        });
      }

      it.skipIf(!spec.statusParam)(
        `filters ${spec.statusParam} "is any of" in the comma, repeated and bracket forms, and "is none of" with ${spec.statusParam}_exclude`,
        async () => {
          const { rows: every } = await all('', 100);
          const [a, b] = spec.statuses;
          const expected = ids(every.filter((r) => statusOf(r) === a || statusOf(r) === b)).sort(byId);
          expect(expected.length).toBeGreaterThan(1);
          if (spec.statuses.length > 2) expect(expected.length).toBeLessThan(every.length);
          const p = spec.statusParam ?? '';
          for (const form of [`${p}=${a},${b}`, `${p}=${a}&${p}=${b}`, `${p}[]=${a}&${p}[]=${b}`, `${p}[1]=${b}&${p}[0]=${a}`, `${p}=${a}&${p}[]=${b}`]) {
            const { rows } = await all(form, 100);
            expect(ids(rows).sort(byId), form).toEqual(expected);
          }
          const { rows: one } = await all(`${p}=${a}`, 100);
          expect(one.every((r) => statusOf(r) === a) && one.length > 0).toBe(true);
          const { rows: none } = await all(`${p}_exclude=${a},${b}`, 100);
          expect(ids(none).sort(byId)).toEqual(ids(every.filter((r) => statusOf(r) !== a && statusOf(r) !== b)).sort(byId));
        },
      );

      it.skipIf(!spec.dateField)(`takes after and before as strictly after and strictly before ${spec.dateField}`, async () => {
        const { rows: every } = await all('', 100);
        const at = (r: Json) => Date.parse(r[spec.dateField ?? '']);
        const mid = Date.parse(T[1]);
        const { rows: after } = await all(`after=${T[1]}`, 100);
        expect(ids(after).sort(byId)).toEqual(ids(every.filter((r) => at(r) > mid)).sort(byId));
        const { rows: before } = await all(`before=${encodeURIComponent(T[1])}`, 100);
        expect(ids(before).sort(byId)).toEqual(ids(every.filter((r) => at(r) < mid)).sort(byId));
        expect(after.length + before.length).toBeLessThan(every.length);
        const { rows: between } = await all(`after=${T[0]}&before=${T[2]}`, 100);
        expect(ids(between).sort(byId)).toEqual(ids(every.filter((r) => at(r) === mid)).sort(byId));
      });

      if (spec.counts) {
        it('counts every status in one request, as the list totals them, under the other filters', async () => {
          for (const extra of ['', spec.dateField ? `after=${T[0]}` : 'search=shop%20a']) {
            const res = await get(`${spec.counts}?${[spec.base?.(), extra].filter(Boolean).join('&')}`);
            expect(res.statusCode, res.payload).toBe(200);
            const body = res.result as { total: number; statuses: Record<string, number> };
            expect(Object.keys(body.statuses).sort()).toEqual([...spec.statuses].sort());
            const list = await get(q(`${extra}${extra ? '&' : ''}per_page=1`));
            expect(body.total).toBe(Number(list.headers['x-wp-total']));
            for (const s of spec.statuses) {
              const one = await get(q(`${extra}${extra ? '&' : ''}${spec.statusParam}=${s}&per_page=1`));
              expect(body.statuses[s], s).toBe(Number(one.headers['x-wp-total']));
            }
          }
          const refused = await get(`${spec.counts}?${spec.statusParam}=${spec.statuses[0]}`);
          expect(refused.statusCode).toBe(400);
        });
      }

      it('refuses a bad orderby, order, status or date with 400 rest_invalid_param naming the parameter', async () => {
        const p = spec.statusParam;
        for (const [query, param] of [
          ['orderby=nope', 'orderby'],
          ['order=up', 'order'],
          ...(p
            ? [
                [`${p}=nope`, p],
                [`${p}=${spec.statuses[0]},nope`, p],
                [`${p}[]=nope`, p],
                [`${p}_exclude=nope`, `${p}_exclude`],
              ]
            : []),
          ...(spec.dateField
            ? [
                ['after=yesterday', 'after'],
                ['before=2026-13-45', 'before'],
              ]
            : []),
        ]) {
          const res = await get(q(query));
          expect(res.statusCode, query).toBe(400);
          const body = res.result as Json;
          expect(body.code, query).toBe('rest_invalid_param');
          expect(Object.keys(body.data.params), query).toEqual([param]);
        }
      });
    });
  }
});
