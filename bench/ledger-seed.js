// The bulk seeder of `npm run bench:ledger`: members, ledger entries and balance rows written
// straight through a direct connection (bench/ledger-db.js) in multi-row INSERTs, consistent
// enough for `cashtrack ledger verify` to find nothing.
import { prng, withTimeout } from './ledger-db.js';

/** Rows per multi-row INSERT, and per seed transaction. */
const BATCH = 5_000;
const ROWS_PER_TRANSACTION = 50_000;
const STATEMENT_TIMEOUT_MS = 120_000;

const begin = (db) => db.exec(db.dialect === 'sqlite' ? 'BEGIN IMMEDIATE' : 'START TRANSACTION');

/** Runs `INSERT INTO <head> VALUES <tuples>` in statements of BATCH tuples. */
async function insertTuples(db, head, tuples, what) {
  for (let i = 0; i < tuples.length; i += BATCH) {
    const part = tuples.slice(i, i + BATCH);
    await withTimeout(db.exec(`INSERT INTO ${head} VALUES ${part.join(',')}`), STATEMENT_TIMEOUT_MS, `inserting ${what}`);
  }
}

// ---- seeding -----------------------------------------------------------------------------------

const FIRST_NAMES = [
  'Maria',
  'James',
  'Anna',
  'John',
  'Laura',
  'Michael',
  'Sarah',
  'David',
  'Emma',
  'Thomas',
  'Julia',
  'Daniel',
  'Sophie',
  'Lucas',
  'Olivia',
  'Peter',
];
const LAST_NAMES = [
  'Smith',
  'Garcia',
  'Muller',
  'Martin',
  'Johnson',
  'Rossi',
  'Brown',
  'Dubois',
  'Schmidt',
  'Lopez',
  'Wilson',
  'Bernard',
  'Fischer',
  'Taylor',
  'Moreau',
];

/** `count` members with ids from `firstId` (explicit ids: entries and balances point at them). */
export async function insertMembers(db, { firstId, count, prefix, now }) {
  const at = `'${db.date(new Date(now))}'`;
  const tuples = [];
  for (let k = 0; k < count; k++) {
    const id = firstId + k;
    const login = `${prefix}${id}`;
    const name = `${FIRST_NAMES[id % FIRST_NAMES.length]} ${LAST_NAMES[(id * 7) % LAST_NAMES.length]}`;
    tuples.push(`(${id},'${login}','${login}@bench.invalid','${name}','member',NULL,'active',${at},${at})`);
  }
  await begin(db);
  await insertTuples(db, 'users (id, login, email, display_name, role, password_hash, status, created_at, updated_at)', tuples, 'members');
  await db.exec('COMMIT');
}

const PAYOUT_HEAD =
  'payouts (id, member_id, amount, currency, method, details, note, status, reference, reason, entry_id, return_entry_id, actor, created_at, updated_at)';
const ENTRY_HEAD =
  'ledger_entries (id, member_id, currency, type, amount, balance_after, source_type, source_id, order_id, reverses_id, note, actor, created_at)';

function nextIdOf(rows) {
  return Number(rows[0]?.next ?? 1);
}

/**
 * The write set: `count` members, each with one opening `adjustment` credit of `openingMinor` and
 * its balance row. Returns the member id range and the opening total.
 */
export async function seedWriteSet(db, { count, openingMinor, currency, actor }) {
  const firstId = nextIdOf(await db.all('SELECT COALESCE(MAX(id), 0) + 1 AS next FROM users'));
  const firstEntry = nextIdOf(await db.all('SELECT COALESCE(MAX(id), 0) + 1 AS next FROM ledger_entries'));
  const now = Date.now();
  await insertMembers(db, { firstId, count, prefix: 'w', now });
  const at = `'${db.date(new Date(now))}'`;
  const entries = [];
  const balances = [];
  for (let k = 0; k < count; k++) {
    const id = firstId + k;
    entries.push(
      `(${firstEntry + k},${id},'${currency}','adjustment',${openingMinor},${openingMinor},'adjustment',NULL,NULL,NULL,'bench opening credit','${actor}',${at})`,
    );
    balances.push(`(${id},'${currency}',${openingMinor},0,0,0,${at})`);
  }
  await begin(db);
  await insertTuples(db, ENTRY_HEAD, entries, 'opening credits');
  await insertTuples(db, 'balances (member_id, currency, available, pending, lifetime_earned, lifetime_paid, last_entry_at)', balances, 'balances');
  // cashtrack keeps a running count of balance rows; a bulk seed must move it too.
  await db.exec(`UPDATE counters SET value = value + ${count} WHERE name = 'balances'`);
  await db.exec('COMMIT');
  return { first: firstId, count, openingTotal: openingMinor * count };
}

/** Entries per member: `entries / members` on average, 5 either side, summing to `entries` exactly. */
function entryCounts(members, entries, rand) {
  const base = Math.floor(entries / members);
  const rest = entries - base * members;
  const counts = new Int32Array(members);
  for (let i = 0; i < members; i++) counts[i] = base + (i < rest ? 1 : 0);
  const spread = Math.min(5, base - 1);
  for (let i = 0; i + 1 < members && spread > 0; i += 2) {
    const d = Math.floor(rand() * (spread + 1));
    counts[i] += d;
    counts[i + 1] -= d;
  }
  return counts;
}

/**
 * The read set: `members` members and `entries` entries over the last year, interleaved across
 * members in id order, with the running balance_after, the lifetime totals and one balance row per
 * member that `ledger verify` expects: cashback and referral credits, adjustments both ways,
 * paid payouts that never overdraw (with their `payouts` rows), and reversals of earlier cashback.
 * Returns timings and the entry count per member id.
 */
export async function seedHistory(db, { members, entries, currency, actor, seed, onProgress = () => {} }) {
  const rand = prng(seed);
  const int = (n) => Math.floor(rand() * n);
  const started = Date.now();
  const firstId = nextIdOf(await db.all('SELECT COALESCE(MAX(id), 0) + 1 AS next FROM users'));
  const firstEntry = nextIdOf(await db.all('SELECT COALESCE(MAX(id), 0) + 1 AS next FROM ledger_entries'));
  let nextPayout = nextIdOf(await db.all('SELECT COALESCE(MAX(id), 0) + 1 AS next FROM payouts'));
  await insertMembers(db, { firstId, count: members, prefix: 'member', now: started });
  const usersMs = Date.now() - started;

  const counts = entryCounts(members, entries, rand);
  const slots = new Int32Array(entries);
  for (let i = 0, s = 0; i < members; i++) for (let k = 0; k < counts[i]; k++) slots[s++] = i;
  for (let i = entries - 1; i > 0; i--) {
    const j = int(i + 1);
    const t = slots[i];
    slots[i] = slots[j];
    slots[j] = t;
  }
  const balance = new Float64Array(members);
  const earned = new Float64Array(members);
  const paid = new Float64Array(members);
  const lastAt = new Float64Array(members);
  const lastCashId = new Float64Array(members);
  const lastCashAmount = new Float64Array(members);
  const yearMs = 365 * 86_400_000;
  const t0 = started - yearMs;
  const quote = (s) => (s === null ? 'NULL' : `'${s}'`);

  const entriesStarted = Date.now();
  let tuples = [];
  let payouts = [];
  let inTransaction = 0;
  await begin(db);
  for (let s = 0; s < entries; s++) {
    const m = slots[s];
    const id = firstEntry + s;
    const at = t0 + Math.floor((s * yearMs) / entries);
    const r = rand();
    let type;
    let amount;
    let source = 'order';
    let sourceId = String(1_000_000 + s);
    let reverses = null;
    let note = null;
    if (r < 0.03 && lastCashId[m] > 0) {
      type = 'reversal';
      amount = -lastCashAmount[m];
      source = 'reversal';
      reverses = lastCashId[m];
      sourceId = String(reverses);
      earned[m] += amount;
      lastCashId[m] = 0;
    } else if (r < 0.12 && balance[m] >= 1_000) {
      type = 'payout';
      amount = -(rand() < 0.5 ? balance[m] : Math.floor(balance[m] / 2));
      source = 'payout';
      sourceId = String(nextPayout);
      paid[m] -= amount;
      const when = `'${db.date(new Date(at))}'`;
      payouts.push(
        `(${nextPayout++},${firstId + m},${-amount},'${currency}','paypal',NULL,NULL,'paid','bench-${id}',NULL,${id},NULL,'${actor}',${when},${when})`,
      );
    } else if (r < 0.2) {
      type = 'adjustment';
      amount = rand() < 0.5 || balance[m] < 500 ? 100 + int(1_900) : -(100 + int(400));
      source = 'adjustment';
      sourceId = null;
      note = 'bench seed adjustment';
    } else if (r < 0.3) {
      type = 'referral';
      amount = 10 + int(990);
      source = 'referral';
      sourceId = String(firstId + int(members));
      earned[m] += amount;
    } else {
      type = 'cashback';
      amount = 10 + int(4_990);
      earned[m] += amount;
      lastCashId[m] = id;
      lastCashAmount[m] = amount;
    }
    balance[m] += amount;
    lastAt[m] = at;
    tuples.push(
      `(${id},${firstId + m},'${currency}','${type}',${amount},${balance[m]},'${source}',${quote(sourceId)},NULL,${reverses ?? 'NULL'},${quote(note)},'${actor}','${db.date(new Date(at))}')`,
    );
    if (tuples.length === BATCH || s === entries - 1) {
      await withTimeout(db.exec(`INSERT INTO ${ENTRY_HEAD} VALUES ${tuples.join(',')}`), STATEMENT_TIMEOUT_MS, `inserting entries up to ${id}`);
      if (payouts.length)
        await withTimeout(db.exec(`INSERT INTO ${PAYOUT_HEAD} VALUES ${payouts.join(',')}`), STATEMENT_TIMEOUT_MS, `inserting payouts up to entry ${id}`);
      inTransaction += tuples.length;
      tuples = [];
      payouts = [];
      if (inTransaction >= ROWS_PER_TRANSACTION) {
        await db.exec('COMMIT');
        onProgress(s + 1);
        await begin(db);
        inTransaction = 0;
      }
    }
  }
  await db.exec('COMMIT');
  const entriesMs = Date.now() - entriesStarted;

  const balancesStarted = Date.now();
  const rows = [];
  for (let m = 0; m < members; m++) {
    const last = lastAt[m] ? `'${db.date(new Date(lastAt[m]))}'` : 'NULL';
    rows.push(`(${firstId + m},'${currency}',${balance[m]},0,${earned[m]},${paid[m]},${last})`);
  }
  await begin(db);
  await insertTuples(db, 'balances (member_id, currency, available, pending, lifetime_earned, lifetime_paid, last_entry_at)', rows, 'balances');
  await db.exec(`UPDATE counters SET value = value + ${members} WHERE name = 'balances'`);
  await db.exec('COMMIT');
  const balancesMs = Date.now() - balancesStarted;

  // InnoDB recalculates statistics by itself after a bulk change, but in the background: done
  // here so the plans measured are the ones a settled database gets. (SQLite keeps none unless
  // ANALYZE runs, and cashtrack never runs it.)
  const analyzeStarted = Date.now();
  if (db.dialect === 'mysql') await withTimeout(db.all('ANALYZE TABLE users, balances, ledger_entries'), STATEMENT_TIMEOUT_MS, 'ANALYZE TABLE');
  const analyzeMs = db.dialect === 'mysql' ? Date.now() - analyzeStarted : null;

  const countOf = (memberId) => counts[memberId - firstId];
  return { first: firstId, members, entries, countOf, usersMs, entriesMs, balancesMs, analyzeMs, totalMs: Date.now() - started };
}
