import { z } from 'zod';
import { verbatim } from './declared-fields.ts';
import { SECRET_BACKENDS } from './secret-reference.ts';

/** `https://gw.example.com` or `http://127.0.0.1:8080`: a scheme, a host and a port, nothing else. */
function toOrigin(value: string, context: z.core.$RefinementCtx<string>): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  const bare =
    url !== undefined &&
    (url.protocol === 'http:' || url.protocol === 'https:') &&
    url.username === '' &&
    url.password === '' &&
    (url.pathname === '/' || url.pathname === '') &&
    url.search === '' &&
    url.hash === '' &&
    !value.endsWith('/');
  if (!url || !bare) {
    context.addIssue({
      code: 'custom',
      message: `'${value.slice(0, 100)}' is not an origin (scheme://host[:port], no path, such as https://gw.example.com)`,
    });
    return z.NEVER;
  }
  return url.origin;
}

const originSchema = z.string().transform(toOrigin);

/** An origin, or `*`: any. */
export const originOrAnySchema = z
  .string()
  .transform((value, context) => (value === '*' ? value : toOrigin(value, context)));

/** How a reference starts: `env.` or a secret manager's prefix (`vault.`, `aws-sm.`…). */
const REFERENCE_START = new RegExp(`^(?:env|${SECRET_BACKENDS.join('|')})\\.`);

/** A pattern of references as they are written, `*` matching any run of characters (`env.OPENAI_*`). */
const referencePatternSchema = verbatim(
  z
    .string()
    .max(300)
    .superRefine((pattern, context) => {
      if (REFERENCE_START.test(pattern)) return;
      context.addIssue({
        code: 'custom',
        message: `'${pattern.slice(0, 100)}' is not a reference pattern: write it as references are written, starting with env. or ${SECRET_BACKENDS.map((backend) => `${backend}.`).join(', ')} (env.OPENAI_*, vault.secret/gw/*)`,
      });
    }),
);

/**
 * `admin.secret_references` (docs/admin-access.md "Secret references"): which `env.NAME` and secret-manager
 * references an Admin (`secrets:reference`) may name in a resource written through the API. The variables gw
 * itself reads are refused whatever it says (secret-reference-rule.ts).
 */
const secretReferencesSchema = z.strictObject({
  /**
   * Patterns of the references allowed (`env.OPENAI_*`, `vault.secret/gw/*`); `[]`: none. Unset: every
   * reference but those naming gw's namespace (`GW_*`, `GATEWAY_*`) and its platform identity (`VAULT_*`,
   * `AWS_*`, Azure's and Google's credentials, `PG*`).
   */
  allow: z.array(referencePatternSchema).max(1000).optional(),
});

export type SecretReferencesConfig = z.infer<typeof secretReferencesSchema>;

/**
 * The config file's `admin` section (docs/admin-access.md "Origins", "Secret references"): read when each
 * process starts; not a system setting, so nobody changes it through the API.
 */
export const adminConfigSchema = z.strictObject({
  /**
   * Origins besides the admin's own (the scheme, host and port its requests name in `Host`) whose pages may use
   * the session cookie on `/api` and open the live tail: a UI served elsewhere, or the public origin of an admin
   * behind a proxy that rewrites `Host` or ends TLS. `auth.oidc.redirect_uri`'s origin is allowed too.
   */
  allowed_origins: z.array(originSchema).max(100).default([]),
  secret_references: secretReferencesSchema.default({}),
});

/** What a change does while the audit log cannot store its record (docs/admin-access.md "Audit log"). */
const AUDIT_ON_STORE_FAILURE = ['refuse', 'queue'] as const;

/**
 * The config file's `audit` section: read when the admin starts; not a system setting, so nobody turns the
 * audit log's guarantees off through the API.
 */
export const auditConfigSchema = z.strictObject({
  /**
   * `refuse` (default): a change is made only while the audit store answers, and answered only once its record
   * is stored; otherwise 503. `queue` (cluster): every record is appended to a Redis stream before its change
   * is answered, and the admins write the stream into PostgreSQL in order, so changes go on while PostgreSQL
   * is down (they are refused while Redis is).
   */
  on_store_failure: z.enum(AUDIT_ON_STORE_FAILURE).default('refuse'),
});
