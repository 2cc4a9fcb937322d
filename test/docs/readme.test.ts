// The README's tables are what a new operator reads first: they must name everything there is.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENV_KEYS } from '../../src/config/index.js';
import { buildProgram } from '../../src/cli/main.js';
import { PassThrough } from 'node:stream';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
/** The rows of the table whose header row starts with `| <first> |`. */
function tableRows(first: string): string[] {
  const lines = readme.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`| ${first} |`));
  expect(start).toBeGreaterThan(-1);
  const rows: string[] = [];
  for (let i = start + 2; i < lines.length && lines[i].startsWith('|'); i++) rows.push(lines[i]);
  return rows;
}

describe('README', () => {
  it('lists every CASHTRACK_* variable of the configuration with its config key', () => {
    const rows = tableRows('Variable');
    const missing = Object.entries(ENV_KEYS).filter(([name, key]) => !rows.some((r) => r.startsWith(`| \`${name}\` | \`${key}\` |`)));
    expect(missing).toEqual([]);
  });

  it('describes CASHTRACK_CURRENCY as the default currency it is', () => {
    const row = tableRows('Variable').find((r) => r.startsWith('| `CASHTRACK_CURRENCY` |'))!;
    expect(row).not.toMatch(/nothing uses it/i);
    expect(row).toMatch(/default currency/);
  });

  it('describes docs/hooks.md as the hooks the services fire, not as hooks none of which fire', () => {
    const line = readme.split('\n').find((l) => l.startsWith('- [docs/hooks.md]'));
    expect(line).toBeDefined();
    expect(line).not.toMatch(/none fired/i);
    expect(line).toMatch(/webhook events/);
  });

  it('lists every command group of the CLI in its command table', () => {
    const io = { stdout: new PassThrough(), stderr: new PassThrough(), stdin: new PassThrough(), env: {} };
    const groups = buildProgram(io, {}).commands.map((c) => c.name());
    expect(groups.length).toBeGreaterThan(10);
    const rows = tableRows('Command');
    expect(groups.filter((g) => !rows.some((r) => r.startsWith(`| \`cashtrack ${g}`)))).toEqual([]);
  });
});
