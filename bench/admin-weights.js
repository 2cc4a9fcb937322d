// `npm run bench:admin-weights`: what each dependency of the admin app weighs, gzipped (issue 18).
//
// Builds admin/ with sourcemaps into a temporary directory (never into dist/admin), then attributes
// every byte of every JavaScript chunk to the source it came from through the chunk's sourcemap
// (a mapping segment runs to the next segment of the same line), grouped by npm package (the path
// after the last `node_modules/`), the app's own code (`admin/src`), and bytes no mapping names
// (the bundler's glue). Gzipped weights: each chunk is gzipped whole with zlib as a server sends it,
// and its gzipped size is shared among the packages in proportion to their raw bytes in it.
// Prints one table per package (total, and in the sign-in + overview chunks) and one per chunk.
//
//   node bench/admin-weights.js [--top N]    (N packages per chunk in the chunk table; default 4)
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SourceMapConsumer } from 'source-map-js';
import { build } from 'vite';
import { initialChunks } from './lib/admin-bundle.js';

const CONFIG = fileURLToPath(new URL('../admin/vite.config.ts', import.meta.url));
const APP = '(admin/src: the app)';
const GLUE = '(unmapped: bundler glue)';

function parseOptions(argv) {
  const opts = { top: 4 };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    if (flag === '--top') opts.top = Number(inline ?? argv[++i]);
    else throw new Error(`unknown option ${argv[i]} (use --top N)`);
  }
  if (!Number.isInteger(opts.top) || opts.top < 1) throw new Error('--top must be a positive integer');
  return opts;
}

/** The npm package a sourcemap source belongs to, or the app. */
export function packageOf(source) {
  const i = source.lastIndexOf('node_modules/');
  if (i < 0) return source.includes('admin/src/') || !source.includes('/') ? APP : source.replace(/^(\.\.\/)+/, '');
  const parts = source.slice(i + 'node_modules/'.length).split('/');
  return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

/** Raw characters of `code` per package, through its sourcemap. */
export function attribute(code, map) {
  const lines = code.split('\n');
  const perLine = lines.map(() => []);
  const consumer = new SourceMapConsumer(map);
  consumer.eachMapping(
    (m) => {
      perLine[m.generatedLine - 1]?.push({ column: m.generatedColumn, pkg: m.source ? packageOf(m.source) : GLUE });
    },
    null,
    SourceMapConsumer.GENERATED_ORDER,
  );
  const bytes = new Map();
  const add = (pkg, n) => {
    if (n > 0) bytes.set(pkg, (bytes.get(pkg) ?? 0) + n);
  };
  lines.forEach((line, i) => {
    const segs = perLine[i].sort((a, b) => a.column - b.column);
    add(GLUE, (segs[0]?.column ?? line.length) + 1); // before the first segment, and the newline
    for (const [j, s] of segs.entries()) add(s.pkg, (segs[j + 1]?.column ?? line.length) - s.column);
  });
  return bytes;
}

const kb = (n) => (n / 1024).toFixed(1).padStart(8);

async function main() {
  const opts = parseOptions(process.argv.slice(2));
  const out = mkdtempSync(join(tmpdir(), 'cashtrack-admin-weights-'));
  try {
    await build({ configFile: CONFIG, logLevel: 'error', build: { outDir: out, emptyOutDir: true, sourcemap: true } });
    const assets = join(out, 'assets');
    const initial = new Set(initialChunks(out).files.map((f) => f.file));
    const chunks = [];
    const packages = new Map();
    const { gzipSync } = await import('node:zlib');
    for (const file of readdirSync(assets).filter((f) => f.endsWith('.js'))) {
      const code = readFileSync(join(assets, file), 'utf8');
      const raw = Buffer.byteLength(code);
      const gz = gzipSync(code).length;
      const bytes = attribute(code, JSON.parse(readFileSync(join(assets, `${file}.map`), 'utf8')));
      const total = [...bytes.values()].reduce((a, b) => a + b, 0);
      const shares = [...bytes.entries()].map(([pkg, n]) => ({ pkg, raw: (n / total) * raw, gz: (n / total) * gz })).sort((a, b) => b.gz - a.gz);
      chunks.push({ file, raw, gz, initial: initial.has(file), shares });
      for (const s of shares) {
        const p = packages.get(s.pkg) ?? { pkg: s.pkg, raw: 0, gz: 0, initialGz: 0, chunks: 0 };
        p.raw += s.raw;
        p.gz += s.gz;
        if (initial.has(file)) p.initialGz += s.gz;
        p.chunks++;
        packages.set(s.pkg, p);
      }
    }
    const all = [...packages.values()].sort((a, b) => b.gz - a.gz);
    const sum = (xs, k) => xs.reduce((a, x) => a + x[k], 0);
    console.log('cashtrack bench:admin-weights: admin/ built with sourcemaps into a temporary directory; KB = 1024 bytes\n');
    console.log('== per package (gzipped: each chunk gzipped whole, shared by raw bytes) ==\n');
    console.log(`${'package'.padEnd(34)} ${'raw KB'.padStart(8)} ${'gzip KB'.padStart(8)} ${'sign-in+overview gzip KB'.padStart(25)} chunks`);
    for (const p of all) console.log(`${p.pkg.padEnd(34)} ${kb(p.raw)} ${kb(p.gz)} ${kb(p.initialGz).padStart(25)} ${String(p.chunks).padStart(6)}`);
    console.log(`${'total'.padEnd(34)} ${kb(sum(all, 'raw'))} ${kb(sum(all, 'gz'))} ${kb(sum(all, 'initialGz')).padStart(25)}`);
    console.log('\n== per chunk (* = loaded by sign-in + overview) ==\n');
    console.log(`${'chunk'.padEnd(34)} ${'raw KB'.padStart(8)} ${'gzip KB'.padStart(8)}  biggest packages (gzip KB)`);
    for (const c of chunks.sort((a, b) => b.gz - a.gz)) {
      const top = c.shares
        .slice(0, opts.top)
        .map((s) => `${s.pkg} ${(s.gz / 1024).toFixed(1)}`)
        .join(', ');
      console.log(`${`${c.initial ? '* ' : '  '}${c.file}`.padEnd(34)} ${kb(c.raw)} ${kb(c.gz)}  ${top}`);
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err.stack ?? err.message);
  process.exit(1);
});
