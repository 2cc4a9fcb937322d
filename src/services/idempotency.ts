// Idempotency-Key: the first request with a key records its outcome; a retry with the same key
// and body replays it, a different body is 422, a retry while the first runs is 409. Keys belong to
// their caller (the owner: `user:<id>` over REST, `cli` on the command line), so one caller's key
// never replays another's outcome. The outcome
// of a request with effects is recorded inside the same transaction as the effects, so a crash can
// never leave an effect without its record (or a record without its effect).
import { createHash } from 'node:crypto';
import type { Transaction } from '../db/transaction.js';
import type { Clock } from '../clock.js';
import type { Database } from '../db/database.js';
import { isUniqueViolation } from '../db/errors.js';
import { toDate, toInt } from '../db/values.js';
import { ServiceError } from '../errors.js';

/** Kept at least this long (the floor is 24 hours). */
export const IDEMPOTENCY_TTL_MS = 48 * 3_600_000;
/** A `running` record older than this belongs to a process that died before committing anything. */
export const STALE_RUNNING_MS = 5 * 60_000;

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export type Recorder = (status: number, body: unknown, t?: Transaction) => Promise<void>;

export type Begun = { kind: 'new'; id: number; record: Recorder } | { kind: 'replay'; status: number; body: unknown };

/** A stable hash of what the request asks for (key order does not matter). */
export function requestHash(value: unknown): string {
  const canonical = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(canonical);
    if (v && typeof v === 'object' && !(v instanceof Date)) return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]));
    return v;
  };
  return createHash('sha256').update(JSON.stringify(canonical(value) ?? null)).digest('hex');
}

export class IdempotencyService {
  constructor(private readonly deps: { db: Database; clock: Clock }) {}

  /** Validates a client's key: 1 to 255 printable ASCII characters. */
  static checkKey(key: unknown): string {
    if (typeof key !== 'string' || !KEY_PATTERN.test(key)) {
      throw new ServiceError('svc_invalid_idempotency_key', 'Idempotency-Key must be 1 to 255 printable ASCII characters (a UUID is a good choice).', 400);
    }
    return key;
  }

  /** Claims `owner`'s `key` in `scope` for a request with `hash`, or answers with what the first request got. */
  async begin(scope: string, owner: string, key: string, hash: string): Promise<Begun> {
    const db = this.deps.db;
    const now = this.deps.clock.now();
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const { insertId } = await db.execute(
          "INSERT INTO idempotency_keys (scope, owner, idem_key, request_hash, state, created_at, expires_at) VALUES (?, ?, ?, ?, 'running', ?, ?)",
          [scope, owner, key, hash, now, new Date(now.getTime() + IDEMPOTENCY_TTL_MS)],
        );
        const id = insertId!;
        return { kind: 'new', id, record: (status, body, t) => this.complete(id, status, body, t) };
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
      }
      const [row] = await db.select<Record<string, unknown>>('SELECT id, request_hash, state, response_status, response_body, created_at, expires_at FROM idempotency_keys WHERE scope = ? AND owner = ? AND idem_key = ?', [scope, owner, key]);
      if (!row) continue; // pruned between the two statements: try again
      const id = toInt(row.id);
      const expired = toDate(row.expires_at)!.getTime() <= now.getTime();
      const stale = row.state === 'running' && now.getTime() - toDate(row.created_at)!.getTime() > STALE_RUNNING_MS;
      if (expired) {
        await db.execute('DELETE FROM idempotency_keys WHERE id = ?', [id]);
        continue;
      }
      if (row.request_hash !== hash) {
        throw new ServiceError('svc_idempotency_key_reused', 'This Idempotency-Key was used with a different request. Use a new key for a new request.', 422);
      }
      if (row.state === 'done') return { kind: 'replay', status: Number(row.response_status), body: JSON.parse(String(row.response_body)) };
      if (stale) {
        // The first attempt's process died before its transaction committed (a committed effect
        // would have marked the record done in the same transaction): take the key over.
        const { affected } = await db.execute("UPDATE idempotency_keys SET created_at = ? WHERE id = ? AND state = 'running' AND created_at = ?", [now, id, toDate(row.created_at)]);
        if (affected === 1) return { kind: 'new', id, record: (status, body, t) => this.complete(id, status, body, t) };
      }
      throw new ServiceError('svc_idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed. Retry shortly.', 409, {}, { 'Retry-After': '1' });
    }
    throw new ServiceError('svc_idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed. Retry shortly.', 409, {}, { 'Retry-After': '1' });
  }

  /** Records the outcome; pass the effect's transaction so both commit together. */
  async complete(id: number, status: number, body: unknown, t?: Transaction): Promise<void> {
    await this.deps.db.execute("UPDATE idempotency_keys SET state = 'done', response_status = ?, response_body = ? WHERE id = ?", [status, JSON.stringify(body ?? null), id], t);
  }

  /** Forgets a claim whose request produced no outcome worth replaying (a fault): a retry runs anew. */
  async release(id: number): Promise<void> {
    await this.deps.db.execute("DELETE FROM idempotency_keys WHERE id = ? AND state = 'running'", [id]);
  }

  async prune(): Promise<number> {
    const { affected } = await this.deps.db.execute('DELETE FROM idempotency_keys WHERE expires_at < ?', [this.deps.clock.now()]);
    return affected;
  }
}
