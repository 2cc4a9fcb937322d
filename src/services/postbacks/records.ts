// Stored postbacks: the record of every received postback (while postbacks are on; a flood of
// refusals is aggregated or throttled, see throttle.ts), its shape in the API, the list
// query and the retention prune.
import { countByStatus, ListWhere, orderClause, pageClause, type OneOrMany, type StatusCounts } from '../../db/lists.js';
import type { Transaction } from '../../db/transaction.js';
import type { Database } from '../../db/database.js';
import { toInt, toIso } from '../../db/values.js';
import { redact } from '../logs/index.js';

export const POSTBACK_OUTCOMES = ['accepted', 'duplicate', 'rejected', 'error'] as const;
export type PostbackOutcome = (typeof POSTBACK_OUTCOMES)[number];

/** A received postback as the API shows it. Secrets are redacted from `params`. */
export interface PostbackRecord {
  id: number;
  received_at: string;
  network: string;
  ip: string | null;
  method: string;
  params: unknown;
  outcome: PostbackOutcome;
  code: string | null;
  message: string | null;
  transaction_id: string | null;
  /** Our status the postback reported (after mapping). */
  status: string | null;
  order_id: number | null;
  test: boolean;
  request_id: string | null;
  /**
   * How many postbacks this record stands for: 1, or for an aggregated refusal, every refusal of
   * its kind from its address in its window (the first one's parameters and request id are kept).
   */
  repeat_count: number;
  /** When the last of them came (`received_at` is the first). */
  last_seen_at: string;
}

export interface NewPostbackRecord {
  received_at: Date;
  network: string;
  ip: string | null;
  method: string;
  params: unknown;
  outcome: PostbackOutcome;
  code?: string | null;
  message?: string | null;
  transaction_id?: string | null;
  status?: string | null;
  order_id?: number | null;
  test: boolean;
  request_id: string | null;
  replay_key?: string | null;
}

/** What aggregating a refusal did: stored a new record (the first of its kind), or counted it on one. */
export type Aggregated = { created: true; record: PostbackRecord } | { created: false; id: number };

/** The fields a network's postback list sorts by, and the column each is. */
export const POSTBACK_ORDERBY = { id: 'id', received_at: 'received_at', last_seen_at: 'last_seen_at', outcome: 'outcome' } as const;
export type PostbackOrderby = keyof typeof POSTBACK_ORDERBY;

/** The filters of a network's postback list and of its counts per outcome. */
export interface PostbackWhere {
  network: string;
  outcome?: OneOrMany<PostbackOutcome>;
  outcome_exclude?: OneOrMany<PostbackOutcome>;
  test?: boolean;
  after?: Date;
  before?: Date;
}

export interface PostbackFilters extends PostbackWhere {
  /** Default id (newest first). */
  orderby?: PostbackOrderby;
  order?: 'asc' | 'desc';
  page: number;
  per_page: number;
}

/** The filters of the postbacks' counts: the list's, without paging, sort and the outcome ones. */
export type PostbackCountFilters = Omit<PostbackWhere, 'outcome' | 'outcome_exclude'>;

function postbackWhere(f: PostbackWhere): ListWhere {
  return new ListWhere()
    .eq('network', f.network)
    .anyOf('outcome', f.outcome)
    .noneOf('outcome', f.outcome_exclude)
    .eq('test', f.test)
    .after('received_at', f.after)
    .before('received_at', f.before);
}

const MAX_PARAMS_CHARS = 8000;
const COLUMNS =
  'id, received_at, network, ip, method, params, outcome, code, message, transaction_id, status, order_id, test, request_id, repeat_count, last_seen_at';

/**
 * The parameters as stored: secret-looking names redacted (token, signature, password, key, ...),
 * and any value equal to one of `secrets` (the credential the request presented), wherever it is.
 */
export function storedParams(params: unknown, secrets: string[]): string {
  const scrub = (v: unknown, depth = 0): unknown => {
    if (typeof v === 'string') return secrets.some((s) => s.length >= 8 && v.includes(s)) ? '[redacted]' : v;
    if (depth > 6 || !v || typeof v !== 'object') return v;
    if (Array.isArray(v)) return v.slice(0, 100).map((x) => scrub(x, depth + 1));
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, scrub(x, depth + 1)]));
  };
  const json = JSON.stringify(scrub(redact(params))) ?? 'null';
  return json.length > MAX_PARAMS_CHARS ? JSON.stringify({ truncated: true, chars: json.length, preview: json.slice(0, 1000) }) : json;
}

function toRecord(r: Record<string, unknown>): PostbackRecord {
  let params: unknown = null;
  try {
    params = typeof r.params === 'string' ? JSON.parse(r.params) : null;
  } catch {
    params = null;
  }
  const str = (v: unknown) => (v === null || v === undefined ? null : String(v));
  return {
    id: toInt(r.id),
    received_at: toIso(r.received_at)!,
    network: String(r.network),
    ip: str(r.ip),
    method: String(r.method),
    params,
    outcome: r.outcome as PostbackOutcome,
    code: str(r.code),
    message: str(r.message),
    transaction_id: str(r.transaction_id),
    status: str(r.status),
    order_id: r.order_id === null || r.order_id === undefined ? null : toInt(r.order_id),
    test: r.test === true || Number(r.test) === 1,
    request_id: str(r.request_id),
    repeat_count: r.repeat_count === null || r.repeat_count === undefined ? 1 : toInt(r.repeat_count),
    last_seen_at: toIso(r.last_seen_at) ?? toIso(r.received_at)!,
  };
}

const INSERT_COLUMNS = [
  'received_at',
  'network',
  'ip',
  'method',
  'params',
  'outcome',
  'code',
  'message',
  'transaction_id',
  'status',
  'order_id',
  'test',
  'request_id',
  'replay_key',
  'last_seen_at',
  'aggregate_key',
];

const paramsText = (rec: NewPostbackRecord) => (typeof rec.params === 'string' ? rec.params : JSON.stringify(rec.params ?? null));
const messageText = (rec: NewPostbackRecord) => (rec.message ? rec.message.slice(0, 500) : null);

function insertValues(rec: NewPostbackRecord, aggregateKey: string | null = null): unknown[] {
  return [
    rec.received_at,
    rec.network,
    rec.ip?.slice(0, 45) ?? null,
    rec.method,
    paramsText(rec),
    rec.outcome,
    rec.code ?? null,
    messageText(rec),
    rec.transaction_id ?? null,
    rec.status ?? null,
    rec.order_id ?? null,
    rec.test,
    rec.request_id,
    rec.replay_key ?? null,
    rec.received_at,
    aggregateKey,
  ];
}

/** A record as stored under `id`. */
function stored(id: number, rec: NewPostbackRecord): PostbackRecord {
  return {
    id,
    received_at: rec.received_at.toISOString(),
    network: rec.network,
    ip: rec.ip?.slice(0, 45) ?? null,
    method: rec.method,
    params: JSON.parse(paramsText(rec)),
    outcome: rec.outcome,
    code: rec.code ?? null,
    message: messageText(rec),
    transaction_id: rec.transaction_id ?? null,
    status: rec.status ?? null,
    order_id: rec.order_id ?? null,
    test: rec.test,
    request_id: rec.request_id,
    repeat_count: 1,
    last_seen_at: rec.received_at.toISOString(),
  };
}

/** Reads and writes the `postbacks` table. */
export class PostbackStore {
  constructor(private readonly db: Database) {}

  /** Stores a record (in `t` when given, so it commits with the order change). Returns it. */
  async insert(rec: NewPostbackRecord, t?: Transaction): Promise<PostbackRecord> {
    const { insertId } = await this.db.execute(
      `INSERT INTO postbacks (${INSERT_COLUMNS.join(', ')}) VALUES (${INSERT_COLUMNS.map(() => '?').join(', ')})`,
      insertValues(rec),
      t,
    );
    return stored(insertId!, rec);
  }

  /**
   * Counts a refusal on the record of `key` (in `t`), or stores `rec` as that record when it is the
   * first of its kind. The caller holds the lock that serialises refusals of one client (its row in
   * postback_rejections), so two first refusals of a kind cannot race.
   */
  async aggregate(rec: NewPostbackRecord, key: string, t: Transaction): Promise<Aggregated> {
    const [row] = await this.db.select<{ id: unknown }>('SELECT id FROM postbacks WHERE aggregate_key = ?', [key], t);
    if (row) {
      const id = toInt(row.id);
      await this.db.execute('UPDATE postbacks SET repeat_count = repeat_count + 1, last_seen_at = ? WHERE id = ?', [rec.received_at, id], t);
      return { created: false, id };
    }
    const { insertId } = await this.db.execute(
      `INSERT INTO postbacks (${INSERT_COLUMNS.join(', ')}) VALUES (${INSERT_COLUMNS.map(() => '?').join(', ')})`,
      insertValues(rec, key),
      t,
    );
    return { created: true, record: stored(insertId!, rec) };
  }

  /** Stores many records in `t` (one statement where the database allows). Returns them, in order. */
  async insertMany(recs: NewPostbackRecord[], t: Transaction): Promise<PostbackRecord[]> {
    const ids = await this.db.insertMany(
      'postbacks',
      INSERT_COLUMNS,
      recs.map((r) => insertValues(r)),
      t,
    );
    return recs.map((rec, i) => stored(ids[i], rec));
  }

  /** The stored records of these replay keys, by key (those not stored are absent). */
  async byReplayKeys(keys: string[]): Promise<Map<string, PostbackRecord>> {
    if (keys.length === 0) return new Map();
    const rows = await this.db.select<Record<string, unknown>>(
      `SELECT ${COLUMNS}, replay_key FROM postbacks WHERE replay_key IN (${keys.map(() => '?').join(', ')})`,
      keys,
    );
    return new Map(rows.map((r) => [String(r.replay_key), toRecord(r)]));
  }

  async byReplayKey(key: string): Promise<PostbackRecord | null> {
    const [r] = await this.db.select<Record<string, unknown>>(`SELECT ${COLUMNS} FROM postbacks WHERE replay_key = ?`, [key]);
    return r ? toRecord(r) : null;
  }

  async byRequest(network: string, requestId: string): Promise<PostbackRecord | null> {
    const [r] = await this.db.select<Record<string, unknown>>(
      `SELECT ${COLUMNS} FROM postbacks WHERE request_id = ? AND network = ? ORDER BY id DESC LIMIT 1`,
      [requestId, network],
    );
    return r ? toRecord(r) : null;
  }

  /** Newest first unless `orderby`/`order` say otherwise. */
  async list(f: PostbackFilters): Promise<{ items: PostbackRecord[]; total: number }> {
    const where = postbackWhere(f);
    const order = orderClause(POSTBACK_ORDERBY, f, 'id', { orderby: 'id', order: 'desc' });
    const [rows, [count]] = await Promise.all([
      this.db.select<Record<string, unknown>>(`SELECT ${COLUMNS} FROM postbacks ${where.sql} ${order} ${pageClause(f)}`, where.params),
      this.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM postbacks ${where.sql}`, where.params),
    ]);
    return { items: rows.map(toRecord), total: toInt(count.n) };
  }

  /** The views row of the list: postbacks per outcome (every outcome, 0 included) under its other filters. */
  counts(f: PostbackCountFilters): Promise<StatusCounts> {
    return countByStatus(this.db, 'postbacks', 'outcome', postbackWhere(f), POSTBACK_OUTCOMES);
  }

  /** Deletes records received before `cutoff`, in bounded batches; returns how many. */
  async prune(cutoff: Date): Promise<number> {
    let total = 0;
    for (;;) {
      const victims = await this.db.select<{ id: unknown }>('SELECT id FROM postbacks WHERE received_at < ? ORDER BY id LIMIT 5000', [cutoff]);
      if (victims.length === 0) return total;
      const ids = victims.map((v) => toInt(v.id));
      const { affected } = await this.db.execute(`DELETE FROM postbacks WHERE id IN (${ids.map(() => '?').join(',')})`, ids);
      total += affected;
    }
  }
}
