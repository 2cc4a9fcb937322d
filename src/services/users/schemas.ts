// The users' vocabulary and input rules: roles, statuses and the fields of a user, shared by the
// CLI (its choices and checks) and the service.
import Joi from 'joi';

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
