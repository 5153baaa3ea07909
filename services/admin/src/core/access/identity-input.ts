// The bodies `/api/users`, `/api/tokens` and `/api/roles` take (identity-admin.ts validates with them). Apart from
// the routes so that the admin API's types (api-types.ts) reach them without the routes' imports.
import { z } from 'zod';

const ID = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const idSchema = z.string().regex(ID, 'must be 1 to 63 lowercase letters, digits, - or _');

const userFields = {
  email: z.email(),
  name: z.string().min(1).max(200),
  role: z.string().min(1).optional(),
  roles: z.array(z.string().min(1)).min(1).optional(),
  team_ids: z.array(z.string().min(1)).optional(),
  active: z.boolean().optional(),
};
export const userCreateSchema = z.strictObject({ id: idSchema.optional(), ...userFields });
export const userPatchSchema = z.strictObject({
  id: z.string().optional(),
  ...z.object(userFields).partial().shape,
});

export const tokenCreateSchema = z.strictObject({
  name: z.string().min(1).max(200),
  role: z.string().min(1),
  user_id: z.string().min(1).optional(),
  /** An ISO 8601 time in the future. */
  expires_at: z.iso.datetime({ offset: true }).optional(),
  /** Or a lifetime from now. */
  expires_in_seconds: z
    .int()
    .positive()
    .max(10 * 365 * 86_400)
    .optional(),
});

export const roleSchema = z.strictObject({
  id: idSchema,
  name: z.string().min(1).max(200).optional(),
  description: z.string().max(1000).optional(),
  permissions: z.array(z.string()),
  team_scoped: z.boolean().optional(),
});

/** `POST /api/users`'s body (PUT's too; PATCH takes any part of it). */
export type UserInput = z.input<typeof userCreateSchema>;
/** `POST /api/tokens`'s body. */
export type TokenInput = z.input<typeof tokenCreateSchema>;
/** `POST /api/roles`'s body (PUT's too). */
export type RoleInput = z.input<typeof roleSchema>;
