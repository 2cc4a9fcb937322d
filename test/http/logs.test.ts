import { expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/context.js';
import { adminClient } from '../helpers/http.js';

describeEachDialect('GET /logs', (use) => {
  const client = adminClient(use);

  it('filters by min_level and follows with after_id and order=asc', async () => {
    const { ctx } = use();
    const now = new Date();
    await ctx.logger.appendMany(
      ['info', 'warning', 'error'].map((level, i) => ({
        created_at: now,
        level: level as 'info',
        source: 'resttest',
        message: `m${i}`,
        context: null,
        request_id: null,
      })),
    );
    const warn = await client.get('/logs?source=resttest&min_level=warning');
    expect(warn.statusCode).toBe(200);
    const items = warn.result as Array<{ id: number; message: string }>;
    expect(items.map((e) => e.message)).toEqual(['m2', 'm1']);
    // m1's id less one is m0's: what came after m0, oldest first.
    const after = await client.get(`/logs?source=resttest&after_id=${items[1].id - 1}&order=asc`);
    expect((after.result as Array<{ message: string }>).map((e) => e.message)).toEqual(['m1', 'm2']);
    expect(after.headers['x-wp-total']).toBe('2');
  });

  it('refuses an unknown level and order', async () => {
    for (const q of ['min_level=loud', 'order=sideways', 'after_id=-1']) {
      const res = await client.get(`/logs?${q}`);
      expect(res.statusCode).toBe(400);
      expect((res.result as { code: string }).code).toBe('rest_invalid_param');
    }
  });
});
