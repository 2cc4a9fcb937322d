// Query plans for the benchmarks: the statements a service call really sends, explained on its
// dialect (`EXPLAIN QUERY PLAN` on SQLite, `EXPLAIN` on MariaDB), with the indexes they use.

/** The statements `fn` sends through `db.select`. */
async function captureSelects(db, fn) {
  const seen = [];
  const original = db.select;
  db.select = function (sql, params, transaction) {
    seen.push({ sql, params });
    return original.call(this, sql, params, transaction);
  };
  try {
    await fn();
  } finally {
    delete db.select;
  }
  return seen;
}

/** The plan of one statement as text lines, and the indexes / full scans it names. */
async function explain(db, { sql, params }) {
  if (db.dialect === 'sqlite') {
    const rows = await db.select(`EXPLAIN QUERY PLAN ${sql}`, params);
    const depth = new Map([[0, -1]]);
    const lines = rows.map((r) => {
      const d = (depth.get(r.parent) ?? -1) + 1;
      depth.set(r.id, d);
      return `${'  '.repeat(d)}${r.detail}`;
    });
    const indexes = [...new Set(rows.flatMap((r) => [...r.detail.matchAll(/USING (?:COVERING )?INDEX (\w+)/g)].map((m) => m[1])))];
    const scans = rows.filter((r) => /^SCAN users\b/.test(r.detail) && !/INDEX/.test(r.detail)).length;
    return { lines, indexes, scans };
  }
  const rows = await db.select(`EXPLAIN ${sql}`, params);
  const cols = ['id', 'select_type', 'table', 'type', 'key', 'key_len', 'rows', 'Extra'];
  const cells = [cols, ...rows.map((r) => cols.map((c) => (r[c] === null || r[c] === undefined ? '' : String(r[c]))))];
  const widths = cols.map((_, i) => Math.max(...cells.map((c) => c[i].length)));
  const lines = cells.map((c) =>
    c
      .map((v, i) => v.padEnd(widths[i]))
      .join('  ')
      .trimEnd(),
  );
  const indexes = [...new Set(rows.flatMap((r) => (r.key ? String(r.key).split(',') : [])))];
  const scans = rows.filter((r) => r.table === 'users' && (r.type === 'ALL' || r.type === 'index')).length;
  return { lines, indexes, scans };
}

/**
 * Plans of what `call.run(search)` sends, for each call and search; a plan the same as an earlier
 * search's is not repeated, its title names both searches.
 */
export async function queryPlans(db, calls) {
  const plans = [];
  const heading = db.dialect === 'sqlite' ? 'EXPLAIN QUERY PLAN' : 'EXPLAIN';
  for (const { label, searches, run } of calls) {
    for (const search of new Set(searches)) {
      const statements = await captureSelects(db, () => run(search));
      for (const [i, statement] of statements.entries()) {
        const plan = await explain(db, statement);
        const what = statements.length > 1 ? ` statement ${i + 1} (${statement.sql.trimStart().slice(0, 40).replace(/\s+/g, ' ')}…)` : '';
        const same = plans.find((p) => p.label === label && p.index === i && p.plan.lines.join('\n') === plan.lines.join('\n'));
        if (same) same.searches.push(search);
        else plans.push({ label, index: i, searches: [search], what, heading, plan, sql: statement.sql });
      }
    }
  }
  return plans.map((p) => ({ ...p, title: `${p.heading} ${p.label}(${p.searches.map((s) => JSON.stringify(s)).join(', ')})${p.what}:` }));
}
