// Typeahead lookups for the administrative screens.
import Joi from 'joi';
import type { RouteDef } from '../rest/types.js';

export const lookupRoutes: RouteDef[] = [
  {
    id: 'lookup.users',
    method: 'GET',
    path: '/lookup/users',
    auth: 'manage_options',
    description: 'Up to 20 users whose login, email or display name starts with the search.',
    validate: { query: Joi.object({ search: Joi.string().allow('').max(191).default('').description('Prefix of a login, email or display name.') }) },
    handler: ({ query }, ctx) => ctx.users.lookup(query.search),
  },
];
