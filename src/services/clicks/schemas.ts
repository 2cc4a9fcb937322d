// Input schemas of the click routes, shared with `cashtrack clicks ...`.
import Joi from 'joi';
import { advertiserId, dateRange, id, networkRef, paging, sorting, lazySchemas } from '../../fields.js';
import { CLICK_ID } from './ids.js';
import { CLICK_ORDERBY, type ClickFilters, type ClickOrderby } from './store.js';

/** A click id as routes take it ("c" and 18 base-32 characters). */
export const clickId = () => Joi.string().trim().lowercase().max(40).pattern(CLICK_ID, 'click id').description('A click id ("c" and 18 characters).');

export const clickSchemas = lazySchemas(() => ({
  list: Joi.object<ClickFilters, true>({
    ...paging,
    ...sorting(Object.keys(CLICK_ORDERBY) as ClickOrderby[], 'created_at', 'desc'),
    member_id: id().description("Only this member's clicks."),
    network: networkRef().description('Only clicks to shops of this network.'),
    advertiser: advertiserId().description('Only clicks to this advertiser id (with network).'),
    coupon_id: id().description("Only clicks through this coupon's link."),
    ...dateRange('clicks made'),
  }),
  id: Joi.object<{ id: string }, true>({ id: clickId().required() }),
}));
