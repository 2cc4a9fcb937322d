import { expect, it } from 'vitest';
import { describeEachDialect } from '../../helpers/context.js';
import { addShop } from '../../helpers/pages.js';

describeEachDialect('page events in the webhook outbox', (use) => {
  it('writes page.created, page.published and page.deleted with the change, and nothing for a page that failed', async () => {
    const { ctx } = use();
    // No sender runs in this context: the deliveries stay in the outbox, where the test reads them.
    const hook = await ctx.webhooks.create({ url: 'http://127.0.0.1:9/hook', events: ['page.created', 'page.published', 'page.deleted'] }, 'test');
    await addShop(ctx, 'awin', '900', { name: 'Outbox Shop', domain: 'outbox.example' });
    const page = await ctx.pages.create('awin', '900', { status: 'publish' }, 'user:1');
    await expect(ctx.pages.create('awin', '900', {}, 'user:1')).rejects.toMatchObject({ code: 'svc_page_exists' });
    await ctx.pages.remove(page.id, 'user:1');
    const { items } = await ctx.webhooks.deliveries(hook.id, { page: 1, per_page: 10 });
    expect(items.map((d) => d.event).sort()).toEqual(['page.created', 'page.deleted', 'page.published']);
    const [row] = await ctx.db.select<{ payload: string }>("SELECT payload FROM webhook_deliveries WHERE webhook_id = ? AND event = 'page.created'", [hook.id]);
    expect(JSON.parse(row.payload)).toMatchObject({
      type: 'page.created',
      data: { page: { id: page.id, slug: 'outbox-shop', status: 'publish' }, actor: 'user:1' },
    });
  });
});
