// `npm run build` (and `prepare`): bundles the compiled CLI (dist/src/cli/main.js) with esbuild
// into dist/src/cli-bundle/, which bin/cashtrack loads. A command then reads a few files instead
// of some 500 (the project's modules and the packages they import), which took a database command
// about a third of its start-up on Node 20 (bench/startup.js). Each command group stays its own
// chunk, loaded when the command line names it, as in dist/src/cli/main.js.
//
// The bundle sits at the same depth as dist/src/<dir>/, so the paths the code finds from its own
// URL (package.json, config/, dist/admin) are the same. Left out, and loaded from node_modules at
// run time: sqlite3 (a native module), and what the code already loads only when used (mysql2,
// sequelize and umzug, sharp, ink and react for `cashtrack logs` on a terminal).
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}dist/src/cli-bundle`;

rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: [`${root}dist/src/cli/main.js`],
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  external: ['sqlite3', 'mysql2', 'sequelize', 'umzug', 'sharp', 'ink', 'react', 'react-devtools-core', 'yoga-layout'],
  // The CommonJS packages in the bundle call require() for node's own modules.
  banner: { js: "import { createRequire as bundleRequire } from 'node:module'; const require = bundleRequire(import.meta.url);" },
  logLevel: 'warning',
});
