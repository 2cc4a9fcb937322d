// Typeahead lookups for the administrative screens.
import Joi from 'joi';
import { idList, lookupPaging, type Paging } from '../../fields.js';
import { PagedResult, route, type RouteDef } from '../rest/types.js';

export const lookupRoutes: RouteDef[] = [
  route({
    id: 'lookup.users',
    method: 'GET',
    path: '/lookup/users',
    auth: 'manage_options',
    description: 'Users whose login, email or display name starts with the search, by login, at most 20 a page.',
    validate: {
      query: Joi.object<Paging & { search: string; include?: number[] }, true>({
        ...lookupPaging,
        search: Joi.string().allow('').max(191).default('').description('Prefix of a login, email or display name.'),
        include: idList(20).description('Only these user ids (a picker naming the user it holds).'),
      }),
    },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.users.lookup(query.search, { page: query.page, per_page: query.per_page }, query.include);
      return new PagedResult(items, total, query.page, query.per_page);
    },
  }),
];
