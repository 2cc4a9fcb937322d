// Advertisers to make pages from, inserted straight into their table (as the sync would leave them).
import type { Context } from '../../src/context.js';

export interface ShopFields {
  name?: string;
  domain?: string | null;
  site_url?: string | null;
  logo_url?: string | null;
  description?: string | null;
  status?: 'active' | 'inactive';
  commission?: { type: string; min: string | null; max: string | null; currency?: string | null } | null;
  tracking_template?: string | null;
}

/** Inserts an advertiser of `module` with id `advertiser`; returns its row id. */
export async function addShop(ctx: Context, module: string, advertiser: string, fields: ShopFields = {}): Promise<number> {
  const now = new Date();
  const c = fields.commission === undefined ? { type: 'percent', min: '4', max: '10', currency: null } : fields.commission;
  const { insertId } = await ctx.db.execute(
    `INSERT INTO advertisers (module, advertiser, name, domain, site_url, logo_url, description, tracking_template, commission_type, commission_min, commission_max, commission_currency, status, last_seen_sync, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)`,
    [
      module,
      advertiser,
      fields.name ?? `Shop ${advertiser}`,
      fields.domain === undefined ? `shop${advertiser}.example` : fields.domain,
      fields.site_url === undefined ? `https://shop${advertiser}.example/` : fields.site_url,
      fields.logo_url ?? null,
      fields.description ?? null,
      fields.tracking_template ?? null,
      c?.type ?? null,
      c?.min ?? null,
      c?.max ?? null,
      c?.currency ?? null,
      fields.status ?? 'active',
      now,
      now,
    ],
  );
  return insertId!;
}

/** Many advertisers in multi-row inserts (the bulk job's tests and the bench). */
export async function addShops(ctx: Context, module: string, count: number, name: (i: number) => string = (i) => `Shop ${i}`, offset = 0): Promise<void> {
  const now = new Date();
  for (let start = 0; start < count; start += 500) {
    const rows: unknown[][] = [];
    for (let i = start; i < Math.min(count, start + 500); i++) {
      const n = offset + i;
      rows.push([module, String(n), name(n), `shop${n}.example`, `https://shop${n}.example/`, 'percent', '2', '8', 'active', 1, now, now]);
    }
    await ctx.db.execute(
      `INSERT INTO advertisers (module, advertiser, name, domain, site_url, commission_type, commission_min, commission_max, status, last_seen_sync, created_at, updated_at) VALUES ${rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
      rows.flat(),
    );
  }
}
