// The CLI as bin/cashtrack runs it: one CommonJS bundle compiled from V8's code cache of it, both
// made by the build (scripts/bundle-cli.js, issue 22). The cache must be one V8 takes, be used only
// with the bundle it was made from, and leave the bundle its import() of ES modules, which Node 20
// loses in a script compiled from a cache.
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireCurrentBuild, ROOT } from '../helpers/binary.js';

const BUNDLE = 'dist/src/cli-bundle/main.cjs';

/** What the cache was made from, as bin/cashtrack records it on the cache's first line. */
const header = (bundle: string) => {
  const s = statSync(bundle);
  return `${s.size}:${s.mtimeMs}\n`;
};

describe('the bundled CLI and its code cache', () => {
  let copy: string;
  beforeAll(() => {
    requireCurrentBuild();
    // A copy of what an install holds, to damage without touching the build other tests run.
    copy = mkdtempSync(join(tmpdir(), 'cashtrack-code-cache-'));
    mkdirSync(join(copy, 'bin'));
    mkdirSync(join(copy, 'dist/src/cli-bundle'), { recursive: true });
    copyFileSync(join(ROOT, 'bin/cashtrack'), join(copy, 'bin/cashtrack'));
    copyFileSync(join(ROOT, 'package.json'), join(copy, 'package.json'));
    cpSync(join(ROOT, 'config'), join(copy, 'config'), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
    copyFileSync(join(ROOT, BUNDLE), join(copy, BUNDLE));
  });
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  it('has a cache of the built bundle that V8 takes, and a bundle in strict mode as the ES modules were', () => {
    const bundle = join(ROOT, BUNDLE);
    // The directive counts only as the first statement.
    expect(readFileSync(bundle, 'utf8').startsWith('"use strict";')).toBe(true);
    const cache = readFileSync(`${bundle}.cache`);
    const made = header(bundle);
    expect(cache.subarray(0, made.length).toString('latin1')).toBe(made);
    // Compiled as bin/cashtrack compiles it, in a plain node (V8 refuses a cache under other flags).
    const check = `const { readFileSync } = require('node:fs');
      const { Script } = require('node:vm');
      const [file, skip] = [process.argv[1], Number(process.argv[2])];
      const source = '(function (exports, require, module, __filename, __dirname, bundleImport) { ' + readFileSync(file, 'utf8') + '\\n})';
      const script = new Script(source, { filename: file, cachedData: readFileSync(file + '.cache').subarray(skip) });
      process.stdout.write(String(script.cachedDataRejected));`;
    const run = spawnSync(process.execPath, ['-e', check, bundle, String(made.length)], { encoding: 'utf8', env: { PATH: process.env.PATH } });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('false');
  });

  it('runs commands with the cache, without it, and with the cache of another bundle, and loads ES modules from the cached bundle', () => {
    const data = join(copy, 'data');
    mkdirSync(data);
    const extension = join(copy, 'extension.mjs');
    writeFileSync(
      extension,
      `import { writeFileSync } from 'node:fs';\nexport function register() { writeFileSync(${JSON.stringify(join(copy, 'registered'))}, 'yes'); }\n`,
    );
    const cli = (args: string[], env: Record<string, string> = {}) =>
      spawnSync(process.execPath, [join(copy, 'bin/cashtrack'), ...args], {
        cwd: copy,
        encoding: 'utf8',
        timeout: 60_000,
        env: {
          PATH: process.env.PATH,
          CASHTRACK_ENV: 'development',
          CASHTRACK_DATABASE_URL: `sqlite:${join(data, 'cli.sqlite')}`,
          CASHTRACK_DATA_DIR: data,
          CASHTRACK_SECRET: 'code-cache-test-secret-0123456789abcdef',
          CASHTRACK_LOG_STDOUT: 'false',
          ...env,
        },
      });
    const bundle = join(copy, BUNDLE);

    // No cache at all (a build cut short): the bundle compiles as usual. The first command migrates.
    const created = cli(['users', 'create', 'cached', '--email', 'cached@example.com', '--json']);
    expect(created.stderr).toBe('');
    expect(created.status).toBe(0);
    const listed = () => {
      const run = cli(['users', 'list', '--json']);
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      return (JSON.parse(run.stdout) as { login: string }[]).map((u) => u.login);
    };
    expect(listed()).toEqual(['cached']);

    // The build's way: the binary asked to write the cache after a command.
    expect(cli(['users', 'list', '--json'], { CASHTRACK_CLI_CACHE: 'write' }).status).toBe(0);
    const cache = readFileSync(`${bundle}.cache`);
    const made = header(bundle);
    expect(cache.subarray(0, made.length).toString('latin1')).toBe(made);
    expect(listed()).toEqual(['cached']);

    // From the cache, import() of an ES module still works: an extension is one.
    const withExtension = cli(['users', 'list', '--json'], { CASHTRACK_EXTENSIONS: extension });
    expect(withExtension.stderr).toBe('');
    expect(readFileSync(join(copy, 'registered'), 'utf8')).toBe('yes');

    // A cache recorded against another bundle (a size that is not this one's) is left unused.
    const [size, rest] = made.split(':');
    writeFileSync(`${bundle}.cache`, Buffer.concat([Buffer.from(`${Number(size) + 1}:${rest}`, 'latin1'), cache.subarray(made.length)]));
    expect(listed()).toEqual(['cached']);
    // And CASHTRACK_CLI_CACHE=off reads none.
    expect(cli(['users', 'list', '--json'], { CASHTRACK_CLI_CACHE: 'off' }).stdout).toContain('"cached"');
  });
});
