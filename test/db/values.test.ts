import { expect, it } from 'vitest';
import { exactSum, readSum } from '../../src/db/values.js';
import { describeEachDialect } from '../helpers/context.js';

describeEachDialect('exact sums', (use, dialect) => {
  /** Integers as rows of a derived table (BIGINT literals on both dialects). */
  const rows = (values: bigint[]) => values.map((v) => `SELECT ${v.toString()} AS v`).join(' UNION ALL ');
  const total = async (values: bigint[], expr = 'v') => {
    const { ctx } = use();
    const [row] = await ctx.db.select<Record<string, unknown>>(`SELECT ${exactSum(ctx.db.dialect, expr, 'total')} FROM (${rows(values)}) x`);
    return readSum(row, 'total');
  };

  it('sums past 2^53 to the last unit, where a JS number would round', async () => {
    const max = BigInt(Number.MAX_SAFE_INTEGER);
    expect(await total([max, max, 3n])).toBe(2n * max + 3n);
    expect(await total([max, -max, -7n])).toBe(-7n);
  });

  it('sums past 2^63, where a 64-bit SUM overflows', async () => {
    const big = 2n ** 62n + 12_345n;
    expect(await total([big, big, big, -1n])).toBe(3n * big - 1n);
    expect(await total([-big, -big, -big])).toBe(-3n * big);
    // What a plain SUM does there.
    if (dialect === 'sqlite') await expect(use().ctx.db.select(`SELECT SUM(v) AS total FROM (${rows([big, big, big])}) x`)).rejects.toThrow(/integer overflow/);
  });

  it('sums an expression, and an empty group to zero', async () => {
    expect(await total([5n, -3n, 9n], 'CASE WHEN v < 0 THEN v ELSE 0 END')).toBe(-3n);
    const { ctx } = use();
    const [row] = await ctx.db.select<Record<string, unknown>>(`SELECT ${exactSum(ctx.db.dialect, 'amount', 'total')} FROM ledger_entries WHERE id < 0`);
    expect(readSum(row, 'total')).toBe(0n);
  });
});
