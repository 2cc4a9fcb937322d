// Summarises a V8 .cpuprofile: where the time went, by function (self and total) and by module.
// Used by `bench/http.js --profile DIR`; also runs alone: `node bench/cpuprofile-top.js FILE [N]`.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const IDLE = new Set(['(idle)', '(program)', '(root)']);

function where(frame) {
  let url = frame.url || '';
  if (url.startsWith('file://')) url = relative(root, fileURLToPath(url));
  return url ? `${url}:${frame.lineNumber + 1}` : '';
}

/** The module a frame belongs to: an npm package, node's own code, or a project file. */
function moduleOf(frame) {
  const url = frame.url || '';
  if (!url) return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  if (url.startsWith('node:')) return 'node:internal';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const parts = url.slice(nm + 'node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  return url.startsWith('file://') ? relative(root, fileURLToPath(url)) : url;
}

/** Returns printable lines: the top `n` functions by self time and by total time, and modules by self time. */
export function summarize(profile, n = 15) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

  const self = new Map();
  const total = new Map();
  const modules = new Map();
  let busy = 0;
  let all = 0;
  const key = (f) => `${f.functionName || '(anonymous)'}  ${where(f)}`;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i + 1] ?? 0;
    const node = byId.get(profile.samples[i]);
    all += dt;
    if (!node || IDLE.has(node.callFrame.functionName)) continue;
    busy += dt;
    const k = key(node.callFrame);
    self.set(k, (self.get(k) ?? 0) + dt);
    const m = moduleOf(node.callFrame);
    modules.set(m, (modules.get(m) ?? 0) + dt);
    const seen = new Set();
    for (let id = node.id; id !== undefined; id = parent.get(id)) {
      const f = byId.get(id).callFrame;
      if (IDLE.has(f.functionName)) continue;
      const fk = key(f);
      if (seen.has(fk)) continue;
      seen.add(fk);
      total.set(fk, (total.get(fk) ?? 0) + dt);
    }
  }
  const pct = (v) => `${((100 * v) / (busy || 1)).toFixed(1).padStart(5)}%`;
  const top = (map, count) => [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, count);
  const lines = [`busy ${(busy / 1e6).toFixed(2)} s of ${(all / 1e6).toFixed(2)} s sampled (percentages are of busy time)`, '', 'self time by module:'];
  for (const [m, v] of top(modules, n)) lines.push(`  ${pct(v)}  ${m}`);
  lines.push('', 'self time by function:');
  for (const [k, v] of top(self, n)) lines.push(`  ${pct(v)}  ${k}`);
  lines.push('', 'total time by function, project code (dist/):');
  for (const [k, v] of top(new Map([...total].filter(([k]) => k.includes(' dist/'))), n)) lines.push(`  ${pct(v)}  ${k}`);
  return lines;
}

/** Prints, for each `[label, file]`, the summary of that profile under a heading (the benchmarks' `--profile`). */
export function printProfiles(files, n = 15) {
  for (const [label, file] of files) {
    console.log(`\nCPU profile of ${label} (${file}):`);
    console.log(
      summarize(JSON.parse(readFileSync(file, 'utf8')), n)
        .map((l) => `  ${l}`)
        .join('\n'),
    );
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [file, n] = process.argv.slice(2);
  if (!file) {
    console.error('usage: node bench/cpuprofile-top.js FILE.cpuprofile [N]');
    process.exit(2);
  }
  console.log(summarize(JSON.parse(readFileSync(file, 'utf8')), Number(n) || 15).join('\n'));
}
