// A shop's own icons, from the `<link rel="icon">`, `"shortcut icon"` and `"apple-touch-icon"`
// tags of its home page, best first. Parsed with a real HTML parser (htmlparser2: attributes in
// any order or quoting, entities, comments and scripts are handled as a browser would), and
// resolved against `<base href>` or the page's final URL. Only http(s) icons are kept; SVG icons
// are skipped (refused anyway), as are `data:` URLs.
import { Parser } from 'htmlparser2';

export interface IconCandidate {
  url: string;
  rel: 'apple-touch-icon' | 'icon';
  /** The largest side the page declares (`sizes`), or a guess from `rel`. */
  size: number;
}

/** At most this many `<link>` icons are read from one page (a page may list hundreds). */
const MAX_LINKS = 50;

function declaredSize(sizes: string | undefined): number | null {
  if (!sizes) return null;
  let best: number | null = null;
  for (const token of sizes.toLowerCase().split(/\s+/)) {
    const m = /^(\d{1,5})x(\d{1,5})$/.exec(token);
    if (m) best = Math.max(best ?? 0, Math.min(Number(m[1]), Number(m[2])));
  }
  return best;
}

function resolveHttp(href: string, base: string): string | null {
  try {
    const url = new URL(href.trim(), base);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.toString() : null;
  } catch {
    return null;
  }
}

/**
 * The icons a page declares, best first: the largest declared size (an apple-touch-icon without
 * `sizes` counts as 180, a plain icon as 16), then apple-touch-icons, then PNG before ICO, then
 * document order. Duplicates are dropped.
 */
export function findIcons(html: string, pageUrl: string): IconCandidate[] {
  let base = pageUrl;
  let baseSeen = false;
  const found: (IconCandidate & { order: number; png: boolean })[] = [];
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (name === 'base' && !baseSeen && attrs.href) {
          baseSeen = true;
          base = resolveHttp(attrs.href, pageUrl) ?? pageUrl;
          return;
        }
        if (name !== 'link' || found.length >= MAX_LINKS || !attrs.href) return;
        const rels = (attrs.rel ?? '').toLowerCase().split(/\s+/);
        const touch = rels.includes('apple-touch-icon') || rels.includes('apple-touch-icon-precomposed');
        if (!touch && !rels.includes('icon')) return;
        const type = (attrs.type ?? '').toLowerCase();
        if (type.includes('svg') || /\.svgz?(\?|#|$)/i.test(attrs.href) || (attrs.sizes ?? '').toLowerCase().trim() === 'any') return;
        const url = resolveHttp(attrs.href, base);
        if (!url) return;
        const size = declaredSize(attrs.sizes) ?? (touch ? 180 : 16);
        found.push({ url, rel: touch ? 'apple-touch-icon' : 'icon', size, order: found.length, png: type.includes('png') || /\.png(\?|#|$)/i.test(url) });
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  found.sort(
    (a, b) =>
      b.size - a.size || Number(b.rel === 'apple-touch-icon') - Number(a.rel === 'apple-touch-icon') || Number(b.png) - Number(a.png) || a.order - b.order,
  );
  const seen = new Set<string>();
  const icons: IconCandidate[] = [];
  for (const f of found) {
    if (seen.has(f.url)) continue;
    seen.add(f.url);
    icons.push({ url: f.url, rel: f.rel, size: f.size });
  }
  return icons;
}
