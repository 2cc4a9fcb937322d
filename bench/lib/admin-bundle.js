// The admin bundle as the budgets read it: which chunks sign-in + the overview load (the entry
// chunk named by index.html, the overview chunk it names, and their static imports), each gzipped
// with zlib as a server would send it. Shared by bench/admin.js and bench/admin-weights.js.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

export const gzipKb = (bytes) => gzipSync(bytes).length / 1024;

/** The chunks a chunk imports statically (`import ... from "./x.js"`, `import "./x.js"`), not `import("./x.js")`. */
export function staticImports(source) {
  const out = new Set();
  for (const m of source.matchAll(/(?:^|[;\n}])\s*import\s*(?:[^"'();]*?\sfrom\s*)?["']\.\/([^"']+\.js)["']/g)) out.add(m[1]);
  for (const m of source.matchAll(/\bfrom\s*["']\.\/([^"']+\.js)["']/g)) out.add(m[1]);
  return out;
}

/** The entry chunk + the overview chunk and their static imports in `dist` (a built dist/admin), each gzipped. */
export function initialChunks(dist) {
  if (!existsSync(join(dist, 'index.html'))) throw new Error(`${dist} has no index.html: run \`npm run build\` first`);
  const html = readFileSync(join(dist, 'index.html'), 'utf8');
  const entry = html.match(/<script[^>]+src="\/admin\/assets\/([^"]+\.js)"/)?.[1];
  if (!entry) throw new Error(`no entry script in ${dist}/index.html`);
  const entrySource = readFileSync(join(dist, 'assets', entry), 'utf8');
  const overview = entrySource.match(/["']\.\/(overview-[\w-]+\.js)["']/)?.[1];
  if (!overview) throw new Error('the entry chunk names no overview chunk');
  const seen = new Map();
  const visit = (file) => {
    if (seen.has(file)) return;
    const bytes = readFileSync(join(dist, 'assets', file));
    seen.set(file, gzipKb(bytes));
    for (const dep of staticImports(bytes.toString('utf8'))) visit(dep);
  };
  visit(entry);
  visit(overview);
  return { files: [...seen.entries()].map(([file, kb]) => ({ file, kb })), kb: [...seen.values()].reduce((a, b) => a + b, 0) };
}
