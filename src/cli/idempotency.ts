// --idempotency-key for commands that mirror an idempotent REST route: the route's scope and the
// same request hash, so a key means the same thing whichever front door it came through. The CLI
// has no user: its keys belong to the `cli` owner, apart from every REST caller's.
import type { Transaction } from '../db/transaction.js';
import type { Context } from '../context.js';
import { ServiceError } from '../errors.js';
import { restError } from '../http/rest/errors.js';
import { IdempotencyService, requestHash } from '../services/idempotency.js';

export type EffectRecorder = (body: unknown, t: Transaction) => Promise<void>;

/** Whose keys the command line's are (the actor its commands record). */
export const CLI_OWNER = 'cli';

/**
 * Runs `run` under an Idempotency-Key as the REST host does: the first run records its outcome (in
 * the effect's transaction, through the recorder it is given), a retry with the same key and
 * request replays it, a refusal is replayed as the same error, a fault leaves the key free.
 */
export async function idempotently<T>(
  ctx: Context,
  key: string | undefined,
  scope: string,
  request: { params: Record<string, unknown>; payload: unknown },
  /** The status to record, or how to tell it from the result (e.g. 201 created, 200 known). */
  status: number | ((result: T) => number),
  run: (record: EffectRecorder | undefined) => Promise<T>,
): Promise<{ result: T; replayed: boolean }> {
  if (key === undefined) return { result: await run(undefined), replayed: false };
  const claimed = await ctx.idempotency.begin(scope, CLI_OWNER, IdempotencyService.checkKey(key), requestHash(request));
  if (claimed.kind === 'replay') {
    if (claimed.status >= 400) {
      const err = claimed.body as { code: string; message: string; data?: Record<string, unknown> };
      const { status: _status, ...data } = err.data ?? {};
      throw new ServiceError(err.code, err.message, claimed.status, data);
    }
    return { result: claimed.body as T, replayed: true };
  }
  let recorded = false;
  const statusOf = (result: unknown) => (typeof status === 'function' ? status(result as T) : status);
  try {
    const result = await run(async (body, t) => {
      await claimed.record(statusOf(body), body, t);
      recorded = true;
    });
    if (!recorded) await claimed.record(statusOf(result), result);
    return { result, replayed: false };
  } catch (err) {
    if (err instanceof ServiceError && err.status < 500) await claimed.record(err.status, restError(err.code, err.message, err.status, err.data).body);
    else await ctx.idempotency.release(claimed.id).catch(() => {});
    throw err;
  }
}
