// The postback load of `npm run bench:postbacks` and what it checks afterwards. Every request is a
// GET /postback/{network}?<query> signed with X-Postback-Signature (HMAC-SHA256 of `<t>.<query>`),
// generated per request: new transactions (pending or approved), exact duplicates of an earlier
// acknowledged report (the same signed bytes again, or the same query signed again), and status
// changes of earlier transactions (pending → approved, approved → declined). The client keeps, per
// transaction, the last status the daemon acknowledged and what is still in flight;
// `checkPostbacks` compares that with the orders and the members' balances.
import { createHmac } from 'node:crypto';
import { prng } from './ledger-db.js';

const DUPLICATE_SHARE = 0.2;
const CHANGE_SHARE = 0.1;
/** Of the new transactions, this many are reported approved at once. */
const NEW_APPROVED_SHARE = 0.3;
/** Of the duplicates, this many resend the exact signed bytes (a replay); the rest sign the same query again. */
const EXACT_REPLAY_SHARE = 0.5;
const CASHBACK_PERCENT = 50;
const PICK_TRIES = 16;

const formatMinor = (minor) => `${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;

/** Postbacks for `ready.network`, members `first .. first + count - 1` as sub ids. */
export function postbackLoad(ready, members, runId) {
  const rand = prng(0x9057bac);
  const base = `/postback/${ready.network}`;
  const t = {
    phase: 'preflight',
    issued: 0,
    /** Per transaction index: id, member, amounts, last acknowledged status and request, what is in flight. */
    txns: [],
    phases: {},
    otherAnswers: new Map(),
    ignoredAnswers: 0,
    unexpectedDuplicates: 0,
    missingDuplicates: 0,
  };
  const phase = () => (t.phases[t.phase] ??= { accepted: 0, duplicate: 0, other: 0, sent: { new: 0, duplicate: 0, change: 0 } });

  function sign(query) {
    const ts = Math.floor(Date.now() / 1000);
    const v1 = createHmac('sha256', ready.postbackSecret).update(`${ts}.${query}`).digest('hex');
    return `t=${ts},v1=${v1}`;
  }

  const queryOf = (x, status) =>
    `txn=${x.id}&status=${status}&amount=${formatMinor(x.sale)}&payout=${formatMinor(x.commission)}&cur=${ready.currency}&subid=${x.member}`;

  /** A random idle transaction that `ok` accepts, or null. */
  function pick(ok) {
    if (t.txns.length === 0) return null;
    for (let i = 0; i < PICK_TRIES; i++) {
      const x = t.txns[Math.floor(rand() * t.txns.length)];
      if (!x.inflight && x.acked !== null && ok(x)) return x;
    }
    return null;
  }

  function issue() {
    t.issued++;
    const r = rand();
    let x = null;
    let kind = 'new';
    let status;
    let query;
    let signature;
    if (r < DUPLICATE_SHARE) x = pick(() => true);
    else if (r < DUPLICATE_SHARE + CHANGE_SHARE) x = pick((y) => y.acked === 'pending' || y.acked === 'approved');
    if (x && r < DUPLICATE_SHARE) {
      kind = 'duplicate';
      status = x.acked;
      if (rand() < EXACT_REPLAY_SHARE) ({ query, signature } = x.lastRequest);
      else query = queryOf(x, status);
    } else if (x) {
      kind = 'change';
      status = x.acked === 'pending' ? 'approved' : 'declined';
      query = queryOf(x, status);
    } else {
      const commission = 2 * (1 + Math.floor(rand() * 2500));
      x = {
        id: `B${runId}-${t.txns.length + 1}`,
        member: members.first + Math.floor(rand() * members.count),
        sale: commission * 10,
        commission,
        acked: null,
        lastRequest: null,
        inflight: null,
      };
      t.txns.push(x);
      status = rand() < NEW_APPROVED_SHARE ? 'approved' : 'pending';
      query = queryOf(x, status);
    }
    signature ??= sign(query);
    x.inflight = { status, kind, query, signature };
    phase().sent[kind]++;
    return { x, path: `${base}?${query}`, headers: { 'x-postback-signature': signature } };
  }

  function answer(x, status, text) {
    const sent = x.inflight;
    x.inflight = null;
    const p = phase();
    let parsed = null;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Counted below by status.
    }
    if (status === 200 && parsed?.ok) {
      if (parsed.duplicate) p.duplicate++;
      else p.accepted++;
      if (parsed.ignored?.length) t.ignoredAnswers++;
      if (parsed.duplicate && sent.kind !== 'duplicate') t.unexpectedDuplicates++;
      if (!parsed.duplicate && sent.kind === 'duplicate') t.missingDuplicates++;
      if (parsed.status !== sent.status) t.ignoredAnswers++;
      x.acked = sent.status;
      x.lastRequest = { query: sent.query, signature: sent.signature };
    } else {
      p.other++;
      const what = `${status} ${parsed?.code ?? String(text).slice(0, 80)}`;
      t.otherAnswers.set(what, (t.otherAnswers.get(what) ?? 0) + 1);
      x.failed = (x.failed ?? 0) + 1;
      // A refused report may still have been applied (an error after commit): either is allowed.
      (x.uncertain ??= []).push(sent.status);
    }
  }

  return {
    tally: t,
    setPhase(name) {
      t.phase = name;
    },
    request: {
      method: 'GET',
      path: base,
      setupRequest(req, context) {
        const { x, path, headers } = issue();
        context.x = x;
        return { ...req, method: 'GET', path, headers };
      },
      onResponse(status, body, context) {
        if (context?.x) {
          answer(context.x, status, body);
          context.x = null;
        }
      },
    },
    async once() {
      const { x, path, headers } = issue();
      const res = await fetch(`${ready.origin}${path}`, { headers, signal: AbortSignal.timeout(10_000) });
      const text = await res.text();
      answer(x, res.status, text);
      return { status: res.status, text };
    },
  };
}

/**
 * Compares the tally with the orders of the network and the balances of the members. `db` is a
 * direct connection (bench/ledger-db.js).
 */
export async function checkPostbacks(db, tally, members, network) {
  const problems = [];
  const orders = await db.all('SELECT transaction_id, status, member_id, commission, cashback FROM orders WHERE network = ?', [network]);
  const byTxn = new Map(orders.map((o) => [String(o.transaction_id), o]));
  let inflight = 0;
  let checked = 0;
  const expected = new Map();
  for (const x of tally.txns) {
    const allowed = new Set();
    if (x.acked !== null) allowed.add(x.acked);
    if (x.inflight) inflight++, allowed.add(x.inflight.status);
    for (const s of x.uncertain ?? []) allowed.add(s);
    const o = byTxn.get(x.id);
    byTxn.delete(x.id);
    if (!o) {
      // Never acknowledged: it may not exist; acknowledged: it must.
      if (x.acked !== null) problems.push(`${x.id}: acknowledged ${x.acked}, no order`);
      continue;
    }
    checked++;
    if (x.acked === null && allowed.size === 0) problems.push(`${x.id}: never acknowledged, order ${o.status} exists`);
    else if (!allowed.has(String(o.status)))
      problems.push(`${x.id}: last acknowledged ${x.acked}${x.inflight ? ` (in flight ${x.inflight.status})` : ''}, order is ${o.status}`);
    if (Number(o.member_id) !== x.member) problems.push(`${x.id}: sent for member ${x.member}, order has ${o.member_id}`);
    if (Number(o.commission) !== x.commission) problems.push(`${x.id}: sent commission ${x.commission}, order has ${o.commission}`);
    const cashback = Math.floor((x.commission * CASHBACK_PERCENT) / 100);
    if (Number(o.cashback) !== cashback) problems.push(`${x.id}: cashback ${o.cashback}, expected ${cashback}`);
    const e = expected.get(x.member) ?? { available: 0, pending: 0 };
    if (o.status === 'approved') e.available += Number(o.cashback);
    if (o.status === 'pending') e.pending += Number(o.cashback);
    expected.set(x.member, e);
  }
  for (const id of byTxn.keys()) problems.push(`order ${id} exists, never sent`);
  const last = members.first + members.count - 1;
  const balances = await db.all('SELECT member_id, available, pending FROM balances WHERE member_id BETWEEN ? AND ?', [members.first, last]);
  const seen = new Set();
  let mismatched = 0;
  for (const b of balances) {
    const id = Number(b.member_id);
    seen.add(id);
    const e = expected.get(id) ?? { available: 0, pending: 0 };
    if (Number(b.available) !== e.available || Number(b.pending) !== e.pending) {
      if (mismatched++ < 10)
        problems.push(`member ${id}: available ${b.available} / pending ${b.pending}, approved orders sum ${e.available} / pending ${e.pending}`);
    }
  }
  for (const [id, e] of expected)
    if (!seen.has(id) && (e.available || e.pending)) problems.push(`member ${id}: no balance row, expected ${e.available} / ${e.pending}`);
  if (mismatched > 10) problems.push(`… ${mismatched} members' balances differ in all`);
  if (tally.ignoredAnswers) problems.push(`${tally.ignoredAnswers} 200 answers did not apply the sent status (ignored parts)`);
  if (tally.unexpectedDuplicates) problems.push(`${tally.unexpectedDuplicates} new reports were answered as duplicates`);
  if (tally.missingDuplicates) problems.push(`${tally.missingDuplicates} duplicates were answered as new`);
  const approved = orders.filter((o) => o.status === 'approved').length;
  return { ok: problems.length === 0, problems, transactions: tally.txns.length, orders: orders.length, checked, inflight, approved, members: expected.size };
}

export const LOAD_DESCRIPTION =
  `${Math.round((1 - DUPLICATE_SHARE - CHANGE_SHARE) * 100)}% new transactions (${Math.round(NEW_APPROVED_SHARE * 100)}% of them approved at once), ` +
  `${Math.round(DUPLICATE_SHARE * 100)}% duplicates of acknowledged reports (${Math.round(EXACT_REPLAY_SHARE * 100)}% the same signed bytes, the rest signed again), ` +
  `${Math.round(CHANGE_SHARE * 100)}% status changes (pending → approved, approved → declined); HMAC-signed GETs, cashback ${CASHBACK_PERCENT}% of commission`;
