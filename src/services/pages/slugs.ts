// Page slugs as the host platform makes them: the shop's name transliterated ("Магазин Обуви" →
// magazin-obuvi), the shop's domain when the name gives nothing (a CJK name), then `shop-<id>`;
// a slug taken already gets `-2`, `-3`, ... (the first number free, from 2, as WordPress counts).
import { createRequire } from 'node:module';
import type Slugify from '@sindresorhus/slugify';
import { Database, type Transaction } from '../../db/database.js';

const require = createRequire(import.meta.url);
/** Loaded on first use: it builds its transliteration tables as it loads (some 10 ms of every command's start-up otherwise). */
const slugify: typeof Slugify = (text, options) => (require('@sindresorhus/slugify') as { default: typeof Slugify }).default(text, options);

/** The longest slug stored; a base is cut shorter so that a `-NNN` suffix still fits. */
export const MAX_SLUG = 200;
const MAX_BASE = 190;

/** The slug of a text, or '' when it has no letters or digits a URL can carry. */
export function slugOf(text: string): string {
  const slug = slugify(text, { decamelize: false });
  if (slug.length <= MAX_BASE) return slug;
  // Cut at a word boundary where there is one close enough, never leaving a trailing hyphen.
  const cut = slug.slice(0, MAX_BASE);
  const hyphen = cut.lastIndexOf('-');
  return (hyphen > MAX_BASE - 40 ? cut.slice(0, hyphen) : cut).replace(/-+$/, '');
}

/** The slug a new page of this shop starts from (before it is made unique). */
export function slugBase(shop: { name: string; domain: string | null; id: number }): string {
  return slugOf(shop.name) || (shop.domain ? slugOf(shop.domain) : '') || `shop-${shop.id}`;
}

/**
 * Unique slugs for `bases`, in order: unique among themselves and against the stored pages (but
 * `exceptPage`, a page keeping its own slug). Reads only; the unique index decides races, and the
 * caller allocates again after losing one.
 */
export async function uniqueSlugs(db: Database, bases: string[], options: { exceptPage?: number; transaction?: Transaction } = {}): Promise<string[]> {
  if (bases.length === 0) return [];
  const except = options.exceptPage ?? 0;
  const distinct = [...new Set(bases)];
  const taken = new Set<string>();
  for (let i = 0; i < distinct.length; i += 500) {
    const chunk = distinct.slice(i, i + 500);
    const rows = await db.select<{ slug: unknown }>(
      `SELECT slug FROM pages WHERE slug IN (${chunk.map(() => '?').join(', ')}) AND id <> ?`,
      [...chunk, except],
      options.transaction,
    );
    for (const r of rows) taken.add(String(r.slug).toLowerCase());
  }
  const used = new Set<string>();
  const suffixed = new Map<string, Set<string>>();
  const out: string[] = [];
  for (const base of bases) {
    if (!taken.has(base) && !used.has(base)) {
      used.add(base);
      out.push(base);
      continue;
    }
    // Only bases taken already pay for a second query: the suffixes in use for this base.
    let existing = suffixed.get(base);
    if (!existing) {
      const rows = await db.select<{ slug: unknown }>(
        "SELECT slug FROM pages WHERE slug LIKE ? ESCAPE '!' AND id <> ?",
        [Database.likePrefix(`${base}-`), except],
        options.transaction,
      );
      existing = new Set(rows.map((r) => String(r.slug).toLowerCase()));
      suffixed.set(base, existing);
    }
    let n = 2;
    while (existing.has(`${base}-${n}`) || used.has(`${base}-${n}`)) n++;
    const slug = `${base}-${n}`;
    used.add(slug);
    out.push(slug);
  }
  return out;
}
