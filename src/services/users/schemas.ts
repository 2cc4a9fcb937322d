// The users' vocabulary and input rules: roles, statuses and the fields of a user, shared by the
// CLI (its choices and checks) and the service.
import Joi from 'joi';
import { anyOf, id, paging, sorting, type ListQuery, lazySchemas } from '../../fields.js';

export const ROLES = ['administrator', 'member'] as const;
export type Role = (typeof ROLES)[number];
export const USER_STATUSES = ['active', 'disabled'] as const;
export type UserStatus = (typeof USER_STATUSES)[number];

/** The fields of a user, shared by the CLI and the service's own checks. */
export const userSchemas = {
  login: Joi.string()
    .trim()
    .min(1)
    .max(60)
    .pattern(/^[A-Za-z0-9._@+-]+$/)
    .message('{{#label}} may contain letters, digits and . _ @ + - only'),
  email: Joi.string().trim().max(191).email({ tlds: false }),
  displayName: Joi.string().trim().min(1).max(191),
  role: Joi.string().valid(...ROLES),
  password: Joi.string().min(8).max(1024),
};

/** A new user, as `cashtrack users create` and the CSV import give it. */
export const createSchema = Joi.object({
  login: userSchemas.login.required(),
  email: userSchemas.email.required(),
  display_name: userSchemas.displayName,
  role: userSchemas.role.default('member'),
  password: userSchemas.password,
});

export interface CreateUserInput {
  login: string;
  email: string;
  display_name?: string;
  role?: Role;
  password?: string;
}

/** The fields `GET /users` sorts by, and the column each is (each has an index). */
export const USER_ORDERBY = { id: 'id', login: 'login', email: 'email', display_name: 'display_name', role: 'role' } as const;
export type UserOrderby = keyof typeof USER_ORDERBY;

export interface UserFilters {
  search?: string;
  role?: Role | Role[];
  role_exclude?: Role | Role[];
  orderby?: UserOrderby;
  order?: 'asc' | 'desc';
  page: number;
  per_page: number;
}

/** The filters of `GET /users/counts`: the list's, without paging, sort and the role ones. */
export type UserCountFilters = Pick<UserFilters, 'search'>;

/** A change to a user: any of these, at least one (`POST /users/{id}`). */
export interface UpdateUserInput {
  email?: string;
  display_name?: string;
  role?: Role;
  password?: string;
}

const search = Joi.string().trim().max(191).allow('').description('Prefix of a login, email or display name.');
const userId = Joi.object<{ id: number }, true>({ id: id().required() });

/** Input schemas of the user routes, shared with `cashtrack users ...`. */
export const userRouteSchemas = lazySchemas(() => ({
  list: Joi.object<ListQuery<UserFilters>, true>({
    ...paging,
    ...sorting(Object.keys(USER_ORDERBY) as UserOrderby[], 'login', 'asc'),
    search,
    role: anyOf(ROLES).description('Only users with one of these roles (comma-separated or an array).'),
    role_exclude: anyOf(ROLES).description('Only users with none of these roles.'),
  }),
  counts: Joi.object<UserCountFilters, true>({ search }),
  userId,
  create: Joi.object<CreateUserInput, true>({
    login: userSchemas.login.required(),
    email: userSchemas.email.required(),
    display_name: userSchemas.displayName.description('Default: the login.'),
    role: userSchemas.role.default('member'),
    password: userSchemas.password.description('A login password (8 to 1024 characters); without one the user signs in with application passwords only.'),
  }),
  update: Joi.object<UpdateUserInput, true>({
    email: userSchemas.email,
    display_name: userSchemas.displayName,
    role: userSchemas.role.description('The last active administrator cannot be made a member (409 svc_last_administrator).'),
    password: userSchemas.password.description('A new login password; every session of the user is revoked.'),
  })
    .min(1)
    .message('Give at least one of email, display_name, role, password.'),
  /** `{id}` of the application-password routes: a user id, or `me`. */
  owner: Joi.object<{ id: number | 'me' }, true>({ id: Joi.alternatives(id(), Joi.string().valid('me')).required().description('A user id, or me.') }),
  appPassword: Joi.object<{ id: number | 'me'; uuid: string }, true>({
    id: Joi.alternatives(id(), Joi.string().valid('me')).required().description('A user id, or me.'),
    uuid: Joi.string().guid().required(),
  }),
  createAppPassword: Joi.object<{ name: string }, true>({
    name: Joi.string().allow('').max(1000).required().description('The application name: 1 to 191 characters, unique per user.'),
  }),
}));

/** A change to a user's profile, as the service checks it (the password goes through `setPassword`). */
export const updateSchema = Joi.object<Omit<UpdateUserInput, 'password'>, true>({
  email: userSchemas.email,
  display_name: userSchemas.displayName,
  role: userSchemas.role,
}).min(1);
