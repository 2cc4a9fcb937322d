// GET /overview: members, liabilities, recent orders and margin, pending payouts, unmatched orders.
import { overviewQuery } from '../../services/overview/schemas.js';
import { route, type RouteDef } from '../rest/types.js';

export const overviewRoutes: RouteDef[] = [
  route({
    id: 'overview.get',
    method: 'GET',
    path: '/overview',
    auth: 'manage_options',
    description: 'The back office at a glance.',
    validate: { query: overviewQuery },
    handler: ({ query }, ctx) => ctx.overview.get({ days: query.days }),
  }),
];
