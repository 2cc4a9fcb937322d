// What keeps the CLI's start-up short without losing anything a user sees: the help still lists
// every group with its description and an unknown command still gets its answer, while a command
// line loads only the group it names and `--version` none of the CLI (issue 22).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { VERSION } from '../../src/cli/main.js';
import { ROOT } from '../helpers/binary.js';
import { runCli } from '../helpers/cli.js';

// Which group modules main() imported: each mocked module records itself, then is the real one.
const loaded = vi.hoisted(() => new Set<string>());
vi.mock('../../src/cli/commands/users.js', async (real) => {
  loaded.add('users');
  return real();
});
vi.mock('../../src/cli/commands/ledger.js', async (real) => {
  loaded.add('ledger');
  return real();
});
vi.mock('../../src/cli/commands/serve.js', async (real) => {
  loaded.add('serve');
  return real();
});
vi.mock('../../src/cli/commands/members.js', async (real) => {
  loaded.add('members');
  return real();
});

/**
 * The groups as the source declares them: each file of src/cli/commands/ opens with the command
 * line it serves (\`cashtrack <group> ...\`); a group's subcommands may span several files.
 */
const GROUPS = [
  ...new Set(
    readdirSync(join(ROOT, 'src/cli/commands'))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => /^\/\/ `cashtrack ([a-z-]+)/.exec(readFileSync(join(ROOT, 'src/cli/commands', f), 'utf8'))?.[1] ?? f),
  ),
].sort();

/** The `Commands:` section of a help text: each command's name and its description, unwrapped. */
function commandsOf(help: string): Map<string, string> {
  const section = help.slice(help.indexOf('\nCommands:\n') + '\nCommands:\n'.length);
  const commands = new Map<string, string>();
  let last = '';
  for (const line of section.split('\n')) {
    const entry = /^ {2}(\S+)(?: \[options\]| <\w+>| \[command\])*\s+(.*)$/.exec(line);
    if (entry) {
      last = entry[1];
      commands.set(last, entry[2].trim());
    } else if (last && /^\s+\S/.test(line)) {
      commands.set(last, `${commands.get(last)} ${line.trim()}`);
    } else if (line.trim() === '') break;
  }
  return commands;
}

describe('cashtrack start-up', () => {
  // First in the file: a mocked module records its first import only.
  it('loads a group only for a command line that names it', async () => {
    loaded.clear();
    expect((await runCli(['--version'])).stdout.trim()).toBe(VERSION);
    expect([...loaded]).toEqual([]);
    // The program's help shows the single commands' options, so it loads those (serve), no group.
    await runCli(['--help']);
    expect([...loaded]).toEqual(['serve']);
    loaded.clear();
    const ledger = await runCli(['ledger', '--help']);
    expect(ledger.code).toBe(0);
    expect(ledger.stdout).toContain('Usage: cashtrack ledger');
    expect([...loaded]).toEqual(['ledger']);
    loaded.clear();
    expect((await runCli(['help', 'members'])).stdout).toContain('Usage: cashtrack members');
    expect([...loaded]).toEqual(['members']);
  });

  it('lists every command group with its description in --help, and still answers an unknown command', async () => {
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    const commands = commandsOf(help.stdout);
    expect([...commands.keys()].filter((c) => c !== 'help').sort()).toEqual(GROUPS);
    for (const [name, description] of commands) expect(description.length, `${name}'s description`).toBeGreaterThan(10);

    const unknown = await runCli(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
    // The suggestion needs every group's name, which the program knows without loading them.
    const near = await runCli(['user', 'list']);
    expect(near.code).toBe(2);
    expect(near.stderr).toContain('(Did you mean users?)');
    const json = await runCli(['frobnicate', '--json']);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stderr)).toEqual({ code: 'svc_usage', message: "unknown command 'frobnicate'", data: { status: 400 } });
  });

  it('answers --version in the binary without importing any of the compiled CLI', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cashtrack-startup-'));
    try {
      const record = join(dir, 'resolved.txt');
      // A resolve hook (off the main thread, as node runs hooks) appends every module it resolves.
      const hooks = `import { appendFileSync } from 'node:fs';
        export async function resolve(specifier, context, next) {
          const r = await next(specifier, context);
          appendFileSync(process.env.RECORD_RESOLVED, r.url + '\\n');
          return r;
        }`;
      const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
      const run = (args: string[]) =>
        spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(register)}`, 'bin/cashtrack', ...args], {
          cwd: ROOT,
          env: { PATH: process.env.PATH, RECORD_RESOLVED: record },
          encoding: 'utf8',
          timeout: 30_000,
        });
      const version = run(['--version']);
      expect(version.stderr).toBe('');
      expect(version.status).toBe(0);
      expect(version.stdout).toBe(`${VERSION}\n`);
      const resolved = readFileSync(record, 'utf8').trim().split('\n');
      // The hook sees the binary itself: proof that it recorded, so an empty answer below means something.
      expect(resolved.some((u) => u.endsWith('/bin/cashtrack'))).toBe(true);
      expect(resolved.filter((u) => u.includes('/dist/') || u.includes('/node_modules/'))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
