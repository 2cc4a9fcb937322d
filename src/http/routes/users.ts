// The caller's own user: what the admin screens show as "signed in as", WordPress's users/me.
import Joi from 'joi';
import { ServiceError } from '../../errors.js';
import { route, type RouteDef } from '../rest/types.js';

export const usersRoutes: RouteDef[] = [
  route({
    id: 'users.me',
    method: 'GET',
    path: '/users/me',
    auth: 'manage_options',
    description: 'The user the request is authenticated as: id, login, email, display name and role.',
    validate: { query: Joi.object<Record<string, never>, true>({}) },
    handler({ principal }) {
      if (!principal) throw new ServiceError('rest_not_logged_in', 'You are not currently logged in.', 401);
      const { id, login, email, display_name, role } = principal.user;
      return { id, login, email, display_name, role };
    },
  }),
];
