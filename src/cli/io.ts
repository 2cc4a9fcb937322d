// What every command gets: its streams, and one way to build the context, print and fail.
import type { Config, LoadOptions } from '../config/index.js';
import type { Context } from '../context.js';
import type { HoldInTransaction } from '../services/idempotency/index.js';
import { translateDbError } from '../db/errors.js';
import { invalidInput, isServiceError, ServiceError } from '../errors.js';
import { terminalJson, terminalLine, terminalText } from '../terminal-text.js';

export interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  /** A terminal (`isTTY`) gets progress lines; `columns` bounds their width. */
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** Applied over the environment (tests point this at their database). */
  overrides?: Record<string, unknown>;
  /**
   * The streams as given, for the one writer whose control sequences are its own: the progress
   * line. Set by `terminalSafe`; without it, stdout and stderr are the raw streams.
   */
  raw?: { stdout: Io['stdout']; stderr: Io['stderr'] };
}

/**
 * The one gate of everything a command prints: `stdout` and `stderr` that strip escape sequences
 * and control characters (but tabs and line feeds) from every write, whoever writes (a command,
 * a table, commander's help, an error report). Data from a feed, a request or the AI provider thus
 * never reaches the terminal as a command (see src/terminal-text.ts). JSON is written already
 * escaped (printJson), so it passes through unchanged.
 */
export function terminalSafe(io: Io): Io {
  if (io.raw) return io;
  return { ...io, stdout: cleaning(io.stdout), stderr: cleaning(io.stderr), raw: { stdout: io.stdout, stderr: io.stderr } };
}

function cleaning<S extends NodeJS.WritableStream>(stream: S): S {
  const write = (chunk: unknown, ...rest: unknown[]) =>
    (stream.write as (...args: unknown[]) => boolean)(
      terminalText(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8')),
      ...rest,
    );
  // A proxy, so `isTTY`, `columns` and the events stay the stream's own.
  return new Proxy(stream, {
    get(target, prop) {
      if (prop === 'write') return write;
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** A usage error (exit code 2). */
export class UsageError extends Error {
  readonly code = 'svc_usage';
}

export async function loadCliConfig(io: Io, extra: Record<string, unknown> = {}): Promise<Config> {
  const { loadConfig } = await import('../config/index.js');
  const options: LoadOptions = { env: io.env, overrides: { ...io.overrides, ...extra } };
  return loadConfig(options);
}

/**
 * `CASHTRACK_TEST_HOLD_IN_TRANSACTION=<route id>` with `CASHTRACK_ENV=test` (never otherwise):
 * a request or command with an Idempotency-Key on that route stops inside its transaction, right
 * after claiming the key, and stays there until the process is killed. Says so on stderr. For the
 * tests that kill a process mid-request.
 */
export function testHold(io: Io, config: Config): HoldInTransaction | undefined {
  const scope = io.env.CASHTRACK_TEST_HOLD_IN_TRANSACTION;
  if (config.env !== 'test' || !scope) return undefined;
  return async (claimed) => {
    if (claimed !== scope) return;
    io.stderr.write(`cashtrack: test hold: ${claimed} is held inside its transaction\n`);
    // An interval keeps even a command (no server listening) alive until it is killed.
    await new Promise<never>(() => setInterval(() => {}, 60_000));
  };
}

/** Builds the context, makes sure the schema is current, runs `fn`, and always closes. */
export async function withContext<T>(io: Io, fn: (ctx: Context) => Promise<T>, extra: Record<string, unknown> = {}): Promise<T> {
  const config = await loadCliConfig(io, extra);
  const { buildContext, ensureSchema, loadContextExtensions } = await import('../context.js');
  const ctx = buildContext(config, { logStream: null, holdInTransaction: testHold(io, config) });
  try {
    await ensureSchema(ctx);
    await loadContextExtensions(ctx);
    return await fn(ctx);
  } catch (err) {
    // Printed like an API answer: scrubbed of the secrets this process opened.
    throw ctx.secrets.scrubError(err);
  } finally {
    await ctx.close();
  }
}

/** A member named on the command line (id, login or email) as its id: one resolver for every command. */
export async function memberId(ctx: Context, member: string): Promise<number> {
  return (await ctx.users.resolveMember(member)).id;
}

/** `--json` output: exact JSON, every control character escaped (so the gate finds nothing to strip). */
export function printJson(io: Io, value: unknown): void {
  io.stdout.write(`${terminalJson(value, 2)}\n`);
}

/** A record's fields, one `label  value` line each; empty values are left out. Values show on one line. */
export function printFields(io: Io, rows: ReadonlyArray<readonly [string, unknown]>, width: number): void {
  for (const [k, v] of rows) if (v !== null && v !== undefined && v !== '') io.stdout.write(`${k.padEnd(width)}${terminalLine(String(v))}\n`);
}

/** A plain aligned table; the columns are the keys to show. Cells show on one line, measured after cleaning. */
export function printTable<T extends object>(io: Io, rows: readonly T[], columns: (keyof T & string)[]): void {
  if (rows.length === 0) {
    io.stdout.write('(none)\n');
    return;
  }
  const cell = (v: unknown) => (v === null || v === undefined ? '' : terminalLine(String(v)));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) =>
    `${vals
      .map((v, i) => v.padEnd(widths[i]))
      .join('  ')
      .trimEnd()}\n`;
  io.stdout.write(line(columns.map((c) => c.toUpperCase())));
  for (const r of rows) io.stdout.write(line(columns.map((c) => cell(r[c]))));
}

/** What a failed command reports: the REST error's shape, so scripts branch on `code` alone. */
export interface CliError {
  code: string;
  message: string;
  data: Record<string, unknown>;
  /** 2 for usage errors, 1 otherwise. */
  exit: number;
  /** Without `--json` only: the driver's own words after the message. */
  detail?: string;
  /** Without `--json` only: an unexpected fault's stack, printed instead of the message. */
  stack?: string;
}

/** The report of anything a command threw, or null when the command already printed it. */
export function describeError(err: unknown): CliError | null {
  // The command already printed what went wrong (e.g. `ledger verify` listing discrepancies).
  if ((err as { silent?: boolean })?.silent) return null;
  if (err instanceof UsageError) return { code: err.code, message: err.message, data: { status: 400 }, exit: 2 };
  if (isServiceError(err)) return { code: err.code, message: err.message, data: { status: err.status, ...err.data }, exit: 1 };
  const db = translateDbError(err);
  if (db) {
    // The operator may see the driver's words (unlike an HTTP client): they say what to fix.
    const detail = (err as { original?: { message?: string }; message?: string }).original?.message ?? (err as Error).message;
    return {
      code: db.code,
      message: db.message,
      data: { status: db.status, ...db.data, ...(detail ? { detail } : {}) },
      exit: 1,
      detail: detail ? ` (${detail})` : undefined,
    };
  }
  const message = (err as Error)?.message ?? String(err);
  return { code: 'svc_internal_error', message, data: { status: 500 }, exit: 1, stack: (err as Error)?.stack };
}

/**
 * Prints a failed command's error on stderr and returns its exit code (2 for usage errors, 1
 * otherwise). Without `json`: `code: message`, no stack for expected errors. With `json`: one
 * JSON object `{"code", "message", "data"}` on one line.
 */
export function reportError(io: Io, err: unknown, json = false): number {
  const e = describeError(err);
  if (!e) return 1;
  writeError(io, e, json);
  return e.exit;
}

export function writeError(io: Io, e: CliError, json: boolean): void {
  if (json) io.stderr.write(`${terminalJson({ code: e.code, message: e.message, data: e.data })}\n`);
  else if (e.stack) io.stderr.write(`${e.code}: ${e.stack}\n`);
  else io.stderr.write(`${e.code}: ${e.message}${e.detail ?? ''}\n`);
}

/** Reads all of stdin (for --password-stdin). */
export async function readStdin(io: Io): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Validates command input with its domain's Joi schema (the routes' own); errors read like the REST ones. The result
 * has the schema's type, and `value` may only name the schema's keys (a misspelt option name is
 * a compile error, not a silently ignored field).
 */
export async function validateInput<T>(schema: import('joi').ObjectSchema<T>, value: { [K in keyof T]?: unknown }): Promise<T> {
  const clean = Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
  const { value: valid, error } = schema.validate(clean, { abortEarly: false, convert: true, errors: { wrap: { label: false } } });
  if (error) {
    const invalid = invalidInput(error);
    const params = invalid.data.params;
    const detail = Array.isArray(params) ? '' : ` (${Object.values(params as Record<string, string>).join('; ')})`;
    throw new ServiceError(invalid.code, invalid.message + detail, 400);
  }
  return valid as T;
}
