// docs/errors.md is the contract clients branch on: every code it lists must be named by at least
// one test, so a code cannot change or vanish without a test noticing.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const THIS_FILE = relative(root, import.meta.filename);

/** Every code the document lists: backquoted identifiers with a documented prefix. */
function documentedCodes(markdown: string): string[] {
  const codes = new Set<string>();
  for (const m of markdown.matchAll(/`((?:rest|svc|invalid|incorrect|application_password)_[a-z0-9_]+)`/g)) codes.add(m[1]);
  return [...codes].sort();
}

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return testFiles(path);
    return /\.(ts|tsx)$/.test(name) ? [path] : [];
  });
}

describe('docs/errors.md', () => {
  const doc = readFileSync(join(root, 'docs', 'errors.md'), 'utf8');
  const codes = documentedCodes(doc);

  it('lists the codes of every section, detail codes included', () => {
    // A sanity floor: a broken extraction must not make the next test pass on nothing.
    expect(codes.length).toBeGreaterThan(100);
    for (const code of [
      'rest_no_route',
      'svc_internal_error',
      'incorrect_password',
      'application_password_empty_name',
      'rest_out_of_bounds',
      'svc_network_aborted',
    ])
      expect(codes).toContain(code);
  });

  it('has every code named by at least one test', () => {
    const sources = testFiles(join(root, 'test'))
      .filter((f) => relative(root, f) !== THIS_FILE)
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    const unnamed = codes.filter((code) => !new RegExp(`(?<![a-z0-9_])${code}(?![a-z0-9_])`).test(sources));
    expect(unnamed).toEqual([]);
  });
});
