// The batch recorder of accepted postbacks: concurrent postbacks are recorded together, their
// orders and records in one transaction, and each one alone again when the batch fails, so every
// postback gets its own answer. Replayed signed requests are answered from the first one's record.
import type { Database } from '../../db/database.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { Transaction } from '../../db/transaction.js';
import { BatchQueue } from '../../db/batch-queue.js';
import type { NetworkService } from '../networks/index.js';
import type { OrderOutcome, OrderReport, OrderService, OrderStatus } from '../orders/index.js';
import type { NewPostbackRecord, PostbackRecord, PostbackStore } from './records.js';

/** A concurrent identical signed request committed first. */
export class Replayed extends Error {}

/** The kept view of the network a postback was decided on is no longer current: decide it again. */
export class StaleView extends Error {}

export type Recorded = { change: OrderOutcome; record: PostbackRecord };

/** An accepted postback waiting for its batch: its report, its record-to-be and its answer. */
type Queued = { report: OrderReport; record: NewPostbackRecord; revision: string | null; resolve: (r: Recorded) => void; reject: (err: unknown) => void };

const replayKeys = (items: Queued[]) => items.map((i) => i.record.replay_key).filter((k): k is string => !!k);

/** The record of a replayed signed request: a duplicate of the first one's order. */
export function replayRecord(record: NewPostbackRecord, seen: PostbackRecord): NewPostbackRecord {
  return {
    ...record,
    replay_key: null,
    outcome: 'duplicate',
    code: 'svc_postback_replayed',
    order_id: seen.order_id,
    message: `The same signed request was received before (postback ${seen.id}); nothing was applied again.`,
  };
}

/** The record of an accepted postback, once its order change is known. */
function accepted(item: Queued, change: OrderOutcome): NewPostbackRecord {
  const held = change.held ? ' Held for review: no ledger effect until an administrator releases the order.' : '';
  return {
    ...item.record,
    outcome: change.duplicate ? 'duplicate' : 'accepted',
    order_id: change.id,
    message: (change.ignored.length ? `Not applied: ${change.ignored.join(', ')}.${held}` : held.trim()) || null,
  };
}

export interface PostbackRecorderDeps {
  db: Database;
  networks: NetworkService;
  orders: OrderService;
  store: PostbackStore;
  /** Postbacks recorded in one transaction at most. */
  batchMax: number;
  /** Batches recorded at once. */
  inFlight: number;
}

/** Records accepted postbacks in batches (see the file's header). */
export class PostbackRecorder {
  private readonly queue: BatchQueue<Queued>;

  constructor(private readonly deps: PostbackRecorderDeps) {
    this.queue = new BatchQueue((items) => this.recordBatch(items), deps.batchMax, deps.inFlight);
  }

  /**
   * Records one accepted postback with the batch it joins: its order change and its record, or
   * throws StaleView (`revision` of the kept view it was decided on is no longer current),
   * Replayed (its signed request was recorded meanwhile) or the order's refusal.
   */
  record(report: OrderReport, record: NewPostbackRecord, revision: string | null): Promise<Recorded> {
    return new Promise<Recorded>((resolve, reject) => this.queue.submit({ report, revision, record, resolve, reject }));
  }

  /**
   * Records a batch of accepted postbacks: their orders and records in one transaction. When that
   * fails (one report refused, a signature replayed, a fault) each is recorded again on its own,
   * so it gets its own answer. Postbacks repeating a signed request of the batch go on their own
   * after it, and find its record.
   */
  private async recordBatch(queued: Queued[]): Promise<void> {
    try {
      // Postbacks decided on a kept view of their network go on only if it is still current.
      const [revision, stored] = await Promise.all([
        queued.some((i) => i.revision !== null) ? this.deps.networks.postbacksRevision() : null,
        this.deps.store.byReplayKeys(replayKeys(queued)),
      ]);
      const items = queued.filter((i) => i.revision === null || i.revision === revision || void i.reject(new StaleView()));
      // A signed request stored before is a replay: answered from its record, nothing recorded.
      const replays: [Queued, PostbackRecord][] = [];
      const together: Queued[] = [];
      const after: Queued[] = [];
      const keys = new Set<string>();
      for (const item of items) {
        const key = item.record.replay_key;
        const seen = key ? stored.get(key) : undefined;
        if (seen) replays.push([item, seen]);
        else if (key && keys.has(key)) after.push(item);
        else key && keys.add(key), together.push(item);
      }
      let alone = together.length === 1 ? together : [];
      if (together.length > 1) {
        try {
          let records: PostbackRecord[] = [];
          const changes = await this.deps.orders.recordOutcomes(
            together.map((i) => i.report),
            'postback',
            {
              record: async (changes, t) =>
                void (records = await this.storeAccepted(
                  together.map((item, k) => accepted(item, changes[k])),
                  t,
                )),
            },
          );
          for (const [k, item] of together.entries()) item.resolve({ change: changes[k], record: records[k] });
        } catch {
          alone = together;
        }
      }
      await Promise.all(alone.map((item) => this.recordAlone(item)));
      // The same signed request twice in one batch: the copy finds the first one's record.
      const now = await this.deps.store.byReplayKeys(replayKeys(after));
      for (const item of after) {
        const seen = now.get(item.record.replay_key!);
        if (seen) replays.push([item, seen]);
        else await this.recordAlone(item);
      }
      await this.answerReplays(replays);
    } catch (err) {
      // Never leave a request waiting (a settled promise ignores a second answer).
      for (const item of queued) item.reject(err);
    }
  }

  /** Stores the records of replayed requests (one statement) and answers each with its first order. */
  private async answerReplays(replays: [Queued, PostbackRecord][]): Promise<void> {
    if (replays.length === 0) return;
    try {
      const records = await this.deps.db.transaction((t) =>
        this.deps.store.insertMany(
          replays.map(([item, seen]) => replayRecord(item.record, seen)),
          t,
        ),
      );
      for (const [k, [item, seen]] of replays.entries()) {
        item.resolve({
          change: { id: seen.order_id!, status: (seen.status ?? 'pending') as OrderStatus, duplicate: true, changes: [], ignored: [] },
          record: records[k],
        });
      }
    } catch (err) {
      for (const [item] of replays) item.reject(err);
    }
  }

  private async recordAlone(item: Queued): Promise<void> {
    try {
      let record: PostbackRecord | undefined;
      const [change] = await this.deps.orders.recordOutcomes([item.report], 'postback', {
        record: async ([result], t) => void ([record] = await this.storeAccepted([accepted(item, result)], t)),
      });
      item.resolve({ change, record: record! });
    } catch (err) {
      item.reject(err);
    }
  }

  /** Inserts the records of accepted postbacks; a replayed signature (unique replay key) throws Replayed. */
  private async storeAccepted(records: NewPostbackRecord[], t: Transaction): Promise<PostbackRecord[]> {
    try {
      return records.length === 1 ? [await this.deps.store.insert(records[0], t)] : await this.deps.store.insertMany(records, t);
    } catch (err) {
      if (records.some((r) => r.replay_key) && isUniqueViolation(err)) throw new Replayed();
      throw err;
    }
  }
}
