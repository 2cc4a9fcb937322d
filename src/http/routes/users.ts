// Users and their application passwords, in the host platform's shapes: the list with its views
// row by role, one user, creating and changing one (a login password only as the CLI sets it:
// hashed, never returned, every session revoked), and a user's application passwords, which any
// signed-in user manages for themselves (`me`) and only an administrator for someone else.
import Joi from 'joi';
import { none } from '../../fields.js';
import { ServiceError } from '../../errors.js';
import { userRouteSchemas } from '../../services/users/schemas.js';
import { created, PagedResult, route, type RouteDef } from '../rest/types.js';

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
  route({
    id: 'users.list',
    method: 'GET',
    path: '/users',
    auth: 'manage_options',
    description: 'Users, by login (prefix search on login, email or display name; filter by role).',
    validate: { query: userRouteSchemas.list },
    async handler({ query }, ctx) {
      const { items, total } = await ctx.users.list(query);
      return new PagedResult(items, total, query.page, query.per_page);
    },
  }),
  route({
    id: 'users.counts',
    method: 'GET',
    path: '/users/counts',
    auth: 'manage_options',
    description: 'Users per role under the same search: {total, statuses} (the views row).',
    validate: { query: userRouteSchemas.counts },
    handler: ({ query }, ctx) => ctx.users.counts(query),
  }),
  route({
    id: 'users.get',
    method: 'GET',
    path: '/users/{id}',
    auth: 'manage_options',
    description: 'One user (404 svc_user_not_found).',
    validate: { params: userRouteSchemas.userId, query: none() },
    handler: ({ params }, ctx) => ctx.users.require(params.id),
  }),
  route({
    id: 'users.create',
    location: (user) => `/users/${user.id}`,
    method: 'POST',
    path: '/users',
    auth: 'manage_options',
    description: 'Create a user (409 svc_user_exists when the login or email is taken).',
    validate: { payload: userRouteSchemas.create },
    async handler({ payload, actor }, ctx) {
      return created(await ctx.users.create(payload, actor));
    },
  }),
  route({
    id: 'users.update',
    method: 'POST',
    path: '/users/{id}',
    auth: 'manage_options',
    description: "Change a user's email, display name, role or login password (a new password revokes their sessions).",
    validate: { params: userRouteSchemas.userId, payload: userRouteSchemas.update },
    async handler({ params, payload: { password, ...profile }, actor }, ctx) {
      const user = Object.keys(profile).length ? await ctx.users.update(params.id, profile, actor) : await ctx.users.require(params.id);
      if (password !== undefined) await ctx.auth.setPassword(params.id, password, actor);
      return user;
    },
  }),
  route({
    id: 'users.app-passwords.list',
    method: 'GET',
    path: '/users/{id}/application-passwords',
    auth: 'signed_in',
    description: "A user's application passwords (never the passwords): yours with `me`; another user's needs manage_options.",
    validate: { params: userRouteSchemas.owner, query: none() },
    async handler({ params, principal }, ctx) {
      return ctx.appPasswords.list(await ctx.auth.appPasswordOwner(principal, params.id));
    },
  }),
  route({
    id: 'users.app-passwords.create',
    location: (item) => `/users/${item.user_id}/application-passwords/${item.uuid}`,
    method: 'POST',
    path: '/users/{id}/application-passwords',
    auth: 'signed_in',
    description: 'Create an application password; the answer carries the password, this once.',
    validate: { params: userRouteSchemas.owner, payload: userRouteSchemas.createAppPassword },
    async handler({ params, payload, principal, actor }, ctx) {
      const user = await ctx.auth.appPasswordOwner(principal, params.id);
      return created({ ...(await ctx.appPasswords.create(user, payload.name, actor)), user_id: user.id });
    },
  }),
  route({
    id: 'users.app-passwords.get',
    method: 'GET',
    path: '/users/{id}/application-passwords/{uuid}',
    auth: 'signed_in',
    description: 'One application password (404 rest_application_password_not_found).',
    validate: { params: userRouteSchemas.appPassword, query: none() },
    async handler({ params, principal }, ctx) {
      return ctx.appPasswords.get(await ctx.auth.appPasswordOwner(principal, params.id), params.uuid);
    },
  }),
  route({
    id: 'users.app-passwords.revoke',
    method: 'DELETE',
    path: '/users/{id}/application-passwords/{uuid}',
    auth: 'signed_in',
    description: 'Revoke an application password: the next request made with it is refused (401).',
    validate: { params: userRouteSchemas.appPassword, payload: none() },
    async handler({ params, principal, actor }, ctx) {
      const previous = await ctx.appPasswords.revoke(await ctx.auth.appPasswordOwner(principal, params.id), params.uuid, actor);
      return { deleted: true, previous };
    },
  }),
];
