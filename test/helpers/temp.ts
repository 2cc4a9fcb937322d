// Temporary folders that remove themselves: when the test that made one ends, or (for one made
// while a file is being collected) when the file's tests are done.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, onTestFinished } from 'vitest';

const leftovers: string[] = [];
afterAll(() => {
  for (const dir of leftovers.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder under the system temp folder, removed after the current test (or file). */
export function tempDir(prefix = 'cashtrack-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  } catch {
    // Not inside a running test: fall back to the end of the file.
    leftovers.push(dir);
  }
  return dir;
}
