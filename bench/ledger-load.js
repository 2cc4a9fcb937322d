// The adjustments load of `npm run bench:ledger` and what it checks afterwards: every request gets
// a number (in its note, so the ledger says which request made each entry), the client tallies
// every answer, and `checkExactlyOnce` compares the tally with the ledger: each acknowledged 201
// applied once with its amount, each refusal applied never, in-flight requests at most once.
import { prng } from './ledger-db.js';

const CREDIT_SHARE = 0.7;
/** Debits of this many minor units cannot be covered: a steady trickle of 409 svc_insufficient_funds. */
const UNCOVERED_DEBIT = 100_000;
const UNCOVERED_SHARE = 0.02;
const KEYED_SHARE = 0.1;
const REPLAYS = 20;
const NOTE_PREFIX = 'bench load #';

export const formatMinor = (minor) => `${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;

/** Decimal string with two places to minor units (the bench only ever sends USD-like amounts). */
function toMinor(text) {
  const m = /^(-)?(\d+)\.(\d{2})$/.exec(String(text));
  if (!m) return NaN;
  const v = Number(m[2]) * 100 + Number(m[3]);
  return m[1] ? -v : v;
}

/**
 * Issues adjustment requests against `ready` for the members `first .. first + count - 1` and
 * keeps what each one asked for and got.
 */
export function adjustmentLoad(ready, members, runId) {
  const rand = prng(0x1ed9e7);
  const path = `${ready.prefix}/ledger/adjustments`;
  const t = {
    phase: 'preflight',
    issued: 0,
    signed: [null],
    keys: [null],
    bodies: [null],
    status: [null],
    entryIds: [null],
    phases: {},
    noteMismatches: 0,
    unexpectedReplays: 0,
    otherAnswers: new Map(),
  };
  const phase = () => (t.phases[t.phase] ??= { created: 0, funds: 0, other: 0, keyed: 0, createdSum: 0 });

  function issue() {
    const n = ++t.issued;
    const memberId = members.first + Math.floor(rand() * members.count);
    const debit = rand() >= CREDIT_SHARE;
    const minor = debit && rand() < UNCOVERED_SHARE ? UNCOVERED_DEBIT : 1 + Math.floor(rand() * 500);
    const body = JSON.stringify({ member_id: memberId, type: debit ? 'debit' : 'credit', amount: formatMinor(minor), note: `${NOTE_PREFIX}${n}` });
    const headers = { authorization: ready.authorization, 'content-type': 'application/json' };
    const key = rand() < KEYED_SHARE ? `bench-${runId}-${n}` : null;
    if (key) headers['idempotency-key'] = key;
    t.signed.push(debit ? -minor : minor);
    t.keys.push(key);
    t.bodies.push(key ? body : null);
    t.status.push(null);
    t.entryIds.push(null);
    if (key) phase().keyed++;
    return { n, body, headers };
  }

  function answer(n, status, text, headers) {
    t.status[n] = status;
    const p = phase();
    if (headers?.['idempotent-replayed']) t.unexpectedReplays++;
    let parsed = null;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Counted below by status.
    }
    if (status === 201) {
      p.created++;
      p.createdSum += t.signed[n];
      t.entryIds[n] = parsed?.entry?.id ?? null;
      if (parsed?.entry?.note !== `${NOTE_PREFIX}${n}` || toMinor(parsed?.entry?.amount) !== t.signed[n]) t.noteMismatches++;
    } else if (status === 409 && parsed?.code === 'svc_insufficient_funds') p.funds++;
    else {
      p.other++;
      const what = `${status} ${parsed?.code ?? String(text).slice(0, 80)}`;
      t.otherAnswers.set(what, (t.otherAnswers.get(what) ?? 0) + 1);
    }
  }

  return {
    tally: t,
    setPhase(name) {
      t.phase = name;
    },
    /** The autocannon request: a fresh body (and sometimes a key) per request. */
    request: {
      method: 'POST',
      path,
      setupRequest(req, context) {
        const { n, body, headers } = issue();
        context.n = n;
        return { ...req, method: 'POST', path, headers, body };
      },
      onResponse(status, body, context, headers) {
        // One request in flight per connection: the context still holds the one answered.
        if (context?.n) answer(context.n, status, body, headers);
      },
    },
    /** One request outside autocannon (the preflight). */
    async once() {
      const { n, body, headers } = issue();
      const res = await fetch(`${ready.origin}${path}`, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
      const text = await res.text();
      answer(n, res.status, text, Object.fromEntries(res.headers));
      return { status: res.status, text };
    },
    /** Sends the first answered keyed requests again: each must be replayed, never applied twice. */
    async replay() {
      const out = { sent: 0, identical: 0, differing: [], reusedKey: null };
      for (let n = 1; n <= t.issued && out.sent < REPLAYS; n++) {
        if (!t.keys[n] || t.status[n] === null) continue;
        out.sent++;
        const headers = { authorization: ready.authorization, 'content-type': 'application/json', 'idempotency-key': t.keys[n] };
        const res = await fetch(`${ready.origin}${path}`, { method: 'POST', headers, body: t.bodies[n], signal: AbortSignal.timeout(10_000) });
        const text = await res.text();
        const same =
          res.status === t.status[n] &&
          res.headers.get('idempotent-replayed') === 'true' &&
          (res.status !== 201 || JSON.parse(text).entry?.id === t.entryIds[n]);
        if (same) out.identical++;
        else out.differing.push(`#${n}: first ${t.status[n]}, replay ${res.status} ${text.slice(0, 120)}`);
      }
      // The same key with another body is refused, not applied.
      const n = t.keys.findIndex((k, i) => k && t.status[i] !== null);
      if (n > 0) {
        const other = JSON.stringify({ ...JSON.parse(t.bodies[n]), amount: '0.01', type: 'credit' });
        const res = await fetch(`${ready.origin}${path}`, {
          method: 'POST',
          headers: { authorization: ready.authorization, 'content-type': 'application/json', 'idempotency-key': t.keys[n] },
          body: other,
          signal: AbortSignal.timeout(10_000),
        });
        const text = await res.text();
        out.reusedKey = `${res.status} ${safeCode(text)}`;
      }
      return out;
    },
  };
}

function safeCode(text) {
  try {
    return JSON.parse(text).code ?? '';
  } catch {
    return text.slice(0, 80);
  }
}

/**
 * Compares the tally with the ledger of the load's members. `db` is a direct connection
 * (bench/ledger-db.js); `openingTotal` what the members held before the load.
 */
export async function checkExactlyOnce(db, tally, members, openingTotal) {
  const last = members.first + members.count - 1;
  const rows = await db.all(`SELECT id, amount, note FROM ledger_entries WHERE member_id BETWEEN ? AND ? AND note LIKE '${NOTE_PREFIX}%'`, [
    members.first,
    last,
  ]);
  const [bal] = await db.all('SELECT COALESCE(SUM(available), 0) AS total FROM balances WHERE member_id BETWEEN ? AND ?', [members.first, last]);
  const [all] = await db.all('SELECT COALESCE(SUM(amount), 0) AS total FROM ledger_entries WHERE member_id BETWEEN ? AND ?', [members.first, last]);
  const idem = await db.all("SELECT state, response_status, COUNT(*) AS n FROM idempotency_keys WHERE scope = 'ledger.adjust' GROUP BY state, response_status");

  const seen = new Map();
  const problems = [];
  for (const r of rows) {
    const n = Number(String(r.note).slice(NOTE_PREFIX.length));
    if (!(n >= 1 && n <= tally.issued)) {
      problems.push(`entry ${r.id} names request ${r.note}, never sent`);
      continue;
    }
    if (seen.has(n)) problems.push(`request #${n} applied twice (entries ${seen.get(n).id} and ${r.id})`);
    else seen.set(n, { id: Number(r.id), amount: Number(r.amount) });
  }
  let ackSum = 0;
  let acked = 0;
  let inflight = 0;
  let inflightApplied = 0;
  let inflightSum = 0;
  for (let n = 1; n <= tally.issued; n++) {
    const entry = seen.get(n);
    const status = tally.status[n];
    if (status === 201) {
      acked++;
      ackSum += tally.signed[n];
      if (!entry) problems.push(`request #${n} answered 201 but is not in the ledger`);
      else if (entry.amount !== tally.signed[n] || (tally.entryIds[n] !== null && entry.id !== Number(tally.entryIds[n])))
        problems.push(`request #${n}: 201 said entry ${tally.entryIds[n]} of ${tally.signed[n]}, the ledger has entry ${entry.id} of ${entry.amount}`);
    } else if (status === null) {
      inflight++;
      if (entry) {
        inflightApplied++;
        inflightSum += entry.amount;
      }
    } else if (entry) problems.push(`request #${n} answered ${status} but entry ${entry.id} exists`);
  }
  const ledgerDelta = Number(bal.total) - openingTotal;
  if (ledgerDelta !== ackSum + inflightSum)
    problems.push(`the members' balances moved by ${ledgerDelta}, the client saw ${ackSum} acknowledged (+ ${inflightSum} in flight)`);
  if (Number(all.total) !== Number(bal.total)) problems.push(`balances total ${bal.total}, entries total ${all.total}`);
  if (tally.noteMismatches > 0) problems.push(`${tally.noteMismatches} 201 answers did not echo their request's note and amount`);
  if (tally.unexpectedReplays > 0) problems.push(`${tally.unexpectedReplays} load requests were answered as replays`);

  const done = idem.filter((r) => r.state === 'done');
  const keyedAnswered = tally.keys.filter((k, n) => k && tally.status[n] !== null && tally.status[n] < 500).length;
  const recorded = done.reduce((s, r) => s + Number(r.n), 0);
  const keyedInflight = tally.keys.filter((k, n) => k && tally.status[n] === null).length;
  if (recorded < keyedAnswered || recorded > keyedAnswered + keyedInflight)
    problems.push(`${keyedAnswered} keyed requests answered (+ ${keyedInflight} in flight), ${recorded} idempotency records done`);
  return {
    ok: problems.length === 0,
    problems,
    acked,
    ackSum,
    ledgerDelta,
    inflight,
    inflightApplied,
    idempotency: {
      keyedAnswered,
      recorded,
      byStatus: Object.fromEntries(done.map((r) => [String(r.response_status), Number(r.n)])),
      running: idem.filter((r) => r.state !== 'done').reduce((s, r) => s + Number(r.n), 0),
    },
  };
}

/** What the load sends, for the report. */
export const LOAD_DESCRIPTION =
  `${Math.round(CREDIT_SHARE * 100)}% credits / ${Math.round((1 - CREDIT_SHARE) * 100)}% debits of 0.01-5.00, ${Math.round(UNCOVERED_SHARE * 100)}% of debits ${formatMinor(UNCOVERED_DEBIT)} ` +
  `(uncovered: 409 svc_insufficient_funds), ${Math.round(KEYED_SHARE * 100)}% with an Idempotency-Key`;
