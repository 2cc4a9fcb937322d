import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAdmitadModule } from '../../../src/networks/index.js';
import type { SyncState } from '../../../src/services/advertisers/index.js';
import { startAdmitadFixture, type AdmitadFixture } from '../../fixtures/networks/admitad.js';
import { FAST } from '../../fixtures/networks/runtime.js';
import { describeEachDialect } from '../../helpers/context.js';

describeEachDialect(
  'advertiser sync',
  (use) => {
    let full: AdmitadFixture;
    let fewer: AdmitadFixture;
    beforeAll(async () => {
      full = await startAdmitadFixture({ advertisers: 1300 });
      fewer = await startAdmitadFixture({ advertisers: 1100, clientId: full.clientId, clientSecret: full.clientSecret });
    });
    afterAll(async () => {
      await full?.close();
      await fewer?.close();
    });

    const pointAt = (f: AdmitadFixture) => use().ctx.networks.configure('admitad', { ...f.settings } as Record<string, string>, 'test');

    it('stores every advertiser across pages, keeps local edits on re-sync and deactivates those no longer listed', async () => {
      const { ctx } = use();
      // From an empty table and no error kept: other tests leave a killed sync's error, which a
      // successful sync keeps (last_error is the last one seen).
      await ctx.db.execute('DELETE FROM advertisers');
      await pointAt(full);
      await ctx.db.execute("UPDATE networks SET last_error = NULL, last_error_at = NULL WHERE id = 'admitad'");
      const first = await ctx.advertisers.sync('admitad');
      expect(first).toMatchObject({ pages: 3, seen: 1300, created: 1300, updated: 0, deactivated: 0, failed: 0 });
      expect((await ctx.advertisers.list({ network: 'admitad', page: 1, per_page: 1 })).total).toBe(1300);

      await ctx.db.execute(
        "UPDATE advertisers SET name_override = 'My Shop', page_id = 42, local_logo = 'logos/6001.png', description = 'Ours' WHERE module = 'admitad' AND advertiser = '6001'",
      );
      await ctx.advertisers.setCashback('admitad', '6001', 'percent_commission', '80', 'test');

      await pointAt(fewer);
      const second = await ctx.advertisers.sync('admitad');
      // The 1,100 still listed are listed as stored: unchanged, not rewritten.
      expect(second).toMatchObject({ seen: 1100, created: 0, updated: 0, unchanged: 1100, deactivated: 200, failed: 0 });
      const kept = await ctx.advertisers.get('admitad', '6001');
      expect(kept).toMatchObject({
        name: 'My Shop',
        name_override: 'My Shop',
        page_id: 42,
        local_logo: 'logos/6001.png',
        description: 'Ours',
        status: 'active',
      });
      expect(kept.cashback_rule).toMatchObject({ type: 'percent_commission', value: '80', source: 'advertiser' });
      expect((await ctx.advertisers.get('admitad', String(6000 + 1200))).status).toBe('inactive');
      expect((await ctx.advertisers.list({ network: 'admitad', status: 'inactive', page: 1, per_page: 1 })).total).toBe(200);

      const network = await ctx.networks.get('admitad');
      expect(network.counts.advertisers).toBe(1100);
      expect(network.last_sync_result).toMatchObject({ advertisers: { created: 0, updated: 0, unchanged: 1100, deactivated: 200, failed: 0 } });
      expect(network.last_error).toBeNull();
    });

    it('resumes a sync killed half-way from its last saved page without storing earlier pages again', async () => {
      const { ctx } = use();
      await ctx.db.execute('DELETE FROM advertisers');
      await pointAt(full);
      let saved: SyncState | null = null;
      const killed = await ctx.advertisers
        .sync('admitad', {
          onPage: async (s) => {
            saved = s;
            if (s.counts.pages === 2) throw new Error('process killed');
          },
        })
        .catch((e: Error) => e);
      expect(killed).toBeInstanceOf(Error);
      expect(saved).toMatchObject({ next: '1000', counts: { pages: 2, created: 1000 } });
      expect((await ctx.networks.get('admitad')).last_error).toContain('process killed');

      const before = full.requests.length;
      let pagesStored = 0;
      const resumed = await ctx.advertisers.sync('admitad', { resume: saved, onPage: async () => void pagesStored++ });
      expect(pagesStored).toBe(1);
      expect(resumed).toMatchObject({ pages: 3, seen: 1300, created: 1300, updated: 0, deactivated: 0 });
      expect((await ctx.advertisers.list({ page: 1, per_page: 1 })).total).toBe(1300);
      // Only the page after the checkpoint was asked for.
      expect(
        full.requests
          .slice(before)
          .filter((r) => r.path.startsWith('/advcampaigns/'))
          .map((r) => r.query.get('offset')),
      ).toEqual(['1000']);
    });

    it('resumes from a state without a list position (saved by an earlier version) by walking again and skipping stored pages', async () => {
      const { ctx } = use();
      await ctx.db.execute('DELETE FROM advertisers');
      await pointAt(full);
      let saved: SyncState | null = null;
      await ctx.advertisers
        .sync('admitad', {
          onPage: async (s) => {
            saved = s;
            if (s.counts.pages === 1) throw new Error('process killed');
          },
        })
        .catch(() => {});
      const { next, ...old } = saved!;
      expect(next).toBe('500');
      const resumed = await ctx.advertisers.sync('admitad', { resume: old });
      expect(resumed).toMatchObject({ pages: 3, seen: 1300, created: 1300, updated: 0, deactivated: 0 });
    });

    it('finishes a sync whose process stopped after storing the last page: nothing is fetched again', async () => {
      const { ctx } = use();
      await ctx.db.execute('DELETE FROM advertisers');
      await pointAt(full);
      let saved: SyncState | null = null;
      await ctx.advertisers
        .sync('admitad', {
          onPage: async (s) => {
            saved = s;
            if (s.next === null) throw new Error('process killed');
          },
        })
        .catch(() => {});
      expect(saved).toMatchObject({ next: null, counts: { pages: 3 } });
      await ctx.db.execute(
        "INSERT INTO advertisers (module, advertiser, name, categories, countries, status, last_seen_sync, created_at, updated_at) VALUES ('admitad', 'gone', 'Gone', '[]', '[]', 'active', 0, ?, ?)",
        [new Date(), new Date()],
      );
      const before = full.requests.length;
      const resumed = await ctx.advertisers.sync('admitad', { resume: saved });
      expect(resumed).toMatchObject({ pages: 3, seen: 1300, created: 1300, deactivated: 1 });
      expect(full.requests.length).toBe(before);
    });

    it('lists by name prefix, status, logo and page filters, and looks up at most 20', async () => {
      const { ctx } = use();
      // Advertisers of its own: a fresh sync, without the local edits other tests make.
      await ctx.db.execute('DELETE FROM advertisers');
      await pointAt(full);
      await ctx.advertisers.sync('admitad');
      const some = (await ctx.advertisers.list({ network: 'admitad', page: 1, per_page: 5, orderby: 'name' })).items;
      expect(some).toHaveLength(5);
      const prefix = some[0].name.slice(0, 4);
      const found = await ctx.advertisers.list({ search: prefix, page: 1, per_page: 100 });
      expect(found.items.every((a) => a.name.startsWith(prefix))).toBe(true);
      expect((await ctx.advertisers.list({ has_page: true, page: 1, per_page: 10 })).total).toBe(0);
      const looked = await ctx.advertisers.lookup(prefix);
      expect(looked.items.length).toBeGreaterThan(0);
      expect(looked.items.length).toBeLessThanOrEqual(20);
      expect(looked.total).toBeGreaterThanOrEqual(looked.items.length);
      expect(looked.items[0].id).toMatch(/^admitad\/\d+$/);
    });

    it('answers 404 svc_advertiser_not_found for an unknown advertiser', async () => {
      await expect(use().ctx.advertisers.get('admitad', 'nope')).rejects.toMatchObject({ code: 'svc_advertiser_not_found', status: 404 });
      await expect(use().ctx.advertisers.setCashback('admitad', 'nope', 'flat', '1.00', 'test')).rejects.toMatchObject({ code: 'svc_advertiser_not_found' });
    });
  },
  {},
  { networkModules: [createAdmitadModule(FAST)] },
);
