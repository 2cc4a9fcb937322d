// The bracket forms of an array in a query string, as the host platform (PHP) reads them and as
// WordPress clients write them: `status[]=a&status[]=b` and `status[0]=a&status[1]=b` (what
// @wordpress/url's addQueryArgs builds from an array) are `status: ['a', 'b']`. hapi keeps such
// keys as written, so they are folded onto the plain name here, before validation.

const BRACKET = /^([A-Za-z_][A-Za-z0-9_]*)\[(\d{0,4})\]$/;

/** Folds `name[]` and `name[N]` keys of a parsed query onto `name` (an array, in index order); other keys stay. */
export function foldBracketArrays(query: Record<string, unknown>): void {
  const folded = new Map<string, { index: number; order: number; value: unknown }[]>();
  let order = 0;
  for (const key of Object.keys(query)) {
    const m = BRACKET.exec(key);
    if (!m) continue;
    const raw = query[key];
    delete query[key];
    const items = folded.get(m[1]) ?? [];
    for (const value of Array.isArray(raw) ? raw : [raw]) items.push({ index: m[2] === '' ? Number.MAX_SAFE_INTEGER : Number(m[2]), order: order++, value });
    folded.set(m[1], items);
  }
  for (const [name, items] of folded) {
    items.sort((a, b) => a.index - b.index || a.order - b.order);
    const plain = query[name];
    const before = plain === undefined ? [] : Array.isArray(plain) ? plain : [plain];
    query[name] = [...before, ...items.map((i) => i.value)];
  }
}
