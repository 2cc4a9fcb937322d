// Clicks: /clicks (list), /clicks/{id} (one, with the orders that recorded it). Clicks are made
// by members through the public `GET /go/{token}` (src/http/click-routes.ts), never here.
import { none } from '../../fields.js';
import { clickSchemas } from '../../services/clicks/schemas.js';
import { PagedResult, route, type RouteDef } from '../rest/types.js';

export const clicksRoutes: RouteDef[] = [
  route({
    id: 'clicks.list',
    method: 'GET',
    path: '/clicks',
    auth: 'manage_options',
    description: 'Clicks through /go/, newest first (orderby, order), filtered by member, shop, coupon and dates.',
    validate: { query: clickSchemas.list },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.clicks.list(query);
      return new PagedResult(items, total, query.page, query.per_page);
    },
  }),
  route({
    id: 'clicks.get',
    method: 'GET',
    path: '/clicks/{id}',
    auth: 'manage_options',
    description: 'One click, with the ids of the orders that recorded it.',
    validate: { params: clickSchemas.id, query: none() },
    handler: ({ params }, ctx) => ctx.clicks.get(params.id),
  }),
];
