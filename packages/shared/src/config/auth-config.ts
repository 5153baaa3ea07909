import { z } from 'zod';

/**
 * A rule giving a role (and teams) to people whose identity says so: an OIDC claim at login (`groups`
 * contains `value`, or `department` equals it), or a SCIM group's display name (claim `groups`).
 */
export const roleMappingSchema = z.strictObject({
  /** The claim to read (`groups` by default); a dotted path reaches a nested claim (`realm_access.roles`). */
  claim: z.string().min(1).default('groups'),
  /** Matches a claim equal to it, or a list claim containing it. */
  value: z.string().min(1),
  /** A built-in (`admin`, `developer`, `viewer`) or custom role's id. */
  role: z.string().min(1),
  /** Teams the person acts for (what a team-scoped role such as Developer is narrowed to). */
  team_ids: z.array(z.string().min(1)).default([]),
});

export type RoleMapping = z.infer<typeof roleMappingSchema>;

/**
 * The config file's `auth` section (docs/admin-access.md): who may sign in to the admin API and the UI, and
 * with which role. Read when the admin process starts. Secrets stay out of the file: the OIDC client secret
 * is `GW_OIDC_CLIENT_SECRET` and the SCIM bearer token `GW_SCIM_TOKEN`, both from the environment.
 */
export const authConfigSchema = z.strictObject({
  /** Single sign-on through an OpenID Connect provider (authorization code with PKCE). Off when absent. */
  oidc: z
    .strictObject({
      /** The provider's issuer URL; its discovery document is read at start. */
      issuer: z.url(),
      client_id: z.string().min(1),
      /** Where the provider sends people back: the admin's `/auth/oidc/callback`, as the browser reaches it. */
      redirect_uri: z.url(),
      scopes: z.array(z.string().min(1)).default(['openid', 'email', 'profile']),
      /** How long a session lasts without a new login. */
      session_ttl_seconds: z
        .number()
        .int()
        .min(60)
        .max(30 * 86_400)
        .default(8 * 3_600),
    })
    .optional(),
  /** Claim and group → role rules; when several match, the highest privilege wins. */
  role_mappings: z.array(roleMappingSchema).default([]),
  /** The role of a person no rule matches; when unset, such a login is refused (403). */
  default_role: z.string().min(1).optional(),
});

export type AuthConfig = z.infer<typeof authConfigSchema>;
