import { z } from 'zod';

/** `https://gw.example.com` or `http://127.0.0.1:8080`: a scheme, a host and a port, nothing else. */
const originSchema = z.string().transform((value, context) => {
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
});

/**
 * The config file's `admin` section (docs/admin-access.md "Origins"): read when the admin starts; not a system
 * setting, so nobody changes it through the API.
 */
export const adminConfigSchema = z.strictObject({
  /**
   * Origins besides the admin's own (the scheme, host and port its requests name in `Host`) whose pages may use
   * the session cookie on `/api` and open the live tail: a UI served elsewhere, or the public origin of an admin
   * behind a proxy that rewrites `Host` or ends TLS. `auth.oidc.redirect_uri`'s origin is allowed too.
   */
  allowed_origins: z.array(originSchema).max(100).default([]),
});

export type AdminConfig = z.infer<typeof adminConfigSchema>;
