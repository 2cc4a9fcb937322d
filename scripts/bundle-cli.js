// `npm run build` (and `prepare`): bundles the compiled CLI (dist/src/cli/main.js) with esbuild
// into one CommonJS file, dist/src/cli-bundle/main.cjs, then makes V8's code cache of it by
// running a database command (`users list` on a scratch SQLite file); bin/cashtrack loads both.
// Node 20 caches compiled code for a CommonJS script (vm.Script's cachedData) but not for ES
// modules, and parsing and compiling the CLI was most of a command's start-up (bench/startup.js:
// a database command takes about 0.8 s as separate modules, 0.55 s as a bundle compiled as it
// starts, 0.35 s from the cache).
// A command group is still evaluated only when the command line names it (esbuild wraps each
// lazily imported module in a function run on first import).
//
// The bundle sits at the same depth as dist/src/<dir>/, so the paths the code finds from its own
// URL (package.json, config/, dist/admin) are the same; `import.meta.url` is the bundle's URL. Left
// out, and loaded from node_modules at run time: sqlite3 (a native module), and what the code
// already loads only when used (mysql2, sequelize and umzug, sharp). What only import() loads (the
// `logs` view with Ink, extensions) goes through src/import-module.ts, whose body the bundle swaps
// for the import() bin/cashtrack hands it: Node 20 loses import() in a script compiled from a code
// cache. The build fails if an import() is left in the bundle.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}dist/src/cli-bundle`;

rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: [`${root}dist/src/cli/main.js`],
  outfile: `${outdir}/main.cjs`,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20.19',
  external: ['sqlite3', 'mysql2', 'sequelize', 'umzug', 'sharp', 'ink', 'react', 'react-devtools-core', 'yoga-layout'],
  define: { 'import.meta.url': 'bundleUrl' },
  // import() of node's modules and CommonJS packages becomes require(): see below for ES modules.
  supported: { 'dynamic-import': false },
  // A third less to read and hash, names kept (a stack trace still names its functions).
  minifyWhitespace: true,
  minifySyntax: true,
  // Strict mode first, as ES modules are (esbuild's own "use strict" comes after the banner, too late to count).
  banner: { js: `"use strict";const bundleUrl = require('node:url').pathToFileURL(__filename).href;` },
  plugins: [
    {
      name: 'import-module',
      setup(b) {
        // `bundleImport`: the wrapper's parameter bin/cashtrack fills with its own import().
        b.onLoad({ filter: /[\\/]dist[\\/]src[\\/]import-module\.js$/ }, () => ({
          contents: 'export function importModule(specifier) { return bundleImport(String(specifier)); }',
          loader: 'js',
        }));
      },
    },
  ],
  logLevel: 'warning',
});
// Lines of code (not of comments, where packages' JSDoc names types as import('./x.js')).
const left = readFileSync(`${outdir}/main.cjs`, 'utf8')
  .split('\n')
  .filter((line) => !/^\s*(\*|\/\/)/.test(line) && /(^|[^\w$.])import\(/.test(line));
if (left.length)
  throw new Error(
    `import() left in the CLI bundle (use src/import-module.ts): ${left
      .slice(0, 5)
      .map((l) => l.trim().slice(0, 100))
      .join(' | ')}`,
  );

// The code cache: a command run on a scratch database by the binary asked to write it, the second
// time (the first migrates the new file: the cache then holds what a command compiles on a current
// schema, the usual case, and is a twentieth smaller).
const scratch = mkdtempSync(join(tmpdir(), 'cashtrack-cli-cache-'));
try {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('CASHTRACK_')) env[k] = v;
  const secret = randomBytes(32).toString('hex');
  for (const mode of ['off', 'write']) {
    const run = spawnSync(process.execPath, [`${root}bin/cashtrack`, 'users', 'list', '--json'], {
      cwd: root,
      env: {
        ...env,
        CASHTRACK_ENV: 'development',
        CASHTRACK_DATABASE_URL: `sqlite:${join(scratch, 'cache.sqlite')}`,
        CASHTRACK_DATA_DIR: scratch,
        CASHTRACK_SECRET: secret,
        CASHTRACK_LOG_STDOUT: 'false',
        CASHTRACK_CLI_CACHE: mode,
      },
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (run.status !== 0) {
      throw new Error(`the bundled CLI failed making its code cache (${run.error?.message ?? `exit ${run.status}`}): ${run.stderr.slice(0, 2000)}`);
    }
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
