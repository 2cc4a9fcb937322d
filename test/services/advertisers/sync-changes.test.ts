// What an advertiser sync counts and touches, from a custom network's JSON feed served on
// 127.0.0.1: a feed synced again unchanged rewrites nothing (every advertiser `unchanged`, its
// updated_at kept), a changed field is an update of that advertiser alone, and a record whose id
// holds a control character is refused with its reason while the sync goes on.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { toIso } from '../../../src/db/values.js';
import { describeEachDialect } from '../../helpers/context.js';

type Program = Record<string, unknown>;
let programs: Program[] = [];
let server: http.Server;
let base = '';

beforeAll(async () => {
  server = http.createServer((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data: programs })));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
});

const program = (i: number): Program => ({
  id: `P${i}`,
  name: `Shop ${i}`,
  url: `https://shop${i}.example.test/`,
  pay: { min: 4, max: 6 },
  cats: ['Tea', 'Home'],
  geo: 'DE,AT',
  days: 30,
  state: 'joined',
  extra: { since: '2020-01-01' },
});

const PAST = new Date('2020-01-01T00:00:00.000Z');

describeEachDialect('advertiser sync counts and touches only real changes', (use) => {
  beforeAll(async () => {
    await use().ctx.networks.saveCustom(
      'feednet',
      {
        name: 'Feed Net',
        currency: 'EUR',
        statuses: { ok: 'approved' },
        feeds: {
          advertisers: {
            url: `${base}/programs.json`,
            format: 'json',
            items: 'data',
            fields: {
              id: 'id',
              name: 'name',
              site_url: 'url',
              commission_min: 'pay.min',
              commission_max: 'pay.max',
              categories: 'cats',
              countries: 'geo',
              validation_days: 'days',
              status: 'state',
            },
            active_values: ['joined'],
          },
        },
      },
      'test',
    );
  });

  const updatedAt = async () => {
    const rows = await use().ctx.db.select<{ advertiser: unknown; updated_at: unknown }>(
      "SELECT advertiser, updated_at FROM advertisers WHERE module = 'feednet' ORDER BY advertiser",
    );
    return Object.fromEntries(rows.map((r) => [String(r.advertiser), toIso(r.updated_at)]));
  };

  it('reports every advertiser of an unchanged feed unchanged and keeps its updated_at; updates only what changed', async () => {
    const { ctx } = use();
    programs = Array.from({ length: 1200 }, (_, i) => program(i));
    expect(await ctx.advertisers.sync('feednet')).toMatchObject({ pages: 3, seen: 1200, created: 1200, updated: 0, unchanged: 0, deactivated: 0, failed: 0 });
    // A time no sync writes: any rewrite shows.
    await ctx.db.execute("UPDATE advertisers SET updated_at = ? WHERE module = 'feednet'", [PAST]);

    const again = await ctx.advertisers.sync('feednet');
    expect(again).toMatchObject({ pages: 3, seen: 1200, created: 0, updated: 0, unchanged: 1200, deactivated: 0, failed: 0 });
    expect(new Set(Object.values(await updatedAt()))).toEqual(new Set([PAST.toISOString()]));
    expect((await ctx.networks.get('feednet')).last_sync_result).toMatchObject({ advertisers: { updated: 0, unchanged: 1200 } });

    // One name, one field of the network's record no column shows, one status; one no longer listed.
    programs[3] = { ...programs[3], name: 'Shop Three' };
    programs[700] = { ...programs[700], extra: { since: '2021-06-01' } };
    programs[1100] = { ...programs[1100], state: 'paused' };
    programs.splice(5, 1);
    const third = await ctx.advertisers.sync('feednet');
    expect(third).toMatchObject({ seen: 1199, created: 0, updated: 3, unchanged: 1196, deactivated: 1, failed: 0 });
    const touched = Object.entries(await updatedAt())
      .filter(([, at]) => at !== PAST.toISOString())
      .map(([id]) => id)
      .sort();
    expect(touched).toEqual(['P1100', 'P3', 'P5', 'P700']);
    expect(await ctx.advertisers.get('feednet', 'P3')).toMatchObject({ name: 'Shop Three', status: 'active' });
    expect(await ctx.advertisers.get('feednet', 'P1100')).toMatchObject({ status: 'inactive' });
    expect(await ctx.advertisers.get('feednet', 'P5')).toMatchObject({ status: 'inactive' });

    // Unchanged ones were marked seen: a sync of the same list deactivates nothing more, and one
    // listed again after it was dropped is an update (active again).
    await ctx.db.execute("UPDATE advertisers SET updated_at = ? WHERE module = 'feednet'", [PAST]);
    programs.splice(5, 0, program(5));
    expect(await ctx.advertisers.sync('feednet')).toMatchObject({ seen: 1200, created: 0, updated: 1, unchanged: 1199, deactivated: 0 });
    expect(await ctx.advertisers.get('feednet', 'P5')).toMatchObject({ status: 'active' });
    expect(Object.entries(await updatedAt()).filter(([, at]) => at !== PAST.toISOString())).toEqual([['P5', expect.any(String)]]);
  });

  it('refuses advertisers whose id holds a control character, with the reason logged, and stores the rest', async () => {
    const { ctx } = use();
    await ctx.db.execute("DELETE FROM advertisers WHERE module = 'feednet'");
    const hostile = ['Q\u00071', 'Q\u001b]52;c;aGk=\u00072', 'Q\u009b31m3', 'Q\t4', 'Q\n5', 'Q\u007f6', '\u001b]0;title\u0007'];
    programs = [program(1), ...hostile.map((id, i) => ({ ...program(100 + i), id })), program(2), { ...program(3), id: 'Q ok:3' }];
    const counts = await ctx.advertisers.sync('feednet');
    expect(counts).toMatchObject({ seen: 3, created: 3, failed: hostile.length });
    const stored = await ctx.db.select<{ advertiser: unknown }>("SELECT advertiser FROM advertisers WHERE module = 'feednet' ORDER BY advertiser");
    expect(stored.map((r) => String(r.advertiser))).toEqual(['P1', 'P2', 'Q ok:3']);
    await ctx.logger.flush();
    const logged = await ctx.logger.list({ source: 'advertisers', search: 'Advertisers refused', page: 1, per_page: 10 });
    expect(logged.items[0]).toMatchObject({ level: 'warning', context: { network: 'feednet', refused: { id_control_characters: hostile.length } } });
  });
});
