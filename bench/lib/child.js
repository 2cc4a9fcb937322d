// The parent side of the benchmarks' child processes: forking a server script and waiting for its
// IPC `ready`, asking it for CPU time or a profile, stopping it; `cashtrack ledger verify` through
// the binary; killing whatever is left and running the cleanups on exit, SIGINT or SIGTERM.
import { execFile, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../..', import.meta.url));

const children = new Set();

/**
 * Forks `script` with `args`; resolves with its `ready` message and a handle to talk to it
 * (`request(message, replyType)`, `stop()`).
 */
export function startChild(script, args, { timeoutMs, requestTimeoutMs, execArgv = [] }) {
  const child = fork(script, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const waitFor = (type, ms = timeoutMs) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`server did not answer "${type}" within ${ms} ms`)), ms);
      const onMessage = (msg) => {
        if (msg?.type === type) done(null, msg);
        else if (msg?.type === 'error') done(new Error(`server failed: ${msg.message}`));
      };
      const onExit = (code, signal) => done(new Error(`server exited (${signal ?? code}) before "${type}"`));
      function done(err, msg) {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        if (err) reject(err);
        else resolve(msg);
      }
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const request = (message, reply) => {
    const answer = waitFor(reply, requestTimeoutMs);
    child.send(message);
    return answer;
  };
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    if (child.connected) child.send({ type: 'stop' });
    else child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  return waitFor('ready').then((ready) => ({ ready, request, stop }));
}

export function killChildren() {
  for (const child of children) child.kill('SIGKILL');
}

/** This process's environment without any CASHTRACK_* variable, plus `extra`. */
export function cliEnv(extra) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('CASHTRACK_')) env[k] = v;
  return { ...env, ...extra };
}

/**
 * `cashtrack ledger verify --json` on `dbUrl`, through the binary as an operator runs it. A verify
 * that fails or does not finish is a result (count null, with the reason), not a crash of the bench.
 */
export function ledgerVerify(dbUrl, dataDir, secret, timeoutMs) {
  const env = cliEnv({ CASHTRACK_DATABASE_URL: dbUrl, CASHTRACK_DATA_DIR: dataDir, CASHTRACK_SECRET: secret });
  const started = Date.now();
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['bin/cashtrack', 'ledger', 'verify', '--json'],
      { cwd: root, env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        children.delete(child);
        const ms = Date.now() - started;
        // Exit 1 with a JSON report is a finding, not a failure to verify.
        try {
          const report = JSON.parse(stdout);
          const kinds = {};
          for (const d of report.discrepancies) kinds[d.kind] = (kinds[d.kind] ?? 0) + 1;
          resolve({ count: report.discrepancies.length, kinds, ms, first: report.discrepancies.slice(0, 5), error: null });
        } catch {
          const why = err?.killed
            ? `did not finish within ${timeoutMs / 1000} s`
            : `failed (${err?.code ?? err?.signal ?? 'no JSON'}): ${(stderr || stdout || '').trim().slice(0, 300)}`;
          resolve({ count: null, kinds: {}, ms, first: [], error: why });
        }
      },
    );
    children.add(child);
  });
}

/**
 * On SIGINT/SIGTERM: kill the children, run `cleanups` and exit 130; on exit: kill the children.
 * Returns the handler (for a watchdog). `beforeStop` runs first (e.g. to flag the interruption).
 */
export function stopOnSignals(cleanups, { beforeStop } = {}) {
  const onSignal = (signal) => {
    beforeStop?.();
    console.error(`\n${signal}: stopping`);
    killChildren();
    void Promise.allSettled(cleanups.map((c) => c())).finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.once('exit', killChildren);
  return onSignal;
}

/** Kills the children, then runs every cleanup in order, reporting (not throwing) failures. */
export async function runCleanups(cleanups) {
  killChildren();
  for (const cleanup of cleanups) {
    try {
      await cleanup();
    } catch (err) {
      console.error(`cleanup failed: ${err.message}`);
    }
  }
}

/** Runs `main`, setting the exit code from its result or, on a throw, reporting `name failed: …` (exit 2). */
export function runMain(main, name, UsageError) {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      console.error(`\n${name} failed: ${err instanceof UsageError ? err.message : (err.stack ?? err)}`);
      process.exitCode = 2;
    },
  );
}
