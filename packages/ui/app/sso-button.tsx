// "Sign in with SSO", only where single sign-on is configured (`auth.oidc`): the admin says so in
// `/ui/sign-in.json`, so that nothing asks `/auth/session` where `/auth` is not served.
import { useEffect, useState } from 'react';

let configured: Promise<boolean> | undefined;

/** Whether single sign-on is configured here (asked once per page load). */
export function ssoConfigured(): Promise<boolean> {
  configured ??= fetch('/ui/sign-in.json', { headers: { accept: 'application/json' } })
    .then((answer) => (answer.ok ? (answer.json() as Promise<{ sso?: boolean }>) : undefined))
    .then((body) => body?.sso === true)
    .catch(() => false);
  return configured;
}

export function SsoButton() {
  const [shown, setShown] = useState(false);
  useEffect(() => {
    ssoConfigured().then(setShown);
  }, []);
  if (!shown) return null;
  return (
    <p>
      <a className="button secondary" href="/auth/oidc/login?return_to=/ui/">
        Sign in with SSO
      </a>
    </p>
  );
}
