// GET /logs: the plugin log, newest first; GET /logs/counts: entries per level.
import { logCountsQuery, logsQuery } from '../../services/logs/schemas.js';
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
  route({
    id: 'logs.counts',
    method: 'GET',
    path: '/logs/counts',
    auth: 'manage_options',
    description: "Log entries per level under the log's other filters: {total, statuses} (the views row).",
    validate: { query: logCountsQuery },
    handler: ({ query }, ctx) => ctx.logger.counts(query),
  }),
];
