// GET /logs: the plugin log, newest first.
import { logsQuery } from '../../services/logs/schemas.js';
import { PagedResult, route, type RouteDef } from '../rest/types.js';

export const logsRoutes: RouteDef[] = [
  route({
    id: 'logs.list',
    method: 'GET',
    path: '/logs',
    auth: 'manage_options',
    description: 'The plugin log, newest first.',
    validate: { query: logsQuery },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.logger.list(query);
      return new PagedResult(items, total, query.page, query.per_page);
    },
  }),
];
