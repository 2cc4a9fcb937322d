// A shop's page as the AI service writes it: through the page service (which owns pages), the
// body of the advertiser's page, made first as a draft from the default template when the
// advertiser has none. Two generations racing for one new page both end on the same page. The
// page service keeps the shop's text from before the first AI write (body and description), so the
// page can be reverted.
import { isServiceError } from '../../errors.js';
import type { AdvertiserService } from '../advertisers/index.js';
import type { PageService } from '../pages/index.js';
import type { ShopPages } from './index.js';

export function shopPages(deps: { pages: PageService; advertisers: Pick<AdvertiserService, 'getById'> }): ShopPages {
  const { pages, advertisers } = deps;
  return {
    async state(advertiserId) {
      const shop = await advertisers.getById(advertiserId);
      const body = shop.page_id === null ? null : (await pages.get(shop.page_id)).body;
      return { description: shop.description ?? null, page_id: shop.page_id, body };
    },
    async ensurePage(advertiserId, actor) {
      const shop = await advertisers.getById(advertiserId);
      if (shop.page_id !== null) return shop.page_id;
      try {
        return (await pages.create(shop.module, shop.advertiser, { status: 'draft' }, actor)).id;
      } catch (err) {
        if (!isServiceError(err) || err.code !== 'svc_page_exists') throw err;
        const pageId = (await advertisers.getById(advertiserId)).page_id;
        if (pageId === null) throw err;
        return pageId;
      }
    },
    async saveBody(pageId, body, before, actor, t) {
      return { page_id: (await pages.writeAiBody(pageId, body, before, actor, t)).id };
    },
  };
}
