// The CLI's cold start as whole processes: `node -e ""`, `cashtrack --version` and a database
// command (`cashtrack users list --json` on SQLite), ten rounds, each round running the series in a
// rotating order so that a burst of load from a neighbour falls on every series alike. A ratio is
// the median of the rounds' own ratios (the command against the `node -e ""` of the same round).
// Beside the binary's way (the bundle compiled from V8's code cache, scripts/bundle-cli.js), the
// same command from the same bundle without its cache (CASHTRACK_CLI_CACHE=off) and from the
// separate compiled modules (dist/src/cli/main.js), which shows what each of the two pays.
//
//   node bench/startup.js [--runs 10]
//
// Runs alone on a fresh SQLite file, or is called by bench/http.js on the database it seeded.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cliEnv, root, runMain } from './lib/child.js';

/** The ceilings, as multiples of `node -e ""` in the same round (issue 22). */
export const STARTUP_TARGETS = { version: 1.3, usersList: 3 };

class UsageError extends Error {}

/** One process's wall time in ms; throws when it fails, so a broken command is not a fast one. */
function timed(args, env) {
  const start = process.hrtime.bigint();
  const res = spawnSync(process.execPath, args, { cwd: root, env, encoding: 'utf8', timeout: 30_000 });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (res.error || res.status !== 0) {
    throw new Error(`node ${args.join(' ')} failed (${res.error?.message ?? `exit ${res.status}`}): ${(res.stderr || res.stdout || '').slice(0, 500)}`);
  }
  return { ms, stdout: res.stdout };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return (sorted[Math.floor(mid - 0.5)] + sorted[Math.ceil(mid - 0.5)]) / 2;
}

/**
 * Measures the three processes over `runs` rounds, after one unmeasured round (which also migrates
 * a fresh SQLite file and checks that `--json` printed JSON). Returns each series' median, min and
 * max, and the two ratios with their verdicts.
 */
export function measureStartup({ dbUrl, dataDir, secret, runs = 10 }) {
  const dbEnv = cliEnv({ CASHTRACK_DATABASE_URL: dbUrl, CASHTRACK_DATA_DIR: dataDir, CASHTRACK_SECRET: secret });
  const series = [
    { key: 'node', name: 'node -e ""', args: ['-e', ''], env: cliEnv({}) },
    { key: 'version', name: 'cashtrack --version', args: ['bin/cashtrack', '--version'], env: cliEnv({}) },
    { key: 'usersList', name: 'cashtrack users list --json', args: ['bin/cashtrack', 'users', 'list', '--json'], env: dbEnv },
    {
      key: 'usersListNoCache',
      name: '  the bundle without its cache',
      args: ['bin/cashtrack', 'users', 'list', '--json'],
      env: { ...dbEnv, CASHTRACK_CLI_CACHE: 'off' },
    },
    {
      key: 'usersListModules',
      name: '  the separate modules',
      args: [
        '--input-type=module',
        '-e',
        "const { main } = await import('./dist/src/cli/main.js'); process.exitCode = await main(process.argv.slice(1));",
        'users',
        'list',
        '--json',
      ],
      env: dbEnv,
    },
  ];
  const times = Object.fromEntries(series.map((s) => [s.key, []]));
  for (let round = 0; round <= runs; round++) {
    for (let i = 0; i < series.length; i++) {
      const s = series[(round + i) % series.length];
      const { ms, stdout } = timed(s.args, s.env);
      if (round > 0) times[s.key].push(ms);
      else if (s.key.startsWith('usersList')) JSON.parse(stdout);
    }
  }
  const stats = Object.fromEntries(
    series.map((s) => [s.key, { name: s.name, median: median(times[s.key]), min: Math.min(...times[s.key]), max: Math.max(...times[s.key]) }]),
  );
  const ratio = (key) => median(times[key].map((ms, i) => ms / times.node[i]));
  const ratios = series.slice(1).map(({ key }) => {
    const value = ratio(key);
    const target = STARTUP_TARGETS[key];
    return { key, name: stats[key].name, value, target, pass: target === undefined ? undefined : value <= target };
  });
  return { runs, stats, ratios };
}

/** The report as printable lines. */
export function startupLines({ runs, stats, ratios }) {
  const lines = [`cold start, ${runs} rounds (median, min-max):`];
  for (const s of Object.values(stats)) {
    lines.push(`  ${s.name.padEnd(31)} ${s.median.toFixed(0).padStart(5)} ms  (${s.min.toFixed(0)}-${s.max.toFixed(0)})`);
  }
  for (const r of ratios) {
    const verdict = r.target === undefined ? '' : `  (target <= ${r.target}x: ${r.pass ? 'PASS' : 'FAIL'})`;
    lines.push(`  ${r.name.padEnd(31)} ${r.value.toFixed(2).padStart(5)} x node -e ""${verdict}`);
  }
  return lines;
}

function parseOptions(argv) {
  let runs = 10;
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    if (flag === '--runs') runs = Number(inline ?? argv[++i]);
    else throw new UsageError(`unknown option ${argv[i]} (use --runs N)`);
  }
  if (!Number.isInteger(runs) || runs < 1 || runs > 1000) throw new UsageError('--runs must be 1-1000');
  return { runs };
}

async function main() {
  const { runs } = parseOptions(process.argv.slice(2));
  const tmp = mkdtempSync(join(tmpdir(), 'cashtrack-startup-'));
  try {
    const dataDir = join(tmp, 'data');
    mkdirSync(dataDir);
    const result = measureStartup({ dbUrl: `sqlite:${join(tmp, 'startup.sqlite')}`, dataDir, secret: randomBytes(24).toString('hex'), runs });
    console.log(startupLines(result).join('\n'));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) runMain(main, 'bench:startup', UsageError);
