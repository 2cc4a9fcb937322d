// Idempotency-Key: the first request with a key runs and its outcome is recorded; a retry with the
// same key and request replays that outcome, a different request is 422. Keys belong to their
// caller (the owner: `user:<id>` over REST, `cli` on the command line), so one caller's key never
// replays another's outcome. `run` is the whole protocol: the REST host and the CLI both call it.
//
// Why the key is claimed inside the effect's own transaction (and not by a committed `running`
// claim, as before): the claim is then held by the database, not by us. The key's row is the
// first statement of the effect's transaction and is completed by its last, so the effect and its
// record commit together or not at all. A concurrent duplicate's INSERT waits on the unique index
// (MariaDB) or on the write lock (SQLite) until the first commits, then replays its outcome, or
// rolls back, then runs itself. When the process dies (SIGKILL, OOM, power) or the database goes
// away mid-request, the transaction dies with its connection and the key is free at once: nothing
// to take over after a timeout, no release that can fail. The alternative, a claim tied to a
// lease of the live instance, would still leave retries waiting for the lease to run out and needs
// a heartbeat; the database's own lock needs neither.
//
// Refusals (4xx) are outcomes too: their effect rolled back, so they are recorded afterwards in a
// transaction of their own (when a duplicate got there first, its outcome stands and is replayed).
// Faults (5xx) are not recorded: a retry runs anew.
import { createHash } from 'node:crypto';
import type { Transaction } from '../../db/transaction.js';
import { replaceInColumns, type Replacement } from '../../db/erasure.js';
import { UnitOutcome } from '../../db/group-commit.js';
import type { Clock } from '../../clock.js';
import type { Database } from '../../db/database.js';
import { isLockWaitTimeout, isUniqueViolation } from '../../db/errors.js';
import { toDate, toInt } from '../../db/values.js';
import { ServiceError } from '../../errors.js';

/** Kept at least this long (the floor is 24 hours). */
export const IDEMPOTENCY_TTL_MS = 48 * 3_600_000;
/**
 * A committed `running` row is a claim of the previous version (which committed its claims before
 * the effect): answered "in use" while it may still be in flight on an old daemon, then forgotten.
 */
export const LEGACY_RUNNING_MS = 5 * 60_000;

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** One caller's key on one route (or command), and the hash of what the request asks for. */
export interface IdempotentRequest {
  scope: string;
  owner: string;
  key: string;
  hash: string;
}

/**
 * What a service receives on an idempotent call: `claim` is the first statement of the effect's
 * transaction, `record` its last (with the result the caller will see). Services also take one
 * without `claim` to write something of the caller's with their effect (postback records).
 */
export interface Once<T> {
  claim?(t: Transaction): Promise<void>;
  record(result: T, t: Transaction): Promise<void>;
}

/** What `run` hands the door's effect: a `Once` for the service it calls, with the status to record. */
export interface KeyHold {
  once<R>(status: number | ((result: R) => number)): Once<R>;
}

export type Ran<T> = { replayed: false; result: T } | { replayed: true; status: number; body: unknown };

/** A test hook: runs after the key's row is written, inside the effect's transaction (tests only). */
export type HoldInTransaction = (scope: string) => Promise<void>;

/**
 * Another request holds (or has just committed) the key: the effect rolls back and `run` looks
 * again. In a group of writes (src/db/group-commit.ts) it is the unit's own outcome: a request
 * repeating the key of an earlier one of its group rolls back alone and, once the group has
 * committed, finds the first one's outcome to replay.
 */
class KeyTaken extends UnitOutcome {}

/** A stable hash of what the request asks for (key order does not matter). */
export function requestHash(value: unknown): string {
  const canonical = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(canonical);
    if (v && typeof v === 'object' && !(v instanceof Date))
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
      );
    return v;
  };
  return createHash('sha256')
    .update(JSON.stringify(canonical(value) ?? null))
    .digest('hex');
}

/** The error JSON a refusal is recorded (and replayed) as: the REST host's shape, on both doors. */
export function refusalBody(err: ServiceError): { code: string; message: string; data: Record<string, unknown> } {
  return { code: err.code, message: err.message, data: { ...err.data, status: err.status } };
}

function inUse(): ServiceError {
  return new ServiceError(
    'svc_idempotency_key_in_use',
    'A request with this Idempotency-Key is still being processed. Retry shortly.',
    409,
    {},
    { 'Retry-After': '1' },
  );
}

/** Runs effects at most once per Idempotency-Key and replays their outcomes. */
export class IdempotencyService {
  constructor(private readonly deps: { db: Database; clock: Clock; holdInTransaction?: HoldInTransaction | null }) {}

  /** Validates a client's key: 1 to 255 printable ASCII characters. */
  static checkKey(key: unknown): string {
    if (typeof key !== 'string' || !KEY_PATTERN.test(key)) {
      throw new ServiceError('svc_invalid_idempotency_key', 'Idempotency-Key must be 1 to 255 printable ASCII characters (a UUID is a good choice).', 400);
    }
    return key;
  }

  /**
   * Runs `effect` once for `request`'s key, or answers what the first run with the key got. The
   * effect passes `hold.once(status)` to its service, which claims the key in its transaction;
   * `answer` says how a result is recorded when the effect recorded nothing (it wrote nothing).
   */
  async run<T>(request: IdempotentRequest, effect: (hold: KeyHold) => Promise<T>, answer: (result: T) => { status: number; body: unknown }): Promise<Ran<T>> {
    // A few rounds: each ends with a committed outcome to replay, or with the key found free.
    for (let round = 0; round < 5; round++) {
      const stored = await this.lookup(request);
      if (stored) return stored;
      const state = { id: 0, claimed: false, recorded: false };
      const hold: KeyHold = { once: (status) => this.once(request, state, status) };
      let result: T;
      try {
        result = await effect(hold);
      } catch (err) {
        if (err instanceof KeyTaken) continue;
        // A refusal is an outcome; when another request's outcome got there first, that one stands.
        if (err instanceof ServiceError && err.status < 500 && !(await this.store(request, err.status, refusalBody(err)))) continue;
        throw err;
      }
      if (!state.recorded) {
        const { status, body } = answer(result);
        if (state.claimed) await this.complete(state.id, status, body);
        else if (!(await this.store(request, status, body))) continue;
      }
      return { replayed: false, result };
    }
    throw inUse();
  }

  /** The outcome recorded for `request`'s key, or null when the key is free (an expired one is freed). */
  private async lookup(request: IdempotentRequest): Promise<Ran<never> | null> {
    const db = this.deps.db;
    const now = this.deps.clock.now().getTime();
    const [row] = await db.select<Record<string, unknown>>(
      'SELECT id, request_hash, state, response_status, response_body, created_at, expires_at FROM idempotency_keys WHERE scope = ? AND owner = ? AND idem_key = ?',
      [request.scope, request.owner, request.key],
    );
    if (!row) return null;
    const id = toInt(row.id);
    if (toDate(row.expires_at)!.getTime() <= now) {
      await db.execute('DELETE FROM idempotency_keys WHERE id = ?', [id]);
      return null;
    }
    if (row.request_hash !== request.hash) {
      throw new ServiceError('svc_idempotency_key_reused', 'This Idempotency-Key was used with a different request. Use a new key for a new request.', 422);
    }
    if (row.state === 'done') return { replayed: true, status: Number(row.response_status), body: JSON.parse(String(row.response_body)) };
    if (now - toDate(row.created_at)!.getTime() <= LEGACY_RUNNING_MS) throw inUse();
    await db.execute("DELETE FROM idempotency_keys WHERE id = ? AND state = 'running'", [id]);
    return null;
  }

  private once<R>(request: IdempotentRequest, state: { id: number; claimed: boolean; recorded: boolean }, status: number | ((result: R) => number)): Once<R> {
    return {
      claim: async (t) => {
        state.id = await this.claim(request, t);
        state.claimed = true;
        await this.deps.holdInTransaction?.(request.scope);
      },
      record: async (result, t) => {
        if (!state.claimed) throw new Error('Idempotency-Key recorded before it was claimed: the service must call claim first in its transaction');
        await this.complete(state.id, typeof status === 'function' ? status(result) : status, result, t);
        state.recorded = true;
      },
    };
  }

  /**
   * Writes the key's row in the effect's transaction. Another request's uncommitted row makes this
   * wait for it; its committed row (or one just committed) is KeyTaken. On MariaDB a wait past
   * `innodb_lock_wait_timeout` means the first request is still running: 409, retry later.
   */
  private async claim(request: IdempotentRequest, t: Transaction): Promise<number> {
    const now = this.deps.clock.now();
    try {
      const { insertId } = await this.deps.db.execute(
        "INSERT INTO idempotency_keys (scope, owner, idem_key, request_hash, state, created_at, expires_at) VALUES (?, ?, ?, ?, 'running', ?, ?)",
        [request.scope, request.owner, request.key, request.hash, now, new Date(now.getTime() + IDEMPOTENCY_TTL_MS)],
        t,
      );
      return insertId!;
    } catch (err) {
      if (isUniqueViolation(err)) throw new KeyTaken();
      if (isLockWaitTimeout(err)) throw inUse();
      throw err;
    }
  }

  /** Records an outcome in a transaction of its own; false when the key already has a row. */
  private async store(request: IdempotentRequest, status: number, body: unknown): Promise<boolean> {
    const now = this.deps.clock.now();
    try {
      await this.deps.db.execute(
        "INSERT INTO idempotency_keys (scope, owner, idem_key, request_hash, state, response_status, response_body, created_at, expires_at) VALUES (?, ?, ?, ?, 'done', ?, ?, ?, ?)",
        [request.scope, request.owner, request.key, request.hash, status, JSON.stringify(body ?? null), now, new Date(now.getTime() + IDEMPOTENCY_TTL_MS)],
      );
      return true;
    } catch (err) {
      if (isUniqueViolation(err)) return false;
      throw err;
    }
  }

  private async complete(id: number, status: number, body: unknown, t?: Transaction): Promise<void> {
    await this.deps.db.execute(
      "UPDATE idempotency_keys SET state = 'done', response_status = ?, response_body = ? WHERE id = ?",
      [status, JSON.stringify(body ?? null), id],
      t,
    );
  }

  /**
   * At a member's erasure, in `t`: the person's words replaced in the stored answers of requests
   * (a payout's or a user's answer holds their details), so a replay never shows them again.
   */
  eraseWords(replacements: readonly Replacement[], t: Transaction): Promise<number> {
    return replaceInColumns(this.deps.db, t, { table: 'idempotency_keys', key: 'id', columns: ['response_body'] }, replacements);
  }

  async prune(): Promise<number> {
    const { affected } = await this.deps.db.execute('DELETE FROM idempotency_keys WHERE expires_at < ?', [this.deps.clock.now()]);
    return affected;
  }
}
