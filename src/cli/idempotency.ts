// --idempotency-key for commands that mirror an idempotent REST route: the route's scope and the
// same request hash, so a key means the same thing whichever front door it came through. The
// protocol is IdempotencyService.run, as for the REST host; the CLI has no user: its keys belong
// to the `cli` owner, apart from every REST caller's.
import type { Context } from '../context.js';
import { ServiceError } from '../errors.js';
import { IdempotencyService, requestHash, type Once } from '../services/idempotency/index.js';

/** Whose keys the command line's are (the actor its commands record). */
export const CLI_OWNER = 'cli';

/**
 * Runs `run` under an Idempotency-Key as the REST host does: `run` passes the `Once` it is given to
 * its service; a retry with the same key and request replays the first outcome, a refusal as the
 * same error.
 */
export async function idempotently<T>(
  ctx: Context,
  key: string | undefined,
  scope: string,
  request: { params: Record<string, unknown>; payload: unknown },
  /** The status to record, or how to tell it from the result (e.g. 201 created, 200 known). */
  status: number | ((result: T) => number),
  // Once<any>: a typed parameter here would fix T before the service's result could infer it; the
  // service's own signature checks what it records.
  // biome-ignore lint/suspicious/noExplicitAny: the effect's own result type is the caller's; the hold only passes it through.
  run: (once: Once<any> | undefined) => Promise<T>,
): Promise<{ result: T; replayed: boolean }> {
  if (key === undefined) return { result: await run(undefined), replayed: false };
  const statusOf = (result: T) => (typeof status === 'function' ? status(result) : status);
  const ran = await ctx.idempotency.run(
    { scope, owner: CLI_OWNER, key: IdempotencyService.checkKey(key), hash: requestHash(request) },
    (hold) => run(hold.once(statusOf)),
    (result) => ({ status: statusOf(result), body: result }),
  );
  if (!ran.replayed) return { result: ran.result, replayed: false };
  if (ran.status >= 400) {
    const err = ran.body as { code: string; message: string; data?: Record<string, unknown> };
    const { status: _status, ...data } = err.data ?? {};
    throw new ServiceError(err.code, err.message, ran.status, data);
  }
  return { result: ran.body as T, replayed: true };
}
