// Run the CLI in-process through its entry point, with captured output and exit code.
import { PassThrough, Writable } from 'node:stream';
import { main } from '../../src/cli/main.js';
import type { TestDatabase } from './context.js';
import type { AdmitadFixture } from '../fixtures/networks/admitad.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  json<T = unknown>(): T;
}

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: string, done: () => void) {
    this.text += chunk.toString();
    done();
  }
}

/** The CASHTRACK_SECRET of CLI runs: a daemon context sharing their database needs the same one to read what they store. */
export const CLI_SECRET = 'cli-test-secret-0123456789abcdef0123456789';

/**
 * Runs `cashtrack argv`. With `tty`, stdout and stderr pose as a terminal of that many columns
 * (`isTTY`), as commands that draw progress lines check.
 */
export async function runCli(
  argv: string[],
  options: { db?: TestDatabase; env?: Record<string, string>; stdin?: string; tty?: { columns: number } } = {},
): Promise<CliResult> {
  const stdout = new Capture();
  const stderr = new Capture();
  if (options.tty) for (const s of [stdout, stderr]) Object.assign(s, { isTTY: true, columns: options.tty.columns });
  const stdin = new PassThrough();
  stdin.end(options.stdin ?? '');
  const env: Record<string, string> = { CASHTRACK_ENV: 'test', ...(options.env ?? {}) };
  if (options.db) Object.assign(env, { CASHTRACK_DATABASE_URL: options.db.url, CASHTRACK_DATA_DIR: options.db.dataDir, CASHTRACK_SECRET: CLI_SECRET });
  const code = await main(argv, { stdout, stderr, stdin, env });
  return {
    code,
    stdout: stdout.text,
    stderr: stderr.text,
    json: <T>() => JSON.parse(stdout.text) as T,
  };
}

/** Configures the admitad module against its fixture through `cashtrack networks configure` (the secret from the environment). */
export async function configureAdmitadCli(db: TestDatabase, fixture: AdmitadFixture): Promise<CliResult> {
  const s = fixture.settings;
  return runCli(
    [
      'networks',
      'configure',
      'admitad',
      '--set',
      `client_id=${s.client_id}`,
      '--set',
      `website_id=${s.website_id}`,
      '--set',
      `base_url=${s.base_url}`,
      '--secret-env',
      'client_secret=ADM_SECRET',
    ],
    { db, env: { ADM_SECRET: String(s.client_secret) } },
  );
}
