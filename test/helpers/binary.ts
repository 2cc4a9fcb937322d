// Real child processes of the built binary (`node bin/cashtrack ...`, which loads dist/) against a
// test database: for tests where a separate process is the point (a process killed mid-job). The
// children get none of this process's CASHTRACK_* variables, only what the test gives them.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestDatabase } from './context.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Source files newer than their compiled file in dist/ (or with none): the children would run old code. */
export function staleBuild(): string[] {
  const stale: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
        const built = join(ROOT, 'dist', path.replace(/\.tsx?$/, '.js'));
        if (!existsSync(built) || statSync(built).mtimeMs < statSync(join(ROOT, path)).mtimeMs) stale.push(path);
      }
    }
  };
  walk('src');
  walk('migrations');
  return stale;
}

/** Throws when dist/ is missing or older than the source (`npm test` builds it first). */
export function requireCurrentBuild(): void {
  const stale = staleBuild();
  if (stale.length)
    throw new Error(
      `dist/ is not current (${stale.slice(0, 3).join(', ')}${stale.length > 3 ? ', ...' : ''}): run \`npm run build\` first (\`npm test\` does)`,
    );
}

export interface Child {
  readonly pid: number;
  readonly process: ChildProcess;
  stdout: string;
  stderr: string;
  /** Resolves when the process has exited, with its code or the signal that ended it. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The exit of a process expected to end by itself within `timeoutMs` (killed and rejected otherwise). */
  finished(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts children of the binary on one database and kills whatever is left of them on `killAll`. */
export class BinaryRunner {
  private readonly live = new Set<Child>();

  constructor(
    private readonly db: TestDatabase,
    private readonly secret: string,
  ) {}

  /** `cashtrack ...args` with the database's URL, data directory and secret, and `env` on top. */
  start(args: string[], env: Record<string, string> = {}): Child {
    const base: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('CASHTRACK_')) base[k] = v;
    const proc = spawn(process.execPath, [join(ROOT, 'bin/cashtrack'), ...args], {
      cwd: ROOT,
      env: {
        ...base,
        CASHTRACK_ENV: 'test',
        CASHTRACK_LOG_STDOUT: 'false',
        CASHTRACK_DATABASE_URL: this.db.url,
        CASHTRACK_DATA_DIR: this.db.dataDir,
        CASHTRACK_SECRET: this.secret,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (proc.pid === undefined) throw new Error(`could not start cashtrack ${args.join(' ')}`);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      proc.once('exit', (code, signal) => resolve({ code, signal })),
    );
    const child: Child = {
      pid: proc.pid,
      process: proc,
      stdout: '',
      stderr: '',
      exited,
      finished: async (timeoutMs = 30_000) => {
        let timer: NodeJS.Timeout | undefined;
        const timedOut = new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            proc.kill('SIGKILL');
            reject(
              new Error(
                `cashtrack ${args.join(' ')} did not finish within ${timeoutMs} ms\nstdout: ${child.stdout.slice(-2000)}\nstderr: ${child.stderr.slice(-2000)}`,
              ),
            );
          }, timeoutMs);
        });
        try {
          return await Promise.race([exited, timedOut]);
        } finally {
          clearTimeout(timer);
        }
      },
    };
    proc.stdout!.setEncoding('utf8').on('data', (s: string) => (child.stdout += s));
    proc.stderr!.setEncoding('utf8').on('data', (s: string) => (child.stderr += s));
    this.live.add(child);
    void exited.then(() => this.live.delete(child));
    return child;
  }

  /** SIGKILLs every child still running and waits for them to be gone. */
  async killAll(): Promise<void> {
    const left = [...this.live];
    for (const child of left) child.process.kill('SIGKILL');
    await Promise.all(left.map((c) => c.exited));
  }
}
