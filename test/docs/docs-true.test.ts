// The docs describe this version: every code the source throws is in errors.md, no section is
// there twice, the hook tables hold every hook and say truly which are webhook events, and the
// summaries a new user reads first (api.md's intro, cli.md's command groups and its overview
// example) name what the code has now.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { HOOKS } from '../../src/hooks/index.js';
import { routeTable } from '../../src/http/routes/index.js';
import { WEBHOOK_EVENTS } from '../../src/services/webhooks/events.js';
import { PassThrough } from 'node:stream';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/context.js';

const root = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx)$/.test(name) ? [path] : [];
  });
}

/** The rows of the Markdown table that starts at the first line after `heading` beginning with `|`. */
function tableAfter(markdown: string, heading: string): string[] {
  const lines = markdown.split('\n');
  let i = lines.indexOf(heading);
  expect(i).toBeGreaterThan(-1);
  while (!lines[i].startsWith('|')) i++;
  const rows: string[] = [];
  for (i += 2; i < lines.length && lines[i].startsWith('|'); i++) rows.push(lines[i]);
  return rows;
}

describe('docs/errors.md', () => {
  it('lists every svc_ and rest_ code the source throws', () => {
    const documented = new Set([...read('docs/errors.md').matchAll(/`((?:svc|rest)_[a-z0-9_]+)`/g)].map((m) => m[1]));
    // Every quoted string that is a whole code; `rest_route` is the query parameter, not a code.
    const thrown = new Set<string>();
    for (const file of sourceFiles(join(root, 'src')))
      for (const m of readFileSync(file, 'utf8').matchAll(/['"`]((?:svc|rest)_[a-z0-9_]*[a-z0-9])['"`]/g)) if (m[1] !== 'rest_route') thrown.add(m[1]);
    expect(thrown.size).toBeGreaterThan(100);
    expect([...thrown].filter((code) => !documented.has(code)).sort()).toEqual([]);
  });
});

describe('the docs', () => {
  it('have each top-level section once per document', () => {
    const docs = ['README.md', ...readdirSync(join(root, 'docs')).map((f) => `docs/${f}`)].filter((f) => f.endsWith('.md'));
    const repeated = docs.flatMap((f) => {
      const headings = read(f)
        .split('\n')
        .filter((l) => /^## /.test(l));
      return headings.filter((h, i) => headings.indexOf(h) !== i).map((h) => `${f}: ${h}`);
    });
    expect(repeated).toEqual([]);
  });
});

describe('docs/hooks.md', () => {
  const hooks = read('docs/hooks.md');
  const names = (rows: string[]) => rows.map((r) => /^\| `([^`]+)` \|/.exec(r)?.[1]).filter((n): n is string => !!n);
  const actions = names(tableAfter(hooks, '## Actions'));
  const filters = names(tableAfter(hooks, '## Filters'));

  it('lists every hook the code fires in one Actions table and one Filters table, nothing splitting them', () => {
    expect([...actions, ...filters].sort()).toEqual(Object.values(HOOKS).sort());
  });

  it('names truly which actions are also webhook events', () => {
    const paragraph = /\nEach action above except ([\s\S]*?) is also a webhook event/.exec(hooks);
    expect(paragraph).not.toBeNull();
    const except = [...paragraph![1].matchAll(/`(cashtrack\.[a-z_.*]+)`/g)].map((m) => m[1]);
    const excepted = (name: string) => except.some((e) => (e.endsWith('.*') ? name.startsWith(e.slice(0, -1)) : name === e));
    const events = actions.filter((a) => !excepted(a)).map((a) => a.replace(/^cashtrack\./, ''));
    expect(events.sort()).toEqual([...WEBHOOK_EVENTS].sort());
  });
});

describe('docs/api.md', () => {
  it('names every route group of the namespace in its introduction', () => {
    const intro = read('docs/api.md').split('\n## ')[0];
    const groups = [...new Set(routeTable.map((r) => `/${r.path.split('/')[1]}`))];
    expect(groups.length).toBeGreaterThan(10);
    // Named as a path (`/coupons...`) or a route (`GET /logs`).
    expect(groups.filter((g) => !new RegExp(`[\`\\s]${g}(?![a-z-])`).test(intro))).toEqual([]);
  });
});

describe('docs/cli.md', () => {
  const cli = read('docs/cli.md');

  it('names every command group that prints its help when given no subcommand', async () => {
    const io = { stdout: new PassThrough(), stderr: new PassThrough(), stdin: new PassThrough(), env: {} };
    // The groups load their subcommands only when called, so each is called bare (`serve` would
    // start a daemon: it is a single command).
    const names = buildProgram(io, {})
      .commands.map((c) => c.name())
      .filter((n) => n !== 'serve');
    const groups: string[] = [];
    for (const name of names) {
      const bare = await runCli([name]);
      if (bare.code === 2 && bare.stderr.startsWith(`Usage: cashtrack ${name} `)) groups.push(name);
    }
    expect(groups.length).toBeGreaterThan(10);
    const sentence = /the command groups \(([^)]*)\)\s+print their help/.exec(cli.replace(/\n\s*/g, ' '));
    expect(sentence).not.toBeNull();
    const named = [...sentence![1].matchAll(/`([a-z-]+)`/g)].map((m) => m[1]);
    expect(named.sort()).toEqual(groups.sort());
  });
});

// The overview example is output: each line the command prints on an empty database, up to its
// first figure, must be in the example (the figures themselves are the example's own).
for (const dialect of dialects) {
  describe(`docs/cli.md's overview example [${dialect}]`, () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase(dialect);
      // MariaDB is never migrated by an ordinary command.
      expect((await runCli(['db', 'migrate'], { db })).code).toBe(0);
    });
    afterAll(async () => {
      await db.drop();
    });

    it('shows every line cashtrack overview prints', async () => {
      const example = /\n\$ cashtrack overview\n([\s\S]*?)```/.exec(read('docs/cli.md'))?.[1] ?? '';
      const out = await runCli(['overview'], { db });
      expect(out.code, out.stderr).toBe(0);
      const labels = out.stdout
        .split('\n')
        .filter((l) => /^[a-zA-Z]+ [a-z]/.test(l))
        .map((l) => l.split(/[\d(]/)[0]);
      expect(labels.length).toBeGreaterThan(4);
      expect(labels.filter((l) => !example.includes(l))).toEqual([]);
    });
  });
}
