// A shop's page as the AI service writes it: through the page service (which owns pages), the
// body of the advertiser's page, made first as a draft from the default template when the
// advertiser has none. Two generations racing for one new page both end on the same page.
import { isServiceError } from '../../errors.js';
import type { AdvertiserService } from '../advertisers/index.js';
import type { PageService } from '../pages/index.js';
import type { ShopPages } from './index.js';

export function shopPages(deps: { pages: PageService; advertisers: Pick<AdvertiserService, 'getById'> }): ShopPages {
  const { pages, advertisers } = deps;
  return {
    async saveBody(advertiserId, body, actor) {
      const shop = await advertisers.getById(advertiserId);
      let pageId = shop.page_id;
      if (pageId === null) {
        try {
          pageId = (await pages.create(shop.module, shop.advertiser, { status: 'draft' }, actor)).id;
        } catch (err) {
          if (!isServiceError(err) || err.code !== 'svc_page_exists') throw err;
          pageId = (await advertisers.getById(advertiserId)).page_id;
          if (pageId === null) throw err;
        }
      }
      return { page_id: (await pages.update(pageId, { body }, actor)).id };
    },
  };
}
