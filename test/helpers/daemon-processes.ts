// Real daemons (`cashtrack serve`, processes of the built binary) on one database, each on its own
// port on 127.0.0.1, for the tests about several daemons (test/e2e/several-daemons.test.ts and
// the Galera run in test/galera/). Requests go over real sockets: the processes are the point.
import type { BinaryRunner, Child } from './binary.js';
import { waitFor } from './jobs.js';

export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

export interface DaemonProcess {
  readonly child: Child;
  readonly pid: number;
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** A request to `path` (from the server's root) with `headers` and a JSON or form `body`. */
  request(method: string, path: string, options?: { headers?: Record<string, string>; json?: unknown; form?: string }): Promise<Answer>;
  /** Whether the process is still running. */
  alive(): boolean;
}

/** The daemon's start line on stderr: `cashtrack: listening on http://127.0.0.1:PORT (...)`. */
const LISTENING = /cashtrack: listening on (http:\/\/127\.0\.0\.1:\d+) /;

/**
 * Starts `cashtrack serve` on a free port of 127.0.0.1 with `env` on top of the runner's (the
 * database URL of the runner unless `env` names another), and waits until it listens.
 */
export async function startDaemonProcess(runner: BinaryRunner, env: Record<string, string> = {}): Promise<DaemonProcess> {
  const child = runner.start(['serve', '--host', '127.0.0.1', '--port', '0'], env);
  const url = await waitFor(
    () => {
      if (child.process.exitCode !== null || child.process.signalCode !== null) {
        throw new Error(
          `cashtrack serve exited (${child.process.signalCode ?? child.process.exitCode}) before listening\nstderr: ${child.stderr.slice(-3000)}`,
        );
      }
      return Promise.resolve(LISTENING.exec(child.stderr)?.[1] ?? null);
    },
    60_000,
    'cashtrack serve to listen',
  );
  return {
    child,
    pid: child.pid,
    url,
    alive: () => child.process.exitCode === null && child.process.signalCode === null,
    async request(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      let body: string | undefined;
      if (options.json !== undefined) {
        headers['content-type'] = 'application/json';
        body = JSON.stringify(options.json);
      } else if (options.form !== undefined) {
        headers['content-type'] = 'application/x-www-form-urlencoded';
        body = options.form;
      }
      const res = await fetch(new URL(path, url), { method, headers, body, signal: AbortSignal.timeout(30_000) });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // Not JSON (a nonce, an empty body): keep the text.
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
  };
}

/** `Authorization: Basic ...` for `login:password`. */
export function basic(login: string, password: string): string {
  return `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`;
}

/** The runner pid in a job's lease owner (`host:pid:random`). */
export function ownerPid(owner: string): number {
  const parts = owner.split(':');
  return Number(parts[parts.length - 2]);
}
