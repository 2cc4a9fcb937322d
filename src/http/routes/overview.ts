// GET /overview: members, liabilities, recent orders and margin, pending payouts, unmatched orders.
import Joi from 'joi';
import { route, type RouteDef } from '../rest/types.js';

/** Input schema, shared with `cashtrack overview`. */
export const overviewQuery = Joi.object<{ days: number }, true>({
  days: Joi.number().integer().min(1).max(366).default(30).description('The order window: orders recorded in the last this many days.'),
});

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
